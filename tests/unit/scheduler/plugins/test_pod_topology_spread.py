"""PodTopologySpread rules, one table row each (upstream filtering_test.go / scoring_test.go)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from corral.scheduler.backend.objects import ObjectStore
from corral.scheduler.backend.records import pod_from_json
from corral.scheduler.framework.cluster_events import QueueingHint
from corral.scheduler.framework.cycle_state import CycleState
from corral.scheduler.framework.types import NodeRecord, PodInfo
from corral.scheduler.plugins import (
    pod_topology_spread,
)
from corral.scheduler.plugins import pod_topology_spread as pts
from corral.testing.builders import build_cache, node, pod, pod_info
from corral.testing.framework import FakeHandle
from support.hints import SKIP, Q, hint_node

Z = "zone"
TAINT = {"key": "t", "value": "", "effect": "NoSchedule"}
NODES = [
    node("a1", labels={Z: "a", "disk": "ssd"}),
    node("a2", labels={Z: "a", "disk": "ssd"}),
    node("b1", labels={Z: "b", "disk": "ssd"}),
    node("c1", labels={Z: "c"}, taints=(TAINT,)),
    node("nz"),
]
SKEW, MISSING = pts.ERR_REASON_CONSTRAINTS_NOT_MATCH, pts.ERR_REASON_NODE_LABEL_NOT_MATCH


def web(name: str, on: str, **kw: Any) -> dict[str, Any]:
    return pod(name, node_name=on, labels={"app": "web", **kw.pop("labels", {})}, **kw)


def spread(max_skew: int = 1, action: str = "DoNotSchedule", **extra: Any) -> dict[str, Any]:
    return {
        "maxSkew": max_skew,
        "topologyKey": Z,
        "whenUnsatisfiable": action,
        "labelSelector": {"matchLabels": {"app": "web"}},
        **extra,
    }


def incoming(*constraints: dict[str, Any], **kw: Any) -> dict[str, Any]:
    raw = pod("p", labels={"app": "web", **kw.pop("labels", {})}, **kw)
    raw["spec"]["topologySpreadConstraints"] = list(constraints)
    return raw


def verdicts(existing: list[dict[str, Any]], raw: dict[str, Any]) -> dict[str, str]:
    snapshot = build_cache(NODES, existing).snapshot()
    plugin = pts.new(None, FakeHandle())
    state = CycleState()
    p = pod_from_json(raw)
    _, status = plugin.pre_filter(state, p, snapshot)
    if status is not None:
        return {"*": "skip" if status.is_skip else status.message}
    verdict = plugin.filter_batch(state, p, snapshot)
    out = {}
    for slot in snapshot.order.tolist():
        code = 0 if verdict.reasons is None else int(verdict.reasons[slot])
        out[snapshot.names[slot]] = "ok" if verdict.passed[slot] else verdict.describe(code).message
    return out


@pytest.mark.parametrize(
    ("existing", "raw", "want"),
    [
        pytest.param(
            [web("w1", "a1"), web("w2", "b1")],
            incoming(spread()),
            # domains a:1 b:1 c:0 (c1 counts: taints are ignored by default) → min 0
            {"a1": SKEW, "a2": SKEW, "b1": SKEW, "c1": "ok", "nz": MISSING},
            id="skew-against-empty-domain",
        ),
        pytest.param(
            [web("w1", "a1"), web("w2", "b1")],
            incoming(spread(nodeTaintsPolicy="Honor")),
            # c1's taint is not tolerated → its domain is not eligible → min 1
            {"a1": "ok", "a2": "ok", "b1": "ok", "c1": "ok", "nz": MISSING},
            id="node-taints-policy-honor",
        ),
        pytest.param(
            [web("w1", "a1"), web("w2", "b1")],
            incoming(spread(minDomains=4, nodeTaintsPolicy="Honor")),
            # 2 eligible domains < minDomains 4 → global min 0
            {"a1": SKEW, "a2": SKEW, "b1": SKEW, "c1": "ok", "nz": MISSING},
            id="min-domains",
        ),
        pytest.param(
            [web("w1", "a1"), web("w2", "b1")],
            incoming(spread(), node_selector={"disk": "ssd"}),
            # nodeAffinityPolicy Honor (default): only ssd nodes are domains → a:1 b:1
            {"a1": "ok", "a2": "ok", "b1": "ok", "c1": "ok", "nz": MISSING},
            id="node-affinity-policy-honor",
        ),
        pytest.param(
            [web("w1", "a1"), web("w2", "b1")],
            incoming(spread(nodeAffinityPolicy="Ignore"), node_selector={"disk": "ssd"}),
            {"a1": SKEW, "a2": SKEW, "b1": SKEW, "c1": "ok", "nz": MISSING},
            id="node-affinity-policy-ignore",
        ),
        pytest.param(
            [web("w1", "a1"), web("w2", "a2"), web("w3", "b1", labels={"v": "1"})],
            incoming(spread(matchLabelKeys=["v"]), labels={"v": "1"}),
            # only v=1 pods count: a:0 b:1 c:0
            {"a1": "ok", "a2": "ok", "b1": SKEW, "c1": "ok", "nz": MISSING},
            id="match-label-keys",
        ),
        pytest.param(
            [web("w1", "a1"), web("w2", "a1", namespace="other"), web("w3", "b1")],
            incoming(spread(max_skew=2)),
            # other namespaces do not count: a:1 b:1 c:0
            {"a1": "ok", "a2": "ok", "b1": "ok", "c1": "ok", "nz": MISSING},
            id="max-skew-2-and-namespace",
        ),
        pytest.param(
            [web("w1", "a1")],
            incoming(spread(action="ScheduleAnyway")),
            {"*": "skip"},
            id="only-soft-constraints-skip-filter",
        ),
        pytest.param(
            [web("w1", "a1")],
            incoming(spread(topologyKey="no-node-has-it")),
            # no domain at all: every node lacks the label (this used to raise KeyError)
            {"a1": MISSING, "a2": MISSING, "b1": MISSING, "c1": MISSING, "nz": MISSING},
            id="topology-key-no-node-has",
        ),
    ],
)
def test_filter(existing: list[dict[str, Any]], raw: dict[str, Any], want: dict[str, str]) -> None:
    assert verdicts(existing, raw) == want


def scores(
    existing: list[dict[str, Any]], raw: dict[str, Any], handle: Any = None
) -> dict[str, int]:
    snapshot = build_cache(NODES, existing).snapshot()
    plugin = pts.new(None, handle)
    state = CycleState()
    p = pod_from_json(raw)
    slots = snapshot.order
    if plugin.pre_score(state, p, snapshot, slots) is not None:
        return {}
    raw_scores, _ = plugin.score_batch(state, p, snapshot, slots)
    out = np.array(raw_scores, dtype=np.int64)
    plugin.normalize_score(state, p, out)
    return {snapshot.names[s]: int(v) for s, v in zip(slots.tolist(), out.tolist(), strict=True)}


def test_soft_constraint_prefers_the_emptier_zone_and_ignores_nodes_without_the_key() -> None:
    # counts a:2 b:1 c:0, 3 domains → w = ln(5); raw = round(cnt*w): a 3, b 2, c 0
    got = scores(
        [web("w1", "a1"), web("w2", "a2"), web("w3", "b1")],
        incoming(spread(action="ScheduleAnyway")),
    )
    assert got == {"a1": 0, "a2": 0, "b1": 33, "c1": 100, "nz": 0}


class ServiceHandle:
    def __init__(self) -> None:
        self.objects = ObjectStore()
        self.objects.apply(
            "Service",
            "ADDED",
            {
                "metadata": {"name": "s", "namespace": "default"},
                "spec": {"selector": {"app": "web"}},
            },
        )


def test_system_default_constraints_use_service_selectors() -> None:
    raw = pod("p", labels={"app": "web"})
    existing = [web("w1", "a1"), web("w2", "a1"), web("w3", "a2")]
    assert scores(existing, raw) == {}  # no Service: no default selector, no constraints
    got = scores(existing, raw, ServiceHandle())
    # hostname (maxSkew 3) and zone (maxSkew 5); a node without a zone is still scored
    assert got["a1"] < got["a2"] < got["b1"]
    assert got["nz"] == 100


def _spread(*keys: str, **kwargs: Any) -> PodInfo:
    constraints = [
        {
            "maxSkew": 1,
            "topologyKey": key,
            "whenUnsatisfiable": "DoNotSchedule",
            "labelSelector": {"matchExpressions": [{"key": "foo", "operator": "Exists"}]},
        }
        for key in keys
    ]
    raw = dict(pod_info("p", **kwargs).raw)
    raw["spec"] = {**raw["spec"], "topologySpreadConstraints": constraints}
    return pod_from_json(raw)


_NO_SCHEDULE = "NoSchedule"


@pytest.mark.parametrize(
    ("pod", "old", "new", "want"),
    [
        pytest.param(
            _spread("zone"),
            hint_node(labels={"zone": "zone1"}),
            hint_node(labels={"zone": "zone2"}),
            Q,
            id="node updates label which matches topologyKey",
        ),
        pytest.param(
            _spread("zone"),
            hint_node(labels={"foo": "bar1"}),
            hint_node(labels={"foo": "bar2"}),
            SKIP,
            id="node that doesn't match topologySpreadConstraints updates non-related label",
        ),
        pytest.param(
            _spread("zone", "node"),
            hint_node(labels={"zone": "zone1", "node": "node1", "foo": "bar"}),
            hint_node(labels={"zone": "zone1", "node": "node1"}),
            SKIP,
            id="node that match topologySpreadConstraints adds non-related label",
        ),
        pytest.param(
            _spread("zone"),
            None,
            hint_node(labels={"foo": "bar"}),
            SKIP,
            id="create node with non-related labels",
        ),
        pytest.param(
            _spread("zone"),
            None,
            hint_node(labels={"zone": "zone1"}),
            Q,
            id="create node with related labels",
        ),
        pytest.param(
            _spread("zone"),
            hint_node(labels={"foo": "bar"}),
            None,
            SKIP,
            id="delete node with non-related labels",
        ),
        pytest.param(
            _spread("zone"),
            hint_node(labels={"zone": "zone1"}),
            None,
            Q,
            id="delete node with related labels",
        ),
        pytest.param(
            _spread("zone", "node"),
            None,
            hint_node(labels={"zone": "zone1"}),
            SKIP,
            id="add node with related labels that only match one of topologySpreadConstraints",
        ),
        pytest.param(
            _spread("zone", "node"),
            None,
            hint_node(labels={"zone": "zone1", "node": "node1"}),
            Q,
            id="add node with related labels that match all topologySpreadConstraints",
        ),
        pytest.param(
            _spread("zone", "node"),
            hint_node(labels={"zone": "zone1"}),
            hint_node(labels={"zone": "zone1"}),
            SKIP,
            id="update node with related labels that only match one of topologySpreadConstraints",
        ),
        pytest.param(
            _spread("zone", "node"),
            hint_node(labels={"zone": "zone1", "node": "node1"}),
            hint_node(labels={"zone": "zone1", "node": "node2"}),
            Q,
            id="update node with related labels that match all topologySpreadConstraints",
        ),
        pytest.param(
            _spread("zone", "node"),
            hint_node(
                labels={"zone": "zone1", "node": "node1"},
                taints=[{"key": "aaa", "value": "bbb", "effect": _NO_SCHEDULE}],
            ),
            hint_node(
                labels={"zone": "zone1", "node": "node1"},
                taints=[{"key": "ccc", "value": "bbb", "effect": _NO_SCHEDULE}],
            ),
            Q,
            id="update node with different taints that match all topologySpreadConstraints",
        ),
        pytest.param(
            _spread("zone", "node"),
            hint_node(
                labels={"node": "node1"},
                taints=[{"key": "aaa", "value": "bbb", "effect": _NO_SCHEDULE}],
            ),
            hint_node(
                labels={"node": "node1"},
                taints=[{"key": "ccc", "value": "bbb", "effect": _NO_SCHEDULE}],
            ),
            SKIP,
            id="update node with different taints that only match one of topologySpreadConstraints",
        ),
    ],
)
def test_pod_topology_spread_after_node_change(
    pod: PodInfo, old: NodeRecord | None, new: NodeRecord | None, want: QueueingHint
) -> None:
    plugin = pod_topology_spread.new(None, FakeHandle())
    assert plugin.hint_node_change(pod, old, new) is want


_PTS_BOUND = {"node_name": "fake-node"}


@pytest.mark.parametrize(
    ("old", "new", "want"),
    [
        pytest.param(
            None,
            pod_info("o", labels={"foo": ""}, **_PTS_BOUND),
            Q,
            id="add pod with labels match topologySpreadConstraints selector",
        ),
        pytest.param(None, pod_info("o", labels={"foo": ""}), SKIP, id="add un-scheduled pod"),
        pytest.param(
            None,
            pod_info("o", labels={"bar": ""}, **_PTS_BOUND),
            SKIP,
            id="add pod with labels don't match topologySpreadConstraints selector",
        ),
        pytest.param(
            None,
            pod_info("o", namespace="other", labels={"foo": ""}, **_PTS_BOUND),
            SKIP,
            id="add pod with different namespace",
        ),
        pytest.param(
            pod_info("o", labels={"foo": ""}, **_PTS_BOUND),
            None,
            Q,
            id="delete pod with labels that match topologySpreadConstraints selector",
        ),
        pytest.param(
            pod_info("o", labels={"bar": ""}, **_PTS_BOUND),
            None,
            SKIP,
            id="delete pod with labels that don't match topologySpreadConstraints selector",
        ),
        pytest.param(
            pod_info("o", labels={"foo": ""}, **_PTS_BOUND),
            pod_info("o", labels={"bar": ""}, **_PTS_BOUND),
            Q,
            id="delete pod label that matches topologySpreadConstraints selector",
        ),
        pytest.param(
            pod_info("o", labels={"foo": "a"}, **_PTS_BOUND),
            pod_info("o", labels={"foo": "b"}, **_PTS_BOUND),
            SKIP,
            id="change pod's label that matches topologySpreadConstraints selector",
        ),
        pytest.param(
            pod_info("o", labels={"foo": ""}, **_PTS_BOUND),
            pod_info("o", labels={"foo": "", "bar": ""}, **_PTS_BOUND),
            SKIP,
            id="update pod's non-related label",
        ),
    ],
)
def test_pod_topology_spread_after_assigned_pod_change(
    old: PodInfo | None, new: PodInfo | None, want: QueueingHint
) -> None:
    plugin = pod_topology_spread.new(None, FakeHandle())
    assert plugin.hint_assigned_pod_change(_spread("zone"), old, new) is want


@pytest.mark.parametrize(
    ("old", "new", "want"),
    [
        pytest.param(
            pod_info("p", labels={"foo": ""}),
            pod_info("p", labels={"bar": ""}),
            Q,
            id="pod's labels no longer match the selector",
        ),
        pytest.param(
            pod_info("p", labels={"foo": "a"}),
            pod_info("p", labels={"foo": "b"}),
            SKIP,
            id="pod's labels still match the selector",
        ),
    ],
)
def test_pod_topology_spread_after_target_pod_change(
    old: PodInfo, new: PodInfo, want: QueueingHint
) -> None:
    plugin = pod_topology_spread.new(None, FakeHandle())
    assert plugin.hint_target_pod_change(_spread("zone"), old, new) is want
