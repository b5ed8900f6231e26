"""Score strategies under single-numa-node (SP ``score.go``, ``least_allocated.go``,
``most_allocated.go``, ``balanced_allocation.go``).

Each strategy scores one NUMA zone for a request, over the resources requested; amounts are
Go's ``Quantity.Value()`` (rounded up to an integer: cpu in cores), divisions are Go's integer
ones:

- LeastAllocated: per resource ``(capacity - requested) * 100 / capacity`` (0 when the zone
  lacks it or has less than requested), weighted by the args' weights (1 when unlisted), summed
  and divided by the weights' sum;
- MostAllocated: the same with ``requested * 100 / capacity``;
- BalancedAllocation: ``(1 - variance(requested / capacity)) * 100`` (the sample variance, as
  gonum's; 0 when any fraction exceeds 1; a zone without the resource counts as fully used).

A node's score for a request is the lowest non-zero zone score (a zone scoring 0 does not fit,
so the kubelet would not use it). Pod scope scores the pod's effective request; container scope
the mean over init and app containers, truncated.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from fractions import Fraction
from typing import Final

from corral.scheduler.config import quantity
from corral.scheduler.framework.interface import MAX_NODE_SCORE
from corral.scheduler.framework.types import PodInfo
from corral.scheduler.plugins.node_resource_topology import requests as rq
from corral.scheduler.plugins.node_resource_topology.topology import NUMANode

MOST_ALLOCATED: Final = "MostAllocated"
LEAST_ALLOCATED: Final = "LeastAllocated"
BALANCED_ALLOCATION: Final = "BalancedAllocation"

DEFAULT_WEIGHT: Final = 1

Weights = Mapping[str, int]
Strategy = Callable[[Mapping[str, Fraction], Mapping[str, Fraction], Weights], int]


def weight(weights: Weights, resource: str) -> int:
    w = weights.get(resource)
    return DEFAULT_WEIGHT if w is None or w < 1 else w


def _least(requested: Fraction, capacity: Fraction) -> int:
    if capacity == 0 or requested > capacity:
        return 0
    cap = quantity.value(capacity)
    return (cap - quantity.value(requested)) * MAX_NODE_SCORE // cap


def _most(requested: Fraction, capacity: Fraction) -> int:
    if capacity == 0 or requested > capacity:
        return 0
    return quantity.value(requested) * MAX_NODE_SCORE // quantity.value(capacity)


def _weighted(
    per_resource: Callable[[Fraction, Fraction], int],
) -> Strategy:
    def strategy(
        requested: Mapping[str, Fraction], available: Mapping[str, Fraction], weights: Weights
    ) -> int:
        total = weight_sum = 0
        for resource, amount in requested.items():
            w = weight(weights, resource)
            total += per_resource(amount, available.get(resource, Fraction(0))) * w
            weight_sum += w
        # Go would divide by zero for a request of nothing; such a request scores 0 here.
        return total // weight_sum if weight_sum else 0

    return strategy


def _fraction(requested: Fraction, capacity: Fraction) -> float:
    cap = quantity.value(capacity)
    if cap == 0:
        return 1.0
    return float(quantity.value(requested)) / float(cap)


def balanced(
    requested: Mapping[str, Fraction], available: Mapping[str, Fraction], weights: Weights
) -> int:
    fractions: list[float] = []
    for resource, amount in requested.items():
        f = _fraction(amount, available.get(resource, Fraction(0)))
        if f > 1:
            return 0
        fractions.append(f)
    if len(fractions) < 2:
        # gonum's sample variance of one value is NaN (0/0); Corral takes it as 0.
        return MAX_NODE_SCORE if fractions else 0
    return int((1 - sample_variance(fractions)) * float(MAX_NODE_SCORE))


def _mean(values: Sequence[float]) -> float:
    total = 0.0
    for v in values:
        total += v
    return total / len(values)


def sample_variance(values: Sequence[float]) -> float:
    """gonum ``stat.Variance(x, nil)``: the unbiased sample variance, compensated."""
    mean = _mean(values)
    ss = compensation = 0.0
    for v in values:
        d = v - mean
        ss += d * d
        compensation += d
    return (ss - compensation * compensation / len(values)) / (len(values) - 1)


STRATEGY_FUNCTIONS: Final[Mapping[str, Strategy]] = {
    MOST_ALLOCATED: _weighted(_most),
    LEAST_ALLOCATED: _weighted(_least),
    BALANCED_ALLOCATION: balanced,
}


def score_for_each_numa_node(
    requested: Mapping[str, Fraction], zones: Sequence[NUMANode], score: Strategy, weights: Weights
) -> int:
    """SP ``scoreForEachNUMANode``: the lowest non-zero zone score (0 if every zone scores 0)."""
    lowest = 0
    for zone in zones:
        s = score(requested, zone.resources, weights)
        if lowest == 0 or (s != 0 and s < lowest):
            lowest = s
    return lowest


def pod_scope(pod: PodInfo, zones: Sequence[NUMANode], score: Strategy, weights: Weights) -> int:
    return score_for_each_numa_node(rq.effective_request(pod), zones, score, weights)


def container_scope(
    pod: PodInfo, zones: Sequence[NUMANode], score: Strategy, weights: Weights
) -> int:
    inits, apps = rq.containers(pod)
    scores = [score_for_each_numa_node(c.requests, zones, score, weights) for c in (*inits, *apps)]
    return int(_mean([float(s) for s in scores])) if scores else 0
