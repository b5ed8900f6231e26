"""The LeastNUMANodes score strategy, under any TopologyManager policy (SP ``least_numa.go``).

A request needs the smallest number of NUMA zones whose summed resources fit it: combinations
of 1, 2, ... zones are tried in lexicographic order; among the fitting ones of that size the
first with the minimal average distance among *all* combinations of that size wins at once (and
is "optimal"), else the fitting one with the lowest average distance. A zone missing any of the
requested resources cannot be part of a combination. Distances are the zones' costs (255,
ACPI SLIT's "unknown", when missing), averaged in float32 as SP does.

The score is ``100 - count * (100 / maxNUMANodes)``, plus half a step when the combination is
optimal. Pod scope scores the effective request (100 if it requests no resource any zone
reports); container scope walks init then app containers, skipping those requesting only
resources no zone reports, subtracting each container's request from the zones it took, and
scores the largest count (optimal only if every container's was); a request that fits in no
combination scores 0.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from fractions import Fraction
from itertools import combinations
from typing import Final

import numpy as np

from corral.scheduler.framework.interface import MAX_NODE_SCORE, MIN_NODE_SCORE
from corral.scheduler.framework.types import PodInfo
from corral.scheduler.plugins.node_resource_topology import requests as rq
from corral.scheduler.plugins.node_resource_topology.filtering import is_suitable
from corral.scheduler.plugins.node_resource_topology.topology import NUMANode

MAX_DISTANCE_VALUE: Final = 255

Combination = tuple[int, ...]  # positions in the zone list


def only_non_numa_resources(zones: Sequence[NUMANode], request: Mapping[str, Fraction]) -> bool:
    return not any(resource in zone.resources for resource in request for zone in zones)


def average_distance(zones: Sequence[NUMANode], combination: Combination) -> np.float32:
    if not combination:
        return np.float32(MAX_DISTANCE_VALUE)
    total = 0
    for a in combination:
        for b in combination:
            total += zones[a].costs.get(zones[b].numa_id, MAX_DISTANCE_VALUE)
    return np.float32(total) / np.float32(len(combination) * len(combination))


def _combined(zones: Sequence[NUMANode], combination: Combination) -> dict[str, Fraction]:
    out: dict[str, Fraction] = {}
    for i in combination:
        for resource, amount in zones[i].resources.items():
            out[resource] = out.get(resource, Fraction(0)) + amount
    return out


def _fits(qos: str, request: Mapping[str, Fraction], available: Mapping[str, Fraction]) -> bool:
    return all(
        is_suitable(qos, resource, wanted, available.get(resource, Fraction(0)))
        for resource, wanted in request.items()
        if wanted != 0
    )


def _has_all(zones: Sequence[NUMANode], request: Mapping[str, Fraction], c: Combination) -> bool:
    return all(resource in zones[i].resources for i in c for resource in request)


def suitable_combination(
    qos: str,
    zones: Sequence[NUMANode],
    request: Mapping[str, Fraction],
    candidates: Sequence[Combination],
) -> tuple[Combination | None, bool]:
    """SP ``findSuitableCombination``: (the combination, whether its distance is minimal)."""
    # SP starts the minimum at 255: costs above it never lower it.
    minimal = min(
        [np.float32(MAX_DISTANCE_VALUE), *(average_distance(zones, c) for c in candidates)]
    )
    best: Combination | None = None
    best_distance = np.float32(256)
    for c in candidates:
        if not _has_all(zones, request, c) or not _fits(qos, request, _combined(zones, c)):
            continue
        distance = average_distance(zones, c)
        if distance == minimal:
            return c, True
        if distance < best_distance:
            best, best_distance = c, distance
    return best, False


def numa_nodes_required(
    qos: str, zones: Sequence[NUMANode], request: Mapping[str, Fraction]
) -> tuple[list[int] | None, bool]:
    """The NUMA ids of the smallest fitting combination and whether it is optimal, or None."""
    for size in range(1, len(zones) + 1):
        found, optimal = suitable_combination(
            qos, zones, request, list(combinations(range(len(zones)), size))
        )
        if found is not None:
            return sorted(zones[i].numa_id for i in found), optimal
    return None, False


def subtract_from_numas(
    request: Mapping[str, Fraction], zones: Sequence[NUMANode], numa_ids: Sequence[int]
) -> None:
    """SP ``subtractFromNUMAs``: each resource taken from the zones in order, as far as each
    has it (zones are found by id; SP indexes its list by id, the same for ids 0..n-1)."""
    by_id = {zone.numa_id: zone for zone in zones}
    for resource, wanted in request.items():
        left = wanted
        for nid in numa_ids:
            if left == 0:
                break
            zone = by_id.get(nid)
            if zone is None or resource not in zone.resources:
                continue
            available = zone.resources[resource]
            if left >= available:
                left -= available
                zone.resources[resource] = Fraction(0)
            else:
                zone.resources[resource] = available - left
                left = Fraction(0)


def normalize_score(count: int, optimal: bool, max_numa_nodes: int) -> int:
    step = MAX_NODE_SCORE // max_numa_nodes
    score = MAX_NODE_SCORE - count * step
    return score + step // 2 if optimal else score


def pod_scope(pod: PodInfo, zones: Sequence[NUMANode], qos: str, max_numa_nodes: int) -> int:
    request = rq.effective_request(pod)
    if only_non_numa_resources(zones, request):
        return MAX_NODE_SCORE
    ids, optimal = numa_nodes_required(qos, zones, request)
    if ids is None:
        return MIN_NODE_SCORE
    return normalize_score(len(ids), optimal, max_numa_nodes)


def container_scope(pod: PodInfo, zones: Sequence[NUMANode], qos: str, max_numa_nodes: int) -> int:
    inits, apps = rq.containers(pod)
    most, all_optimal = 0, True
    for c in (*inits, *apps):
        if only_non_numa_resources(zones, c.requests):
            continue
        ids, optimal = numa_nodes_required(qos, zones, c.requests)
        if ids is None:
            return MIN_NODE_SCORE
        all_optimal = all_optimal and optimal
        most = max(most, len(ids))
        subtract_from_numas(c.requests, zones, ids)
    if most == 0:
        return MAX_NODE_SCORE
    return normalize_score(most, all_optimal, max_numa_nodes)
