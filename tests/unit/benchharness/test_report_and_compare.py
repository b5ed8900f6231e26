"""The reproducibility verdicts: within a run (per repetition) and across two runs."""

from __future__ import annotations

from typing import Any

import pytest
from bench import compare, report


def _run(workload: str, scheduler: str, rep: int, pods_s: float, **kw: Any) -> dict[str, Any]:
    return {
        "workload": workload,
        "scheduler": scheduler,
        "repetition": rep,
        "complete": kw.get("complete", True),
        "throughput_mean": pods_s,
        "latency_s": {"p50": 1.0, "p90": 1.5, "p99": kw.get("p99", 2.0), "max": 3.0},
        "scheduler_cpu_s": kw.get("cpu", 5.0),
        "scheduler_peak_rss_mb": 100.0,
        "params": {"nodes": 10, "init_pods": 0, "measured_pods": 100},
        "bound": 100,
        "measured_pods": 100,
        "probe_ms": kw.get("probe_ms", [10.0, 10.0]),
    }


def _doc(*runs: dict[str, Any], ceilings: tuple[float, ...] = ()) -> dict[str, Any]:
    return {
        "runs": list(runs),
        "ceilings": [{"create": c, "bind": c, "pipeline": c, "repetition": i, "nodes": 1,
                      "pods": 1} for i, c in enumerate(ceilings)],
    }  # fmt: skip


@pytest.mark.parametrize(
    ("second", "within"),
    [
        pytest.param(110.0, "11 of 11", id="10% apart: all within"),
        pytest.param(120.0, "8 of 11", id="20% apart: pods/s, p99 and the ratio out"),
    ],
)
def test_reproducibility_per_repetition(second: float, within: str) -> None:
    doc = _doc(
        _run("W", "upstream", 0, 100.0),
        _run("W", "corral", 0, 100.0),
        _run("W", "upstream", 1, 100.0),
        _run("W", "corral", 1, second, p99=2.0 * second / 100),
    )
    text = report.reproducibility(doc)
    assert text.startswith(f"{within} figures within 15%"), text


def test_incomplete_runs_do_not_count() -> None:
    doc = _doc(_run("W", "corral", 0, 100.0), _run("W", "corral", 1, 10.0, complete=False))
    assert report.reproducibility(doc).startswith("0 of 0 figures")


@pytest.mark.parametrize(
    ("b_pods_s", "want"),
    [
        pytest.param(105.0, "11 of 11 scheduler figures within 15%", id="5% apart"),
        pytest.param(130.0, "9 of 11 scheduler figures within 15%", id="30% apart"),
    ],
)
def test_compare_two_runs_uses_each_runs_mean(b_pods_s: float, want: str) -> None:
    # Run A's corral mean is 100 (90 and 110); run B's two repetitions agree on b_pods_s.
    a = _doc(
        _run("W", "upstream", 0, 100.0), _run("W", "corral", 0, 90.0),
        _run("W", "upstream", 1, 100.0), _run("W", "corral", 1, 110.0),
        ceilings=(500.0, 700.0),
    )  # fmt: skip
    b = _doc(
        _run("W", "upstream", 0, 100.0), _run("W", "corral", 0, b_pods_s, probe_ms=[12.0, 14.0]),
        _run("W", "upstream", 1, 100.0), _run("W", "corral", 1, b_pods_s, probe_ms=[13.0]),
        ceilings=(600.0,),
    )  # fmt: skip
    text = compare.compare(a, b)
    assert want in text
    # The ceiling is shown (the platform's own drift) but not counted among scheduler figures.
    assert "| ceiling | API server alone | bind/s | 600 | 600 | 0% | (machine) |" in text
    assert "| W | corral | machine probe ms | 10.0 | 13.0 | 30% | (machine) |" in text


@pytest.mark.parametrize(
    "content",
    [pytest.param(None, id="missing"), pytest.param("{not json", id="not JSON")],
)
def test_compare_with_an_unreadable_run_is_a_usage_error(
    tmp_path: Any, capsys: pytest.CaptureFixture[str], content: str | None
) -> None:
    from bench.__main__ import main  # noqa: PLC0415

    bad = tmp_path / "results.json"
    if content is not None:
        bad.write_text(content)
    assert main(["compare", str(bad), str(bad)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("cannot read a run: ")
    assert "Traceback" not in err
