"""Pod-level requests (``spec.resources.requests``, PodLevelResources): upstream's ``PodRequests``,
``PodInfo.CalculateResource`` and NodeResourcesFit cases, ids from upstream's tests."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from corral.scheduler.backend.records import pod_from_json, pod_requests
from corral.scheduler.config import quantity
from corral.scheduler.framework.cycle_state import CycleState
from corral.scheduler.framework.status import Code, Status
from corral.scheduler.plugins import node_resources_fit
from corral.testing.builders import container, node, pod, snapshot_of
from corral.testing.framework import FakeHandle

MI = 2**20
SIDECAR = {"restartPolicy": "Always"}


def _spec(
    pod_level: Mapping[str, str] | None = None,
    containers: tuple[Mapping[str, str], ...] = (),
    init: tuple[tuple[Mapping[str, str], bool], ...] = (),
) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "containers": [container(f"c{i}", **r) for i, r in enumerate(containers)],
        "initContainers": [
            {**container(f"i{i}", **r), **(SIDECAR if side else {})}
            for i, (r, side) in enumerate(init)
        ],
    }
    if pod_level is not None:
        spec["resources"] = {"requests": dict(pod_level)}
    return spec


C1 = {"memory": "3Mi", "cpu": "2m"}
I1 = {"memory": "5Mi", "cpu": "4m"}
I2 = {"memory": "6Mi", "cpu": "8m"}


# component-helpers resource/helpers_test.go, TestPodLevelResourceRequests (PodLevelResources on).
@pytest.mark.parametrize(
    ("spec", "want"),
    [
        pytest.param(_spec(), {}, id="nil"),
        pytest.param(
            _spec({"memory": "2Mi"}),
            {"memory": "2Mi"},
            id="pod level memory resource with SkipPodLevelResources false",
        ),
        pytest.param(
            _spec({"memory": "2Mi"}, ({"cpu": "2m"},)),
            {"memory": "2Mi", "cpu": "2m"},
            id="pod level memory and container level cpu resources",
        ),
        pytest.param(
            _spec({"storage": "2Mi"}, ({"storage": "3Mi"},)),
            {"storage": "3Mi"},
            id="pod level unsupported resources set at both pod-level and container-level",
        ),
        pytest.param(
            _spec({"storage": "2Mi"}, ({"memory": "3Mi"},)),
            {"memory": "3Mi"},
            id="pod level unsupported resources set at pod-level",
        ),
        pytest.param(
            _spec({"memory": "6Mi", "cpu": "8m"}, (C1,)),
            {"memory": "6Mi", "cpu": "8m"},
            id="both container-level and pod-level resources set",
        ),
        pytest.param(
            _spec(None, (C1,), ((I1, True), (I2, False))),
            {"memory": "11Mi", "cpu": "12m"},
            id="container-level resources, init and sidecar container set",
        ),
        pytest.param(
            _spec({"memory": "15Mi", "cpu": "18m"}, (C1,), ((I1, True), (I2, False))),
            {"memory": "15Mi", "cpu": "18m"},
            id="pod-level resources, container-level resources, init and sidecar container set",
        ),
        pytest.param(
            _spec({"memory": "10Mi", "hugepages-2Mi": "2Mi"}),
            {"memory": "10Mi", "hugepages-2Mi": "2Mi"},
            id="pod-level resources, hugepage request/limit single page size",
        ),
        pytest.param(
            _spec({"cpu": "1", "hugepages-2Mi": "10Mi"}, ({"hugepages-2Mi": "6Mi"},)),
            {"cpu": "1", "hugepages-2Mi": "10Mi"},
            id="pod-level resources, container-level resources, hugepage single page size",
        ),
        pytest.param(
            _spec(
                {"cpu": "1", "hugepages-2Mi": "10Mi"},
                ({"memory": "4Mi", "hugepages-1Gi": "1Gi"},),
            ),
            {"cpu": "1", "memory": "4Mi", "hugepages-2Mi": "10Mi", "hugepages-1Gi": "1Gi"},
            id="hugepage multiple page sizes between pod-level and container-level",
        ),
        pytest.param(
            {**_spec({"cpu": "1"}, ({"cpu": "2"},)), "overhead": {"cpu": "250m"}},
            {"cpu": "1250m"},
            id="overhead is added to pod-level requests",
        ),
    ],
)
def test_pod_requests(spec: dict[str, Any], want: dict[str, str]) -> None:
    assert pod_requests(spec) == {name: quantity.parse(q) for name, q in want.items()}


# pkg/scheduler/framework/types_test.go, TestCalculatePodResourcesWithResize and friends
# (PodLevelResources on): requests and the node accounting's non-zero cpu millis / memory.
@pytest.mark.parametrize(
    ("spec", "want"),
    [
        pytest.param(
            _spec(
                {"cpu": "1200m", "memory": "1200M"},
                ({"cpu": "500m", "memory": "500M"},),
                (({"cpu": "500m", "memory": "500M"}, False),),
            ),
            (1200, 1_200_000_000, 1200, 1_200_000_000),
            id="1X container and 1X init container with pod-level requests",
        ),
        pytest.param(
            _spec(
                {"cpu": "1200m", "memory": "1200M"},
                ({"cpu": "500m", "memory": "500M"},),
                (({"cpu": "500m", "memory": "500M"}, True),),
            ),
            (1200, 1_200_000_000, 1200, 1_200_000_000),
            id="1X container and 1X sidecar container with pod-level requests",
        ),
        pytest.param(
            _spec({"memory": "1200M"}, ({},), (({}, False),)),
            (0, 1_200_000_000, 100, 1_200_000_000),
            id="1X container with pod-level memory requests",
        ),
        pytest.param(
            _spec({"cpu": "500m"}, ({},), (({}, False),)),
            (500, 0, 500, 200 * MI),
            id="1X container with pod-level cpu requests",
        ),
        pytest.param(
            _spec(
                {"cpu": "500m"},
                ({"ephemeral-storage": "800M"},),
                (({"ephemeral-storage": "500M"}, False),),
            ),
            (500, 0, 500, 200 * MI),
            id="1X container unsupported resources and pod-level supported resources",
        ),
    ],
)
def test_calculate_resource(spec: dict[str, Any], want: tuple[int, int, int, int]) -> None:
    info = pod_from_json({"metadata": {"name": "p"}, "spec": spec})
    got = (
        info.requests.milli_cpu,
        info.requests.memory,
        info.non_zero_milli_cpu,
        info.non_zero_memory,
    )
    assert got == want


@pytest.mark.parametrize(
    ("spec", "accounted", "scored"),
    [
        pytest.param(
            _spec({"cpu": "1", "memory": "1Gi"}, ({},)),
            (1000, 2**30),
            (100, 200 * MI),
            id="the node counts pod-level requests, NodeResourcesFit's scorer does not",
        ),
        pytest.param(
            _spec({"cpu": "1"}, ({"memory": "100Mi"}, {})),
            (1000, 100 * MI),
            (200, 300 * MI),
            id="a resource one container requests is not defaulted for the node",
        ),
        pytest.param(
            _spec({"cpu": "1"}, ({}, {})),
            (1000, 400 * MI),
            (200, 400 * MI),
            id="a resource neither level requests is defaulted per container by both",
        ),
        pytest.param(
            _spec(None, ({"memory": "100Mi"}, {})),
            (200, 300 * MI),
            (200, 300 * MI),
            id="without pod-level requests both views are the same",
        ),
    ],
)
def test_two_non_zero_views(
    spec: dict[str, Any], accounted: tuple[int, int], scored: tuple[int, int]
) -> None:
    # types.go CalculateResource vs resource_allocation.go calculatePodResourceRequest, whose
    # SkipPodLevelResources is true for NodeResourcesFit (fit.go's NewFit leaves its scorer's
    # enablePodLevelResources unset). Checked against kube-scheduler by test_conformance.py.
    info = pod_from_json({"metadata": {"name": "p"}, "spec": spec})
    assert (info.non_zero_milli_cpu, info.non_zero_memory) == accounted
    scored_cpu = info.non_zero_milli_cpu if info.scored_milli_cpu is None else info.scored_milli_cpu
    scored_memory = info.non_zero_memory if info.scored_memory is None else info.scored_memory
    assert (scored_cpu, scored_memory) == scored


# pkg/scheduler/framework/plugins/noderesources/fit_test.go, TestEnoughRequests with
# podLevelResourcesEnabled: the node has 10m cpu, 20 bytes memory, 5 hugepages-2Mi, 32 pods.
_NODE = node("n", cpu="10m", memory="20", pods="32", extra={"hugepages-2Mi": "5"})


@pytest.mark.parametrize(
    ("pod_json", "running", "want"),
    [
        pytest.param(
            pod("p", cpu="1m", memory="1", pod_requests={"cpu": "2m", "memory": "2"}),
            pod("r", cpu="5m", memory="5", node_name="n"),
            None,
            id="both pod-level and container-level resources fit",
        ),
        pytest.param(
            pod("p", cpu="1m", memory="1", pod_requests={"cpu": "7m", "memory": "2"}),
            pod("r", cpu="5m", memory="5", node_name="n"),
            Status(Code.UNSCHEDULABLE, ("Insufficient cpu",)),
            id="pod-level cpu resource not fit",
        ),
        pytest.param(
            pod("p", cpu="1m", memory="1", pod_requests={"cpu": "3m", "memory": "2"}),
            pod("r", cpu="5m", memory="19", node_name="n"),
            Status(Code.UNSCHEDULABLE, ("Insufficient memory",)),
            id="pod-level memory resource not fit",
        ),
        pytest.param(
            pod("p", pod_requests={"cpu": "3m", "memory": "2", "hugepages-2Mi": "5"}),
            None,
            None,
            id="pod-level hugepages resource fit",
        ),
        pytest.param(
            pod(
                "p",
                containers=[container(cpu="1m", memory="1", hugepages_2Mi="3")],
                pod_requests={"cpu": "3m", "memory": "2", "hugepages-2Mi": "5"},
            ),
            None,
            None,
            id="both pod-level and container-level hugepages resource fit",
        ),
        pytest.param(
            pod("p", pod_requests={"cpu": "3m", "memory": "2", "hugepages-2Mi": "10"}),
            None,
            Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ("Insufficient hugepages-2Mi",)),
            id="pod-level hugepages resource not fit",
        ),
        pytest.param(
            pod(
                "p",
                cpu="1m",
                memory="1",
                init_containers=[container("i", cpu="1m", memory="1")],
                pod_requests={"cpu": "3m", "memory": "2"},
            ),
            pod("r", cpu="5m", memory="19", node_name="n"),
            Status(Code.UNSCHEDULABLE, ("Insufficient memory",)),
            id="one pod-level cpu resource fits and all init and non-init containers resources fit",
        ),
    ],
)
def test_fit(pod_json: Any, running: Any, want: Status | None) -> None:
    snapshot = snapshot_of([_NODE], () if running is None else (running,))
    plugin = node_resources_fit.new(None, FakeHandle())
    got = plugin.filter(CycleState(), pod_from_json(pod_json), snapshot.node_info(0))
    assert got == want


def test_fit_scorer_reads_the_scored_view() -> None:
    # Pod-level cpu ignored: cpu 200m (two 100m defaults) of 2000m, memory 300Mi (100Mi + a
    # 200Mi default) of 1000Mi: LeastAllocated (90 + 70) / 2 = 80. The node accounting's view
    # (1000m, 100Mi) would give (50 + 90) / 2 = 70.
    spec = _spec({"cpu": "1"}, ({"memory": "100Mi"}, {}))
    snapshot = snapshot_of([node("n", cpu="2", memory="1000Mi")])
    plugin = node_resources_fit.new(None, FakeHandle())
    state, p = CycleState(), pod_from_json({"metadata": {"name": "p"}, "spec": spec})
    plugin.pre_score(state, p, snapshot, snapshot.order)
    assert plugin.score(state, p, snapshot.node_info(0)) == (80, None)
