"""Extended resources: nodes advertising devices, pods requesting them (requests = limits)."""

from __future__ import annotations

import random
from typing import Final

from bench.conformance.generate import JSON, Scenario, build
from bench.conformance.kinds import Kind, Sizes, register

GPU: Final = "example.com/gpu"
FPGA: Final = "example.com/fpga"


def _request(pod: JSON, resource: str, amount: int) -> None:
    resources = pod["spec"]["containers"][0]["resources"]
    resources["requests"][resource] = str(amount)
    resources.setdefault("limits", {})[resource] = str(amount)  # extended: limits = requests


def _fit_strategy(rng: random.Random) -> JSON:
    """NodeResourcesFit scoring over the devices too (half of the seeds keep the default)."""
    if rng.random() < 0.5:
        return {}
    resources = [
        {"name": "cpu", "weight": 1},
        {"name": "memory", "weight": 1},
        {"name": GPU, "weight": rng.randint(1, 5)},
    ]
    if rng.random() < 0.5:
        resources.append({"name": FPGA, "weight": rng.randint(1, 3)})
    args = {
        "scoringStrategy": {
            "type": rng.choice(("LeastAllocated", "MostAllocated")),
            "resources": resources,
        }
    }
    config = [{"name": "NodeResourcesFit", "args": args}]
    if rng.random() < 0.5:
        config.append(
            {
                "name": "NodeResourcesBalancedAllocation",
                "args": {"resources": [{"name": "cpu", "weight": 1}, {"name": GPU, "weight": 1}]},
            }
        )
    return {"pluginConfig": config}


def _make(rng: random.Random, seed: int, sizes: Sizes) -> Scenario:
    scenario = build(rng, seed, nodes=sizes.nodes, running=sizes.running, pods=sizes.pods)
    free: dict[str, dict[str, int]] = {}
    for node in scenario.nodes:
        devices = {GPU: rng.choice((0, 0, 1, 2, 4, 8)), FPGA: rng.choice((0, 0, 0, 1, 2))}
        status = node["status"]
        for resource, amount in devices.items():
            if amount:
                status["capacity"][resource] = status["allocatable"][resource] = str(amount)
        free[node["metadata"]["name"]] = devices
    for pod in scenario.running:  # only what its node still has: the state is a feasible one
        room = free[pod["spec"]["nodeName"]]
        for resource in (GPU, FPGA):
            if room[resource] and rng.random() < 0.4:
                amount = rng.randint(1, room[resource])
                room[resource] -= amount
                _request(pod, resource, amount)
    for pod in scenario.pods:
        if rng.random() < 0.5:
            _request(pod, GPU, rng.choice((1, 1, 2, 3, 4, 16)))  # 16: more than any node
        if rng.random() < 0.2:
            _request(pod, FPGA, rng.choice((1, 1, 2)))
    scenario.profile = _fit_strategy(rng)
    return scenario


register(
    Kind(
        "extended",
        "extended resources on nodes and pods, scored by some seeds",
        _make,
        Sizes(nodes=30, running=60, pods=60),
    )
)
