"""NodeAffinity: PreFilter node names, required matching, addedAffinity, preferred scoring."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from corral.scheduler.backend.records import pod_from_json
from corral.scheduler.framework.cluster_events import QueueingHint
from corral.scheduler.framework.cycle_state import CycleState
from corral.scheduler.framework.interface import PreFilterResult
from corral.scheduler.framework.status import Code, Status
from corral.scheduler.framework.types import NodeRecord
from corral.scheduler.plugins import node_affinity
from corral.testing.builders import expr, node, pod, pod_info, required, snapshot_of
from corral.testing.framework import FakeHandle
from support.hints import SKIP, Q, hint_node

UUR = Code.UNSCHEDULABLE_AND_UNRESOLVABLE


def _names(*values: str) -> dict[str, Any]:
    return {"matchFields": [expr("metadata.name", "In", *values)]}


@pytest.mark.parametrize(
    ("pod_kwargs", "want_result", "want_status"),
    [
        pytest.param({}, None, Status(Code.SKIP), id="nothing to do"),
        pytest.param({"node_selector": {"a": "b"}}, None, None, id="selector only"),
        pytest.param(
            {"affinity": required(_names("n1", "n2"))},
            PreFilterResult(frozenset({"n1", "n2"})),
            None,
            id="names",
        ),
        pytest.param(
            {"affinity": required(_names("n1", "n2"), _names("n3"))},
            PreFilterResult(frozenset({"n1", "n2", "n3"})),
            None,
            id="terms are ORed",
        ),
        pytest.param(
            {
                "affinity": required(
                    {
                        "matchFields": [
                            expr("metadata.name", "In", "n1"),
                            expr("metadata.name", "In", "n2"),
                        ]
                    }
                )
            },
            None,
            Status.of(UUR, "pod affinity terms conflict"),
            id="conflict within a term",
        ),
        pytest.param(
            {"affinity": required(_names("n1"), {"matchExpressions": [expr("a", "Exists")]})},
            None,
            None,
            id="a term without names admits all",
        ),
        pytest.param(
            {"affinity": required(_names("n1"), {})}, None, None, id="an empty term admits all"
        ),
    ],
)
def test_pre_filter(pod_kwargs: dict[str, Any], want_result: Any, want_status: Any) -> None:
    plugin = node_affinity.new(None, FakeHandle())
    result, status = plugin.pre_filter(
        CycleState(), pod_from_json(pod("p", **pod_kwargs)), snapshot_of([])
    )
    assert (result, status) == (want_result, want_status)


ADDED = {
    "addedAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [{"matchExpressions": [expr("pool", "In", "t")]}]
        }
    }
}


@pytest.mark.parametrize(
    ("labels", "pod_kwargs", "args", "want"),
    [
        pytest.param(
            {"zone": "a"}, {"node_selector": {"zone": "a"}}, None, None, id="selector matches"
        ),
        pytest.param(
            {"zone": "b"},
            {"node_selector": {"zone": "a"}},
            None,
            "node(s) didn't match Pod's node affinity/selector",
            id="selector mismatch",
        ),
        pytest.param(
            {"zone": "a"},
            {
                "node_selector": {"zone": "a"},
                "affinity": required({"matchExpressions": [expr("rank", "Gt", "3")]}),
            },
            None,
            "node(s) didn't match Pod's node affinity/selector",
            id="selector AND affinity",
        ),
        pytest.param(
            {"pool": "x"},
            {},
            ADDED,
            "node(s) didn't match scheduler-enforced node affinity",
            id="enforced",
        ),
        pytest.param(
            {"pool": "x"},
            {"node_selector": {"zone": "a"}},
            ADDED,
            "node(s) didn't match scheduler-enforced node affinity",
            id="enforced checked first",
        ),
        pytest.param({"pool": "t"}, {}, ADDED, None, id="enforced matches"),
    ],
)
def test_filter(
    labels: dict[str, str], pod_kwargs: dict[str, Any], args: Any, want: str | None
) -> None:
    snapshot = snapshot_of([node("n", labels=labels)])
    plugin = node_affinity.new(args, FakeHandle())
    p = pod_from_json(pod("p", **pod_kwargs))
    got = plugin.filter(CycleState(), p, snapshot.node_info(0))
    assert got == (None if want is None else Status.of(UUR, want))
    verdict = plugin.filter_batch(CycleState(), p, snapshot)
    assert bool(verdict.passed[0]) is (want is None)


def test_score_sums_matching_preferred_weights_including_added() -> None:
    preferred = [
        {"weight": 3, "preference": {"matchExpressions": [expr("zone", "In", "a")]}},
        {"weight": 5, "preference": {"matchExpressions": [expr("disk", "Exists")]}},
        {"weight": 0, "preference": {"matchExpressions": [expr("zone", "Exists")]}},
    ]
    args = {
        "addedAffinity": {
            "preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": 2, "preference": {"matchExpressions": [expr("zone", "In", "b")]}}
            ]
        }
    }
    snapshot = snapshot_of(
        [node("a", labels={"zone": "a", "disk": "ssd"}), node("b", labels={"zone": "b"}), node("c")]
    )
    plugin = node_affinity.new(args, FakeHandle())
    p = pod_from_json(
        pod(
            "p",
            affinity={
                "nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": preferred}
            },
        )
    )
    state = CycleState()
    assert plugin.pre_score(state, p, snapshot, snapshot.order) is None
    scores, _ = plugin.score_batch(state, p, snapshot, snapshot.order)
    assert scores.tolist() == [8, 2, 0]
    plugin.normalize_score(state, p, scores)
    assert scores.tolist() == [100, 25, 0]


def test_pre_score_skips_without_preferred_terms() -> None:
    plugin = node_affinity.new(None, FakeHandle())
    assert plugin.pre_score(
        CycleState(), pod_from_json(pod("p")), snapshot_of([]), np.zeros(0, dtype=np.intp)
    ) == Status(Code.SKIP)


def test_invalid_added_affinity_is_refused() -> None:
    bad = {
        "addedAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [{"matchExpressions": [expr("a", "Gt", "x")]}]
            }
        }
    }
    with pytest.raises(ValueError, match="addedAffinity"):
        node_affinity.new(bad, FakeHandle())


_FOO_BAR = {"affinity": required({"matchExpressions": [expr("foo", "In", "bar")]})}


_ADDED = {
    "addedAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [{"matchExpressions": [expr("foo", "In", "bar")]}]
        }
    }
}


@pytest.mark.parametrize(
    ("args", "pod_kwargs", "old", "new", "want"),
    [
        pytest.param(None, _FOO_BAR, None, hint_node(), SKIP, id="skip-queue-on-add"),
        pytest.param(None, _FOO_BAR, None, hint_node(labels={"foo": "bar"}), Q, id="queue-on-add"),
        pytest.param(
            None, _FOO_BAR, hint_node(), hint_node({"cpu": "1"}), SKIP, id="skip-unrelated-changes"
        ),
        pytest.param(
            None,
            _FOO_BAR,
            hint_node(),
            hint_node(labels={"k": "v"}),
            SKIP,
            id="skip-unrelated-changes-on-labels",
        ),
        pytest.param(
            None,
            _FOO_BAR,
            hint_node(labels={"foo": "bar"}),
            hint_node(labels={"k": "v"}),
            SKIP,
            id="skip-labels-changes-on-node-from-suitable-to-unsuitable",
        ),
        pytest.param(
            None,
            _FOO_BAR,
            hint_node(),
            hint_node(labels={"foo": "bar"}),
            Q,
            id="queue-on-labels-change-makes-pod-schedulable",
        ),
        pytest.param(
            None,
            _FOO_BAR,
            hint_node(labels={"foo": "bar"}),
            hint_node({"cpu": "1"}, labels={"foo": "bar"}),
            SKIP,
            id="skip-unrelated-change-that-keeps-pod-schedulable",
        ),
        pytest.param(
            _ADDED,
            {},
            None,
            hint_node(),
            SKIP,
            id="skip-queue-on-add-scheduler-enforced-node-affinity",
        ),
        pytest.param(
            _ADDED,
            {},
            None,
            hint_node(labels={"foo": "bar"}),
            Q,
            id="queue-on-add-scheduler-enforced-node-affinity",
        ),
        pytest.param(
            None,
            {"node_selector": {"foo": "bar"}},
            hint_node(),
            hint_node(labels={"foo": "bar"}),
            Q,
            id="corral: nodeSelector now matches",
        ),
    ],
)
def test_node_affinity_after_node_change(
    args: Any,
    pod_kwargs: dict[str, Any],
    old: NodeRecord | None,
    new: NodeRecord,
    want: QueueingHint,
) -> None:
    plugin = node_affinity.new(args, FakeHandle())
    assert plugin.hint_node_change(pod_info("p", **pod_kwargs), old, new) is want
