"""The benchmark protocol's plumbing on a few nodes and pods (no figures are judged): one pair
on fresh lean control planes, the scheduler pinned apart from the control plane, the API
server's request counters and Corral's phase counters scraped around the measured phase, and on
an API-bound workload the ceiling run between the two schedulers."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from bench.__main__ import main

PODS = 10


@pytest.mark.timeout(300)
def test_one_pair_on_lean_pinned_clusters(tmp_path: Path) -> None:
    out = tmp_path / "run"
    before = os.sched_getaffinity(0)
    # Corral with the protobuf pod watch: --corral-arg reaches `corral scheduler` only.
    variant = "--pod-watch-encoding=protobuf"
    code = main(["protocol", "--pairs", "1", "--workload", "SchedulingBasic", "--nodes", "3",
                 "--init-pods", "3", "--pods", str(PODS), "--out", str(out),
                 f"--corral-arg={variant}"])  # fmt: skip
    assert code == 0
    assert os.sched_getaffinity(0) == before  # the harness is moved back
    document = json.loads((out / "results.json").read_text())
    assert document["mode"]["corral_args"] == [variant]
    runs = {r["scheduler"]: r for r in document["runs"]}
    # Pair 1: AB, with the ceiling between them (SchedulingBasic is API-bound).
    assert [r["scheduler"] for r in document["runs"]] == ["upstream", "ceiling", "corral"]
    top = str(max(before))
    for kind, run in runs.items():
        assert run["complete"], (kind, run["error"])
        assert run["lean"]
        # The scheduler alone on the highest CPU; the control plane and harness on the rest.
        assert run["cpus"]["scheduler"] == top
        assert top not in run["cpus"]["kube-apiserver"].split(",")
        assert run["cpus"]["etcd"] == run["cpus"]["kube-apiserver"] == run["cpus"]["harness"]
        # Every measured pod was bound by exactly one Binding from the scheduler; the harness's
        # own pod creations are not counted as the scheduler's.
        requests = run["api_requests"]
        assert requests["by_kind"]["POST pods/binding"] == PODS, requests
        assert "POST pods" not in requests["by_kind"], requests
        assert requests["harness"] == {"POST pods": PODS}
        assert requests["flow_schema_total"] >= PODS
    phases = runs["corral"]["engine_phases"]
    assert phases["span:api_bind"]["count"] == PODS
    assert phases["span:binding_cycle"]["count"] == PODS
    assert phases["filter"]["count"] >= PODS
    assert phases["pop"]["wall"] > phases["pop"]["cpu"]  # mostly waiting for pods
    assert runs["upstream"]["engine_phases"] == runs["ceiling"]["engine_phases"] == {}
    (summary,) = document["summary"]
    assert set(summary["ceiling"]) == {"pods_s", "corral", "upstream"}
    table = (out / "protocol.md").read_text()
    assert f"Corral ran with `{variant}`" in table
    assert "| SchedulingBasic (3 / 3 / 10) | 1 |" in table
    assert "Corral of the ceiling [95% CI]" in table
    assert "(0%)" in table  # one pair: the interval is the value itself, coverage 0


@pytest.mark.timeout(300)
def test_the_dra_workload_allocates_each_shared_claim_through_the_scheduler(tmp_path: Path) -> None:
    """SchedulingWithResourceClaim's scene on 3 nodes: 5 init pods bound with their claim
    allocated by the harness, 10 measured pods sharing 2 claims. Both schedulers bind every pod
    and reserve each claim for each of its pods with one status write per pod."""
    out = tmp_path / "run"
    args = ["--nodes", "3", "--init-pods", "5", "--pods", str(PODS), "--out", str(out)]
    code = main(["protocol", "--pairs", "1", "--workload", "SchedulingWithResourceClaim", *args])
    assert code == 0
    document = json.loads((out / "results.json").read_text())
    for run in document["runs"]:
        assert run["complete"], (run["scheduler"], run["error"])
        by_kind = run["api_requests"]["by_kind"]
        assert by_kind["POST pods/binding"] == PODS, by_kind
        status_writes = sum(n for k, n in by_kind.items() if k.endswith("resourceclaims/status"))
        assert status_writes >= PODS, (run["scheduler"], by_kind)


@pytest.mark.timeout(300)
def test_apiserver_pprof_profiles_each_measured_phase(tmp_path: Path) -> None:
    out = tmp_path / "run"
    code = main(["protocol", "--pairs", "1", "--workload", "SchedulingBasic", "--nodes", "3",
                 "--init-pods", "0", "--pods", str(PODS), "--out", str(out),
                 "--apiserver-pprof", "1", "--no-ceiling"])  # fmt: skip
    assert code == 0
    document = json.loads((out / "results.json").read_text())
    assert [r["scheduler"] for r in document["runs"]] == ["upstream", "corral"]  # --no-ceiling
    assert any("--apiserver-pprof" in note for note in document["notes"])
    for run in document["runs"]:
        assert run["complete"], run
        assert not run["notes"], run
        profile = out / "pprof" / f"SchedulingBasic-{run['scheduler']}-r0.pprof"
        assert profile.read_bytes()[:2] == b"\x1f\x8b"  # Go writes profiles gzipped


@pytest.mark.timeout(400)
def test_the_scaling_curve_at_tiny_sizes(tmp_path: Path) -> None:
    """One pair of SchedulingBasic at 2 and at 3 nodes (its init pods one per node), each size
    a protocol run of its own, then one plot of the curve."""
    out = tmp_path / "scaling"
    code = main(["scaling", "--sizes", "3,2", "--pairs", "1", "--workload", "SchedulingBasic",
                 "--pods", "5", "--no-ceiling", "--out", str(out)])  # fmt: skip
    assert code == 0
    for nodes in (2, 3):
        document = json.loads((out / f"nodes-{nodes}" / "results.json").read_text())
        assert document["mode"]["scaling"]
        assert [r["scheduler"] for r in document["runs"]] == ["upstream", "corral"]
        for run in document["runs"]:
            assert run["complete"], (run["scheduler"], run["error"])
            assert run["params"]["nodes"] == run["params"]["init_pods"] == nodes
            assert run["params"]["measured_pods"] == 5
    assert (out / "SchedulingBasic.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
