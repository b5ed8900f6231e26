"""NodeResourceTopologyMatch's Score, args and NRT reading (scheduler-plugins): transcribed from
SP (kubernetes-sigs/scheduler-plugins at 903da7df) ``pkg/noderesourcetopology/score_test.go``
(TestNodeResourceScorePlugin, TestNodeResourceScorePluginLeastNUMA,
TestNodeResourcePartialDataScorePlugin), ``least_numa_test.go`` (TestNUMANodesRequired without
its two 8-zone rows, TestNormalizeScore, TestMinDistance), ``nodeconfig/topologymanager_test.go``
(TestConfigFromAttributes and TestConfigFromPolicies read over the defaults, TestConfigFromNRT),
``apis/config/validation/validation_plugingargs_test.go``
(TestValidateNodeResourceTopologyMatchArgs), ``apis/config/v1/defaults_test.go`` and
``apis/config/scheme/scheme_test.go``; SP's row names are the ids. Rows marked "corral:" are
Corral's own."""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml

from corral.api import load_profile
from corral.render import render
from corral.scheduler.backend.objects import ADDED, DELETED, OPTIONAL_KINDS, QUEUEING_KINDS, WATCHED
from corral.scheduler.backend.records import pod_from_json
from corral.scheduler.config import plugin_args
from corral.scheduler.config.args import encode_plugin_args
from corral.scheduler.config.declarations import BY_NAME
from corral.scheduler.config.errors import ValidationError
from corral.scheduler.framework import listers
from corral.scheduler.framework.cluster_events import NODE, POD, ActionType, ClusterEvent
from corral.scheduler.framework.cycle_state import CycleState
from corral.scheduler.framework.status import Code
from corral.scheduler.plugins import node_resource_topology as nrtm
from corral.scheduler.plugins.node_resource_topology import least_numa
from corral.scheduler.plugins.node_resource_topology import topology as tp
from corral.testing.builders import snapshot_of
from corral.testing.framework import FakeHandle
from support.nrt_objects import guaranteed, node_for, nrt, numa_pod, zone

CPU, MEM, GPU = "cpu", "memory", "gpu"
ROOT = Path(__file__).resolve().parents[5]
CRD = ROOT / "crds/scheduler-plugins/noderesourcetopologies.topology.node.k8s.io.yaml"


def default_numa_nodes(policy: str) -> list[dict[str, Any]]:
    """SP defaultNUMANodes(withPolicy(policy))."""

    def two(name: str, cpu: str, memory: str) -> dict[str, Any]:
        return nrt(name, [zone(0, {CPU: cpu, MEM: memory}), zone(1, {CPU: cpu, MEM: memory})],
                   policies=[policy])  # fmt: skip

    return [two("Node1", "4", "500Mi"), two("Node2", "2", "50Mi"), two("Node3", "6", "60Mi")]


_NEAR = {0: {0: 10, 1: 12, 2: 20, 3: 20}, 1: {0: 12, 1: 10, 2: 20, 3: 20},
         2: {0: 20, 1: 20, 2: 10, 3: 12}, 3: {0: 20, 1: 20, 2: 12, 3: 10}}  # fmt: skip


def four_numa_nodes() -> list[dict[str, Any]]:
    """SP fourNUMANodes: Node1 has its gpus on zones 0 and 1 (near), Node2 on 0 and 2 (far)."""

    def four(name: str, gpus: tuple[str, ...]) -> dict[str, Any]:
        zones = [zone(i, {CPU: "2", MEM: "50Mi", GPU: gpus[i]}, _NEAR[i]) for i in range(4)]
        return nrt(name, zones, policies=["BestEffortContainerLevel"])

    return [four("Node1", ("1", "1", "0", "0")), four("Node2", ("1", "0", "1", "0"))]


def _plugin(
    objects: list[dict[str, Any]], args: dict[str, Any] | None = None
) -> nrtm.NodeResourceTopologyMatch:
    handle = FakeHandle()
    for obj in objects:
        handle.objects.apply(nrtm.KIND, ADDED, obj)
    return nrtm.new(args, handle)


