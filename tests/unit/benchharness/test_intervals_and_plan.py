"""The protocol's statistics (median of ratios, exact interval, verdicts, agreement) and its
run order (interleaved ABBA pairs) and ETA."""

from __future__ import annotations

import math
import re
from collections import Counter

import pytest
from bench import intervals, plan
from bench.intervals import Interval


@pytest.mark.parametrize(
    ("n", "k", "want"),
    [
        pytest.param(5, 1, 1 - 2 / 32, id="5 pairs: min..max is 93.75%"),
        pytest.param(6, 1, 1 - 2 / 64, id="6 pairs: min..max is 96.9%"),
        pytest.param(9, 2, 1 - 2 * 10 / 512, id="9 pairs: 2nd..8th is 96.1%"),
        pytest.param(3, 2, 0.0, id="3 values, the median alone: 0%"),
    ],
)
def test_coverage_is_the_sign_test_inverted(n: int, k: int, want: float) -> None:
    assert intervals.coverage(n, k) == pytest.approx(want)


@pytest.mark.parametrize(
    ("n", "k"),
    [
        pytest.param(3, 1, id="3: none reaches 95%, min..max"),
        pytest.param(5, 1, id="5: none reaches 95%, min..max"),
        pytest.param(6, 1, id="6: min..max"),
        pytest.param(8, 1, id="8: 2nd..7th is only 93%"),
        pytest.param(9, 2, id="9"),
        pytest.param(12, 3, id="12"),
    ],
)
def test_rank_is_the_narrowest_reaching_95_percent(n: int, k: int) -> None:
    assert intervals.order_statistic_rank(n) == k


def test_coverage_refuses_an_impossible_rank() -> None:
    with pytest.raises(ValueError, match=re.escape("k must be in 1..3 for n=5, got 4")):
        intervals.coverage(5, 4)


@pytest.mark.parametrize(
    ("values", "want"),
    [
        pytest.param([1.2, 0.9, 1.0, 1.1, 0.8, 1.3], (1.05, 0.8, 1.3, True), id="6: min..max"),
        pytest.param([1.0, 3.0, 2.0], (2.0, 1.0, 3.0, False), id="3: 75% only"),
        pytest.param(
            [0.5, 0.9, 1.0, 1.01, 1.02, 1.03, 1.04, 1.05, 9.0],
            (1.02, 0.9, 1.05, True),
            id="9: the outliers fall outside",
        ),
    ],
)
def test_median_interval(values: list[float], want: tuple[float, float, float, bool]) -> None:
    got = intervals.median_interval(values)
    assert (got.median, got.low, got.high, got.reaches) == pytest.approx(want)
    assert got.n == len(values)


def _iv(low: float, median: float, high: float) -> Interval:
    return Interval(median, low, high, 0.96875, 6)


@pytest.mark.parametrize(
    ("interval", "bound", "higher", "want"),
    [
        pytest.param(_iv(1.0, 1.1, 1.3), 1.0, True, "met", id="throughput: low at 1.0"),
        pytest.param(_iv(0.95, 1.1, 1.3), 1.0, True, "undecided", id="throughput: straddles"),
        pytest.param(_iv(0.7, 0.8, 0.99), 1.0, True, "missed", id="throughput: all below"),
        pytest.param(_iv(0.6, 0.7, 0.9), 0.9, False, "met", id="CPU: high at 0.9"),
        pytest.param(_iv(0.8, 0.9, 1.0), 0.9, False, "undecided", id="CPU: straddles"),
        pytest.param(_iv(0.95, 1.2, 1.5), 0.9, False, "missed", id="CPU: all above"),
    ],
)
def test_verdict_is_on_the_interval(
    interval: Interval, bound: float, higher: bool, want: str
) -> None:
    assert intervals.verdict(interval, bound, higher_is_better=higher) == want


@pytest.mark.parametrize(
    ("a", "b", "want"),
    [
        pytest.param(_iv(0.9, 1.0, 1.1), _iv(0.95, 1.05, 1.2), True, id="medians inside"),
        pytest.param(_iv(0.9, 1.0, 1.1), _iv(1.05, 1.15, 1.3), False, id="overlap only"),
        pytest.param(_iv(0.9, 1.0, 1.02), _iv(0.99, 1.1, 1.2), False, id="one median outside"),
    ],
)
def test_two_runs_agree_when_each_median_is_in_the_others_interval(
    a: Interval, b: Interval, want: bool
) -> None:
    assert intervals.agree(a, b) is want
    assert intervals.agree(b, a) is want


