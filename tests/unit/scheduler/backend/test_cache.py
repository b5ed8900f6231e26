"""Cache: assume/forget/confirm/expiry, node state in columns, snapshot isolation, node order."""

from __future__ import annotations

import pytest

from corral.scheduler.backend.cache import Cache, CacheError
from corral.scheduler.backend.node_tree import NodeTree
from corral.scheduler.backend.records import node_from_json, pod_from_json
from corral.scheduler.framework import snapshot as snap
from corral.testing.builders import node, pod


def _cache(*names: str) -> Cache:
    cache = Cache()
    for n in names:
        cache.add_node(node_from_json(node(n, cpu="4")))
    return cache


def _cpu(cache: Cache, name: str) -> int:
    s = cache.snapshot()
    return int(s.requested[snap.ROW_CPU, s.slot_of[name]])


def test_assume_counts_at_once_and_forget_undoes() -> None:
    cache = _cache("n1")
    p = pod_from_json(pod("p", cpu="1"))
    cache.assume_pod(p, "n1")
    assert _cpu(cache, "n1") == 1000
    assert cache.is_assumed(p.uid)
    with pytest.raises(CacheError, match="can't be assumed"):
        cache.assume_pod(p, "n1")
    cache.forget_pod(p)
    assert _cpu(cache, "n1") == 0
    with pytest.raises(CacheError, match="wasn't assumed"):
        cache.forget_pod(p)


def test_bound_event_confirms_assumed_pod_even_on_another_node() -> None:
    cache = _cache("n1", "n2")
    p = pod_from_json(pod("p", cpu="1"))
    cache.assume_pod(p, "n1")
    cache.add_pod(pod_from_json(pod("p", cpu="1", node_name="n2")))
    assert not cache.is_assumed(p.uid)
    assert (_cpu(cache, "n1"), _cpu(cache, "n2")) == (0, 1000)
    with pytest.raises(CacheError, match="already in added state"):
        cache.add_pod(pod_from_json(pod("p", cpu="1", node_name="n2")))


@pytest.mark.parametrize(
    ("ttl", "finished", "now", "expired"),
    [
        pytest.param(0.0, True, 1e9, False, id="ttl 0 never expires"),
        pytest.param(30.0, False, 1e9, False, id="still binding never expires"),
        pytest.param(30.0, True, 129.0, False, id="before the deadline"),
        pytest.param(30.0, True, 131.0, True, id="after the deadline"),
    ],
)
def test_expiry(ttl: float, finished: bool, now: float, expired: bool) -> None:
    cache = Cache(ttl=ttl, clock=lambda: 100.0)
    cache.add_node(node_from_json(node("n1")))
    p = pod_from_json(pod("p", cpu="1"))
    cache.assume_pod(p, "n1")
    if finished:
        cache.finish_binding(p)
    assert [x.uid for x in cache.cleanup_assumed_pods(now)] == ([p.uid] if expired else [])
    assert _cpu(cache, "n1") == (0 if expired else 1000)


def test_update_and_remove_pod() -> None:
    cache = _cache("n1")
    old = pod_from_json(pod("p", cpu="1", node_name="n1"))
    cache.add_pod(old)
    new = pod_from_json(pod("p", cpu="2", node_name="n1"))
    cache.update_pod(old, new)
    assert _cpu(cache, "n1") == 2000
    cache.remove_pod(new)
    assert _cpu(cache, "n1") == 0
    with pytest.raises(CacheError, match="not found"):
        cache.remove_pod(new)


def test_pods_seen_before_their_node_count_when_it_arrives() -> None:
    cache = Cache()
    cache.add_pod(pod_from_json(pod("p", cpu="1", node_name="late")))
    cache.add_node(node_from_json(node("late")))
    assert _cpu(cache, "late") == 1000
    s = cache.snapshot()
    assert int(s.requested[snap.ROW_PODS, s.slot_of["late"]]) == 1


