"""Batch forms of the pod-counting plugins agree with their per-node forms, node by node, on
generated clusters with labelled pods, pod (anti-)affinity, spread constraints, ports, images."""

from __future__ import annotations

import random
from typing import Any

import numpy as np
import pytest

from corral.scheduler.backend.objects import ObjectStore
from corral.scheduler.backend.records import pod_from_json
from corral.scheduler.framework.cycle_state import CycleState
from corral.scheduler.framework.snapshot import Snapshot
from corral.scheduler.framework.types import PodInfo
from corral.scheduler.plugins import (
    balanced_allocation,
    image_locality,
    inter_pod_affinity,
    node_ports,
    pod_topology_spread,
)
from corral.testing.builders import build_cache
from support.pod_builders import labeled_nodes, random_labeled_pod


class HandleStub:
    """Just what these plugins read from the Handle."""

    def __init__(self) -> None:
        self.objects = ObjectStore()
        for name, labels in (("default", {"env": "prod"}), ("other", {"env": "dev"})):
            self.objects.apply("Namespace", "ADDED", {"metadata": {"name": name, "labels": labels}})
        self.objects.apply(
            "Service",
            "ADDED",
            {
                "metadata": {"name": "s", "namespace": "default"},
                "spec": {"selector": {"app": "web"}},
            },
        )


def cluster(seed: int) -> tuple[Snapshot, list[PodInfo]]:
    rng = random.Random(seed)
    nodes = labeled_nodes(rng, 30)
    running = [
        random_labeled_pod(rng, i, node_name=rng.choice(nodes)["metadata"]["name"], prefix="r")
        for i in range(80)
    ]
    cache = build_cache(nodes, running)
    cache.remove_node("n4")  # its pods stay in the cache but must not count
    pods = [pod_from_json(random_labeled_pod(rng, i)) for i in range(40)]
    return cache.snapshot(), pods


FILTERS = [
    pytest.param(inter_pod_affinity.new, None, id="InterPodAffinity"),
    pytest.param(pod_topology_spread.new, None, id="PodTopologySpread"),
    pytest.param(node_ports.new, None, id="NodePorts"),
]
SCORERS = [
    *FILTERS[:2],
    pytest.param(inter_pod_affinity.new, {"hardPodAffinityWeight": 7}, id="InterPodAffinity-hard7"),
    pytest.param(
        pod_topology_spread.new,
        {
            "defaultingType": "List",
            "defaultConstraints": [
                {"maxSkew": 2, "topologyKey": "zone", "whenUnsatisfiable": "ScheduleAnyway"}
            ],
        },
        id="PodTopologySpread-List",
    ),
    pytest.param(image_locality.new, None, id="ImageLocality"),
    pytest.param(balanced_allocation.new, None, id="BalancedAllocation"),
]
SEEDS = [pytest.param(s, id=f"seed{s}") for s in range(4)]


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize(("factory", "args"), FILTERS)
def test_filter_batch_equals_per_node(factory: Any, args: Any, seed: int) -> None:
    snapshot, pods = cluster(seed)
    plugin = factory(args, HandleStub())
    rejected = checked = 0
    for pod in pods:
        state = CycleState()
        _, status = plugin.pre_filter(state, pod, snapshot)
        if status is not None:
            assert status.is_skip or status.is_rejected, status
            continue
        verdict = plugin.filter_batch(state, pod, snapshot)
        for slot in snapshot.order.tolist():
            single = plugin.filter(state, pod, snapshot.node_info(slot))
            checked += 1
            assert bool(verdict.passed[slot]) == (single is None), (pod.name, slot, single)
            if single is not None:
                rejected += 1
                code = 0 if verdict.reasons is None else int(verdict.reasons[slot])
                assert verdict.describe(code) == single
    assert checked, "the generated cases must reach Filter"
    assert rejected, "the generated cases must exercise rejections"


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize(("factory", "args"), SCORERS)
def test_score_batch_equals_per_node(factory: Any, args: Any, seed: int) -> None:
    snapshot, pods = cluster(seed)
    plugin = factory(args, HandleStub())
    rng = random.Random(seed)
    distinct: set[int] = set()
    for pod in pods:
        slots = snapshot.order[np.array(sorted(rng.sample(range(snapshot.num_nodes), 20)))]
        state = CycleState()
        if hasattr(plugin, "pre_score"):
            status = plugin.pre_score(state, pod, snapshot, slots)
            if status is not None:
                assert status.is_skip, status
                continue
        batch, status = plugin.score_batch(state, pod, snapshot, slots)
        assert status is None
        single = [plugin.score(state, pod, snapshot.node_info(s))[0] for s in slots.tolist()]
        assert batch.tolist() == single, pod.name
        distinct.update(single)
        if hasattr(plugin, "normalize_score"):
            a, b = batch.copy(), np.array(single, dtype=np.int64)
            plugin.normalize_score(state, pod, a)
            plugin.normalize_score(state, pod, b)
            assert a.tolist() == b.tolist()
            assert all(0 <= v <= 100 for v in a.tolist())
    assert len(distinct) > 1, "the generated cases must produce varied scores"
