"""Every batch form must agree with its per-node form, node by node, on varied clusters."""

from __future__ import annotations

import random
from typing import Any

import numpy as np
import pytest

from corral.scheduler.framework.cycle_state import CycleState
from corral.scheduler.framework.interface import Plugin
from corral.scheduler.plugins import (
    node_affinity,
    node_name,
    node_resources_fit,
    node_unschedulable,
    taint_toleration,
)
from corral.testing.builders import build_cache
from support.builders import random_nodes, random_pod, random_running_pods

ADDED_AFFINITY = {
    "requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [
            {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a", "b"]}]},
            {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n7"]}]},
        ]
    },
    "preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": 7, "preference": {"matchExpressions": [{"key": "disk", "operator": "Exists"}]}}
    ],
}

RTCR = {
    "scoringStrategy": {
        "type": "RequestedToCapacityRatio",
        "resources": [
            {"name": "cpu", "weight": 2},
            {"name": "memory"},
            {"name": "example.com/gpu", "weight": 3},
        ],
        "requestedToCapacityRatio": {
            "shape": [
                {"utilization": 0, "score": 10},
                {"utilization": 33, "score": 2},
                {"utilization": 100, "score": 7},
            ]
        },
    }
}

PLUGINS = [
    pytest.param(node_unschedulable.new, None, id="NodeUnschedulable"),
    pytest.param(node_name.new, None, id="NodeName"),
    pytest.param(taint_toleration.new, None, id="TaintToleration"),
    pytest.param(node_affinity.new, None, id="NodeAffinity"),
    pytest.param(
        node_affinity.new, {"addedAffinity": ADDED_AFFINITY}, id="NodeAffinity-addedAffinity"
    ),
    pytest.param(node_resources_fit.new, None, id="NodeResourcesFit-LeastAllocated"),
    pytest.param(
        node_resources_fit.new,
        {
            "scoringStrategy": {
                "type": "MostAllocated",
                "resources": [
                    {"name": "cpu"},
                    {"name": "memory", "weight": 5},
                    {"name": "example.com/gpu"},
                ],
            },
            "ignoredResourceGroups": ["ignored.io"],
        },
        id="NodeResourcesFit-MostAllocated",
    ),
    pytest.param(node_resources_fit.new, RTCR, id="NodeResourcesFit-RequestedToCapacityRatio"),
]

SEEDS = [pytest.param(seed, id=f"seed{seed}") for seed in range(4)]


def _cluster(seed: int) -> tuple[Any, list[Any]]:
    rng = random.Random(seed)
    nodes = random_nodes(rng, 40)
    cache = build_cache(nodes, random_running_pods(rng, nodes, 60))
    cache.remove_node("n3")  # a freed slot must stay out of the comparison
    pods = [random_pod(rng, i) for i in range(25)]
    return cache.snapshot(), pods


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize(("factory", "args"), PLUGINS)
def test_filter_batch_equals_per_node(factory: Any, args: Any, seed: int) -> None:
    snapshot, pods = _cluster(seed)
    plugin: Plugin = factory(args, None)
    rejected = 0
    for pod in pods:
        state = CycleState()
        verdict = plugin.filter_batch(state, pod, snapshot)  # type: ignore[attr-defined]
        for slot in snapshot.order.tolist():
            single = plugin.filter(state, pod, snapshot.node_info(slot))  # type: ignore[attr-defined]
            assert bool(verdict.passed[slot]) == (single is None), (pod.name, slot)
            if single is not None:
                rejected += 1
                code = 0 if verdict.reasons is None else int(verdict.reasons[slot])
                assert verdict.describe(code) == single
    if factory is not node_name.new:  # NodeName rejects only pods with spec.nodeName
        assert rejected > 0, "the generated cases must exercise rejections"


SCORERS = [
    p for p in PLUGINS if p.id.startswith(("TaintToleration", "NodeAffinity", "NodeResourcesFit"))
]


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize(("factory", "args"), SCORERS)
def test_score_batch_equals_per_node(factory: Any, args: Any, seed: int) -> None:
    snapshot, pods = _cluster(seed)
    plugin: Any = factory(args, None)
    slots = snapshot.order
    distinct = set()
    for pod in pods:
        state = CycleState()
        if plugin.pre_score(state, pod, snapshot, slots) is not None:
            continue  # Skip: the plugin does not score this pod
        batch, status = plugin.score_batch(state, pod, snapshot, slots)
        assert status is None
        single = [plugin.score(state, pod, snapshot.node_info(s))[0] for s in slots.tolist()]
        assert batch.tolist() == single, pod.name
        distinct.update(single)
        if hasattr(plugin, "normalize_score"):
            normalized = batch.copy()
            again = np.array(single, dtype=np.int64)
            plugin.normalize_score(state, pod, normalized)
            plugin.normalize_score(state, pod, again)
            assert normalized.tolist() == again.tolist()
            assert all(0 <= v <= 100 for v in normalized.tolist())
    assert len(distinct) > 1, "the generated cases must produce varied scores"
