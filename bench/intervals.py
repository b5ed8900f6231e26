"""The median of paired ratios and its distribution-free confidence interval.

Each pair of runs (upstream and Corral back to back on fresh identical clusters) gives one
Corral/upstream ratio. Over ``n`` pairs the protocol reports the median ratio and an interval
from two order statistics, ``[x(k), x(n+1-k)]`` of the sorted ratios. For any continuous
distribution of independent ratios the true median lies in it with probability exactly

    1 - 2 * P(Binomial(n, 1/2) <= k - 1)

(the sign test inverted). No assumption about the shape of the distribution is needed, which
matters here: a shared host produces skewed, heavy-tailed slowdowns. ``k`` is the largest whose
coverage is still at least the level asked for. With fewer than six pairs no pair of order
statistics reaches 95% (five pairs give at most 93.75%, for [min, max]); the interval is then
[min, max] and its real coverage is reported beside it, never rounded up to 95%.

A bootstrap was not chosen: with five to ten values its percentile interval of a median is
built from a handful of distinct resamples and covers noticeably less than its nominal level,
and it would hide that behind a random-looking figure.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final

LEVEL: Final = 0.95


def median(values: Sequence[float]) -> float:
    """The sample median (the mean of the two middle values for an even count)."""
    if not values:
        raise ValueError("median of no values")
    ordered = sorted(values)
    mid = len(ordered) // 2
    if len(ordered) % 2:
        return ordered[mid]
    return (ordered[mid - 1] + ordered[mid]) / 2


def coverage(n: int, k: int) -> float:
    """Coverage of ``[x(k), x(n+1-k)]`` for the median of ``n`` independent values."""
    if not 1 <= k <= (n + 1) // 2:
        raise ValueError(f"k must be in 1..{(n + 1) // 2} for n={n}, got {k}")
    below = sum(math.comb(n, i) for i in range(k)) / (1 << n)
    return 1 - 2 * below


def order_statistic_rank(n: int, level: float = LEVEL) -> int:
    """The largest ``k`` whose interval reaches ``level``; 1 (min..max) when none does."""
    best = 1
    for k in range(1, (n + 1) // 2 + 1):
        if coverage(n, k) >= level:
            best = k
    return best


@dataclass(frozen=True)
class Interval:
    """A median with its interval; ``coverage`` is the interval's exact confidence."""

    median: float
    low: float
    high: float
    coverage: float
    n: int

    @property
    def reaches(self) -> bool:
        """True when the interval has at least the protocol's level (95%)."""
        return self.coverage >= LEVEL - 1e-12

    def to_json(self) -> dict[str, float | int]:
        return {"median": self.median, "low": self.low, "high": self.high,
                "coverage": self.coverage, "n": self.n}  # fmt: skip

    @classmethod
    def from_json(cls, data: Mapping[str, float | int]) -> Interval:
        """The inverse of ``to_json``."""
        return cls(float(data["median"]), float(data["low"]), float(data["high"]),
                   float(data["coverage"]), int(data["n"]))  # fmt: skip


def median_interval(values: Sequence[float], level: float = LEVEL) -> Interval:
    """The median of ``values`` and its exact distribution-free interval at ``level``."""
    n = len(values)
    if n == 0:
        raise ValueError("no values")
    ordered = sorted(values)
    k = order_statistic_rank(n, level)
    return Interval(median(ordered), ordered[k - 1], ordered[n - k], coverage(n, k), n)


def verdict(interval: Interval, bound: float, *, higher_is_better: bool) -> str:
    """Judge ``interval`` against ``bound``: ``met`` when the whole interval is on the good side
    (at or above for throughput, at or below for cost), ``missed`` when it is wholly on the bad
    side, ``undecided`` when it straddles the bound."""
    if higher_is_better:
        if interval.low >= bound:
            return "met"
        return "missed" if interval.high < bound else "undecided"
    if interval.high <= bound:
        return "met"
    return "missed" if interval.low > bound else "undecided"


def agree(a: Interval, b: Interval) -> bool:
    """Two runs agree when each one's median lies inside the other's interval."""
    return a.low <= b.median <= a.high and b.low <= a.median <= b.high


def overlap(a: Interval, b: Interval) -> bool:
    """The weaker reading of agreement: the two intervals share a value (each run allows some
    ratio the other allows). Two agreeing runs always overlap."""
    return a.low <= b.high and b.low <= a.high
