"""Micro-benchmark: CPU time of one scheduling cycle that allocates a ResourceClaim (not a test).

SchedulingWithResourceClaim's scene without a cluster (``bench.dra_scene``): N nodes, each
with one ResourceSlice of two devices; one claim allocated per node already (the init pods');
then, per cycle, a pod whose claim is not allocated yet goes through upstream's default plugins
(DynamicResources searches every node), is reserved on the chosen node, and its claim's
allocation lands in the informers' store as the API server's answer would, so the next cycle
sees one device fewer and a new claims generation. This is the cycle the first pod of each
five-pod claim pays; the other four only match the allocation's node. Times with
``time.process_time`` over many cycles; the collector as ``corral scheduler`` sets it.

    .venv/bin/python -m bench.dra_cycle [--nodes 500] [--cycles 200]
"""

from __future__ import annotations

import argparse
import copy
import gc
import random
import time
from typing import Any

from bench import dra_scene
from corral.scheduler.backend.cache import Cache
from corral.scheduler.backend.objects import ADDED, MODIFIED, ObjectStore
from corral.scheduler.backend.records import node_from_json, pod_from_json
from corral.scheduler.engine import gc_tuning
from corral.scheduler.framework import listers
from corral.scheduler.framework.cycle_state import CycleState
from corral.scheduler.framework.runtime.framework import Framework
from corral.scheduler.framework.runtime.schedule_one import scheduling_cycle
from corral.scheduler.framework.runtime.schedule_pod import PodScheduler
from corral.scheduler.plugins.dynamic_resources import plugin as dra
from corral.scheduler.plugins.registry import default_profile, in_tree_registry
from corral_dev.dra import device_class

DEVICES_PER_NODE = 2
NAMESPACE = "bench"


def _node(name: str) -> dict[str, Any]:
    return {
        "metadata": {"name": name, "uid": f"uid-{name}",
                     "labels": {"kubernetes.io/hostname": name}},
        "spec": {},
        "status": {"allocatable": {"cpu": "4", "memory": "32Gi", "pods": "110"}},
    }  # fmt: skip


def _with(obj: dict[str, Any], uid: str, version: int) -> dict[str, Any]:
    obj["metadata"].update(uid=uid, resourceVersion=str(version))
    return obj


def _scene(nodes: int, cycles: int) -> tuple[Cache, ObjectStore]:
    names = [f"node-{i}" for i in range(nodes)]
    cache, objects = Cache(), ObjectStore()
    for name in names:
        cache.add_node(node_from_json(_node(name)))
    selector = f'device.driver == "{dra_scene.DRIVER}"'
    cls = _with(dict(device_class(dra_scene.DEVICE_CLASS, selector)), "uid-class", 1)
    objects.apply(listers.DEVICE_CLASS, ADDED, cls)
    for i, name in enumerate(names):
        slice_ = _with(dra_scene.resource_slice(name, DEVICES_PER_NODE), f"uid-s{i}", 10 + i)
        objects.apply(listers.RESOURCE_SLICE, ADDED, slice_)
    for k in range(nodes):  # the init pods and their claims, one device of each node
        claim = _with(dra_scene.claim(f"claim-{k}", "init"), f"uid-i{k}", 10_000 + k)
        claim["status"] = {"allocation": dra_scene._allocation(k, names)}
        objects.apply(listers.RESOURCE_CLAIM, ADDED, claim)
        init = _pod(k, "init")
        init["spec"]["nodeName"] = names[k]
        cache.add_pod(pod_from_json(init))
    for k in range(cycles + 1):
        claim = _with(dra_scene.claim(f"claim-{k}", NAMESPACE), f"uid-m{k}", 20_000 + k)
        objects.apply(listers.RESOURCE_CLAIM, ADDED, claim)
    return cache, objects


def _pod(k: int, namespace: str = NAMESPACE) -> dict[str, Any]:
    return {
        "metadata": {"name": f"pod-{k}", "namespace": namespace, "uid": f"uid-{namespace}-{k}"},
        "spec": {
            "containers": [{"name": "c", "image": "pause"}],
            "resourceClaims": [{"name": "c", "resourceClaimName": f"claim-{k}"}],
        },
    }


def measure(nodes: int, cycles: int) -> tuple[float, int]:
    """CPU milliseconds per allocating cycle, and how many of the cycles found a node."""
    cache, objects = _scene(nodes, cycles)
    fwk = Framework(
        default_profile(), in_tree_registry(), pod_binder=lambda _p, _n: None, objects=objects
    )
    scheduler = PodScheduler(fwk, rng=random.Random(0))
    version = 100_000

    def cycle(k: int) -> bool:
        nonlocal version
        state = CycleState()
        # A snapshot per cycle, as the engine takes: the last cycle's pod is in it (assumed).
        snapshot = cache.snapshot()
        outcome = scheduling_cycle(scheduler, state, pod_from_json(_pod(k)), snapshot, cache)
        if not outcome.ok:
            return False
        s = state.read(dra.STATE_KEY, dra._State)
        assert s is not None
        claim: dict[str, Any] = {
            **copy.deepcopy(s.claims[0]),
            "status": {"allocation": s.chosen[0]},
        }
        version += 1
        objects.apply(listers.RESOURCE_CLAIM, MODIFIED, _with(claim, claim["metadata"]["uid"],
                                                              version))  # fmt: skip
        return True

    cycle(0)  # compiles the class's CEL selector once, as the first pod of a run does
    gc_tuning.configure()
    gc_tuning.freeze()
    start = time.process_time()
    placed = sum(cycle(k) for k in range(1, cycles + 1))
    elapsed = time.process_time() - start
    gc.unfreeze()
    return elapsed / cycles * 1000, placed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, nargs="+", default=[500])
    parser.add_argument("--cycles", type=int, default=200)
    args = parser.parse_args()
    print(" nodes  cpu/allocating cycle  placed")
    for n in args.nodes:
        ms, placed = measure(n, args.cycles)
        print(f"{n:6d}  {ms:17.2f} ms  {placed}/{args.cycles}")


if __name__ == "__main__":
    main()
