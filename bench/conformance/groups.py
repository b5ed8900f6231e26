"""The lockstep round of one PodGroup (GenericWorkload kinds, ``Kind.grouped``).

For each scheduler in turn (the reference first), from the very same state:

1. a copy of the PodGroup named ``<group>-<suffix>`` is created, then a copy of every member
   (``<pod>-<suffix>``, the scheduler's name, pointing at the copied group) held back by a
   scheduling gate; then every gate is removed. A scheduler sees each member before the last
   gate goes (one pod watch, in order), so its queue gathers the whole group before the
   group's first cycle whatever the order of its pod and PodGroup watches;
2. the members are followed until each is bound, or unschedulable (PodScheduled=False,
   Unschedulable or SchedulerError) without a nomination (a nominated member is followed
   through its group's preemption); then a short settle catches the immediate retry a
   partly placed group gets. A group the scenario marks as never reaching ``minCount`` is
   read after a fixed wait: it must still be waiting in the queue (no condition at all);
3. what it decided is recorded: each member's node or message, the PodGroup's
   ``PodGroupInitiallyScheduled`` condition, the state's pods it deleted (victims) and, when
   there were victims, each member's first FailedScheduling message; the copies are deleted
   and the victims created again.

Then the reference's outcome becomes the state: its victims deleted, the PodGroup created
under its own name with every member the reference bound, bound where it put it (a running
group the next units may preempt as one victim).

Per member the kind's comparison judges upstream's decision against the candidate's; a
difference in the PodGroup condition fails every member of the group. A member whose node
differs only after an earlier member of the same group took another node of upstream's top
set (a score tie) is judged by its group's outcome alone (``after-tie``).

One condition difference is upstream's own race, not a disagreement (``condition-race``,
counted apart from exact agreement in the report): a group placed in part whose other members
all failed on the retry that follows at once. Upstream queues that retry only once its
synchronous PATCH of ``True`` has returned, and the retry's guard
(schedule_one_podgroup.go:947-952, kube-scheduler v1.37.2) reads the PodGroup from its
snapshot, which only the informer updates: when the watch event of that PATCH arrives before
its HTTP response ("watch first") the guard sees ``True`` and nothing is written
(``True/Scheduled`` with the first cycle's empty message); otherwise ("response first") the
retry's failure is patched against the record from before the ``True``: a record without the
condition gets it whole (``False/Unschedulable: <retry's message>``), a record still showing
the ``False`` of the group's earlier preemption (the group's decisions have victims) gets only
the message (``True/Scheduled: <retry's message>``). Both sides must show that shape (some
members bound, every other one Unschedulable) and one outcome each; see ``race_outcome``.
"""

from __future__ import annotations

import copy
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Final

from bench.conformance.compare import Decision, Trace, Verdict
from bench.conformance.generate import JSON, Scenario

GATE: Final = "conformance.corral.dev/hold"
UNIT_LABEL: Final = "conformance.corral.dev/unit"
GROUP_API: Final = "scheduling.k8s.io/v1beta1"
CONDITION: Final = "PodGroupInitiallyScheduled"
EXPECT_WAITING: Final = "conformance.corral.dev/expect-waiting"
# The retry a group placed in part gets is immediate (no backoff); its preemption, if any,
# nominates members within a scheduling cycle.
SETTLE: Final = 0.8
WAITING_OBSERVE: Final = 3.0
POLL: Final = 0.05
MERGE_PATCH: Final = "application/merge-patch+json"


def group_name(pod: JSON) -> str | None:
    group = (pod.get("spec") or {}).get("schedulingGroup") or {}
    name = group.get("podGroupName")
    return str(name) if name else None


def units(scenario: Scenario) -> Iterator[tuple[int, JSON | None, list[JSON]]]:
    """(index of the first pod, the PodGroup or None, its pods) in the scenario's order."""
    templates = {g["metadata"]["name"]: g for g in scenario.pod_groups}
    pods = scenario.pods
    i = 0
    while i < len(pods):
        name = group_name(pods[i])
        if name is None or name not in templates:
            yield i, None, [pods[i]]
            i += 1
            continue
        j = i
        while j < len(pods) and group_name(pods[j]) == name:
            j += 1
        yield i, templates[name], pods[i:j]
        i = j


def copies(
    template: JSON, members: list[JSON], suffix: str, scheduler: str
) -> tuple[JSON, list[JSON]]:
    """The PodGroup's and its members' copies for one scheduler, the members gated."""
    group = copy.deepcopy(template)
    name = f"{template['metadata']['name']}-{suffix}"
    group["metadata"]["name"] = name
    pods = []
    for original in members:
        pod = copy.deepcopy(original)
        pod["metadata"]["name"] = f"{original['metadata']['name']}-{suffix}"
        pod["metadata"].setdefault("labels", {})[UNIT_LABEL] = name
        pod["spec"]["schedulerName"] = scheduler
        pod["spec"]["schedulingGroup"] = {"podGroupName": name}
        pod["spec"]["schedulingGates"] = [{"name": GATE}]
        pods.append(pod)
    return group, pods