def test_snapshot_is_isolated_from_later_changes() -> None:
    cache = _cache("n1")
    before = cache.snapshot()
    cache.assume_pod(pod_from_json(pod("p", cpu="1")), "n1")
    cache.add_node(
        node_from_json(
            node("n1", labels={"zone": "z"}, taints=({"key": "k", "effect": "NoSchedule"},))
        )
    )
    cache.add_node(node_from_json(node("n2")))
    after = cache.snapshot()
    slot = before.slot_of["n1"]
    assert int(before.requested[snap.ROW_CPU, slot]) == 0
    assert before.label("zone") is None
    assert before.num_nodes == 1
    assert before.taints.shape[1] == 0
    assert int(after.requested[snap.ROW_CPU, slot]) == 1000
    assert after.label_vocab["zone"].values[int(after.label("zone")[slot])] == "z"  # type: ignore[index]
    assert after.num_nodes == 2
    assert cache.snapshot() is after  # nothing changed: the same snapshot


def test_node_update_and_removal() -> None:
    cache = _cache("n1", "n2")
    cache.add_node(node_from_json(node("n1", cpu="8", labels={"a": "1"})))
    s = cache.snapshot()
    assert int(s.allocatable[snap.ROW_CPU, s.slot_of["n1"]]) == 8000
    cache.remove_node("n1")
    s = cache.snapshot()
    assert "n1" not in s.slot_of
    assert s.num_nodes == 1
    assert [s.names[i] for i in s.order] == ["n2"]
    cache.add_node(node_from_json(node("n3")))  # reuses the freed slot
    s = cache.snapshot()
    assert sorted(s.names[i] for i in s.order) == ["n2", "n3"]
    assert s.node_info(s.slot_of["n3"]).labels.get("a") is None


def test_columns_grow_past_initial_capacity() -> None:
    cache = _cache(*(f"n{i}" for i in range(200)))
    cache.assume_pod(pod_from_json(pod("p", cpu="1")), "n150")
    s = cache.snapshot()
    assert s.num_nodes == 200
    assert _cpu(cache, "n150") == 1000
    assert s.node_info(s.slot_of["n199"]).allocatable.milli_cpu == 4000


def test_node_tree_interleaves_zones() -> None:
    tree = NodeTree()
    for name, zone in [
        ("a1", "a"),
        ("a2", "a"),
        ("a3", "a"),
        ("b1", "b"),
        ("c1", "c"),
        ("c2", "c"),
    ]:
        tree.add(name, {"topology.kubernetes.io/zone": zone})
    assert tree.list() == ["a1", "b1", "c1", "a2", "c2", "a3"]
    assert not tree.add("a2", {"topology.kubernetes.io/zone": "a"})  # same zone: stays put
    assert tree.add("a1", {"topology.kubernetes.io/zone": "b"})  # moved to the end of zone b
    assert tree.list() == ["a2", "b1", "c1", "a3", "a1", "c2"]


def _memory(cache: Cache, name: str) -> int:
    s = cache.snapshot()
    return int(s.requested[snap.ROW_MEMORY, s.slot_of[name]])


_MAX = 2**63 - 1
_EI = 2**60


@pytest.mark.parametrize(
    ("memories", "removed", "expected"),
    [
        pytest.param(["6Ei", "6Ei"], 0, _MAX, id="two pods past int64 saturate, not wrap"),
        pytest.param(["6Ei", "6Ei"], 1, 6 * _EI, id="and removing one is exact again"),
        pytest.param(["6Ei", "6Ei", "6Ei"], 2, 6 * _EI, id="three, two removed"),
        pytest.param(["6Ei", "1Gi"], 0, 6 * _EI + 2**30, id="within int64 as before"),
    ],
)
def test_summed_requests_saturate_at_int64(
    memories: list[str], removed: int, expected: int
) -> None:
    # Upstream's int64 sums wrap: 12 EiB of requests would read as -4 EiB (an empty node).
    cache = Cache()
    cache.add_node(node_from_json(node("n1", cpu="4", memory="7Ei")))
    pods = [pod_from_json(pod(f"p{i}", memory=m, node_name="n1")) for i, m in enumerate(memories)]
    for p in pods:
        cache.add_pod(p)
    for p in pods[:removed]:
        cache.remove_pod(p)
    assert _memory(cache, "n1") == expected