def _scores(
    plugin: nrtm.NodeResourceTopologyMatch, nodes: list[dict[str, Any]], raw_pod: dict[str, Any]
) -> dict[str, int]:
    pod = pod_from_json(raw_pod)
    out: dict[str, int] = {}
    for info in snapshot_of([node_for(t) for t in nodes]).node_infos():
        score, status = plugin.score(CycleState(), pod, info)
        assert status is None
        out[info.name] = score
    return out


POD1 = guaranteed({CPU: "2", MEM: str(20 * 1024 * 1024)})


def _max_node(scores: dict[str, int]) -> tuple[str, int]:
    best = max(scores.values())
    (node,) = [n for n, s in scores.items() if s == best]
    return node, best


@pytest.mark.parametrize(
    ("strategy", "want"),
    [
        pytest.param("MostAllocated", ("Node2", 70), id="MostAllocated strategy"),
        pytest.param("BalancedAllocation", ("Node3", 100), id="BalancedAllocation strategy"),
        pytest.param("LeastAllocated", ("Node1", 73), id="LeastAllocated strategy"),
    ],
)
def test_nrt_score_node_resource_score_plugin(strategy: str, want: tuple[str, int]) -> None:
    nodes = default_numa_nodes("SingleNUMANodeContainerLevel")
    plugin = _plugin(nodes, {"scoringStrategy": {"type": strategy}})
    assert _max_node(_scores(plugin, nodes, POD1)) == want


@pytest.mark.parametrize(
    ("containers", "want", "nodes"),
    [
        pytest.param([{CPU: "2", MEM: "50Mi"}], {"Node1": 94, "Node2": 94, "Node3": 94},
                     "BestEffortContainerLevel", id="container scope, one container case 1"),
        pytest.param([{CPU: "4", MEM: "50Mi"}], {"Node1": 94, "Node2": 82, "Node3": 94},
                     "BestEffortContainerLevel", id="container scope, one container case 2"),
        pytest.param([{CPU: "6", MEM: "50Mi"}], {"Node1": 82, "Node2": 0, "Node3": 94},
                     "BestEffortContainerLevel", id="container scope, one container case 3"),
        pytest.param([{CPU: "2", MEM: "50Mi"}, {CPU: "2", MEM: "50Mi"}],
                     {"Node1": 94, "Node2": 94, "Node3": 94},
                     "BestEffortContainerLevel", id="container scope, two containers case 1"),
        pytest.param([{CPU: "1", MEM: "50Mi"}, {CPU: "3", MEM: "50Mi"}],
                     {"Node1": 94, "Node2": 82, "Node3": 94},
                     "BestEffortContainerLevel", id="container scope, two containers case 2"),
        pytest.param([{CPU: "5", MEM: "50Mi"}, {CPU: "3", MEM: "50Mi"}],
                     {"Node1": 82, "Node2": 0, "Node3": 94},
                     "BestEffortContainerLevel", id="container scope, two containers case 3"),
        pytest.param([{"non-numa-resource": "1"}, {"non-numa-resource": "2"}],
                     {"Node1": 100, "Node2": 100, "Node3": 100},
                     "BestEffortContainerLevel",
                         id=(
                             "container scope, two containers non NUMA resource"
                         )),
        pytest.param([{CPU: "2", MEM: "50Mi"}, {CPU: "2", MEM: "50Mi"}],
                     {"Node1": 94, "Node2": 82, "Node3": 82},
                     "BestEffortPodLevel", id="pod scope, two containers case 1"),
        pytest.param([{CPU: "1", MEM: "50Mi"}, {CPU: "3", MEM: "50Mi"}],
                     {"Node1": 94, "Node2": 82, "Node3": 82},
                     "BestEffortPodLevel", id="pod scope, two containers case 2"),
        pytest.param([{CPU: "5", MEM: "50Mi"}, {CPU: "3", MEM: "50Mi"}],
                     {"Node1": 82, "Node2": 0, "Node3": 82},
                     "BestEffortPodLevel", id="pod scope, two containers case 3"),
        pytest.param([{"non-numa-resource": "1"}], {"Node1": 100, "Node2": 100, "Node3": 100},
                     "BestEffortPodLevel", id="pod scope, one containers non NUMA resource"),
        pytest.param([{CPU: "2", MEM: "50Mi", GPU: "1"}], {"Node1": 94, "Node2": 94},
                     None, id="container scope, one container, 4 NUMA nodes, 1 gpu "),
        pytest.param([{CPU: "2", MEM: "50Mi", GPU: "2"}], {"Node1": 82, "Node2": 76},
                     None, id="container scope, one container, 4 NUMA nodes, 2 gpu "),
        pytest.param([{CPU: "2", MEM: "50Mi", GPU: "2"}, {CPU: "2", MEM: "50Mi"}],
                     {"Node1": 82, "Node2": 76},
                     None,
                         id=(
                             "container scope, 2 containers, 4 NUMA nodes, 2 gpu in one container"
                             " "
                         )),
    ],
)  # fmt: skip
def test_nrt_score_least_numa(
    containers: list[dict[str, str]], want: dict[str, int], nodes: str | None
) -> None:
    topologies = default_numa_nodes(nodes) if nodes else four_numa_nodes()
    plugin = _plugin(topologies, {"scoringStrategy": {"type": "LeastNUMANodes"}})
    assert _scores(plugin, topologies, guaranteed(*containers)) == want


