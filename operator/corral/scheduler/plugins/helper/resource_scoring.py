"""NodeResourcesFit scoring strategies with upstream's integer arithmetic, in two forms:
per node (plain ints) and batch (int64 vectors over nodes). Both take, per configured resource,
the node's allocatable and the requested amount *including* the incoming pod; a resource with
allocatable 0 is left out of the weighted mean (that is how unrequested scalar resources are
skipped).

- LeastAllocated: ``(alloc - req) * 100 // alloc`` (0 when over), weighted mean (floor).
- MostAllocated: ``min(req, alloc) * 100 // alloc``, weighted mean (floor).
- RequestedToCapacityRatio: utilization ``req * 100 // alloc`` (100 when over), mapped through
  the broken-linear shape (scores x10), Go's truncating division; only resources scoring > 0
  count; the mean is rounded half away from zero.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

import numpy as np
import numpy.typing as npt

LEAST_ALLOCATED: Final = "LeastAllocated"
MOST_ALLOCATED: Final = "MostAllocated"
REQUESTED_TO_CAPACITY_RATIO: Final = "RequestedToCapacityRatio"

MAX_UTILIZATION: Final = 100
# Shape scores are 0..10 in the config (MaxCustomPriorityScore) and scaled to 0..100.
SHAPE_SCORE_SCALE: Final = 10

Vec = npt.NDArray[np.int64]
Shape = Sequence[tuple[int, int]]  # (utilization, score) with scores already scaled x10


def _go_div(a: int, b: int) -> int:
    """Go's integer division: truncates toward zero."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def _go_div_vec(a: Vec, b: int) -> Vec:
    return np.asarray(np.sign(a) * (np.abs(a) // b), dtype=np.int64)


def broken_linear(shape: Shape, p: int) -> int:
    """Upstream ``helper.BuildBrokenLinearFunction``."""
    for i, (u, s) in enumerate(shape):
        if p <= u:
            if i == 0:
                return s
            u0, s0 = shape[i - 1]
            return s0 + _go_div((s - s0) * (p - u0), u - u0)
    return shape[-1][1]


def broken_linear_vec(shape: Shape, p: Vec) -> Vec:
    out = np.full(p.shape, shape[-1][1], dtype=np.int64)
    for i in range(len(shape) - 1, -1, -1):  # the smallest i with p <= u_i wins
        u, s = shape[i]
        if i == 0:
            value = np.full(p.shape, s, dtype=np.int64)
        else:
            u0, s0 = shape[i - 1]
            value = s0 + _go_div_vec((s - s0) * (p - u0), u - u0)
        out = np.where(p <= u, value, out)
    return out


def score(
    strategy: str,
    requested: Sequence[int],
    allocatable: Sequence[int],
    weights: Sequence[int],
    shape: Shape = (),
) -> int:
    node_score = weight_sum = 0
    for req, alloc, w in zip(requested, allocatable, weights, strict=True):
        if alloc == 0:
            continue
        if strategy == LEAST_ALLOCATED:
            s = 0 if req > alloc else (alloc - req) * 100 // alloc
        elif strategy == MOST_ALLOCATED:
            s = min(req, alloc) * 100 // alloc
        else:
            util = MAX_UTILIZATION if req > alloc else max(req, 0) * MAX_UTILIZATION // alloc
            s = broken_linear(shape, util)
            if s <= 0:
                continue
        node_score += s * w
        weight_sum += w
    if weight_sum == 0:
        return 0
    if strategy == REQUESTED_TO_CAPACITY_RATIO:
        return (2 * node_score + weight_sum) // (2 * weight_sum)  # math.Round, non-negative
    return node_score // weight_sum


def score_vec(
    strategy: str,
    requested: Sequence[Vec],
    allocatable: Sequence[Vec],
    weights: Sequence[int],
    shape: Shape = (),
) -> Vec:
    n = len(requested[0]) if requested else 0
    node_score = np.zeros(n, dtype=np.int64)
    weight_sum: Vec | int = 0  # an int while every node has every resource (the usual case)
    for req, alloc, w in zip(requested, allocatable, weights, strict=True):
        present = alloc != 0
        everywhere = bool(present.all())
        safe = alloc if everywhere else np.where(present, alloc, 1)
        if strategy == LEAST_ALLOCATED:
            s = np.maximum(alloc - req, 0) * 100 // safe  # over-committed → 0
        elif strategy == MOST_ALLOCATED:
            s = np.minimum(req, alloc) * 100 // safe
        else:
            scaled = np.maximum(req, 0) * MAX_UTILIZATION // safe
            util = np.where(req > alloc, MAX_UTILIZATION, scaled)
            s = broken_linear_vec(shape, util)
            present = present & (s > 0)
            everywhere = False
        if everywhere:
            node_score += s * w
            weight_sum = weight_sum + w
        else:
            node_score += np.where(present, s * w, 0)
            weight_sum = weight_sum + np.where(present, w, 0)
    if isinstance(weight_sum, int):
        if weight_sum == 0:
            return np.zeros(n, dtype=np.int64)
        if strategy == REQUESTED_TO_CAPACITY_RATIO:
            return (2 * node_score + weight_sum) // (2 * weight_sum)
        return node_score // weight_sum
    safe_sum = np.where(weight_sum == 0, 1, weight_sum)
    if strategy == REQUESTED_TO_CAPACITY_RATIO:
        out = (2 * node_score + weight_sum) // (2 * safe_sum)
    else:
        out = node_score // safe_sum
    return np.where(weight_sum == 0, 0, out).astype(np.int64)
