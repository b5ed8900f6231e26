"""Non-default profiles: scoring strategies, custom weights, disabled plugins, plugin args."""

from __future__ import annotations

import random
from typing import Final

from bench.conformance.generate import JSON, Scenario, build
from bench.conformance.kinds import Kind, Sizes, register

SCORERS: Final = (
    "NodeResourcesFit",
    "NodeResourcesBalancedAllocation",
    "InterPodAffinity",
    "PodTopologySpread",
    "NodeAffinity",
    "TaintToleration",
    "ImageLocality",
)
# Disabled everywhere (multiPoint). Not TaintToleration: a pod on a NoExecute node it does not
# tolerate would be evicted by the controller manager, changing the state under the schedulers.
DISABLEABLE: Final = (
    "InterPodAffinity",
    "PodTopologySpread",
    "NodePorts",
    "ImageLocality",
    "NodeResourcesBalancedAllocation",
    "NodeUnschedulable",
)


def _resources(rng: random.Random) -> list[JSON]:
    return [
        {"name": "cpu", "weight": rng.randint(1, 5)},
        {"name": "memory", "weight": rng.randint(1, 5)},
    ]


def _shape(rng: random.Random) -> list[JSON]:
    """RequestedToCapacityRatio's shape: 2-4 points, increasing utilization, any scores."""
    utilization = sorted(rng.sample(range(0, 101), rng.randint(2, 4)))
    return [{"utilization": u, "score": rng.randint(0, 10)} for u in utilization]


def _strategy(rng: random.Random) -> JSON:
    kind = rng.choice(("LeastAllocated", "MostAllocated", "RequestedToCapacityRatio"))
    strategy: JSON = {"type": kind, "resources": _resources(rng)}
    if kind == "RequestedToCapacityRatio":
        strategy["requestedToCapacityRatio"] = {"shape": _shape(rng)}
    return strategy


def random_profile(rng: random.Random) -> JSON:
    plugins: JSON = {}
    disabled = rng.sample(DISABLEABLE, rng.choice((0, 0, 1, 2)))
    if disabled:
        plugins["multiPoint"] = {"disabled": [{"name": name} for name in disabled]}
    weighted = [p for p in rng.sample(SCORERS, rng.randint(0, 3)) if p not in disabled]
    if weighted:
        plugins["score"] = {
            "enabled": [{"name": name, "weight": rng.randint(1, 10)} for name in weighted]
        }
    config: list[JSON] = [{"name": "NodeResourcesFit", "args": {"scoringStrategy": _strategy(rng)}}]
    if "InterPodAffinity" not in disabled and rng.random() < 0.4:
        config.append(
            {
                "name": "InterPodAffinity",
                "args": {
                    "hardPodAffinityWeight": rng.randint(0, 100),
                    "ignorePreferredTermsOfExistingPods": rng.random() < 0.3,
                },
            }
        )
    if "NodeResourcesBalancedAllocation" not in disabled and rng.random() < 0.3:
        # Upstream accepts only weight 1 here; the resource list itself varies.
        resources = [{"name": name, "weight": 1}
                     for name in rng.choice((["cpu"], ["memory"], ["cpu", "memory"]))]  # fmt: skip
        config.append({"name": "NodeResourcesBalancedAllocation", "args": {"resources": resources}})
    profile: JSON = {"pluginConfig": config}
    if plugins:
        profile["plugins"] = plugins
    return profile


def _make(rng: random.Random, seed: int, sizes: Sizes) -> Scenario:
    scenario = build(rng, seed, nodes=sizes.nodes, running=sizes.running, pods=sizes.pods)
    scenario.profile = random_profile(rng)
    return scenario


register(
    Kind(
        "profiles",
        "MostAllocated / RequestedToCapacityRatio, weights, disabled plugins",
        _make,
        Sizes(nodes=30, running=60, pods=60),
    )
)
