"""Conformance, small: random scenarios scheduled by upstream kube-scheduler and by a candidate
from the same state must get tie-equivalent placements and identical FailedScheduling
messages (method: bench/conformance, docs/benchmarks.md). ``make conformance`` is the large run.

Each scenario needs a cluster with exactly its nodes, so each test starts its own control plane
rather than sharing the session's.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from bench.conformance import harness
from bench.conformance.generate import generate
from bench.schedulers import corral_unavailable_reason

from corral.scheduler.backend.records import pod_requests
from corral.scheduler.config import quantity
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


def _to_pod_level(pod: dict[str, Any], variant: int) -> None:
    """Rewrite a generated pod's requests at pod level (PodLevelResources, on since 1.34), never
    below the containers' effective sum (the API server's rule): 0 moves them all there, 1
    doubles cpu there (memory stays in the container), 2 moves cpu there and adds a container
    without requests (where the two non-zero views differ), 3 leaves the pod alone."""
    spec = pod["spec"]
    requests = spec["containers"][0]["resources"]["requests"]
    effective = pod_requests(spec)
    cpu = f"{quantity.milli_value(effective['cpu'])}m"
    if variant == 0:
        memory = f"{quantity.value(effective['memory'])}"
        spec["resources"] = {"requests": {"cpu": cpu, "memory": memory}}
        requests.clear()
    elif variant == 1:
        spec["resources"] = {"requests": {"cpu": f"{2 * quantity.milli_value(effective['cpu'])}m"}}
    elif variant == 2:
        spec["resources"] = {"requests": {"cpu": cpu}}
        del requests["cpu"]
        spec["containers"].append({"name": "bare", "image": spec["containers"][0]["image"]})


@pytest.mark.timeout(240)
@pytest.mark.parametrize("seed", [31, 32, 33])
def test_pod_level_requests_fit_and_fail_exactly_like_upstream(
    fresh_cluster: LocalCluster, seed: int
) -> None:
    assert corral_unavailable_reason() is None, corral_unavailable_reason()
    scenario = generate(seed, **SIZES)
    for i, p in enumerate(scenario.running):
        _to_pod_level(p, 0 if i % 2 else 3)  # bound pods keep their totals: no overcommit
    for i, p in enumerate(scenario.pods):
        _to_pod_level(p, i % 4)
    # More cpu than any node has, at pod level only: refused everywhere, never placed.
    big = copy.deepcopy(scenario.pods[0])
    big["metadata"]["name"] = "pod-level-big"
    big["spec"]["resources"] = {"requests": {"cpu": "64"}}
    scenario.pods.append(big)
    report = harness.run(fresh_cluster, scenario, ["corral"])
    # Every pod, node choice included: NodeResourcesFit's scorer ignores pod-level requests
    # upstream, and a disagreement here is how that was found.
    assert not report.disagreements("corral"), _disagreements(report, "corral")
    assert report.agreement("corral")[1] == len(scenario.pods)
    assert report.results[-1].verdicts["corral"].kind == "unschedulable"
