"""InterPodAffinity rules, one table row each (upstream filtering_test.go / scoring_test.go)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest

from corral.scheduler.backend.records import pod_from_json
from corral.scheduler.framework.cluster_events import QueueingHint
from corral.scheduler.framework.cycle_state import CycleState
from corral.scheduler.framework.types import NodeRecord, PodInfo
from corral.scheduler.plugins import inter_pod_affinity as ipa
from corral.scheduler.plugins.inter_pod_affinity import queueing as ipa_queueing
from corral.testing.builders import build_cache, node, pod, pod_info
from corral.testing.framework import FakeHandle
from support.hints import BOUND, SKIP, Q, hint_node

ZONE = "zone"
NODES = [
    node("a1", labels={ZONE: "a"}),
    node("a2", labels={ZONE: "a"}),
    node("b1", labels={ZONE: "b"}),
    node("nz"),  # no zone label
]


def term(key: str = ZONE, **selector: str) -> dict[str, Any]:
    return {"topologyKey": key, "labelSelector": {"matchLabels": selector}}


def aff(kind: str, *terms: dict[str, Any]) -> dict[str, Any]:
    return {kind: {"requiredDuringSchedulingIgnoredDuringExecution": list(terms)}}


def handle() -> FakeHandle:
    return FakeHandle(
        {"kind": "Namespace", "metadata": {"name": "prod", "labels": {"env": "prod"}}}
    )


def verdicts(existing: list[dict[str, Any]], incoming: dict[str, Any]) -> dict[str, str]:
    snapshot = build_cache(NODES, existing).snapshot()
    plugin = ipa.new(None, handle())
    state = CycleState()
    p = pod_from_json(incoming)
    _, status = plugin.pre_filter(state, p, snapshot)
    if status is not None:
        return {"*": "skip" if status.is_skip else status.message}
    out = {}
    for slot in snapshot.order.tolist():
        s = plugin.filter(state, p, snapshot.node_info(slot))
        out[snapshot.names[slot]] = "ok" if s is None else s.message
    return out


AFF, ANTI, EXIST = (
    ipa.ERR_REASON_AFFINITY,
    ipa.ERR_REASON_ANTI_AFFINITY,
    ipa.ERR_REASON_EXISTING_ANTI_AFFINITY,
)


@pytest.mark.parametrize(
    ("existing", "incoming", "want"),
    [
        pytest.param(
            [pod("web", node_name="a1", labels={"app": "web"})],
            pod("p", affinity=aff("podAffinity", term(app="web"))),
            {"a1": "ok", "a2": "ok", "b1": AFF, "nz": AFF},
            id="affinity-same-zone",
        ),
        pytest.param(
            [],
            pod("p", labels={"app": "web"}, affinity=aff("podAffinity", term(app="web"))),
            {"a1": "ok", "a2": "ok", "b1": "ok", "nz": AFF},
            id="first-pod-matches-itself-needs-key",
        ),
        pytest.param(
            [],
            pod("p", labels={"app": "db"}, affinity=aff("podAffinity", term(app="web"))),
            {"a1": AFF, "a2": AFF, "b1": AFF, "nz": AFF},
            id="first-pod-not-matching-itself",
        ),
        pytest.param(
            [pod("web", node_name="a1", labels={"app": "web"}, namespace="other")],
            pod("p", affinity=aff("podAffinity", term(app="web"))),
            {"a1": AFF, "a2": AFF, "b1": AFF, "nz": AFF},
            id="affinity-other-namespace-does-not-count",
        ),
        pytest.param(
            [pod("web", node_name="a1", labels={"app": "web"}, namespace="prod")],
            pod(
                "p",
                affinity=aff(
                    "podAffinity",
                    {**term(app="web"), "namespaceSelector": {"matchLabels": {"env": "prod"}}},
                ),
            ),
            {"a1": "ok", "a2": "ok", "b1": AFF, "nz": AFF},
            id="namespace-selector",
        ),
        pytest.param(
            [pod("web", node_name="a1", labels={"app": "web"}, namespace="x")],
            pod("p", affinity=aff("podAffinity", {**term(app="web"), "namespaceSelector": {}})),
            {"a1": "ok", "a2": "ok", "b1": AFF, "nz": AFF},
            id="empty-namespace-selector-is-all",
        ),
        pytest.param(
            [pod("web", node_name="a1", labels={"app": "web"})],
            pod("p", affinity=aff("podAntiAffinity", term(app="web"))),
            {"a1": ANTI, "a2": ANTI, "b1": "ok", "nz": "ok"},
            id="anti-affinity-zone",
        ),
        pytest.param(
            [
                pod(
                    "guard",
                    node_name="b1",
                    labels={"app": "db"},
                    affinity=aff("podAntiAffinity", term("kubernetes.io/hostname", app="web")),
                )
            ],
            pod("p", labels={"app": "web"}),
            {"a1": "ok", "a2": "ok", "b1": EXIST, "nz": "ok"},
            id="existing-anti-affinity",
        ),
        pytest.param(
            [],
            pod("p", labels={"app": "web"}),
            {"*": "skip"},
            id="nothing-to-do-skips",
        ),
    ],
)
def test_filter(
    existing: list[dict[str, Any]], incoming: dict[str, Any], want: dict[str, str]
) -> None:
    assert verdicts(existing, incoming) == want


def scores(existing: list[dict[str, Any]], incoming: dict[str, Any], **args: Any) -> dict[str, int]:
    snapshot = build_cache(NODES, existing).snapshot()
    plugin = ipa.new(args or None, handle())
    state = CycleState()
    p = pod_from_json(incoming)
    slots = snapshot.order
    if plugin.pre_score(state, p, snapshot, slots) is not None:
        return {}
    raw, _ = plugin.score_batch(state, p, snapshot, slots)
    normalized = np.array(raw, dtype=np.int64)
    plugin.normalize_score(state, p, normalized)
    return {
        snapshot.names[s]: int(v) for s, v in zip(slots.tolist(), normalized.tolist(), strict=True)
    }


def preferred(kind: str, weight: int, t: dict[str, Any]) -> dict[str, Any]:
    return {
        kind: {
            "preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": weight, "podAffinityTerm": t}
            ]
        }
    }


@pytest.mark.parametrize(
    ("existing", "incoming", "args", "want"),
    [
        pytest.param(
            [pod("web", node_name="b1", labels={"app": "web"})],
            pod("p", affinity=preferred("podAffinity", 5, term(app="web"))),
            {},
            {"a1": 0, "a2": 0, "b1": 100, "nz": 0},
            id="preferred-affinity",
        ),
        pytest.param(
            [pod("web", node_name="b1", labels={"app": "web"})],
            pod("p", affinity=preferred("podAntiAffinity", 5, term(app="web"))),
            {},
            {"a1": 100, "a2": 100, "b1": 0, "nz": 100},
            id="preferred-anti-affinity",
        ),
        pytest.param(
            [
                pod(
                    "e",
                    node_name="a1",
                    labels={"app": "db"},
                    affinity=aff("podAffinity", term(app="web")),
                )
            ],
            pod("p", labels={"app": "web"}),
            {"hardPodAffinityWeight": 4},
            {"a1": 100, "a2": 100, "b1": 0, "nz": 0},
            id="existing-required-affinity-hard-weight",
        ),
        pytest.param(
            [
                pod(
                    "e",
                    node_name="a1",
                    labels={"app": "db"},
                    affinity=aff("podAffinity", term(app="web")),
                )
            ],
            pod("p", labels={"app": "web"}),
            {"hardPodAffinityWeight": 0},
            {},
            id="hard-weight-zero-skips",
        ),
        pytest.param(
            [pod("web", node_name="b1", labels={"app": "web"})],
            pod("p"),
            {},
            {},
            id="no-terms-anywhere-skips",
        ),
    ],
)
def test_score(
    existing: list[dict[str, Any]],
    incoming: dict[str, Any],
    args: dict[str, Any],
    want: dict[str, int],
) -> None:
    assert scores(existing, incoming, **args) == want


def _term(key: str, topology: str, *values: str, op: str = "In") -> dict[str, Any]:
    return {
        "labelSelector": {
            "matchExpressions": [{"key": key, "operator": op, "values": list(values)}]
        },
        "topologyKey": topology,
    }


def _ipa_pod(
    name: str = "p",
    *,
    affinity: Sequence[dict[str, Any]] = (),
    anti: Sequence[dict[str, Any]] = (),
    **kwargs: Any,
) -> PodInfo:
    req = "requiredDuringSchedulingIgnoredDuringExecution"
    spec: dict[str, Any] = {}
    if affinity:
        spec["podAffinity"] = {req: list(affinity)}
    if anti:
        spec["podAntiAffinity"] = {req: list(anti)}
    return pod_info(name, affinity=spec or None, **kwargs)


def _nominated(pod: PodInfo) -> PodInfo:
    return pod_from_json({**pod.raw, "status": {"nominatedNodeName": "fake-node"}})


_SCAN = _term("service", "region", "securityscan", "value2")


_EXISTS_AAA = _term("aaa", "hostname", op="Exists")


_EXISTS_BBB = _term("bbb", "hostname", op="Exists")


@pytest.mark.parametrize(
    ("pod", "old", "new", "want"),
    [
        pytest.param(
            _ipa_pod(affinity=[_SCAN]),
            None,
            _ipa_pod("o", labels={"service": "securityscan"}, **BOUND),
            Q,
            id="add a pod which matches the pod affinity",
        ),
        pytest.param(
            _ipa_pod(affinity=[_SCAN]),
            None,
            _ipa_pod("o", labels={"service": "securityscan"}),
            SKIP,
            id="add an un-scheduled pod",
        ),
        pytest.param(
            _ipa_pod(affinity=[_SCAN]),
            None,
            _ipa_pod("o", labels={"aaa": "a"}, **BOUND),
            SKIP,
            id="add a pod which doesn't match the pod affinity",
        ),
        pytest.param(
            _ipa_pod(affinity=[_SCAN]),
            _ipa_pod("o", labels={"aaa": "a"}, **BOUND),
            _ipa_pod("o", labels={"service": "securityscan"}, **BOUND),
            Q,
            id="update a pod from non-match to match pod affinity",
        ),
        pytest.param(
            _ipa_pod(affinity=[_SCAN]),
            _ipa_pod("o", labels={"service": "value2"}, **BOUND),
            _ipa_pod("o", labels={"service": "securityscan"}, **BOUND),
            SKIP,
            id="the updating pod matches target pod's affinity both before and after label changes",
        ),
        pytest.param(
            _ipa_pod(affinity=[_SCAN]),
            _ipa_pod("o", labels={"aaa": "a"}),
            _ipa_pod("o", labels={"service": "securityscan"}),
            SKIP,
            id="update an un-scheduled pod",
        ),
        pytest.param(
            _ipa_pod(affinity=[_SCAN]),
            _ipa_pod("o", labels={"service": "securityscan"}, **BOUND),
            _ipa_pod("o", labels={"aaa": "a"}, **BOUND),
            SKIP,
            id="update a pod from match to non-match the pod affinity",
        ),
        pytest.param(
            _ipa_pod(affinity=[_EXISTS_AAA, _EXISTS_BBB]),
            _ipa_pod("o", labels={"aaa": "a"}, **BOUND),
            _ipa_pod("o", labels={"service": "securityscan"}, **BOUND),
            SKIP,
            id="update a pod from match to non-match pod's affinity - multiple terms case",
        ),
        pytest.param(
            _ipa_pod(affinity=[_EXISTS_AAA, _EXISTS_BBB]),
            _ipa_pod("o", labels={"aaa": "a"}, **BOUND),
            _ipa_pod("o", labels={"aaa": "", "bbb": ""}, **BOUND),
            Q,
            id="update a pod from non-match to match pod's affinity - multiple terms case",
        ),
        pytest.param(
            _ipa_pod(anti=[_SCAN]),
            _ipa_pod("o", labels={"service": "securityscan"}, **BOUND),
            _ipa_pod("o", labels={"service": "aaaa"}, **BOUND),
            Q,
            id="modify pod label to change it from satisfying pod anti-affinity to not "
            "satisfying anti-affinity",
        ),
        pytest.param(
            _ipa_pod(anti=[_SCAN]),
            _ipa_pod("o", labels={"service": "bbb"}, **BOUND),
            _ipa_pod("o", labels={"service": "securityscan"}, **BOUND),
            SKIP,
            id="modify pod label to change it from not satisfying pod anti-affinity to "
            "satisfying anti-affinity",
        ),
        pytest.param(
            _ipa_pod(anti=[_SCAN]),
            _ipa_pod("o", labels={"aaa": "a"}, **BOUND),
            None,
            SKIP,
            id="delete a pod which doesn't match pod's anti-affinity",
        ),
        pytest.param(
            _ipa_pod(anti=[_SCAN]),
            _ipa_pod("o", labels={"service": "securityscan"}, **BOUND),
            None,
            Q,
            id="delete a pod which matches pod's anti-affinity",
        ),
        pytest.param(
            _ipa_pod(labels={"service": "securityscan"}),
            _ipa_pod("o", anti=[_SCAN], **BOUND),
            None,
            Q,
            id="delete a pod with anti-affinity that matches pending pod",
        ),
        pytest.param(
            _ipa_pod(labels={"service": "foo"}),
            _ipa_pod("o", anti=[_SCAN], **BOUND),
            None,
            SKIP,
            id="delete a pod with anti-affinity that doesn't match pending pod",
        ),
        pytest.param(
            _ipa_pod(anti=[_SCAN]),
            _nominated(_ipa_pod("o", labels={"aaa": "a"})),
            None,
            SKIP,
            id="delete a nominated pod which doesn't match pod's anti-affinity",
        ),
        pytest.param(
            _ipa_pod(anti=[_SCAN]),
            _nominated(_ipa_pod("o", labels={"service": "securityscan"})),
            None,
            Q,
            id="delete a nominated pod which matches pod's anti-affinity",
        ),
    ],
)
def test_inter_pod_affinity_after_assigned_pod_change(
    pod: PodInfo, old: PodInfo | None, new: PodInfo | None, want: QueueingHint
) -> None:
    assert ipa_queueing.after_assigned_pod_change(pod, old, new) is want


_ZONE_AFF = _ipa_pod(affinity=[_term("service", "zone", "securityscan", "value2")])


_REGION_AFF = _ipa_pod(affinity=[_SCAN])


_ZONE_ANTI = _ipa_pod(
    anti=[{"labelSelector": {"matchLabels": {"another": "label"}}, "topologyKey": "zone"}]
)


@pytest.mark.parametrize(
    ("pod", "old", "new", "want"),
    [
        pytest.param(
            _ZONE_AFF,
            None,
            hint_node(labels={"zone": "zone1"}),
            Q,
            id="add a new node with matched pod affinity topologyKey",
        ),
        pytest.param(
            _REGION_AFF,
            None,
            hint_node(labels={"zone": "zone1"}),
            SKIP,
            id="add a new node without matched topologyKey",
        ),
        pytest.param(
            _ZONE_AFF,
            hint_node(labels={"aaa": "a"}),
            hint_node(labels={"aaa": "b"}),
            SKIP,
            id="update node label but not topologyKey",
        ),
        pytest.param(
            _ZONE_AFF,
            hint_node(labels={"zone": "zone1"}),
            hint_node(labels={"zone": "zone1", "unrelated-label": "unrelated"}),
            SKIP,
            id="update node label that isn't related to the pod affinity",
        ),
        pytest.param(
            _ZONE_AFF,
            hint_node(labels={"zone": "zone1"}),
            hint_node(labels={"zone": "zone2"}),
            Q,
            id="update node with different affinity topologyKey value",
        ),
        pytest.param(
            _ZONE_AFF,
            hint_node(labels={"aaa": "a"}),
            hint_node(labels={"zone": "zone1"}),
            Q,
            id="update node to have the affinity topology label",
        ),
        pytest.param(
            _ZONE_ANTI,
            None,
            hint_node(labels={"zone": "zone1"}),
            Q,
            id="add a new node with matched pod anti-affinity topologyKey",
        ),
        pytest.param(
            _ZONE_ANTI,
            None,
            hint_node(),
            Q,
            id="add a new node without matched pod anti-affinity topologyKey",
        ),
        pytest.param(
            _ZONE_ANTI,
            hint_node(labels={"zone": "zone1"}),
            hint_node(labels={"zone": "zone1", "unrelated-label": "unrelated"}),
            SKIP,
            id="update node label that isn't related to the pod anti-affinity",
        ),
        pytest.param(
            _ZONE_ANTI,
            hint_node(labels={"zone": "zone1"}),
            hint_node(labels={"zone": "zone2"}),
            Q,
            id="update node with different anti-affinity topologyKey value",
        ),
        pytest.param(
            _ZONE_ANTI,
            hint_node(labels={"aaa": "a"}),
            hint_node(labels={"zone": "zone1"}),
            SKIP,
            id="update node to have the anti-affinity topology label",
        ),
        pytest.param(
            _ZONE_ANTI,
            hint_node(labels={"zone": "zone1"}),
            hint_node(labels={"aaa": "a"}),
            Q,
            id="update node label not to have anti-affinity topology label",
        ),
    ],
)
def test_inter_pod_affinity_after_node_change(
    pod: PodInfo, old: NodeRecord | None, new: NodeRecord, want: QueueingHint
) -> None:
    assert ipa_queueing.after_node_change(pod, old, new) is want