@pytest.mark.parametrize(
    ("strategy", "with_data", "want"),
    [
        pytest.param("MostAllocated", (), None, id="No data at all, MostAllocated strategy"),
        pytest.param("LeastAllocated", (), None, id="No data at all, LeastAllocated strategy"),
        pytest.param("BalancedAllocation", (), None,
                     id="No data at all, BalancedAllocation strategy"),
        pytest.param("MostAllocated", ("Node1",), ("Node1", 27),
                     id="One node with NRT data, MostAllocated strategy"),
        pytest.param("LeastAllocated", ("Node1",), ("Node1", 73),
                     id="One node with NRT data, LeastAllocated strategy"),
        pytest.param("BalancedAllocation", ("Node1",), ("Node1", 89),
                     id="One node with NRT data, BalancedAllocation strategy"),
    ],
)  # fmt: skip
def test_nrt_score_partial_data(
    strategy: str, with_data: tuple[str, ...], want: tuple[str, int] | None
) -> None:
    """A node without NRT data always scores 0."""
    nodes = default_numa_nodes("SingleNUMANodeContainerLevel")
    published = [t for t in nodes if t["metadata"]["name"] in with_data]
    scores = _scores(_plugin(published, {"scoringStrategy": {"type": strategy}}), nodes, POD1)
    if want is None:
        assert set(scores.values()) == {0}
    else:
        assert _max_node(scores) == want
        assert all(s == 0 for n, s in scores.items() if n != want[0])


# --- least_numa_test.go ----------------------------------------------------------------------


def _zone(nid: int, costs: dict[int, int] | None = None, **res: str) -> tp.NUMANode:
    return tp.NUMANode(nid, {k: Fraction(int(v[:-2]) * 2**30) if v.endswith("Gi") else Fraction(v)
                             for k, v in res.items()}, costs or {})  # fmt: skip


def _gi(n: int) -> Fraction:
    return Fraction(n * 2**30)


_C4 = {0: {0: 10, 1: 12, 2: 20, 3: 20}, 1: {0: 12, 1: 10, 2: 20, 3: 20},
       2: {0: 20, 1: 20, 2: 10, 3: 12}, 3: {0: 20, 1: 20, 2: 10, 3: 12}}  # fmt: skip
_C4B = {**_C4, 3: {0: 20, 1: 20, 2: 12, 3: 10}}
_SPARSE = {0: {0: 10, 2: 12, 4: 20, 6: 20}, 2: {0: 12, 2: 10, 4: 20, 6: 20},
           4: {0: 20, 2: 20, 4: 10, 6: 12}, 6: {0: 20, 2: 20, 4: 12, 6: 10}}  # fmt: skip
_GPU_POD = {CPU: Fraction(2), MEM: _gi(2), GPU: Fraction(2)}


