"""Micro-benchmark: CPU time of one scheduling cycle of the embedded engine (not a test).

Builds N nodes in the cache (scheduler_perf's node template: 4 cpu, 32Gi, 110 pods; three
zones; a tenth of the nodes tainted), fills them with running pods, then times full scheduling
cycles (snapshot → PreFilter → Filter → PreScore → Score → select → assume → Reserve → Permit)
with upstream's full default plugin set, over many cycles with ``time.process_time``. Pod
kinds: ``basic`` (requests only), ``affinity`` (node affinity + tolerations), ``spread`` (pod
anti-affinity/affinity preferences and a zone spread constraint, with a fifth of the running
pods carrying the same terms, so InterPodAffinity and PodTopologySpread do real work).

    .venv/bin/python bench/engine_cycle.py [--nodes 500 5000] [--cycles 2000]
"""

from __future__ import annotations

import argparse
import random
import resource
import time
from collections.abc import Callable
from typing import Any

from corral.scheduler.backend.cache import Cache
from corral.scheduler.backend.records import node_from_json, pod_from_json
from corral.scheduler.framework.cycle_state import CycleState
from corral.scheduler.framework.runtime.framework import Framework
from corral.scheduler.framework.runtime.schedule_one import scheduling_cycle
from corral.scheduler.framework.runtime.schedule_pod import PodScheduler
from corral.scheduler.framework.types import PodInfo
from corral.scheduler.plugins.registry import default_profile, in_tree_registry


def node_json(i: int) -> dict[str, Any]:
    taints = [{"key": "dedicated", "value": "infra", "effect": "NoSchedule"}] if i % 10 == 0 else []
    return {
        "metadata": {
            "name": f"node-{i}",
            "labels": {
                "kubernetes.io/hostname": f"node-{i}",
                "topology.kubernetes.io/zone": f"zone-{i % 3}",
                "node.kubernetes.io/instance-type": ("small", "large")[i % 2],
                "rack": str(i % 40),
            },
        },
        "spec": {"taints": taints},
        "status": {"allocatable": {"cpu": "4", "memory": "32Gi", "pods": "110"}},
    }


def pod_json(i: int, *, affinity: bool, spread: bool = False) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "containers": [{"name": "c", "resources": {"requests": {"cpu": "100m", "memory": "500Mi"}}}]
    }
    labels = {"app": f"app-{i % 20}", "color": ("green", "blue")[i % 2]}
    if spread:
        # scheduler_perf's shapes: anti-affinity on hostname (color=green), affinity on zone
        # (color=blue), and a zone spread constraint with maxSkew 5.
        term = {"topologyKey": "kubernetes.io/hostname"}
        spec["affinity"] = {
            "podAntiAffinity": {
                "preferredDuringSchedulingIgnoredDuringExecution": [
                    {
                        "weight": 1,
                        "podAffinityTerm": {
                            **term,
                            "labelSelector": {"matchLabels": {"color": "green"}},
                        },
                    }
                ]
            },
            "podAffinity": {
                "preferredDuringSchedulingIgnoredDuringExecution": [
                    {
                        "weight": 1,
                        "podAffinityTerm": {
                            "topologyKey": "topology.kubernetes.io/zone",
                            "labelSelector": {"matchLabels": {"color": "blue"}},
                        },
                    }
                ]
            },
        }
        spec["topologySpreadConstraints"] = [
            {
                "maxSkew": 5,
                "topologyKey": "topology.kubernetes.io/zone",
                "whenUnsatisfiable": "DoNotSchedule",
                "labelSelector": {"matchLabels": {"app": labels["app"]}},
            }
        ]
    if affinity:
        spec["affinity"] = {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [
                        {"matchExpressions": [{"key": "rack", "operator": "Gt", "values": ["3"]}]}
                    ]
                },
                "preferredDuringSchedulingIgnoredDuringExecution": [
                    {
                        "weight": 5,
                        "preference": {
                            "matchExpressions": [
                                {
                                    "key": "node.kubernetes.io/instance-type",
                                    "operator": "In",
                                    "values": ["large"],
                                }
                            ]
                        },
                    }
                ],
            }
        }
        spec["tolerations"] = [{"key": "dedicated", "operator": "Exists"}]
    meta = {"name": f"p-{i}", "namespace": "bench", "uid": f"uid-{i}", "labels": labels}
    return {"metadata": meta, "spec": spec}


