"""NodeResourcesBalancedAllocation: upstream 1.36's table (balanced_allocation_test.go), where
the score is ``50 + (50 + balance with the pod - balance without it) / 2``."""

from __future__ import annotations

from typing import Any

import pytest

from corral.scheduler.backend.records import pod_from_json
from corral.scheduler.framework.cycle_state import CycleState
from corral.scheduler.framework.status import Code
from corral.scheduler.plugins import balanced_allocation
from corral.testing.builders import container, node, pod, snapshot_of
from corral.testing.framework import FakeHandle

JSON = dict[str, Any]
GPU = "nvidia.com/gpu"
WITH_GPU = {"resources": [{"name": "cpu"}, {"name": "memory"}, {"name": GPU}]}


def two_containers(**second: str) -> list[JSON]:
    """Upstream's ``Req(cpuAndMemory("1000m", "2000")).Req(cpuAndMemory("2000m", "3000"))``."""
    return [container("a", cpu="1000m", memory="2000"), container("b", **second)]


CPU_AND_MEMORY = two_containers(cpu="2000m", memory="3000")
CPU_ONLY = [container("a", cpu="1000m"), container("b", cpu="2000m")]


def with_gpu(name: str, cpu: str, memory: str, gpus: str) -> JSON:
    return {"name": name, "resources": {"requests": {"cpu": cpu, "memory": memory, GPU: gpus}}}


def running(node_name: str, i: int, containers: list[JSON]) -> JSON:
    return pod(f"running-{i}", node_name=node_name, containers=containers)


CASES = [
    pytest.param(
        CPU_AND_MEMORY,
        [node("node1", cpu="4000m", memory="10000"), node("node2", cpu="6000m", memory="10000")],
        [], None, [68, 75],
        id="nothing scheduled, differently sized nodes: 100->87 gives 68, 100->100 gives 75",
    ),
    pytest.param(
        CPU_AND_MEMORY,
        [node("node1", cpu="10", memory="20000"), node("node2", cpu="10", memory="20000")],
        [running("node1", 1, CPU_ONLY), running("node2", 2, CPU_AND_MEMORY)], None, [73, 74],
        id="pods scheduled: 85->82 gives 73, 97->95 gives 74",
    ),
    pytest.param(
        CPU_AND_MEMORY,
        [node("node1", cpu="10", memory="20000"), node("node2", cpu="10", memory="50000")],
        [running("node1", 1, CPU_ONLY), running("node2", 2, CPU_AND_MEMORY)], None, [73, 70],
        id="pods scheduled, differently sized nodes: 90->80 gives 70",
    ),
    pytest.param(
        [container("a", memory="2000"), container("b", memory="3000")],
        [node("node1", cpu="3", memory="5000"), node("node2", cpu="3", memory="5000")],
        [running("node1", 1, CPU_ONLY)], None, [100, 50],
        id="reaching the maximum (50->100) and the minimum (100->50)",
    ),
    pytest.param(
        CPU_ONLY,
        [node("node1", cpu="6", memory="10000"), node("node2", cpu="6", memory="10000")],
        [running("node1", 1, CPU_ONLY), running("node2", 2, CPU_AND_MEMORY)], None, [62, 62],
        id="requests at node capacity: 75->50 and 100->75 both give 62",
    ),
    pytest.param(
        [with_gpu("a", "0", "0", "1")],
        [node(f"node{i}", cpu="3500m", memory="40000", extra={GPU: "8"}) for i in (1, 2)],
        [running("node1", 1, [container("a", cpu="1000m", memory="2000"),
                              with_gpu("b", "2000m", "3000", "3")]),
         running("node2", 2, CPU_AND_MEMORY)],
        WITH_GPU, [75, 76],
        id="a requested scalar resource counts: 69->70 gives 75, 62->65 gives 76",
    ),
    pytest.param(
        CPU_AND_MEMORY,
        [node("node1", cpu="3500m", memory="40000", extra={GPU: "8"}),
         node("node2", cpu="3500m", memory="40000")],
        [], WITH_GPU, [56, 56],
        id="a scalar resource the pod does not request is left out: 100->63 gives 56",
    ),
]  # fmt: skip


@pytest.mark.parametrize(("containers", "nodes", "pods", "args", "want"), CASES)
@pytest.mark.parametrize("form", ["batch", "per-node", "per-node without PreScore"])
def test_score(
    containers: list[JSON],
    nodes: list[JSON],
    pods: list[JSON],
    args: JSON | None,
    want: list[int],
    form: str,
) -> None:
    snapshot = snapshot_of(nodes, pods)
    plugin = balanced_allocation.new(args, FakeHandle())
    state, p = CycleState(), pod_from_json(pod("incoming", containers=containers))
    if form != "per-node without PreScore":
        assert plugin.pre_score(state, p, snapshot, snapshot.order) is None
    if form == "batch":
        scores, status = plugin.score_batch(state, p, snapshot, snapshot.order)
        assert status is None
        assert scores.tolist() == want
    else:
        got = [plugin.score(state, p, snapshot.node_info(i)) for i in range(len(nodes))]
        assert got == [(w, None) for w in want]


def test_pod_requesting_nothing_is_skipped() -> None:
    snapshot = snapshot_of([node("n")])
    plugin = balanced_allocation.new(None, FakeHandle())
    best_effort = pod_from_json(pod("best-effort", containers=[container("c")]))
    status = plugin.pre_score(CycleState(), best_effort, snapshot, snapshot.order)
    assert status is not None
    assert status.code is Code.SKIP


@pytest.mark.parametrize(
    ("value", "want"),
    [
        pytest.param(7, 3, id="positive floors"),
        pytest.param(-7, -3, id="negative truncates toward zero like Go, not -4"),
        pytest.param(-1, 0, id="minus one is zero"),
        pytest.param(0, 0, id="zero"),
    ],
)
def test_go_half(value: int, want: int) -> None:
    assert balanced_allocation.go_half(value) == want
