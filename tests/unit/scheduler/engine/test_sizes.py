"""StructureSizes: every source's entries under corral_engine_entries, the cache's three under
upstream's scheduler_scheduler_cache_size; and the real structures' sizes() as they fill."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, generate_latest

from corral.scheduler.backend.cache import Cache
from corral.scheduler.engine.sizes import StructureSizes
from corral.testing.builders import node_record, pod_info


def test_exported_under_both_names() -> None:
    registry = CollectorRegistry()
    registry.register(
        StructureSizes({
            "cache": lambda: {"nodes": 2, "pods": 5, "assumed_pods": 1, "pods.label_values": 9},
            "queue": lambda: {"active": 3},
        })
    )  # fmt: skip
    text = generate_latest(registry).decode()
    for line in (
        'scheduler_scheduler_cache_size{type="nodes"} 2.0',
        'scheduler_scheduler_cache_size{type="pods"} 5.0',
        'scheduler_scheduler_cache_size{type="assumed_pods"} 1.0',
        'corral_engine_entries{structure="cache.pods.label_values"} 9.0',
        'corral_engine_entries{structure="queue.active"} 3.0',
    ):
        assert line in text


def test_cache_sizes_follow_pods_and_vocabularies() -> None:
    cache = Cache()
    cache.add_node(node_record("n1"))
    for i in range(3):
        cache.add_pod(pod_info(f"p{i}", node_name="n1", labels={"job-name": f"j{i}"}))
    sizes = cache.sizes()
    assert (sizes["nodes"], sizes["pods"], sizes["assumed_pods"]) == (1, 3, 0)
    assert sizes["pods.rows"] == 3
    assert sizes["pods.label_values"] == 3
