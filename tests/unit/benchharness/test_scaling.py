"""The scaling curve: each workload's scene at another cluster size, the curve read from one
protocol run per size, its plots, and where ``bench docs`` keeps those runs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from bench import docs, scaling
from bench.__main__ import main
from bench.workloads import DEFAULT


@pytest.mark.parametrize(
    ("workload", "nodes", "want"),
    [
        pytest.param("SchedulingBasic", 1000, (1000, 1000, 3000), id="init per node kept"),
        pytest.param("SchedulingBasic", 100, (100, 100, 3000), id="measured pods kept"),
        pytest.param("Unschedulable", 5000, (5000, 100, 3000), id="a fixed queue stays fixed"),
        pytest.param("PreemptionBasic", 100, (100, 400, 100), id="one preemptor per node"),
        pytest.param("PreemptionBasic", 5000, (5000, 20000, 200), id="preemption at 5,000"),
        pytest.param("SchedulingPodAntiAffinity", 100, (100, 10, 80), id="anti-affinity room"),
        pytest.param("SchedulingWithResourceClaim", 100, (100, 500, 500), id="devices left"),
    ],
)
def test_a_workload_at_another_size_keeps_its_density(
    workload: str, nodes: int, want: tuple[int, int, int]
) -> None:
    at = DEFAULT[workload].at_nodes(nodes)
    assert (at.nodes, at.init_pods, at.measured_pods) == want
    assert DEFAULT[workload].at_nodes(nodes, measured_pods=5).measured_pods == 5


def _size(nodes: int, up: float, co: float, *, ceiling: float | None = None) -> Any:
    """A protocol run of SchedulingBasic at ``nodes`` nodes: three pairs, upstream at ``up``
    pods/s and 10 CPU s per 1,000 pods, Corral at ``co`` and 8."""
    runs = []
    params = {"nodes": nodes, "init_pods": nodes, "measured_pods": 1000}
    for rnd, wobble in enumerate((0.98, 1.0, 1.02)):
        for kind, pods_s, cpu in (("upstream", up, 10.0), ("corral", co, 8.0),
                                  ("ceiling", ceiling, 1.0)):  # fmt: skip
            if pods_s is None:
                continue
            runs.append({"workload": "SchedulingBasic", "scheduler": kind, "repetition": rnd,
                         "complete": True, "throughput_mean": pods_s * wobble,
                         "scheduler_cpu_s": cpu, "bound": 1000, "scheduler_peak_rss_mb": 90.0,
                         "params": params})  # fmt: skip
    return {"kind": "protocol", "runs": runs, "started": f"2026-12-02T{nodes % 24:02d}:00:00+0000",
            "mode": {"full": False, "lean": True, "pin": None, "scaling": True}}  # fmt: skip


def test_the_curve_has_a_point_per_size_for_both_schedulers_and_the_ceiling() -> None:
    documents = [_size(500, 300.0, 290.0, ceiling=310.0), _size(100, 320.0, 330.0)]
    curve = scaling.curves(documents)["SchedulingBasic"]
    assert [p.nodes for p in curve["throughput"]] == [100, 500]
    small, large = curve["throughput"]
    assert (small.upstream.median, small.corral.median, small.ceiling) == (320.0, 330.0, None)
    assert large.ceiling is not None
    assert large.ceiling.median == pytest.approx(310.0)
    assert [p.corral.median for p in curve["cpu_per_1000"]] == [8.0, 8.0]  # ms per pod
    assert scaling.table(documents).splitlines()[2:] == [
        "| SchedulingBasic | 100 | 320.0 / 330.0 | 10.00 / 8.00 |",
        "| SchedulingBasic | 500 | 300.0 / 290.0 (310) | 10.00 / 8.00 |",
    ]


def test_the_plot_is_one_png_per_workload(tmp_path: Path) -> None:
    written = scaling.plot([_size(100, 320.0, 330.0), _size(500, 300.0, 290.0)], tmp_path)
    assert list(written) == ["SchedulingBasic"]
    assert written["SchedulingBasic"].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_docs_keeps_a_scaling_run_apart_and_links_its_plots(tmp_path: Path) -> None:
    base = tmp_path / "scaling"
    for nodes, up in ((100, 320.0), (500, 300.0)):
        (base / f"nodes-{nodes}").mkdir(parents=True)
        (base / f"nodes-{nodes}" / "results.json").write_text(json.dumps(_size(nodes, up, 310.0)))
    records, curve = tmp_path / "runs", tmp_path / "curve"
    docs.archive([base], records, curve / "runs")
    assert not records.exists()  # not a run of the results page
    assert sorted(p.name for p in (curve / "runs").iterdir()) == [
        "2026-12-02-scaling-nodes-100.json", "2026-12-02-scaling-nodes-500.json"]  # fmt: skip
    line = docs.scaling_line(docs.recorded(curve / "runs"))
    assert line == (
        "**The scaling curve** (pods/s and CPU per pod against 100, 500 nodes, both "
        "schedulers): [SchedulingBasic](benchmarks/scaling/SchedulingBasic.png).\n"
    )


@pytest.mark.parametrize(
    ("sizes", "message"),
    [
        pytest.param("100,a", "error: --sizes: '100,a' is not a comma-separated list", id="text"),
        pytest.param("0,100", "error: --sizes: '0,100' needs node counts of at least 1", id="0"),
        pytest.param(",", "error: --sizes: ',' needs node counts of at least 1", id="empty"),
    ],
)
def test_scaling_refuses_bad_sizes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], sizes: str, message: str
) -> None:
    assert main(["scaling", "--sizes", sizes, "--out", str(tmp_path / "s")]) == 2
    assert capsys.readouterr().err.startswith(message)
    assert not (tmp_path / "s").exists()