@pytest.mark.parametrize(
    ("zones", "wanted", "want"),
    [
        pytest.param([_zone(0, cpu="8", memory="10Gi")], {CPU: Fraction(2), MEM: _gi(2)},
                     ([0], True), id="simple case, fit on 1 NUMA node"),
        pytest.param([_zone(0, cpu="8", memory="10Gi"), _zone(1, cpu="8", memory="10Gi")],
                     {CPU: Fraction(12), MEM: _gi(2)}, ([0, 1], True),
                     id="simple case, fit on 2 NUMA node"),
        pytest.param([_zone(0, cpu="8", memory="10Gi"), _zone(1, cpu="8", memory="10Gi")],
                     {CPU: Fraction(22), MEM: _gi(2)}, (None, False), id="can't fit"),
        pytest.param([_zone(i, _C4[i], gpu=g, cpu="4", memory="5Gi")
                      for i, g in enumerate(("1", "1", "0", "0"))],
                     _GPU_POD, ([0, 1], True), id="4 NUMA node optimal distance"),
        pytest.param([_zone(i, _C4B[i], gpu=g, cpu="4", memory="5Gi")
                      for i, g in enumerate(("1", "0", "1", "0"))],
                     _GPU_POD, ([0, 2], False), id="4 NUMA node non optimal distance"),
        pytest.param([_zone(i, _SPARSE[i], gpu=g, cpu="4", memory="5Gi")
                      for i, g in zip((0, 2, 4, 6), ("1", "1", "0", "0"), strict=True)],
                     _GPU_POD, ([0, 2], True),
                         id=(
                             "4 NUMA node optimal distance, non sequential ids"
                         )),
        pytest.param([_zone(i, _SPARSE[i], gpu=g, cpu="4", memory="5Gi")
                      for i, g in zip((0, 2, 4, 6), ("1", "0", "0", "1"), strict=True)],
                     _GPU_POD, ([0, 6], False),
                     id="4 NUMA node non optimal distance, non sequential ids"),
        pytest.param([_zone(0, _SPARSE[0], gpu="1", cpu="4", memory="5Gi"),
                      _zone(2, _SPARSE[2], gpu="1", cpu="4"),
                      _zone(4, _SPARSE[4], gpu="1", cpu="4", memory="5Gi"),
                      _zone(6, _SPARSE[6], gpu="1", cpu="4")],
                     _GPU_POD, ([0, 4], False),
                     id=(
                         "4 NUMA node non optimal distance, non sequential ids, NUMA node-2 and "
                         "node-6 without memory"
                     )),
    ],
)  # fmt: skip
def test_nrt_numa_nodes_required(
    zones: list[tp.NUMANode], wanted: dict[str, Fraction], want: tuple[list[int] | None, bool]
) -> None:
    assert least_numa.numa_nodes_required("Guaranteed", zones, wanted) == want


@pytest.mark.parametrize(
    ("count", "optimal", "want"),
    [
        pytest.param(1, False, 88, id="1 numa node, non optimal distance"),
        pytest.param(2, False, 76, id="2 numa nodes, non optimal distance"),
        pytest.param(8, False, 4, id="8 numa nodes, non optimal distance"),
        pytest.param(1, True, 94, id="1 numa node, optimal distance"),
        pytest.param(2, True, 82, id="2 numa nodes, optimal distance"),
        pytest.param(8, True, 10, id="8 numa nodes, optimal distance"),
    ],
)
def test_nrt_normalize_score(count: int, optimal: bool, want: int) -> None:
    assert least_numa.normalize_score(count, optimal, tp.DEFAULT_MAX_NUMA_NODES) == want


@pytest.mark.parametrize(
    ("combinations", "costs", "want"),
    [
        pytest.param([(0,), (1,), (2,), (3,)], True, 10, id="single numa node combination"),
        pytest.param([(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3)], True, 11,
                     id="two numa node combination"),
        pytest.param([(0, 1, 2), (1, 2, 3), (0, 2, 3)], True, np.float32(14.888889),
                     id="three numa node combination"),
        pytest.param([(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3)], False, 255,
                     id="two numa node combination, no costs"),
    ],
)  # fmt: skip
def test_nrt_min_distance(combinations: list[tuple[int, ...]], costs: bool, want: float) -> None:
    zones = [tp.NUMANode(i, {}, _C4B[i] if costs else {}) for i in range(4)]
    got = min([np.float32(255), *(least_numa.average_distance(zones, c) for c in combinations)])
    assert got == np.float32(want)


