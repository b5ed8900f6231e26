"""The fleet benchmark's figures from per-profile times, and its one bad-input path."""

from __future__ import annotations

import pytest
from bench import operator_apply


def test_figures_split_apply_to_ready_into_operator_and_rollout() -> None:
    created = {f"p{i}": 100.0 + i for i in range(20)}  # created over 19 s
    applied = {n: t + 2.0 for n, t in created.items()}  # the operator: 2 s each
    ready = {n: t + 10.0 if n != "p19" else t + 40.0 for n, t in applied.items()}
    got = operator_apply.figures(20, created, applied, ready)
    assert got["created_s"] == 19.0
    assert got["all_applied_s"] == 21.0  # first creation -> last status
    assert got["all_ready_s"] == 61.0
    assert got["apply_to_ready_s"]["p50"] == 12.0
    assert got["apply_to_ready_s"]["p95"] == 12.0  # nearest rank: 19th of 20
    assert got["apply_to_ready_s"]["max"] == 42.0
    assert got["rollout_s"]["p95"] == 10.0
    assert "(target 30s: met)" in operator_apply.line(
        got | {"operator_rss_mib": {"idle": 80, "end": 120, "peak": 130}, "operator_cpu_s": 3.0}
    )


@pytest.mark.parametrize(
    "counts", [pytest.param(["0"], id="zero"), pytest.param(["5", "-1"], id="negative")]
)
def test_a_count_below_one_is_refused(
    counts: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert operator_apply.main(["--profiles", *counts]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: --profiles: every count must be at least 1, got [")