def build(nodes: int, running_per_node: int, *, spread: bool = False) -> Cache:
    cache = Cache()
    for i in range(nodes):
        cache.add_node(node_from_json(node_json(i)))
    for i in range(nodes * running_per_node):
        raw = pod_json(10_000_000 + i, affinity=False, spread=spread and i % 5 == 0)
        raw["spec"]["nodeName"] = f"node-{i % nodes}"
        cache.add_pod(pod_from_json(raw))
    return cache


def run(nodes: int, cycles: int, pct: int, kind: str) -> tuple[float, int]:
    affinity, spread = kind == "affinity", kind == "spread"
    cache = build(nodes, running_per_node=5, spread=spread)
    fwk = Framework(
        default_profile(percentage_of_nodes_to_score=pct),
        in_tree_registry(),
        pod_binder=lambda _pod, _node: None,
    )
    scheduler = PodScheduler(fwk, rng=random.Random(1))
    pods: list[PodInfo] = [
        pod_from_json(pod_json(i, affinity=affinity, spread=spread)) for i in range(cycles)
    ]
    cycle: Callable[[PodInfo], object] = lambda pod: scheduling_cycle(  # noqa: E731
        scheduler, CycleState(), pod, cache.snapshot(), cache
    )
    for pod in pods[:50]:  # warm-up (first snapshot, caches)
        cycle(pod)
    started = time.process_time()
    bound = 0
    for pod in pods[50:]:
        outcome = cycle(pod)
        bound += getattr(outcome, "ok", False)
    elapsed = time.process_time() - started
    return elapsed / (cycles - 50), bound


def snapshot_costs(nodes: int, rounds: int = 2000) -> tuple[float, float, float]:
    """CPU per snapshot, per assume right after one (pays the copy-on-write), and per full
    copy of every column (what a naive per-cycle snapshot would cost)."""
    cache = build(nodes, running_per_node=5)
    pods = [pod_from_json(pod_json(i, affinity=False)) for i in range(rounds)]
    names = cache.node_names()
    started = time.process_time()
    for i, pod in enumerate(pods):
        cache.snapshot()
        cache.assume_pod(pod, names[i % len(names)])
    both = (time.process_time() - started) / rounds
    started = time.process_time()
    for _ in range(rounds):
        cache.snapshot()
    cached = (time.process_time() - started) / rounds
    columns = cache._columns  # a benchmark may look inside
    started = time.process_time()
    for _ in range(rounds // 10):
        columns.allocatable.copy(), columns.requested.copy(), columns.non_zero.copy()
        columns.unschedulable.copy(), columns.taints.copy(), list(columns.names)
        {k: v.copy() for k, v in columns.labels.items()}
    full = (time.process_time() - started) / (rounds // 10)
    return cached, both, full


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, nargs="+", default=[500, 5000])
    parser.add_argument("--cycles", type=int, default=2000)
    args = parser.parse_args()
    print(f"{'nodes':>6} {'pct':>4} {'pod':>9} {'cpu/cycle':>12} {'cycles/s':>9}  bound")
    for n in args.nodes:
        for pct in (0, 100):
            for kind in ("basic", "affinity", "spread"):
                per_cycle, bound = run(n, args.cycles, pct, kind)
                print(
                    f"{n:>6} {pct:>4} {kind:>9} {per_cycle * 1e6:>10.0f}µs "
                    f"{1 / per_cycle:>9.0f}  {bound}/{args.cycles - 50}"
                )
    print()
    header = ("nodes", "snapshot (unchanged)", "snapshot+assume (COW)", "full copy")
    print(f"{header[0]:>6} {header[1]:>21} {header[2]:>22} {header[3]:>10}")
    for n in args.nodes:
        cached, both, full = snapshot_costs(n)
        print(f"{n:>6} {cached * 1e6:>19.1f}µs {both * 1e6:>20.1f}µs {full * 1e6:>8.1f}µs")
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(f"\npeak RSS of this process: {peak / 1024:.0f} MiB")


if __name__ == "__main__":
    main()
