"""Micro-benchmark: CPU time of one preempting scheduling cycle (not a test).

PreemptionBasic's shape without a cluster: N nodes of 4 cpu, each full with four 900m
low-priority pods, and a 3-cpu high-priority pod that fits nowhere. Every cycle runs the
default plugins' Filter, then DefaultPreemption's dry run over the candidate nodes (at least
100, upstream's ``minCandidateNodesAbsolute``) and picks victims; nothing is evicted (no
executor). Times with ``time.process_time`` over many cycles.

    .venv/bin/python bench/preemption_cycle.py [--nodes 200] [--cycles 50]
"""

from __future__ import annotations

import argparse
import random
import time
from typing import Any

from corral.scheduler.backend.cache import Cache
from corral.scheduler.backend.records import node_from_json, pod_from_json
from corral.scheduler.framework.cycle_state import CycleState
from corral.scheduler.framework.runtime.framework import Framework
from corral.scheduler.framework.runtime.schedule_one import scheduling_cycle
from corral.scheduler.framework.runtime.schedule_pod import PodScheduler
from corral.scheduler.plugins.registry import default_profile, in_tree_registry


def _pod(name: str, cpu: str, priority: int, node: str = "") -> dict[str, Any]:
    spec: dict[str, Any] = {
        "priority": priority,
        "containers": [{"name": "c", "resources": {"requests": {"cpu": cpu}}}],
    }
    if node:
        spec["nodeName"] = node
    return {"metadata": {"name": name, "namespace": "bench", "uid": f"uid-{name}"}, "spec": spec}


def _node(name: str) -> dict[str, Any]:
    return {
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
        "spec": {},
        "status": {"allocatable": {"cpu": "4", "memory": "32Gi", "pods": "110"}},
    }


def measure(nodes: int, cycles: int) -> tuple[float, str]:
    """CPU milliseconds per cycle, and the last nominated node."""
    cache = Cache()
    for i in range(nodes):
        cache.add_node(node_from_json(_node(f"n{i}")))
        for j in range(4):
            cache.add_pod(pod_from_json(_pod(f"low-{i}-{j}", "900m", 1, f"n{i}")))
    fwk = Framework(default_profile(), in_tree_registry(), pod_binder=lambda _p, _n: None)
    scheduler = PodScheduler(fwk, rng=random.Random(0))
    preemptor = pod_from_json(_pod("high", "3", 100))
    snapshot = cache.snapshot()
    nominated = ""
    start = time.process_time()
    for _ in range(cycles):
        outcome = scheduling_cycle(scheduler, CycleState(), preemptor, snapshot, cache)
        nominated = outcome.nominated_node_name or ""
    return (time.process_time() - start) / cycles * 1000, nominated


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, nargs="+", default=[200, 1000])
    parser.add_argument("--cycles", type=int, default=50)
    args = parser.parse_args()
    print(" nodes  cpu/preempting cycle  nominated")
    for n in args.nodes:
        ms, nominated = measure(n, args.cycles)
        print(f"{n:6d}  {ms:17.1f} ms  {nominated or '-'}")


if __name__ == "__main__":
    main()
