"""Small statistics helpers (no NumPy needed for these sizes)."""

from __future__ import annotations

import math
from collections.abc import Sequence


def percentile(values: Sequence[float], q: float) -> float:
    """Nearest-rank percentile (``q`` in [0, 100]); 0.0 for no values."""
    if not values:
        return 0.0
    ordered = sorted(values)
    rank = max(1, math.ceil(q / 100 * len(ordered)))
    return ordered[min(rank, len(ordered)) - 1]


def percentiles(values: Sequence[float]) -> dict[str, float]:
    return {
        "p50": percentile(values, 50),
        "p90": percentile(values, 90),
        "p99": percentile(values, 99),
        "max": max(values, default=0.0),
    }


def per_second(offsets: Sequence[float]) -> list[int]:
    """How many of ``offsets`` (seconds from the start) fall in each whole second."""
    if not offsets:
        return []
    series = [0] * (int(max(offsets)) + 1)
    for offset in offsets:
        series[max(0, int(offset))] += 1
    return series
