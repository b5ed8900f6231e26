"""NodeInfo what-if copies (upstream ``NodeInfo.AddPod``/``RemovePod``), which preemption's dry
run builds by the thousand: the sums must move exactly, the original must not."""

from __future__ import annotations

from typing import Any

import pytest

from corral.scheduler.backend.records import pod_from_json
from corral.scheduler.framework.types import NodeInfo
from corral.testing.builders import build_cache, node, pod, pod_info

GPU = "example.com/gpu"


def _gpu_pod(name: str, gpus: int, **kw: Any) -> dict[str, Any]:
    requests = {"cpu": "100m", GPU: str(gpus)}
    return pod(name, containers=[{"name": "c", "resources": {"requests": requests}}], **kw)


def _node() -> NodeInfo:
    cache = build_cache(
        [node("a", cpu="8", extra={GPU: "4"})],
        [
            pod("small", cpu="500m", memory="1Gi", node_name="a"),
            pod("big", cpu="2", memory="4Gi", node_name="a"),
            pod("empty", node_name="a"),  # counts by its non-zero defaults only
            _gpu_pod("gpu", 2, node_name="a"),
        ],
    )
    snapshot = cache.snapshot()
    return snapshot.node_info(int(snapshot.order[0]))


def _sums(n: NodeInfo) -> tuple[int, int, int, int, dict[str, int], int, list[str]]:
    r = n.requested
    return (r.milli_cpu, r.memory, n.non_zero_milli_cpu, n.non_zero_memory,
            dict(r.scalar), n.num_pods, sorted(p.name for p in n.pods))  # fmt: skip


@pytest.mark.parametrize(
    "remove",
    [
        pytest.param(["small"], id="one"),
        pytest.param(["small", "big"], id="two"),
        pytest.param(["empty"], id="non-zero defaults"),
        pytest.param(["gpu"], id="scalar resource"),
        pytest.param(["small", "big", "empty", "gpu"], id="all"),
    ],
)
def test_without_pods_equals_removing_one_by_one(remove: list[str]) -> None:
    n = _node()
    before = _sums(n)
    pods = [p for p in n.pods if p.name in remove]
    batch = n.without_pods(pods)
    one_by_one = n
    for p in pods:
        one_by_one = one_by_one.without_pod(p)
    assert _sums(batch) == _sums(one_by_one)
    assert _sums(n) == before  # the original is untouched
    assert sorted(p.name for p in batch.pods) == sorted(set(before[6]) - set(remove))


def test_with_pod_undoes_without_pod() -> None:
    n = _node()
    for p in n.pods:
        assert _sums(n.without_pod(p).with_pod(p)) == _sums(n)


@pytest.mark.parametrize(
    ("what", "want_cpu", "want_gpu"),
    [
        pytest.param("remove small", 2100, 2, id="cpu down by 500m"),
        pytest.param("remove gpu", 2500, 0, id="gpu down by 2"),
        pytest.param("add gpu pod", 2700, 5, id="gpu up by 3"),
    ],
)
def test_requested_sums(what: str, want_cpu: int, want_gpu: int) -> None:
    n = _node()
    by_name = {p.name: p for p in n.pods}
    if what.startswith("remove"):
        changed = n.without_pod(by_name[what.split()[1]])
    else:
        changed = n.with_pod(pod_from_json(_gpu_pod("more", 3)))
    assert changed.requested.milli_cpu == want_cpu
    assert changed.requested.scalar.get(GPU, 0) == want_gpu
    assert n.requested.scalar.get(GPU) == 2


def test_removing_a_pod_not_on_the_node_changes_nothing() -> None:
    n = _node()
    assert n.without_pod(pod_info("elsewhere")) is n
    assert n.without_pods([pod_info("elsewhere")]) is n