# --- nodeconfig/topologymanager_test.go -------------------------------------------------------

_DEFAULTS = tp.TopologyManager()


def _tm(
    policy: str = tp.POLICY_NONE, scope: str = tp.SCOPE_CONTAINER, nodes: int = 8
) -> tp.TopologyManager:
    return tp.TopologyManager(scope, policy, nodes)


@pytest.mark.parametrize(
    ("attrs", "want"),
    [
        pytest.param(None, _DEFAULTS, id="nil"),
        pytest.param({}, _DEFAULTS, id="empty"),
        pytest.param({"topologyManagerScope": "pod"}, _tm(scope="pod"), id="no-policy"),
        pytest.param({"topologyManagerPolicy": "restricted"}, _tm("restricted"), id="no-scope"),
        pytest.param({"topologyManagerPolicy": "restricted", "topologyManagerScope": "container"},
                     _tm("restricted", "container"), id="complete-case-1"),
        pytest.param({"topologyManagerScope": "pod", "topologyManagerPolicy": "single-numa-node"},
                     _tm("single-numa-node", "pod"), id="complete-case-2"),
        pytest.param({"topologyManagerScope": "Pod", "topologyManagerPolicy": "single-numa-node"},
                     _tm("single-numa-node"), id="error-case-1"),
        pytest.param({"topologyManagerScope": "Container", "topologyManagerPolicy": "restricted"},
                     _tm("restricted"), id="error-case-2"),
        pytest.param({"topologyManagerMaxNUMANodes": "A"}, _DEFAULTS, id="invalid-nodes-string"),
        pytest.param({"topologyManagerMaxNUMANodes": "0"}, _DEFAULTS, id="invalid-nodes-zero"),
        pytest.param({"topologyManagerMaxNUMANodes": "-2"}, _DEFAULTS, id="invalid-nodes-negative"),
        pytest.param({"topologyManagerMaxNUMANodes": "16"}, _tm(nodes=16), id="valid-nodes"),
        pytest.param({"topologyManagerMaxNUMANodes": "65535"}, _tm(nodes=tp.LIMIT_NUMA_NODES),
                     id="valid-nodes-upper-bound"),
    ],
)  # fmt: skip
def test_nrt_config_from_attributes(attrs: dict[str, str] | None, want: tp.TopologyManager) -> None:
    assert tp.topology_manager(nrt("n", [], attributes=attrs)) == want


@pytest.mark.parametrize(
    ("policies", "want"),
    [
        pytest.param((), _DEFAULTS, id="empty"),
        pytest.param(("SingleNUMANodePodLevel",), _tm("single-numa-node", "pod"),
            id=(
                "single-numa-pod"
            )),
        pytest.param(("SingleNUMANodeContainerLevel",), _tm("single-numa-node", "container"),
                     id="single-numa-container"),
        pytest.param(("RestrictedContainerLevel",), _tm("restricted", "container"),
                     id="restricted-container"),
        pytest.param(("RestrictedContainerLevel", "SingleNUMANodePodLevel"),
                     _tm("restricted", "container"), id="skip-policies"),
        pytest.param(("foobar",), _DEFAULTS, id="error-unknown-policy"),
    ],
)  # fmt: skip
def test_nrt_config_from_policies(policies: tuple[str, ...], want: tp.TopologyManager) -> None:
    assert tp.topology_manager(nrt("n", [], policies=policies)) == want


@pytest.mark.parametrize(
    ("policies", "attrs", "want"),
    [
        pytest.param((), None, _DEFAULTS, id="nil"),
        pytest.param(("BestEffortPodLevel",), None, _tm("best-effort", "pod"),
            id=(
                "policies-single"
            )),
        pytest.param(("RestrictedContainerLevel", "BestEffortPodLevel"), None,
                     _tm("restricted", "container"), id="policies-ignore-after-first"),
        pytest.param((), {"topologyManagerPolicy": "restricted"}, _tm("restricted", "container"),
                     id="attributes-partial-policy-only"),
        pytest.param(("BestEffortPodLevel",), {"topologyManagerScope": "container"},
                     _tm("best-effort", "container"), id="attributes-overrides-policy-partial"),
        pytest.param(("BestEffortPodLevel",),
                     {"topologyManagerScope": "container", "topologyManagerPolicy": "restricted"},
                     _tm("restricted", "container"), id="attributes-overrides-policy-full"),
    ],
)  # fmt: skip
def test_nrt_config_from_nrt(
    policies: tuple[str, ...], attrs: dict[str, str] | None, want: tp.TopologyManager
) -> None:
    assert tp.topology_manager(nrt("n", [], policies=policies, attributes=attrs)) == want