@pytest.mark.parametrize(
    ("a", "b", "want"),
    [
        pytest.param(_iv(0.9, 1.0, 1.1), _iv(0.95, 1.05, 1.2), True, id="medians inside"),
        pytest.param(_iv(0.9, 1.0, 1.1), _iv(1.05, 1.15, 1.3), True, id="overlap only"),
        pytest.param(_iv(0.9, 1.0, 1.1), _iv(1.1, 1.2, 1.3), True, id="touching"),
        pytest.param(_iv(0.7, 0.75, 0.8), _iv(0.6, 0.65, 0.68), False, id="apart"),
        pytest.param(_iv(0.5, 1.0, 1.5), _iv(1.1, 1.2, 1.3), True, id="one inside the other"),
    ],
)
def test_intervals_overlap_when_they_share_a_value(a: Interval, b: Interval, want: bool) -> None:
    assert intervals.overlap(a, b) is want
    assert intervals.overlap(b, a) is want


WORKLOADS = ("W1", "W2", "W3")


@pytest.mark.parametrize("pairs", [pytest.param(p, id=f"{p} pairs") for p in (1, 5, 6)])
def test_order_gives_each_workload_its_pairs_back_to_back(pairs: int) -> None:
    slots = plan.order(WORKLOADS, pairs)
    assert [s.index for s in slots] == list(range(2 * pairs * len(WORKLOADS)))
    for first, second in zip(slots[::2], slots[1::2], strict=True):
        assert (first.workload, first.round) == (second.workload, second.round)
        assert {first.scheduler, second.scheduler} == {"upstream", "corral"}
        assert (first.position, second.position) == (0, 1)
    # Interleaved: every workload's pair r runs before any workload's pair r + 1.
    assert [s.round for s in slots] == sorted(s.round for s in slots)


def test_order_is_abba_within_a_workload_and_across_a_round() -> None:
    slots = plan.order(WORKLOADS, 4)
    firsts = {w: [s.scheduler for s in slots if s.workload == w and s.position == 0]
              for w in WORKLOADS}  # fmt: skip
    assert firsts["W1"] == ["upstream", "corral", "upstream", "corral"]
    assert firsts["W2"] == ["corral", "upstream", "corral", "upstream"]
    # Round 1 reads A B | B A | A B: neither scheduler always follows a workload switch.
    assert [s.scheduler[0] for s in slots[:6]] == list("uccuuc")
    # With an even number of pairs each scheduler goes first equally often.
    assert Counter(s.scheduler for s in slots if s.position == 0) == {"upstream": 6, "corral": 6}


def test_the_ceiling_runs_between_the_two_schedulers_of_its_workloads_pairs() -> None:
    slots = plan.order(WORKLOADS, 2, ceiling={"W2"})
    kinds = [(s.round, s.workload, s.scheduler[0], s.position) for s in slots]
    assert kinds[:7] == [(0, "W1", "u", 0), (0, "W1", "c", 1),
                         (0, "W2", "c", 0), (0, "W2", "c", 1), (0, "W2", "u", 2),
                         (0, "W3", "u", 0), (0, "W3", "c", 1)]  # fmt: skip
    ceilings = [s for s in slots if s.scheduler == "ceiling"]
    assert [(s.round, s.workload, s.position) for s in ceilings] == [(0, "W2", 1), (1, "W2", 1)]
    # The pairs themselves are as without the ceiling.
    plain = [(s.workload, s.scheduler, s.round) for s in plan.order(WORKLOADS, 2)]
    assert [(s.workload, s.scheduler, s.round) for s in slots if s.scheduler != "ceiling"] == plain


@pytest.mark.parametrize(
    ("schedulers", "pairs", "message"),
    [
        pytest.param(("upstream",), 5, "a pair needs exactly two schedulers", id="one scheduler"),
        pytest.param(("upstream", "corral"), 0, "pairs must be at least 1, got 0", id="0 pairs"),
    ],
)
def test_order_refuses(schedulers: tuple[str, ...], pairs: int, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        plan.order(WORKLOADS, pairs, schedulers)


def test_progress_rescales_the_rest_by_what_the_finished_runs_took() -> None:
    progress = plan.Progress(estimates=[100.0, 100.0, 200.0])
    assert progress.remaining_s() == 400.0
    progress.finish(0, 150.0)  # took 1.5x its estimate
    assert progress.remaining_s() == pytest.approx(1.5 * 300.0)
    progress.finish(1, 50.0)  # now 200 s for 200 estimated
    assert progress.remaining_s() == pytest.approx(200.0)
    slot = plan.Slot(2, 1, "W", "corral", 0)
    assert "[2/3 runs, " in progress.line(slot, 2)
    assert "ETA 0h03m] round 2/2: W corral" in progress.line(slot, 2)


def test_full_size_runs_are_estimated_longer() -> None:
    from bench.workloads import workloads  # noqa: PLC0415

    small, full = workloads(), workloads(full=True)
    for name in small:
        assert plan.estimate_s(full[name], True) > plan.estimate_s(small[name], False), name
    assert math.isfinite(plan.estimate_s(full["SchedulingBasic"], True))