def member(pod: JSON) -> tuple[Decision | None, str | None]:
    """(the decision when final, the nominated node)."""
    node = pod["spec"].get("nodeName")
    status = pod.get("status") or {}
    nominated = status.get("nominatedNodeName")
    if node:
        return Decision(node=node), nominated
    for condition in status.get("conditions") or []:
        if condition.get("type") != "PodScheduled" or condition.get("status") != "False":
            continue
        if condition.get("reason") in ("Unschedulable", "SchedulerError") and not nominated:
            return Decision(reason=condition.get("reason"),
                            message=condition.get("message")), None  # fmt: skip
    return None, nominated


def condition(group: JSON) -> str:
    """The PodGroup's PodGroupInitiallyScheduled condition, as text ("none" without it)."""
    for c in (group.get("status") or {}).get("conditions") or []:
        if c.get("type") == CONDITION:
            return f"{c.get('status')}/{c.get('reason')}: {c.get('message', '')}"
    return "none"


def expects_waiting(template: JSON) -> bool:
    return (template["metadata"].get("annotations") or {}).get(EXPECT_WAITING) == "true"


Read = Callable[[], Mapping[str, tuple[Decision | None, str | None]]]


def observe(
    read: Read, names: Sequence[str], *, waiting: bool, alive: Callable[[], bool], timeout: float
) -> dict[str, Decision]:
    """Every member's decision (see the module doc, step 2), by copy name."""
    if waiting:
        time.sleep(WAITING_OBSERVE)
        return {
            n: d or Decision(reason="Waiting", nominated=nominated)
            for n, (d, nominated) in read().items()
        }
    deadline = time.monotonic() + timeout
    nominations: dict[str, str] = {}
    settled: dict[str, Decision] | None = None
    while time.monotonic() < deadline and alive():
        now = read()
        nominations.update({n: nominated for n, (_, nominated) in now.items() if nominated})
        current = {n: d for n, (d, _) in now.items() if d is not None}
        if len(current) == len(names):
            if settled is not None and _same(settled, current):
                for name, decision in current.items():
                    decision.nominated = nominations.get(name)
                return current
            settled = current
            time.sleep(SETTLE)
            continue
        settled = None
        time.sleep(POLL)
    final = read()
    out: dict[str, Decision] = {}
    for n in names:
        found = final[n][0] if n in final else None
        out[n] = found or Decision(timed_out=True, nominated=nominations.get(n))
    return out


def _same(a: Mapping[str, Decision], b: Mapping[str, Decision]) -> bool:
    return a.keys() == b.keys() and all(
        (a[k].node, a[k].reason, a[k].message) == (b[k].node, b[k].reason, b[k].message) for k in a
    )


Compare = Callable[[Decision, Trace, Decision], Verdict]

RACE: Final = "condition-race"
WATCH_FIRST: Final = "watch first"
RESPONSE_FIRST: Final = "response first"
_WATCH_FIRST_CONDITION: Final = "True/Scheduled: "


def placed_in_part_rest_failed(decisions: Sequence[Decision]) -> bool:
    """Some members bound, every other one Unschedulable: the group's cycle placed part of it
    and the retry its rest gets at once (upstream AddAttemptedPodGroupIfNeeded after a
    success: requeueWithoutBackoff) failed."""
    placed = sum(1 for d in decisions if d.node)
    return 0 < placed < len(decisions) and all(
        d.node or (d.reason == "Unschedulable" and not d.timed_out) for d in decisions
    )


def race_outcome(decisions: Sequence[Decision]) -> str | None:
    """Which of upstream's two outcomes of the race (see the module doc) the group's condition
    is, or None when it is neither or the group is not that case. The record the retry's
    "response first" patch is made against had a ``False`` when the group preempted (its
    victims), no condition otherwise."""
    if not decisions or not placed_in_part_rest_failed(decisions):
        return None
    text = decisions[0].group or ""
    if text == _WATCH_FIRST_CONDITION:
        return WATCH_FIRST
    head, _, message = text.partition(": ")
    preempted = any(d.victims for d in decisions)
    if message and head == ("True/Scheduled" if preempted else "False/Unschedulable"):
        return RESPONSE_FIRST
    return None


def within_race(references: Sequence[Decision], candidates: Sequence[Decision]) -> bool:
    """Upstream's and the candidate's conditions are upstream's two outcomes of the race."""
    return {race_outcome(references), race_outcome(candidates)} == {WATCH_FIRST, RESPONSE_FIRST}


def judge(
    references: Sequence[tuple[Decision, Trace]], candidates: Sequence[Decision], compare: Compare
) -> list[Verdict]:
    """The members' verdicts, in the group's order (see the module doc)."""
    verdicts = []
    diverged = False
    race = within_race([r for r, _ in references], candidates)
    for (reference, trace), got in zip(references, candidates, strict=True):
        verdict = compare(reference, trace, got)
        if reference.group != got.group and not race:
            verdict = Verdict(False, "condition-differs",
                              f"PodGroup condition: upstream {reference.group!r}, "
                              f"candidate {got.group!r}")  # fmt: skip
        elif not verdict.agree and diverged and verdict.kind == "node-differs":
            verdict = Verdict(True, "after-tie", "an earlier member took another top node")
        elif verdict.agree and reference.node and got.node != reference.node:
            diverged = True
        if race and verdict.agree:
            verdict = Verdict(True, RACE,
                              f"PodGroup condition within upstream's race: upstream "
                              f"{reference.group!r}, candidate {got.group!r}; member: "
                              f"{verdict.kind}")  # fmt: skip
        verdicts.append(verdict)
    return verdicts