# --- args -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "errors"),
    [
        pytest.param({"scoringStrategy": {"type": "MostAllocated"}}, None, id="correct config"),
        pytest.param({"scoringStrategy": {"type": "not existent"}},
                     ['scoringStrategy.type: "not existent": invalid ScoringStrategyType'],
                     id="incorrect config, wrong ScoringStrategy type"),
        pytest.param({"scoringStrategy": {"type": "MostAllocated"}, "preemptionMode": "Disabled"},
                     None, id="correct config with explicit PreemptionMode disabled"),
        pytest.param({"scoringStrategy": {"type": "MostAllocated"}, "preemptionMode": "Enabled"},
                     None, id="correct config with explicit PreemptionMode enabled"),
        pytest.param(
            {"scoringStrategy": {"type": "MostAllocated"}, "preemptionMode": "not existent"},
                     ['preemptionMode: "not existent": invalid PreemptionMode'],
                     id="incorrect config, wrong PreemptionMode"),
        pytest.param({"scoringStrategy": {"resources": [{"name": "cpu", "weight": 2}]}},
                     ['scoringStrategy.type: "": invalid ScoringStrategyType'],
                     id="corral: a strategy without a type is not defaulted (SP's defaulting)"),
        pytest.param(
            {"scoringStrategy": {"type": "LeastAllocated", "requestedToCapacityRatio": {}}},
                     ["scoringStrategy.requestedToCapacityRatio: unknown field; allowed fields: "
                      "resources, type"],
                     id="corral: NodeResourcesFit's strategy fields are not SP's"),
    ],
)  # fmt: skip
def test_nrt_validate_args(args: dict[str, Any], errors: list[str] | None) -> None:
    if errors is None:
        nrtm.new(args, FakeHandle())
        return
    with pytest.raises(ValidationError) as err:
        nrtm.new(args, FakeHandle())
    assert [str(e) for e in err.value.errors] == errors


_WEIGHTS = [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}]
_DEFAULTED = {
    "apiVersion": "kubescheduler.config.k8s.io/v1",
    "kind": "NodeResourceTopologyMatchArgs",
    "scoringStrategy": {"type": "LeastAllocated", "resources": _WEIGHTS},
    "cache": {
        "foreignPodsDetect": "All",
        "resyncMethod": "Autodetect",
        "informerMode": "Dedicated",
    },
    "preemptionMode": "Disabled",
}


@pytest.mark.parametrize(
    ("args", "want"),
    [
        pytest.param(None, _DEFAULTED, id="empty config NodeResourceTopologyMatchArgs"),
        pytest.param({"preemptionMode": "Enabled"}, {**_DEFAULTED, "preemptionMode": "Enabled"},
                     id="set non default NodeResourceTopologyMatchArgs PreemptionMode"),
        pytest.param({"preemptionMode": "Disabled"}, _DEFAULTED,
                     id="v1 NodeResourceTopologyMatch plugin args with explicit PreemptionMode"),
        pytest.param({"scoringStrategy": {"type": "MostAllocated", "resources": [{"name": "cpu"}]}},
                     {**_DEFAULTED, "scoringStrategy": {
                         "type": "MostAllocated", "resources": [{"name": "cpu", "weight": 1}]}},
                     id="corral: a resource without a weight weighs 1"),
    ],
)  # fmt: skip
def test_nrt_args_defaults(args: dict[str, Any] | None, want: dict[str, Any]) -> None:
    typed = plugin_args(nrtm.NAME, args)
    assert encode_plugin_args(nrtm.NAME, typed) == want


# --- Corral's own rows ------------------------------------------------------------------------

