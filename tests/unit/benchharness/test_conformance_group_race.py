"""The gang comparison's PodGroup condition: upstream's own race (a group placed in part whose
rest failed on the retry at once, schedule_one_podgroup.go:947-952) accepts either of its two
outcomes and counts them apart; every other condition difference stays a disagreement."""

from __future__ import annotations

import pytest
from bench.conformance import groups, harness, kinds
from bench.conformance.compare import Decision, Trace

FIT = "0/12 nodes are available: 12 Insufficient cpu."
RETRY = "pod group is unschedulable, pod group preemption: not eligible due to preemptionPolicy"
WATCH_FIRST = "True/Scheduled: "
RESPONSE_FIRST = f"False/Unschedulable: {RETRY}"
MESSAGE_ONLY = f"True/Scheduled: {RETRY}"  # the record still had the preemption's False
VICTIMS = ["team-a/run-1"]


def _group(condition: str, shape: str, victims: list[str] | None = None) -> list[Decision]:
    """Three members: "part" two bound and one unschedulable, "all" three bound, "none" none."""
    bound = {"part": 2, "all": 3, "none": 0}[shape]
    out = []
    for i in range(3):
        decision = Decision(node=f"n{i}") if i < bound else Decision(None, "Unschedulable", FIT)
        decision.group, decision.victims = condition, list(victims or [])
        out.append(decision)
    return out


CASES = [
    # (reference, candidate, agree, kinds)
    pytest.param(_group(WATCH_FIRST, "part"), _group(RESPONSE_FIRST, "part"), True,
                 {groups.RACE}, id="race-upstream-watch-first-candidate-response-first"),
    pytest.param(_group(RESPONSE_FIRST, "part"), _group(WATCH_FIRST, "part"), True,
                 {groups.RACE}, id="race-upstream-response-first-candidate-watch-first"),
    pytest.param(_group(MESSAGE_ONLY, "part", VICTIMS), _group(WATCH_FIRST, "part", VICTIMS),
                 True, {groups.RACE}, id="race-after-preemption-message-only"),
    pytest.param(_group(WATCH_FIRST, "part"), _group(WATCH_FIRST, "part"), True,
                 {"placed", "unschedulable"}, id="race-case-same-outcome-exact"),
    pytest.param(_group(WATCH_FIRST, "part"), _group(MESSAGE_ONLY, "part"), False,
                 {"condition-differs"}, id="message-only-without-a-preemption-differs"),
    pytest.param(_group(MESSAGE_ONLY, "part", VICTIMS), _group(RESPONSE_FIRST, "part", VICTIMS),
                 False, {"condition-differs"}, id="both-response-first-other-messages-differ"),
    pytest.param(_group(WATCH_FIRST, "part"), _group(f"False/SchedulerError: {RETRY}", "part"),
                 False, {"condition-differs"}, id="part-placed-scheduler-error-differs"),
    pytest.param(_group("False/Unschedulable: a", "none"), _group(RESPONSE_FIRST, "none"),
                 False, {"condition-differs"}, id="not-placed-condition-differs"),
    pytest.param(_group(WATCH_FIRST, "all"), _group(RESPONSE_FIRST, "all"), False,
                 {"condition-differs"}, id="fully-placed-condition-differs"),
]  # fmt: skip


@pytest.mark.parametrize(("reference", "candidate", "agree", "verdict_kinds"), CASES)
def test_a_condition_within_upstreams_race_agrees_and_is_counted_apart(
    reference: list[Decision], candidate: list[Decision], agree: bool, verdict_kinds: set[str]
) -> None:
    references = [(d, Trace(bound=d.node) if d.node else Trace()) for d in reference]
    verdicts = groups.judge(references, candidate, kinds.get("gang").compare)
    assert {v.kind for v in verdicts} == verdict_kinds, [v.detail for v in verdicts]
    assert all(v.agree == agree for v in verdicts)
    report = harness.Report(seed=1, candidates=["corral"], kind="gang")
    for i, (ref, got, verdict) in enumerate(zip(reference, candidate, verdicts, strict=True)):
        result = harness.PodResult(i, f"p{i}", ref, [ref.node] if ref.node else [], None)
        result.candidates["corral"], result.verdicts["corral"] = got, verdict
        report.results.append(result)
    race = 3 if verdict_kinds == {groups.RACE} else 0
    figures = harness.summary([report])["corral"]
    assert (figures["agree"], figures["race"], figures["disagree"], figures["total"]) == (
        3 if agree else 0, race, 0 if agree else 3, 3
    )  # fmt: skip
    assert len(figures["disagreements"]) == figures["disagree"]
