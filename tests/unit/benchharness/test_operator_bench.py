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
    text = operator_apply.line(
        got
        | {
            "operator_rss_mib": {"idle": 80, "end": 120, "peak": 130},
            "operator_cpu_s": 3.0,
            "api_requests_per_profile": {"PATCH": 9.5, "GET": 1.0, "total": 10.5},
            "reconciles_per_profile": 3.25,
        }
    )
    assert "(target 30s: met)" in text
    assert "API requests/profile 10.5 GET 1.0 PATCH 9.5  reconciles/profile 3.2" in text


@pytest.mark.parametrize(
    ("count", "target"),
    [pytest.param(200, 30.0, id="issue 18: 200"), pytest.param(1000, 60.0, id="issue 38: 1,000")],
)
def test_the_target_by_fleet_size(count: int, target: float) -> None:
    assert operator_apply.target_applied_s(count) == target


@pytest.mark.parametrize(
    "counts", [pytest.param(["0"], id="zero"), pytest.param(["5", "-1"], id="negative")]
)
def test_a_count_below_one_is_refused(
    counts: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert operator_apply.main(["--profiles", *counts]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: --profiles: every count must be at least 1, got [")


def test_a_run_that_times_out_still_reports_the_operators_figures() -> None:
    created = {f"p{i}": 100.0 + i for i in range(4)}
    applied = {n: t + 1.0 for n, t in created.items()}  # every profile applied
    ready = {"p0": 110.0}  # the rollout (not the operator) did not finish for three
    got = operator_apply.figures(4, created, applied, ready)
    assert got["all_applied_s"] == 4.0
    assert (got["not_applied"], got["not_ready"], got["all_ready_s"]) == (0, 3, None)
    assert got["apply_to_ready_s"]["p95"] == 10.0  # over the Ready ones
    text = operator_apply.line(
        got
        | {
            "operator_rss_mib": {"idle": 80, "end": 120, "peak": 130},
            "operator_cpu_s": 3.0,
            "api_requests_per_profile": {"total": 1.0},
        }
    )
    assert "3 NOT READY at the timeout" in text
    assert "all applied+status    4.0s (target 30s: met)" in text


def _profile(name: str, generation: int, observed: int | None, ready: bool) -> dict[str, object]:
    status: dict[str, object] = {"conditions": [{"type": "Ready", "status": str(ready)}]}
    if observed is not None:
        status["observedGeneration"] = observed
    return {"metadata": {"name": name, "generation": generation}, "status": status}


@pytest.mark.parametrize(
    ("obj", "applied", "ready"),
    [
        pytest.param(_profile("p", 1, None, False), {}, {}, id="created: neither"),
        pytest.param(_profile("p", 2, 1, False), {}, {}, id="an older generation: not applied"),
        pytest.param(_profile("p", 1, 1, False), {"p": 5.0}, {}, id="status written: applied"),
        pytest.param(_profile("p", 1, 1, True), {"p": 5.0}, {"p": 5.0}, id="Ready: both"),
        pytest.param(_profile("other", 1, 1, True), {}, {}, id="not one of ours: ignored"),
    ],
)
def test_a_watch_event_times_what_it_shows(
    obj: dict[str, object], applied: dict[str, float], ready: dict[str, float]
) -> None:
    got_applied: dict[str, float] = {}
    got_ready: dict[str, float] = {}
    operator_apply.note(obj, 5.0, {"p"}, got_applied, got_ready)  # type: ignore[arg-type]
    assert (got_applied, got_ready) == (applied, ready)


def test_the_first_sighting_counts() -> None:
    applied: dict[str, float] = {}
    ready: dict[str, float] = {}
    operator_apply.note(_profile("p", 1, 1, False), 5.0, {"p"}, applied, ready)  # type: ignore[arg-type]
    operator_apply.note(_profile("p", 1, 1, True), 9.0, {"p"}, applied, ready)  # type: ignore[arg-type]
    assert (applied, ready) == ({"p": 5.0}, {"p": 9.0})