_SINGLE = nrt("n1", [zone(0, {CPU: "2", MEM: "4Gi"}), zone(1, {CPU: "4", MEM: "4Gi"})],
              attributes={"topologyManagerPolicy": "single-numa-node",
                          "topologyManagerScope": "pod"})  # fmt: skip


def _node_info() -> Any:
    (info,) = snapshot_of([node_for(_SINGLE)]).node_infos()
    return info


def test_nrt_corral_an_nrt_published_later_is_read() -> None:
    """SP #967: an NRT object created after the plugin started is used (the store is fed by the
    engine's informer); deleting it makes the node unconstrained again."""
    handle = FakeHandle()
    plugin = nrtm.new(None, handle)
    big = pod_from_json(guaranteed({CPU: "5", MEM: "1Gi"}))
    assert plugin.filter(CycleState(), big, _node_info()) is None
    handle.objects.apply(nrtm.KIND, ADDED, _SINGLE)
    got = plugin.filter(CycleState(), big, _node_info())
    assert got is not None
    assert got.message == "cannot align pod"
    handle.objects.apply(nrtm.KIND, DELETED, _SINGLE)
    assert plugin.filter(CycleState(), big, _node_info()) is None


@pytest.mark.parametrize(
    "policy",
    ["none", "best-effort", "restricted"],
)
def test_nrt_corral_only_single_numa_node_filters(policy: str) -> None:
    topology = nrt("n1", _SINGLE["zones"], attributes={"topologyManagerPolicy": policy})
    plugin = _plugin([topology])
    big = pod_from_json(guaranteed({CPU: "5", MEM: "1Gi"}))
    assert plugin.filter(CycleState(), big, _node_info()) is None
    score, _ = plugin.score(CycleState(), big, _node_info())
    assert score == 0  # the allocation strategies score only under single-numa-node


def test_nrt_corral_discard_reserved_nodes_marks_the_data_stale_until_bound() -> None:
    """SP's DiscardReserved cache: a node holding a reserved, unbound pod has stale data."""
    plugin = _plugin([_SINGLE], {"discardReservedNodes": True})
    small = pod_from_json(guaranteed({CPU: "1", MEM: "1Gi"}, name="small"))
    other = pod_from_json(guaranteed({CPU: "1", MEM: "1Gi"}, name="other"))
    assert plugin.filter(CycleState(), small, _node_info()) is None
    plugin.reserve(CycleState(), small, "n1")
    got = plugin.filter(CycleState(), other, _node_info())
    assert got is not None
    assert (got.code, got.message) == (
        Code.UNSCHEDULABLE,
        "invalid node topology data",
    )
    assert plugin.score(CycleState(), other, _node_info()) == (0, None)
    plugin.post_bind(CycleState(), small, "n1")
    assert plugin.filter(CycleState(), other, _node_info()) is None
    plugin.reserve(CycleState(), small, "n1")
    plugin.unreserve(CycleState(), small, "n1")
    assert plugin.filter(CycleState(), other, _node_info()) is None


def test_nrt_corral_without_discard_reserve_keeps_nothing() -> None:
    plugin = _plugin([_SINGLE])
    small = pod_from_json(guaranteed({CPU: "1", MEM: "1Gi"}, name="small"))
    plugin.reserve(CycleState(), small, "n1")
    assert plugin.filter(CycleState(), small, _node_info()) is None


@pytest.mark.parametrize(
    ("raw", "want"),
    [
        pytest.param(numa_pod(), 100, id="corral: best effort scores the maximum"),
        pytest.param(guaranteed({CPU: "1"}), 100, id="corral: burstable scores the maximum"),
        pytest.param(
            guaranteed({CPU: "1", MEM: "1Gi"}),
            56,
            id="corral: guaranteed, pod scope, LeastAllocated: the lowest non-zero zone",
        ),
    ],
)
def test_nrt_corral_score_by_qos(raw: dict[str, Any], want: int) -> None:
    # cpu weighs 3, memory (unlisted) 1. Zone 0: cpu (2-1)*100/2 = 50, memory (4-1)*100/4 = 75:
    # (3*50 + 75) / 4 = 56; zone 1: (3*75 + 75) / 4 = 75. The lowest non-zero zone score: 56.
    plugin = _plugin(
        [_SINGLE],
        {
            "scoringStrategy": {
                "type": "LeastAllocated",
                "resources": [{"name": "cpu", "weight": 3}],
            }
        },
    )
    score, status = plugin.score(CycleState(), pod_from_json(raw), _node_info())
    assert (score, status) == (want, None)


