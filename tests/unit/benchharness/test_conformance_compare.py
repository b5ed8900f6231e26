"""The conformance harness's judge: upstream log parsing and tie-aware verdicts."""

from __future__ import annotations

import random

import pytest
from bench.conformance.compare import Decision, LogParser, Trace, compare
from bench.conformance.generate import generate

LOG = """\
I1121 19:23:45.302130    3986 schedule_one.go:123] "Attempting to schedule pod" pod="ns/p1"
I1121 19:23:45.302938    3986 schedule_one.go:982] "Plugin scored node for pod" pod="ns/p1" plugin="TaintToleration" node="n0" score=300
I1121 19:23:45.302976    3986 schedule_one.go:982] "Plugin scored node for pod" pod="ns/p1" plugin="NodeResourcesFit" node="n0" score=98
I1121 19:23:45.303102    3986 schedule_one.go:1050] "Calculated node's final score for pod" pod="ns/p1" node="n0" score=472
I1121 19:23:45.303110    3986 schedule_one.go:1050] "Calculated node's final score for pod" pod="ns/p1" node="n2" score=472
I1121 19:23:45.303117    3986 schedule_one.go:1050] "Calculated node's final score for pod" pod="ns/p1" node="n1" score=400
I1121 19:23:45.308161    3986 schedule_one.go:481] "Successfully bound pod to node" pod="ns/p1" node="n2" evaluatedNodes=3 feasibleNodes=3
"""  # noqa: E501


def test_log_parser_collects_scores_and_binding_across_chunk_boundaries() -> None:
    parser = LogParser()
    cut = LOG.index("Calculated") + 10  # a line split between two reads
    parser.feed(LOG[:cut])
    parser.feed(LOG[cut:])
    trace = parser.traces["ns/p1"]
    assert trace.final == {"n0": 472, "n2": 472, "n1": 400}
    assert trace.plugins["n0"] == {"TaintToleration": 300, "NodeResourcesFit": 98}
    assert trace.bound == "n2"
    assert trace.top() == {"n0", "n2"}


def test_a_new_attempt_forgets_the_previous_attempts_scores() -> None:
    parser = LogParser()
    parser.feed(LOG)
    parser.feed(
        'I1121 19:23:46.0 3986 schedule_one.go:123] "Attempting to schedule pod" pod="ns/p1"\n'
    )
    assert parser.traces["ns/p1"] == Trace()


TIED = Trace(final={"a": 10, "b": 10, "c": 3}, bound="a")
UNSCHED = Decision(reason="Unschedulable", message="0/3 nodes are available: 3 Insufficient cpu.")


@pytest.mark.parametrize(
    ("reference", "trace", "candidate", "agree", "kind"),
    [
        pytest.param(Decision("a"), TIED, Decision("a"), True, "placed", id="same-node"),
        pytest.param(Decision("a"), TIED, Decision("b"), True, "placed", id="other-tied-node"),
        pytest.param(Decision("a"), TIED, Decision("c"), False, "node-differs", id="lower-score"),
        pytest.param(Decision("a"), TIED, Decision("z"), False, "node-differs", id="not-feasible"),
        pytest.param(
            Decision("a"), Trace(bound="a"), Decision("a"), True, "placed", id="single-feasible"
        ),
        pytest.param(
            Decision("a"), Trace(bound="a"), Decision("b"), False, "node-differs",
            id="single-feasible-other",
        ),
        pytest.param(
            Decision("a"), TIED, UNSCHED, False, "placed-vs-unschedulable", id="candidate-gave-up"
        ),
        pytest.param(
            UNSCHED, Trace(), Decision("a"), False, "placed-vs-unschedulable", id="candidate-placed"
        ),
        pytest.param(UNSCHED, Trace(), UNSCHED, True, "unschedulable", id="same-message"),
        pytest.param(
            UNSCHED, Trace(),
            Decision(reason="Unschedulable", message="0/3 nodes are available: 3 Insufficient cpu"),
            False, "message-differs", id="message-differs-by-a-dot",
        ),
        pytest.param(
            Decision("a"), TIED, Decision(timed_out=True), False, "timeout", id="no-decision"
        ),
    ],
)  # fmt: skip
def test_verdicts(
    reference: Decision, trace: Trace, candidate: Decision, agree: bool, kind: str
) -> None:
    verdict = compare(reference, trace, candidate)
    assert (verdict.agree, verdict.kind) == (agree, kind)


def test_node_differs_explains_with_upstream_scores() -> None:
    trace = Trace(final={"a": 10, "c": 3}, plugins={"a": {"Fit": 10}, "c": {"Fit": 3}}, bound="a")
    detail = compare(Decision("a"), trace, Decision("c")).detail
    assert "upstream total 3" in detail
    assert "a: Fit=10" in detail
    assert "c: Fit=3" in detail


def test_scenarios_are_reproducible_from_the_seed() -> None:
    assert generate(7).to_json() == generate(7).to_json()
    assert generate(7).to_json() != generate(8).to_json()


def test_running_pods_fit_and_tolerate_their_nodes_hard_taints() -> None:
    scenario = generate(random.Random(1).randint(0, 10**6), nodes=15, running=60, pods=5)
    nodes = {n["metadata"]["name"]: n for n in scenario.nodes}
    for pod in scenario.running:
        node = nodes[pod["spec"]["nodeName"]]
        hard = {
            (t["key"], t["effect"])
            for t in node["spec"].get("taints", [])
            if t["effect"] != "PreferNoSchedule"
        }
        tolerated = {(t["key"], t["effect"]) for t in pod["spec"].get("tolerations", [])}
        assert hard <= tolerated
    for pod in scenario.pods:
        assert pod["spec"]["priorityClassName"].endswith("-never")
