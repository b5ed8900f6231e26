"""Conformance, small: random scenarios scheduled by upstream kube-scheduler and by a candidate
from the same state must get tie-equivalent placements and identical FailedScheduling
messages (method: bench/conformance, docs/benchmarks.md). ``make conformance`` is the large run.

Each scenario needs a cluster with exactly its nodes, so each test starts its own control plane
rather than sharing the session's.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from bench.conformance import harness
from bench.conformance.generate import generate
from bench.schedulers import corral_unavailable_reason

from corral.testing import LocalCluster

SIZES = {"nodes": 10, "running": 15, "pods": 15}


@pytest.fixture
def fresh_cluster(tmp_path: Path) -> Iterator[LocalCluster]:
    cluster = LocalCluster.up(tmp_path / "cluster")
    try:
        yield cluster
    finally:
        cluster.down()


def _disagreements(report: harness.Report, candidate: str) -> str:
    return "\n".join(
        f"seed {report.seed} {r.pod}: {r.verdicts[candidate].kind}: {r.verdicts[candidate].detail}"
        for r in report.disagreements(candidate)
    )


@pytest.mark.timeout(240)
@pytest.mark.parametrize("seed", [11])
def test_upstream_agrees_with_itself(fresh_cluster: LocalCluster, seed: int) -> None:
    """The self-check: a second kube-scheduler, judged by the tie-aware comparison, always
    agrees. It proves the method (log parsing, ties, messages) independently of Corral."""
    report = harness.run(fresh_cluster, generate(seed, **SIZES), ["upstream"])
    agree, total = report.agreement("upstream")
    assert total == SIZES["pods"]
    assert agree == total, _disagreements(report, "upstream")
    counts = report.counts()
    assert counts["placed"] > 0


# Which node wins among feasible ones still differs from upstream for some pods (conformance
# 1002/1200 with the full run, `make conformance`; the resource-score difference is an open
# bug, see docs/benchmarks.md). What must already match exactly, and is checked here: whether a
# pod fits at all, and, when it does not, upstream's FailedScheduling message to the letter.
EXACT = frozenset({"placed", "node-differs", "unschedulable"})


@pytest.mark.timeout(240)
@pytest.mark.parametrize("seed", [21, 22, 23])
def test_corral_fits_and_fails_exactly_like_upstream(
    fresh_cluster: LocalCluster, seed: int
) -> None:
    # The engine must be there and start: either failing is a failure, never a skip.
    assert corral_unavailable_reason() is None, corral_unavailable_reason()
    report = harness.run(fresh_cluster, generate(seed, **SIZES), ["corral"])
    wrong = [r for r in report.results if r.verdicts["corral"].kind not in EXACT]
    assert not wrong, "\n".join(
        f"seed {seed} {r.pod}: {r.verdicts['corral'].kind}: {r.verdicts['corral'].detail}"
        for r in wrong
    )
    agree, total = report.agreement("corral")
    assert total == SIZES["pods"]
    assert agree > 0
