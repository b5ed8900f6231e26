"""``corral shadow report`` as text and its page: the counts one at a time and under a burst,
the breakdown by deciding plugin, each kept disagreement with every plugin's scores on both
nodes; the status read back as the engine wrote it (tests/e2e/operator/test_operator_shadow.py
reads a real one)."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.unit.cli.conftest import ROOT, Run

from corral.cli import html_report
from corral.cli.shadow_table import report
from corral.scheduler.config import ValidationError
from corral.scheduler.engine.shadow import compare as c
from corral.scheduler.engine.shadow import tally as t

FIT = "NodeResourcesFit"
SPREAD = "PodTopologySpread"


def packing_disagreement(pod: str, *, burst: bool = False) -> c.Disagreement:
    return c.Disagreement(
        pod=pod,
        outcome=c.DISAGREED,
        live_node="n-2",
        shadow_node="n-1",
        live_total=180,
        shadow_total=420,
        deciding_plugin=FIT,
        lost_on=[c.Loss(FIT, 240)],
        scores=[c.PluginScores(FIT, 5, shadow=300, live=60), c.PluginScores(SPREAD, 2, 0, 0)],
        burst=burst,
    )


def status() -> t.ShadowStatus:
    tally = t.Tally("default-scheduler", "hash-1", "2026-12-02T03:00:00Z")
    for _ in range(5):
        tally.record(c.AGREED, None, burst=False)
    tally.record(c.TIE, None, burst=True)
    tally.record(c.DISAGREED, packing_disagreement("ns/p-1"), burst=False)
    tally.record(c.DISAGREED, packing_disagreement("ns/p-2", burst=True), burst=True)
    rejected = c.Disagreement(
        "ns/p-3",
        c.SHADOW_UNSCHEDULABLE,
        live_node="n-3",
        deciding_plugin="TaintToleration",
        rejected_by=[c.Rejection("TaintToleration", "untolerated taint {dedicated: x}")],
        message="0/3 nodes are available",
    )
    tally.record(c.SHADOW_UNSCHEDULABLE, rejected, burst=False)
    return tally.status("2026-12-02T03:10:00Z")


def test_the_report_gives_the_counts_the_breakdown_and_the_evidence() -> None:
    text = report("packing", status())
    lines = text.splitlines()
    assert lines[0] == (
        "SchedulerProfile packing shadows default-scheduler since 2026-12-02T03:00:00Z "
        "(updated 2026-12-02T03:10:00Z)"
    )
    assert lines[1] == (
        "9 decisions: 5 agreed, 1 ties, 2 disagreed, 0 live unschedulable, "
        "1 shadow unschedulable: 66.7% agree"
    )
    alone = "7 decisions: 5 agreed, 0 ties, 1 disagreed, 0 live unschedulable, 1 shadow "
    burst = "2 decisions: 0 agreed, 1 ties, 1 disagreed, 0 live unschedulable, 0 shadow "
    assert lines[2] == f"    one at a time: {alone}unschedulable: 71.4% agree"
    assert lines[3] == f"    under a burst: {burst}unschedulable: 50.0% agree"
    by_plugin = lines[lines.index("BY PLUGIN (what decided each decision that was not an "
                                  "agreement)") + 1:][:3]  # fmt: skip
    assert [line.split()[:3] for line in by_plugin] == [
        ["PLUGIN", "DECISIONS", "SHARE"],
        [FIT, "2", "66.7%"],
        ["TaintToleration", "1", "33.3%"],
    ]
    assert by_plugin[1].endswith("240 on average over 2")
    assert "ns/p-2  disagreed  live n-2 (total 180), shadow n-1 (total 420): lost on "\
           "NodeResourcesFit by 240  [burst]" in lines  # fmt: skip
    scores = lines[lines.index("ns/p-1  disagreed  live n-2 (total 180), shadow n-1 (total 420): "
                               "lost on NodeResourcesFit by 240") + 1:][:3]  # fmt: skip
    assert [s.split() for s in scores] == [
        ["PLUGIN", "WEIGHT", "n-1", "(shadow)", "n-2", "(live)"],
        [FIT, "5", "300", "60"],
        [SPREAD, "2", "0", "0"],
    ]
    assert ("ns/p-3  shadow_unschedulable  live n-3, shadow: unschedulable: the shadow rejects "
            "n-3: TaintToleration: untolerated taint {dedicated: x} (0/3 nodes are available)"
            ) in lines  # fmt: skip


def test_a_shadow_without_decisions_says_so() -> None:
    text = report("new", t.Tally("default-scheduler", "h", "T").status("T"))
    assert "0 decisions: 0 agreed, 0 ties, 0 disagreed, 0 live unschedulable, 0 shadow " \
           "unschedulable: - agree" in text  # fmt: skip
    assert "no disagreement" in text
    assert "DISAGREEMENTS" not in text


def test_the_status_reads_back_as_written() -> None:
    written = status()
    assert t.from_json(t.to_json(written)) == written
    assert t.to_json(written)["summary"] == "6/9 agree (66.7%)"


@pytest.mark.parametrize(
    ("data", "fragment"),
    [
        pytest.param(
            {"observed": "many"}, "status.shadow.observed: must be an integer", id="a count"
        ),
        pytest.param(
            {"lastDisagreements": [{"outcome": "x"}]},
            "status.shadow.lastDisagreements[0].pod",
            id="a disagreement",
        ),
    ],
)
def test_a_status_that_is_not_a_shadows_is_refused_at_its_field(
    data: dict[str, object], fragment: str
) -> None:
    with pytest.raises(ValidationError) as refused:
        t.from_json(data)
    assert any(fragment in str(e) for e in refused.value.errors), refused.value.errors


def test_the_page_has_the_counts_and_a_bar_per_deciding_plugin(tmp_path: Path) -> None:
    page = tmp_path / "shadow.html"
    html_report.write(page, html_report.shadow_page("packing", status()))
    text = page.read_text()
    assert "<script" not in text
    assert "http" not in text.replace("http-equiv", "")
    assert text.count('class="fill"') == 2
    assert "ns/p-1: disagreed: live n-2, shadow n-1; deciding plugin NodeResourcesFit" in text
    assert "rejected by TaintToleration: untolerated taint {dedicated: x}" in text


def test_report_needs_a_cluster_to_read(corral: Run, tmp_path: Path) -> None:
    missing = tmp_path / "nowhere.kubeconfig"
    code, out, err = corral("shadow", "report", "packing", "--kubeconfig", str(missing))
    assert code == 2
    assert out == ""
    assert str(missing) in err


def test_the_cli_docs_example_is_this_report() -> None:
    text = (ROOT / "docs" / "cli.md").read_text()
    head = "(the status of tests/unit/cli/test_shadow_report.py):\n\n```\n"
    start = text.index(head) + len(head)
    assert text[start : text.index("```\n", start)] == report("packing-shadow", status())
