"""NodeResourceTopologyMatch's Filter (scheduler-plugins): transcribed from SP
(kubernetes-sigs/scheduler-plugins at 903da7df) ``pkg/noderesourcetopology/filter_test.go``
(TestNodeResourceTopology, TestNodeResourceTopologyMultiContainerPodScope,
TestNodeResourceTopologyMultiContainerContainerScope) and
``nodeconfig/topologymanager_test.go``; SP's row names are the ids (SP's own duplicates get a
``#2``). Rows marked "corral:" are Corral's own (the NRT read through the engine's object store,
stale data with discardReservedNodes, policies SP leaves alone)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from corral.scheduler.backend.objects import ADDED
from corral.scheduler.backend.records import pod_from_json
from corral.scheduler.framework.cycle_state import CycleState
from corral.scheduler.framework.status import Code, Status
from corral.scheduler.framework.types import NodeInfo
from corral.scheduler.plugins import node_resource_topology as nrtm
from corral.testing.builders import snapshot_of
from corral.testing.framework import FakeHandle
from support.nrt_objects import (
    guaranteed,
    node_for,
    nrt,
    numa_pod,
    requests_only,
    zone,
)
from support.nrt_objects import (
    requests_and_limits as both,
)

CPU, MEM = "cpu", "memory"
EXT, HP2M = "namespace/extended", "hugepages-2Mi"
NIC, NO_NIC, NIC_NO_NUMA = "vendor/nic1", "vendor/notexistingnic", "vendor.com/old-nic-model"
CONTAINER_LEVEL, POD_LEVEL = "SingleNUMANodeContainerLevel", "SingleNUMANodePodLevel"

# TestNodeResourceTopology's five nodes: (NRT object, extra node-level resources).
NODES: dict[str, tuple[dict[str, Any], dict[str, str]]] = {
    "node1": (nrt("node1", [
        zone(0, {CPU: ("20", "4"), MEM: ("8Gi", "8Gi"), NIC: ("30", "10")}),
        zone(1, {CPU: ("30", "8"), MEM: ("8Gi", "8Gi"), NIC: ("30", "10")}),
    ], policies=[CONTAINER_LEVEL]), {}),
    "node2": (nrt("node2", [
        zone(0, {CPU: ("20", "2"), MEM: ("8Gi", "4Gi"), HP2M: "128Mi", NIC: ("30", "5")}),
        zone(1, {CPU: ("30", "4"), MEM: ("8Gi", "4Gi"), HP2M: "128Mi", NIC: ("30", "2")}),
    ], policies=[CONTAINER_LEVEL]), {NIC_NO_NUMA: "4"}),
    "node3": (nrt("node3", [
        zone(0, {CPU: ("20", "2"), MEM: ("8Gi", "4Gi"), NIC: ("30", "5")}),
        zone(1, {CPU: ("30", "4"), MEM: ("8Gi", "4Gi"), NIC: ("30", "2")}),
    ], policies=[POD_LEVEL]), {}),
    "badly_formed_node": (nrt("badly_formed_node", [
        zone(0, {CPU: ("20", "2"), MEM: ("8Gi", "4Gi"), NIC: ("30", "5")}),
        zone(75, {CPU: ("30", "4"), MEM: ("8Gi", "4Gi"), NIC: ("30", "2")}),
    ], policies=[POD_LEVEL]), {}),
    "extended": (nrt("extended", [
        zone(0, {CPU: ("20", "4"), MEM: ("8Gi", "8Gi"), NIC: ("30", "10")}),
        zone(1, {CPU: ("30", "8"), MEM: ("8Gi", "8Gi"), NIC: ("30", "10")}),
    ], policies=[CONTAINER_LEVEL]), {EXT: "1"}),
}  # fmt: skip
N0, N1, N2, N3, N4 = "node1", "node2", "node3", "badly_formed_node", "extended"
ALIGN_POD = "cannot align pod"
ALIGN_CONTAINER = "cannot align container"
ALIGN_INIT = "cannot align init container"


def _info(raw_node: dict[str, Any]) -> NodeInfo:
    (info,) = snapshot_of([raw_node]).node_infos()
    return info


def _plugin(
    *objects: dict[str, Any], args: dict[str, Any] | None = None
) -> nrtm.NodeResourceTopologyMatch:
    handle = FakeHandle()
    for obj in objects:
        handle.objects.apply(nrtm.KIND, ADDED, obj)
    return nrtm.new(args, handle)


def _result(status: Status | None) -> str | None:
    if status is None:
        return None
    assert status.code == Code.UNSCHEDULABLE, status
    return status.message


def gu(**res: str) -> dict[str, Any]:
    return guaranteed(res)


def many(res: Mapping[str, str], count: int) -> dict[str, Any]:
    """SP makePodByResourceListWithManyContainers."""
    return guaranteed(*([res] * count))


# TestNodeResourceTopology: (pod, node, want)
TABLE: list[Any] = [
    pytest.param(gu(cpu="2", memory="2Gi", **{EXT: "1", NIC: "3"}), N4, None,
                 id="Guaranteed QoS, pod with extended resource fit"),
    pytest.param(gu(cpu="2", memory="2Gi", **{EXT: "1"}), N4, None,
                 id="Guaranteed QoS, pod with extended resource no devices; pod fit"),
    pytest.param(numa_pod(), N0, None, id="Best effort QoS, pod fit"),
    pytest.param(gu(**{NIC: "5"}), N2, None,
                 id="Best effort QoS requesting devices, Pod Scope Topology policy; pod fit"),
    pytest.param(gu(**{NIC: "20"}), N2, ALIGN_POD,
                 id=(
                     "Best effort QoS requesting devices, Pod Scope Topology policy; pod doesn't"
                     " fit"
                 )),
    pytest.param(gu(**{NIC: "5"}), N1, None,
                 id="Best effort QoS requesting devices, Container Scope Topology policy; pod fit"),
    pytest.param(gu(**{NIC: "20"}), N0, ALIGN_CONTAINER,
                 id=(
                     "Best effort QoS requesting devices, Container Scope Topology policy; pod "
                     "doesn't fit"
                 )),
    pytest.param(gu(**{EXT: "1", NIC: "10"}), N4, None,
                 id=(
                     "Best effort QoS requesting devices and extended resources, Container Scope"
                     " Topology policy; pod doesn't fit"
                 )),
    pytest.param(
        both({CPU: "3", MEM: "3Gi", NIC: "11"}, {CPU: "4", MEM: "4Gi", NIC: "11"}),
        N1,
        ALIGN_CONTAINER,
                 id=(
                     "Best effort QoS, requesting CPU, memory (enough on NUMA) and devices (not "
                     "enough), Container Scope Topology policy; pod doesn't fit"
                 )),
    pytest.param(
        both({CPU: "1", MEM: "1Gi", NIC: "6"}, {CPU: "2", MEM: "2Gi", NIC: "6"}),
        N2,
        ALIGN_POD,
                 id=(
                     "Best effort QoS, requesting CPU, memory (enough on NUMA) and devices (not "
                     "enough), Pod Scope Topology policy; pod doesn't fit"
                 )),
    pytest.param(both({CPU: "1", MEM: "1Gi", NIC: "5"}, {CPU: "2", MEM: "2Gi", NIC: "5"}), N2, None,
                 id=(
                     "Best effort QoS requesting CPU, memory (enough on NUMA) and devices, Pod "
                     "Scope Topology policy; pod fit"
                 )),
    pytest.param(
        both({CPU: "19", MEM: "5Gi", NIC: "5"}, {CPU: "20", MEM: "6Gi", NIC: "5"}), N2, None,
                 id=(
                     "Best effort QoS requesting CPU, memory (not enough on NUMA) and devices, "
                     "Pod Scope Topology policy; pod fit"
                 )),
    pytest.param(both({CPU: "3", MEM: "3Gi", NIC: "5"}, {CPU: "4", MEM: "4Gi", NIC: "5"}), N1, None,
                 id=(
                     "Best effort QoS requesting CPU, memory (enough on NUMA) and devices, "
                     "Container Scope Topology policy; pod fit"
                 )),
    pytest.param(both({CPU: "5", MEM: "5Gi", NIC: "5"}, {CPU: "6", MEM: "6Gi", NIC: "5"}), N1, None,
                 id=(
                     "Best effort QoS requesting CPU, memory (not enough on NUMA) and devices, "
                     "Container Scope Topology policy; pod fit"
                 )),
    pytest.param(gu(cpu="2", memory="2Gi"), N0, None, id="Guaranteed QoS, minimal, pod fit"),
    pytest.param(gu(cpu="8", memory="8Gi"), N0, None,
                 id="Guaranteed QoS, minimal, saturating zone, pod fit"),
    pytest.param(gu(cpu="2", memory="2Gi", **{HP2M: "0", NIC: "3"}), N0, None,
                 id="Guaranteed QoS, zero quantity of unavailable resource, pod fit"),
    pytest.param(gu(cpu="2", memory="2Gi", **{NIC: "3"}), N1, None, id="Guaranteed QoS, pod fit"),
    pytest.param(gu(cpu="2", memory="2Gi", **{HP2M: "64Mi", NIC: "3"}), N1, None,
                 id="Guaranteed QoS, hugepages, pod fit"),
    pytest.param(gu(cpu="4", **{NIC: "3"}), N1, None, id="Burstable QoS, pod fit"),
    pytest.param(gu(cpu="4", **{NIC: "11"}), N1, ALIGN_CONTAINER,
                 id=(
                     "Burstable QoS, requesting CPU and devices (not enough), Container Scope "
                     "Topology policy; pod doesn't fit"
                 )),
    pytest.param(gu(cpu="2", **{NIC: "6"}), N2, ALIGN_POD,
                 id=(
                     "Burstable QoS, requesting CPU and devices (not enough), Pod Scope Topology"
                     " policy; pod doesn't fit"
                 )),
    pytest.param(gu(cpu="2", **{NIC: "5"}), N2, None,
                 id=(
                     "Burstable QoS requesting CPU (enough on NUMA) and devices, Pod Scope "
                     "Topology policy; pod fit"
                 )),
    pytest.param(gu(cpu="20", **{NIC: "5"}), N2, None,
                 id=(
                     "BurstableQoS requesting CPU (not enough on NUMA) and devices, Pod Scope "
                     "Topology policy; pod fit"
                 )),
    pytest.param(gu(cpu="2", **{NIC: "5"}), N1, None,
                 id=(
                     "Burstable QoS requesting CPU (enough on NUMA) and devices, Container Scope"
                     " Topology policy; pod fit"
                 )),
    pytest.param(gu(cpu="4", **{NIC: "5"}), N1, None,
                 id=(
                     "Burstable QoS requesting CPU (not enough on NUMA) and devices, Container "
                     "Scope Topology policy; pod fit"
                 )),
    pytest.param(gu(memory="2Gi", **{NIC: "11"}), N1, ALIGN_CONTAINER,
                 id=(
                     "Burstable QoS, requesting memory (enough on NUMA) and devices (not "
                     "enough), Container Scope Topology policy; pod doesn't fit"
                 )),
    pytest.param(gu(memory="2Gi", **{NIC: "6"}), N2, ALIGN_POD,
                 id=(
                     "Burstable QoS, requesting memory (enough on NUMA) and devices (not "
                     "enough), Pod Scope Topology policy; pod doesn't fit"
                 )),
    pytest.param(gu(memory="2Gi", **{NIC: "5"}), N2, None,
                 id=(
                     "Burstable QoS requesting memory (enough on NUMA) and devices, Pod Scope "
                     "Topology policy; pod fit"
                 )),
    pytest.param(gu(memory="5Gi", **{NIC: "5"}), N2, None,
                 id=(
                     "Burstable QoS requesting memory (not enough on NUMA) and devices, Pod "
                     "Scope Topology policy; pod fit"
                 )),
    pytest.param(gu(memory="4Gi", **{NIC: "5"}), N1, None,
                 id=(
                     "Burstable QoS requesting memory (enough on NUMA) and devices, Container "
                     "Scope Topology policy; pod fit"
                 )),
    pytest.param(gu(memory="5Gi", **{NIC: "5"}), N1, None,
                 id=(
                     "Burstable QoS requesting memory (not enough on NUMA) and devices, "
                     "Container Scope Topology policy; pod fit"
                 )),
    pytest.param(requests_only({CPU: "4", MEM: "4Gi", NIC: "11"}), N1, ALIGN_CONTAINER,
                 id=(
                     "Burstable QoS, requesting CPU, memory (enough on NUMA) and devices (not "
                     "enough), Container Scope Topology policy; pod doesn't fit"
                 )),
    pytest.param(requests_only({CPU: "2", MEM: "2Gi", NIC: "6"}), N2, ALIGN_POD,
                 id=(
                     "Burstable QoS, requesting CPU, memory (enough on NUMA) and devices (not "
                     "enough), Pod Scope Topology policy; pod doesn't fit"
                 )),
    pytest.param(requests_only({CPU: "2", MEM: "2Gi", NIC: "5"}), N2, None,
                 id=(
                     "Burstable QoS requesting CPU, memory (enough on NUMA) and devices, Pod "
                     "Scope Topology policy; pod fit"
                 )),
    pytest.param(requests_only({CPU: "20", MEM: "5Gi", NIC: "5"}), N2, None,
                 id=(
                     "Burstable QoS requesting CPU, memory (not enough on NUMA) and devices, Pod"
                     " Scope Topology policy; pod fit"
                 )),
    pytest.param(requests_only({CPU: "4", MEM: "4Gi", NIC: "5"}), N1, None,
                 id=(
                     "Burstable QoS requesting CPU, memory (enough on NUMA) and devices, "
                     "Container Scope Topology policy; pod fit"
                 )),
    pytest.param(requests_only({CPU: "5", MEM: "5Gi", NIC: "5"}), N1, None,
                 id=(
                     "Burstable QoS requesting CPU, memory (not enough on NUMA) and devices, "
                     "Container Scope Topology policy; pod fit"
                 )),
    pytest.param(gu(cpu="4", **{EXT: "1", NIC: "3"}), N4, None,
                 id="Burstable QoS with extended resources, pod fit"),
    pytest.param(gu(cpu="2", memory="2Gi", **{HP2M: "256Mi", NIC: "3"}), N1, ALIGN_CONTAINER,
                 id="Guaranteed QoS, hugepages, pod doesn't fit"),
    pytest.param(gu(cpu="9", memory="1Gi", **{NIC: "3"}), N0, ALIGN_CONTAINER,
                 id="Guaranteed QoS, pod doesn't fit"),
    pytest.param(gu(cpu="2", memory="1Gi", **{NO_NIC: "0"}), N0, None,
                 id="Guaranteed QoS, pod fit#2"),
    pytest.param(many({CPU: "3", MEM: "1Gi", NO_NIC: "0"}, 3), N2, ALIGN_POD,
                 id="Guaranteed QoS Topology Scope, pod doesn't fit"),
    pytest.param(gu(cpu="1", memory="1Gi"), N2, None,
                 id="Guaranteed QoS Topology Scope, minimal, pod fit"),
    pytest.param(gu(cpu="2", memory="4Gi"), N3, None,
                 id="Guaranteed QoS TopologyScope, minimal, saturating zone, pod fit"),
    pytest.param(many({CPU: "1", MEM: "1Gi", NO_NIC: "0"}, 3), N2, None,
                 id="Guaranteed QoS Topology Scope, pod fit"),
    pytest.param(many({CPU: "1", MEM: "1Gi", NO_NIC: "0"}, 3), N3, ALIGN_POD,
                 id="Guaranteed QoS Topology Scope, invalid node"),
    pytest.param(gu(cpu="2", memory="2Gi", **{HP2M: "64Mi", NIC_NO_NUMA: "3"}), N1, None,
                 id="Guaranteed QoS, hugepages, non-NUMA affine NIC, pod fit"),
    pytest.param(gu(cpu="2", memory="2Gi", **{"ephemeral-storage": "100Mi"}), N1, None,
                 id="Guaranteed QoS, ephemeral-storage (non-NUMA), pod fit"),
]  # fmt: skip


@pytest.mark.parametrize(("raw_pod", "node", "want"), TABLE)
def test_nrt_filter_node_resource_topology(
    raw_pod: dict[str, Any], node: str, want: str | None
) -> None:
    topology, extra = NODES[node]
    plugin = _plugin(*(t for t, _ in NODES.values()))
    got = plugin.filter(CycleState(), pod_from_json(raw_pod), _info(node_for(topology, extra)))
    assert _result(got) == want


# TestNodeResourceTopologyMultiContainerPodScope and ...ContainerScope: one node, host0.
def _host0(policy: str) -> dict[str, Any]:
    return nrt("host0", [
        zone(0, {CPU: ("32", "30"), MEM: ("64Gi", "60Gi"), HP2M: "384Mi", NIC: "16"}),
        zone(1, {CPU: "32", MEM: "64Gi", HP2M: "512Mi", NIC: "32"}),
    ], policies=[policy])  # fmt: skip


def _c(cpu: str, memory: str, **more: str) -> dict[str, str]:
    return {CPU: cpu, MEM: memory, **{HP2M if k == "hp" else NIC: v for k, v in more.items()}}


@pytest.mark.parametrize(
    ("containers", "want"),
    [
        pytest.param([_c("2", "2Gi"), _c("4", "8Gi"), _c("26", "32Gi", hp="512Mi", nic="26")], None,
                     id="gu pod fits only on a numa node"),
        pytest.param(
            [_c("2", "2Gi"), _c("8", "8Gi"), _c("26", "26Gi", hp="52Mi", nic="26")],
            ALIGN_POD,
                     id="gu pod does not fit - not enough CPUs available on any NUMA node"),
        pytest.param(
            [_c("2", "4Gi"), _c("4", "16Gi"), _c("26", "52Gi", hp="52Mi", nic="26")],
            ALIGN_POD,
                     id="gu pod does not fit - not enough memory available on any NUMA node"),
        pytest.param(
            [_c("2", "2Gi"), _c("4", "8Gi"), _c("26", "32Gi", hp="3328Mi", nic="26")],
            ALIGN_POD,
                     id="gu pod does not fit - not enough Hugepages available on any NUMA node"),
        pytest.param(
            [_c("2", "2Gi"), _c("4", "8Gi"), _c("26", "26Gi", hp="52Mi", nic="52")],
            ALIGN_POD,
                     id="gu pod does not fit - not enough devices available on any NUMA node"),
    ],
)  # fmt: skip
def test_nrt_filter_multi_container_pod_scope(
    containers: list[dict[str, str]], want: str | None
) -> None:
    topology = _host0(POD_LEVEL)
    got = _plugin(topology).filter(
        CycleState(), pod_from_json(guaranteed(*containers)), _info(node_for(topology))
    )
    assert _result(got) == want


def _cr(cpu: str, memory: str, **more: str) -> dict[str, str]:
    return _c(cpu, memory, **more)


@pytest.mark.parametrize(
    ("inits", "containers", "want"),
    [
        pytest.param([], [_cr("2", "4G")], None,
                     id="[1][tier3] single container with good allocation - fit"),
        pytest.param([], [_cr("40", "4G")], ALIGN_CONTAINER,
                     id="[2][tier3] single container with cpu over allocation - fit"),
        pytest.param([], [_cr("2", "100G")], ALIGN_CONTAINER,
                     id="[2][tier3] single container with memory over allocation - fit"),
        pytest.param([], [_cr("40", "100G")], ALIGN_CONTAINER,
                     id="[2][tier3] single container with cpu and memory over allocation - fit"),
        pytest.param([], [_cr("20", "40G"), _cr("20", "40G")], None,
                     id=(
                         "[4][tier2] multi-containers with good allocation, spread across NUMAs "
                         "- fit"
                     )),
        pytest.param(
            [],
            [_cr("2", "6G", hp="500Mi", nic="16"), _cr("2", "6G", hp="50Mi", nic="8")],
            None,
                     id=(
                         "[4][tier1] multi containers with good devices and hugepages "
                         "allocation, spread across NUMAs - fit"
                     )),
        pytest.param([_cr("40", "40G")], [_cr("1", "4G"), _cr("1", "4G")], ALIGN_INIT,
                     id=(
                         "[7][tier1] init container with cpu over allocation, multi-containers "
                         "with good allocation - not fit"
                     )),
        pytest.param([_cr("4", "70G")], [_cr("1", "4G"), _cr("1", "4G")], ALIGN_INIT,
                     id=(
                         "[7][tier1] init container with memory over allocation, multi-"
                         "containers with good allocation - not fit"
                     )),
        pytest.param([_cr("4", "10G")], [_cr("20", "40G"), _cr("20", "40G")], None,
                     id=(
                         "[11][tier1] init container with good allocation, multi-containers "
                         "spread across NUMAs - fit"
                     )),
        pytest.param(
            [_cr("4", "10G")] * 3,
            [_cr("20", "40G"), _cr("20", "40G"), _cr("6", "10G")],
            None,
                     id=(
                         "[17][tier1] multi init containers with good allocation, multi-"
                         "containers spread across NUMAs - fit"
                     )),
        pytest.param(
            [_cr("30", "10G")] * 2,
            [_cr("20", "40G"), _cr("20", "40G"), _cr("20", "6G")],
            ALIGN_CONTAINER,
                     id=(
                         "[24][tier1] multi init containers with good allocation, multi-"
                         "containers with over cpu allocation - not fit"
                     )),
        pytest.param([_cr("30", "10G")] * 2, [_cr("35", "40G")], ALIGN_CONTAINER,
                     id=(
                         "[27][tier1] multi init containers with good allocation, container with"
                         " cpu over allocation - not fit"
                     )),
        pytest.param([_cr("30", "10G")] * 2, [_cr("20", "40G"), _cr("20", "40G")], None,
                     id=(
                         "[28][tier1] multi init containers with good allocation, multi-"
                         "containers with good allocation - fit"
                     )),
        pytest.param(
            [_cr("30", "10G")] * 3,
            [_cr("20", "40G"), _cr("20", "40G"), _cr("2", "6G")],
            None,
                     id=(
                         "[29][tier1] multi init containers when sum of their cpus requests "
                         "(together) is over allocatable, multi-containers with good allocation "
                         "- fit"
                     )),
        pytest.param(
            [_cr("3", "50G")] * 3,
            [_cr("20", "40G"), _cr("20", "40G"), _cr("2", "6G")],
            None,
                     id=(
                         "[29][tier1] multi init containers when sum of their memory requests "
                         "(together) is over allocatable, multi-containers with good allocation "
                         "- fit"
                     )),
        pytest.param(
            [_cr("40", "50G"), _cr("3", "50G"), _cr("3", "50G")],
            [_cr("20", "40G"), _cr("2", "6G")],
            ALIGN_INIT,
                     id="[32][tier1] multi init containers with over cpu allocation - not fit"),
        pytest.param(
            [_cr("20", "50G"), _cr("40", "50G"), _cr("3", "50G")],
            [_cr("20", "40G"), _cr("2", "6G")],
            ALIGN_INIT,
                     id="[32][tier1] multi init containers with over memory allocation - not fit"),
    ],
)  # fmt: skip
def test_nrt_filter_multi_container_container_scope(
    inits: list[dict[str, str]], containers: list[dict[str, str]], want: str | None
) -> None:
    topology = _host0(CONTAINER_LEVEL)
    raw = guaranteed(*containers, inits=inits)
    got = _plugin(topology).filter(CycleState(), pod_from_json(raw), _info(node_for(topology)))
    assert _result(got) == want
