"""The goals as data beside the workloads, the ceiling's rule for API-bound workloads, and
``bench protocol``'s exit code when a goal is missed."""

from __future__ import annotations

import argparse
from typing import Any

import pytest
from bench import goals, protocol, summary, workloads
from bench.intervals import Interval
from bench.schedulers import CEILING


def _iv(low: float, high: float) -> Interval:
    return Interval((low + high) / 2, low, high, 0.969, 6)


@pytest.mark.parametrize(
    ("ratio", "of_ceiling", "want"),
    [
        pytest.param(_iv(1.01, 1.2), None, "met", id="ahead of upstream"),
        pytest.param(_iv(0.9, 1.1), None, "undecided", id="straddles, no ceiling measured"),
        pytest.param(_iv(0.9, 1.1), _iv(0.96, 0.99), "met", id="straddles, 96-99% of the ceiling"),
        pytest.param(_iv(0.9, 1.1), _iv(0.93, 0.99), "undecided", id="straddles, and so does 95%"),
        pytest.param(_iv(0.9, 1.1), _iv(0.8, 0.9), "missed", id="straddles, below 95%"),
        pytest.param(_iv(0.8, 0.95), _iv(0.96, 0.99), "missed", id="below upstream: missed"),
        pytest.param(_iv(1.01, 1.2), _iv(0.8, 0.9), "met", id="ahead of upstream: met"),
    ],
)
def test_an_api_bound_workloads_throughput_may_meet_the_goal_at_the_ceiling(
    ratio: Interval, of_ceiling: Interval | None, want: str
) -> None:
    assert goals.API_BOUND.judge({"throughput": ratio}, of_ceiling)["throughput"] == want
    # A workload without a ceiling bar is judged on the ratio alone.
    plain = goals.DEFAULT_GOALS.judge({"throughput": ratio})
    assert goals.DEFAULT_GOALS.judge({"throughput": ratio}, of_ceiling) == plain


@pytest.mark.parametrize(
    ("figure", "interval", "want"),
    [
        pytest.param("cpu_per_1000", _iv(0.7, 0.9), "met", id="cpu at the bar"),
        pytest.param("cpu_per_1000", _iv(0.85, 0.95), "undecided", id="cpu straddles"),
        pytest.param("cpu_per_1000", _iv(0.91, 1.2), "missed", id="cpu above"),
        pytest.param("rss", _iv(0.8, 1.0), "met", id="rss at parity"),
        pytest.param("rss", _iv(1.01, 1.1), "missed", id="rss above"),
    ],
)
def test_cost_goals(figure: str, interval: Interval, want: str) -> None:
    assert goals.DEFAULT_GOALS.judge({figure: interval}) == {figure: want}


def test_the_api_bound_workloads_carry_the_ceiling_bar() -> None:
    bound = {name for name, w in workloads.DEFAULT.items() if w.goals.ceiling is not None}
    assert bound == {"SchedulingBasic", "SchedulingNodeAffinity", "Unschedulable",
                     "SchedulingWithMixedChurn"}  # fmt: skip
    assert workloads.goals_of("SchedulingBasic").ceiling == 0.95
    assert workloads.goals_of("not a workload") == goals.DEFAULT_GOALS


def _run(workload: str, scheduler: str, rnd: int, pods_s: float, cpu: float) -> Any:
    return {"workload": workload, "scheduler": scheduler, "repetition": rnd, "complete": True,
            "throughput_mean": pods_s, "scheduler_cpu_s": cpu, "bound": 1000,
            "scheduler_peak_rss_mb": 100.0, "params": {"nodes": 500, "init_pods": 500,
                                                        "measured_pods": 1000}}  # fmt: skip


def _document(workload: str, corral: list[float], ceiling: list[float] | None = None) -> Any:
    runs = []
    for rnd, pods_s in enumerate(corral):
        runs += [_run(workload, "upstream", rnd, 100.0, 10.0),
                 _run(workload, "corral", rnd, pods_s, 8.0)]  # fmt: skip
        if ceiling is not None:
            runs.append(_run(workload, CEILING, rnd, ceiling[rnd], 1.0))
    return {"kind": "protocol", "runs": runs}


def test_summary_reports_each_schedulers_fraction_of_the_ceiling() -> None:
    doc = _document("SchedulingBasic", [95.0, 97.0, 99.0, 96.0, 98.0, 97.0], [100.0] * 6)
    (s,) = summary.summarize(doc)
    assert s.ceiling["pods_s"].median == pytest.approx(100.0)
    assert (s.ceiling["corral"].low, s.ceiling["corral"].high) == pytest.approx((0.95, 0.99))
    assert s.ceiling["upstream"].median == pytest.approx(1.0)
    assert s.verdicts()["throughput"] == "missed"  # wholly below upstream, whatever the ceiling
    assert "Corral of the ceiling [95% CI]" in summary.table([s])
    assert summary.WorkloadSummary.from_json(s.to_json()) == s
    # A run without ceiling runs keeps its table as before: no ceiling columns.
    (plain,) = summary.summarize(_document("SchedulingBasic", [95.0] * 6))
    assert plain.ceiling == {}
    assert "ceiling" not in plain.to_json()
    assert "ceiling" not in summary.table([plain])


def _args(**sizes: int | None) -> argparse.Namespace:
    return argparse.Namespace(**{"nodes": None, "init_pods": None, "pods": None, **sizes})


@pytest.mark.parametrize(
    ("corral", "sizes", "code", "err"),
    [
        pytest.param([120.0] * 6, {}, 0, "", id="every goal met"),
        pytest.param([90.0] * 6, {}, 1,
                     "goal missed: W (500 / 500 / 1000): throughput ratio 0.90 [0.90, 0.90], "
                     "goal ≥ 1x\n", id="throughput missed"),
        pytest.param([90.0] * 6, {"nodes": 3}, 0, "", id="sizes overridden: not judged"),
    ],
)  # fmt: skip
def test_protocol_exits_1_when_a_goal_is_missed(
    capsys: pytest.CaptureFixture[str],
    corral: list[float],
    sizes: dict[str, int],
    code: int,
    err: str,
) -> None:
    assert protocol._judged(_args(**sizes), _document("W", corral)) == code
    assert capsys.readouterr().err == err