def test_nrt_corral_registers_sp_events() -> None:
    assert tuple(nrtm.new(None, FakeHandle()).events_to_register()) == (
        ClusterEvent(POD, ActionType.DELETE),
        ClusterEvent(NODE, ActionType.ADD | ActionType.UPDATE_NODE_ALLOCATABLE),
        ClusterEvent(listers.NODE_RESOURCE_TOPOLOGY, ActionType.ADD | ActionType.UPDATE),
    )


def test_nrt_crd_serves_what_the_plugin_declares_and_reads() -> None:
    crd = yaml.safe_load(CRD.read_text())
    group, plural = crd["spec"]["group"], crd["spec"]["names"]["plural"]
    (version,) = crd["spec"]["versions"]
    assert crd["spec"]["scope"] == "Cluster"
    declaration = BY_NAME[nrtm.NAME]
    assert declaration.cluster_reads == ((group, plural),)
    assert WATCHED[(group, plural)] == (
        listers.NODE_RESOURCE_TOPOLOGY, f"/apis/{group}/{version['name']}/{plural}",
    )  # fmt: skip
    assert f"{plural}.{version['name']}.{group}" == listers.NODE_RESOURCE_TOPOLOGY
    assert listers.NODE_RESOURCE_TOPOLOGY in OPTIONAL_KINDS
    assert listers.NODE_RESOURCE_TOPOLOGY in QUEUEING_KINDS
    schema = version["schema"]["openAPIV3Schema"]["properties"]
    assert {"zones", "attributes", "topologyPolicies"} <= set(schema)
    zone_fields = schema["zones"]["items"]["properties"]
    assert {"name", "type", "costs", "resources"} <= set(zone_fields)
    kustomization = yaml.safe_load((CRD.parent / "kustomization.yaml").read_text())
    assert CRD.name in kustomization["resources"]
    assert declaration.extension_points == frozenset(nrtm.EXTENSION_POINTS)


def test_nrt_scheduler_is_granted_the_nrt_reads() -> None:
    profile = load_profile(
        {
            "apiVersion": "corral.dev/v1alpha1",
            "kind": "SchedulerProfile",
            "metadata": {"name": "numa", "uid": "u"},
            "spec": {"plugins": {"multiPoint": {"enabled": [{"name": nrtm.NAME}]}}},
        }
    )
    granted = {
        (g, r, v)
        for obj in render(profile).objects
        for rule in obj.get("rules", [])
        for g in rule["apiGroups"]
        for r in rule["resources"]
        for v in rule["verbs"]
    }
    want = {("topology.node.k8s.io", "noderesourcetopologies", v) for v in ("get", "list", "watch")}
    assert want <= granted


def test_nrt_doc_example_places_as_the_page_says() -> None:
    """docs/plugins/NodeResourceTopologyMatch.md: 8 cpus fit only in node-1; 14 fit in no zone
    although the node has 18 free."""
    text = (ROOT / "docs/plugins/NodeResourceTopologyMatch.md").read_text()
    blocks = [yaml.safe_load(b.split("```")[0]) for b in text.split("```yaml\n")[1:]]
    (topology,) = [b for b in blocks if b.get("kind") == "NodeResourceTopology"]
    plugin = _plugin([topology])
    (info,) = snapshot_of([node_for(topology)]).node_infos()
    fits = pod_from_json(guaranteed({CPU: "8", MEM: "1Gi"}))
    assert plugin.filter(CycleState(), fits, info) is None
    zones = tp.numa_nodes(topology)
    assert [z.numa_id for z in zones if z.resources[CPU] >= 8] == [1]
    too_big = pod_from_json(guaranteed({CPU: "14", MEM: "1Gi"}))
    got = plugin.filter(CycleState(), too_big, info)
    assert got is not None
    assert got.message == "cannot align pod"
    assert info.allocatable.milli_cpu == 18_000
