"""The bars a workload's protocol run is judged against: data kept beside each workload
(``bench.workloads``), as upstream's scheduler_perf keeps a ``threshold:`` beside each of its
workloads, and one rule that turns a measured interval into a verdict.

Every ratio is Corral/upstream, the median over the pairs with its interval
(``bench.intervals``). A verdict is on the whole interval: **met** when it lies wholly on the
good side of the bar, **missed** when wholly on the bad side, **undecided** when it straddles.

Where the API server paces both schedulers (``ceiling`` set), Corral cannot pass upstream by
much, whatever it does: both are bounded by how fast the control plane creates and binds pods.
There the throughput bar also accepts Corral at ``ceiling`` or more of the ceiling (the same
pods created and bound by a minimal binder with no scheduling, ``bench.ceiling``, in the same
pair), as long as it is not below upstream: throughput is met when the ratio to upstream is met,
missed when that ratio is missed, and otherwise judged by Corral's fraction of the ceiling.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from bench.intervals import Interval, verdict

MET: Final = "met"
MISSED: Final = "missed"
UNDECIDED: Final = "undecided"


@dataclass(frozen=True)
class Goals:
    """One workload's bars (issue 18's, and issue 42's ceiling)."""

    throughput: float = 1.0  # Corral/upstream pods/s, at least
    cpu_per_1000: float = 0.9  # Corral/upstream CPU seconds per 1,000 pods, at most
    rss: float = 1.0  # Corral/upstream peak RSS, at most
    # API-bound workloads: Corral's pods/s over the ceiling's, at least (and not below upstream).
    ceiling: float | None = None

    def bound(self, figure: str) -> tuple[float, bool]:
        """``figure``'s bar and whether higher is better."""
        bars = {"throughput": (self.throughput, True), "cpu_per_1000": (self.cpu_per_1000, False),
                "rss": (self.rss, False)}  # fmt: skip
        return bars[figure]

    def judge(
        self, ratios: dict[str, Interval], corral_of_ceiling: Interval | None = None
    ) -> dict[str, str]:
        """figure -> verdict for every figure measured; throughput by the ceiling's rule when
        this workload has a ceiling bar and the run measured the ceiling."""
        out = {}
        for figure, interval in ratios.items():
            bar, higher = self.bound(figure)
            out[figure] = verdict(interval, bar, higher_is_better=higher)
        if (self.ceiling is not None and corral_of_ceiling is not None
                and out.get("throughput") == UNDECIDED):  # fmt: skip
            out["throughput"] = verdict(corral_of_ceiling, self.ceiling, higher_is_better=True)
        return out

    def describe(self) -> str:
        """The bars in words, as the page's table heads show them."""
        text = (f"throughput ≥ {self.throughput:g}x, CPU per pod ≤ {self.cpu_per_1000:g}x, "
                f"peak RSS ≤ {self.rss:g}x")  # fmt: skip
        if self.ceiling is not None:
            text += f"; or, not below upstream, ≥ {self.ceiling:.0%} of the ceiling"
        return text


DEFAULT_GOALS: Final = Goals()
# The API server paces both schedulers on these workloads (issue 42: 2.00 requests per pod,
# the control plane's core full in both runs of a pair).
API_BOUND: Final = Goals(ceiling=0.95)
