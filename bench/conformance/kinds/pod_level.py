"""Pod-level ``spec.resources`` (PodLevelResources, on since 1.34) next to container requests."""

from __future__ import annotations

import copy
import random

from bench.conformance.generate import JSON, Scenario, build
from bench.conformance.kinds import Kind, Sizes, register
from corral.scheduler.backend.records import pod_requests
from corral.scheduler.config import quantity

MOVE_ALL, DOUBLE_CPU, CPU_AND_BARE_CONTAINER, UNCHANGED = range(4)


def to_pod_level(pod: JSON, variant: int) -> None:
    """Rewrite a generated pod's requests at pod level, never below the containers' effective
    sum (the API server's rule): ``MOVE_ALL`` moves them all there, ``DOUBLE_CPU`` doubles cpu
    there (memory stays in the container), ``CPU_AND_BARE_CONTAINER`` moves cpu there and adds
    a container without requests (where the two non-zero views differ)."""
    spec = pod["spec"]
    requests = spec["containers"][0]["resources"]["requests"]
    effective = pod_requests(spec)
    cpu = f"{quantity.milli_value(effective['cpu'])}m"
    if variant == MOVE_ALL:
        memory = f"{quantity.value(effective['memory'])}"
        spec["resources"] = {"requests": {"cpu": cpu, "memory": memory}}
        requests.clear()
    elif variant == DOUBLE_CPU:
        spec["resources"] = {"requests": {"cpu": f"{2 * quantity.milli_value(effective['cpu'])}m"}}
    elif variant == CPU_AND_BARE_CONTAINER:
        spec["resources"] = {"requests": {"cpu": cpu}}
        del requests["cpu"]
        spec["containers"].append({"name": "bare", "image": spec["containers"][0]["image"]})


def _make(rng: random.Random, seed: int, sizes: Sizes) -> Scenario:
    scenario = build(rng, seed, nodes=sizes.nodes, running=sizes.running, pods=sizes.pods)
    for pod in scenario.running:  # bound pods keep their totals: no overcommit
        to_pod_level(pod, rng.choice((MOVE_ALL, UNCHANGED)))
    for pod in scenario.pods:
        to_pod_level(pod, rng.choice((MOVE_ALL, DOUBLE_CPU, CPU_AND_BARE_CONTAINER, UNCHANGED)))
    # More cpu than any node has, at pod level only: refused everywhere.
    for i in range(max(1, sizes.pods // 30)):
        big = copy.deepcopy(rng.choice(scenario.pods))
        big["metadata"]["name"] = f"pod-level-big-{i}"
        big["spec"]["resources"] = {"requests": {"cpu": "64"}}
        scenario.pods.insert(rng.randrange(len(scenario.pods) + 1), big)
    return scenario


register(
    Kind(
        "pod-level",
        "pod-level requests (all moved, doubled, beside bare containers)",
        _make,
        Sizes(nodes=30, running=60, pods=60),
    )
)
