"""Raw JSON → records: pod requests (init, sidecar, overhead), non-zero requests, node fields."""

from __future__ import annotations

from typing import Any

import pytest

from corral.scheduler.backend.records import node_from_json, pod_from_json
from corral.testing.builders import container, node, pod

MI = 2**20


@pytest.mark.parametrize(
    ("pod_json", "cpu", "memory", "nz_cpu", "nz_memory"),
    [
        pytest.param(pod("p"), 0, 0, 100, 200 * MI, id="best effort gets non-zero defaults"),
        pytest.param(
            pod("p", containers=[container(cpu="0"), container("d", memory="1Gi")]),
            0,
            2**30,
            100,
            200 * MI + 2**30,
            id="explicit zero stays zero, missing key defaults",
        ),
        pytest.param(
            pod("p", containers=[container(cpu="100m"), container("d", cpu="250m")]),
            350,
            0,
            350,
            400 * MI,
            id="containers are summed",
        ),
        pytest.param(
            pod("p", cpu="1", init_containers=[container("i", cpu="2")]),
            2000,
            0,
            2000,
            200 * MI,
            id="init container max",
        ),
        pytest.param(
            pod(
                "p",
                cpu="1",
                init_containers=[
                    {**container("s", cpu="500m"), "restartPolicy": "Always"},
                    container("i", cpu="1200m"),
                ],
            ),
            1700,
            0,
            1700,
            400 * MI,
            id="sidecar before an init container adds to both",
        ),
        pytest.param(
            pod("p", cpu="1", memory="1Gi", overhead={"cpu": "250m", "memory": "64Mi"}),
            1250,
            2**30 + 64 * MI,
            1250,
            2**30 + 64 * MI,
            id="overhead",
        ),
        pytest.param(
            pod("p", containers=[container(cpu="0.0001"), container("d", cpu="0.0001")]),
            1,
            0,
            1,
            400 * MI,
            id="summed exactly, rounded once",
        ),
    ],
)
def test_pod_requests(pod_json: Any, cpu: int, memory: int, nz_cpu: int, nz_memory: int) -> None:
    info = pod_from_json(pod_json)
    assert (info.requests.milli_cpu, info.requests.memory) == (cpu, memory)
    assert (info.non_zero_milli_cpu, info.non_zero_memory) == (nz_cpu, nz_memory)


def test_pod_fields() -> None:
    raw = pod(
        "p",
        priority=7,
        node_selector={},
        gates=["g"],
        tolerations=({"key": "k", "operator": "Exists"},),
    )
    raw["spec"]["schedulerName"] = "team-a"
    raw["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    info = pod_from_json(raw)
    assert info.priority == 7
    assert info.node_selector == {}  # present but empty is not "absent"
    assert info.scheduling_gates == ("g",)
    assert info.scheduler_name == "team-a"
    assert info.deleting
    assert info.tolerations[0].operator == "Exists"
    assert pod_from_json(pod("q")).node_selector is None


def test_node_fields() -> None:
    record = node_from_json(
        node(
            "n",
            cpu="3500m",
            memory="8Gi",
            pods="30",
            unschedulable=True,
            extra={"example.com/gpu": "2", "hugepages-2Mi": "0"},
            taints=({"key": "k", "effect": "NoSchedule"},),
        )
    )
    alloc = record.allocatable
    assert (alloc.milli_cpu, alloc.memory, alloc.allowed_pods) == (3500, 8 * 2**30, 30)
    assert dict(alloc.scalar) == {"example.com/gpu": 2, "hugepages-2Mi": 0}
    assert record.unschedulable
    assert record.taints[0].key == "k"
    assert record.taints[0].value == ""
