"""The Coscheduling workload (scheduler-plugins' PodGroups, issue 40): gangs of 4 to 64 over
1,000 nodes, each measured pod labelled into its gang, the profile enabling Coscheduling; run by
Corral alone (no rival can be built here), and summarised as absolute figures."""

from __future__ import annotations

from typing import Any

import pytest
from bench import plan, sp_scene, summary
from bench.workloads import (
    CAPACITY_PROFILE,
    INIT_NAMESPACE,
    MEASURED_NAMESPACE,
    POD_MEMORY_MI,
    POD_MILLI_CPU,
    SP_GROUP_LABEL,
    SP_PLUGINS,
    sp_gangs,
    workloads,
)


@pytest.mark.parametrize(
    ("pods", "sizes", "gangs"),
    [
        pytest.param(124, (4, 8, 16, 32, 64), [4, 8, 16, 32, 64], id="one round"),
        pytest.param(130, (4, 8, 16, 32, 64), [4, 8, 16, 32, 64, 4, 2], id="a cut last gang"),
        pytest.param(3, (4, 8), [3], id="fewer pods than the first gang"),
    ],
)
def test_gang_sizes(pods: int, sizes: tuple[int, ...], gangs: list[int]) -> None:
    assert sp_gangs(pods, sizes) == gangs


@pytest.mark.parametrize("full", [False, True])
def test_every_measured_pod_is_in_a_gang_of_its_pod_group(full: bool) -> None:
    w = workloads(full, named=True)["Coscheduling"]
    groups = w.sp_pod_groups(MEASURED_NAMESPACE)
    assert {g["apiVersion"] for g in groups} == {sp_scene.SP_SCHEDULING}
    members: dict[str, int] = {}
    for i in range(w.measured_pods):
        pod = w.measured_pod(f"pod-{i}", MEASURED_NAMESPACE, "s")
        group = pod["metadata"]["labels"][SP_GROUP_LABEL]
        members[group] = members.get(group, 0) + 1
    assert members == {g["metadata"]["name"]: g["spec"]["minMember"] for g in groups}
    assert {g["spec"]["minMember"] for g in groups} == {4, 8, 16, 32, 64}
    assert w.nodes == (5000 if full else 1000)
    assert w.profile_extra["plugins"]["multiPoint"]["enabled"] == [{"name": "Coscheduling"}]
    assert w.feature_gates == {}  # scheduler-plugins' API: no upstream gate


def test_a_plain_workload_has_no_sp_gangs() -> None:
    w = workloads()["SchedulingBasic"]
    assert w.sp_pod_groups(MEASURED_NAMESPACE) == []
    assert w.profile_extra == {}
    assert (
        SP_GROUP_LABEL not in w.measured_pod("pod-0", MEASURED_NAMESPACE, "s")["metadata"]["labels"]
    )


def test_a_solo_workload_runs_corral_alone_each_round() -> None:
    slots = plan.order(["W1", "Coscheduling"], 2, solo={"Coscheduling"})
    runs = [(s.round, s.workload, s.scheduler) for s in slots]
    assert runs == [
        (0, "W1", "upstream"), (0, "W1", "corral"), (0, "Coscheduling", "corral"),
        (1, "W1", "corral"), (1, "W1", "upstream"), (1, "Coscheduling", "corral"),
    ]  # fmt: skip
    assert SP_PLUGINS["Coscheduling"].corral_only


def _run(rnd: int, pods_s: float, cpu: float, complete: bool = True) -> dict[str, Any]:
    return {
        "workload": "Coscheduling", "scheduler": "corral", "repetition": rnd,
        "complete": complete, "throughput_mean": pods_s, "scheduler_cpu_s": cpu,
        "bound": 1240, "measured_pods": 1240, "scheduler_peak_rss_mb": 120.0,
        "params": {"nodes": 1000, "init_pods": 0, "measured_pods": 1240},
        "api_requests": {"per_pod": 2.5}, "engine_phases": {},
    }  # fmt: skip


def test_a_solo_workload_is_summarised_as_corrals_own_figures() -> None:
    runs = [_run(0, 40.0, 12.4), _run(1, 50.0, 24.8), _run(2, 0.0, 0.0, complete=False)]
    doc = {"kind": "protocol", "mode": {"full": False, "lean": True, "pin": None}, "pairs": 3,
           "runs": runs, "command": "python -m bench protocol",
           "started": "2026-12-02T09:00:00+0000"}  # fmt: skip
    (s,) = summary.summarize(doc)
    assert (s.pairs, s.planned, s.ratios, s.upstream) == (2, 3, {}, {})
    assert s.corral["throughput"].median == pytest.approx(45.0)
    assert s.corral["cpu_per_1000"].median == pytest.approx(15.0)  # (10 + 20) / 2 s per 1,000
    assert s.requests_per_pod == {"upstream": None, "corral": 2.5}
    row = summary.table([s]).splitlines()[-1]
    assert "| - / 45.0 |" in row
    assert "| - / 15.00 |" in row


def _cpu(quota: dict[str, Any], bound: str) -> int:
    """The bound's cpu in millis, checked to be room for as many pods in memory too."""
    milli = int(quota["spec"][bound]["cpu"].removesuffix("m"))
    assert int(quota["spec"][bound]["memory"].removesuffix("Mi")) * POD_MILLI_CPU == (
        milli * POD_MEMORY_MI)  # fmt: skip
    return milli


@pytest.mark.parametrize("full", [False, True])
def test_the_quota_workload_passes_both_rules_only_by_borrowing(full: bool) -> None:
    """CapacityScheduling (ElasticQuotas): every pod fits the quotas, the measured namespace goes
    past its min by what the init namespace leaves unused, and the sum of mins is all pods'."""
    w = workloads(full, named=True)["CapacityScheduling"]
    measured, init = w.elastic_quotas(INIT_NAMESPACE, MEASURED_NAMESPACE)
    assert (measured["metadata"]["namespace"], init["metadata"]["namespace"]) == (
        MEASURED_NAMESPACE, INIT_NAMESPACE)  # fmt: skip
    assert {q["apiVersion"] for q in (measured, init)} == {sp_scene.SP_SCHEDULING}
    pods = w.measured_pods * POD_MILLI_CPU
    assert _cpu(measured, "max") == pods  # the last measured pod still fits its max
    assert _cpu(measured, "min") < pods  # past its min: borrowing
    assert _cpu(init, "min") > w.init_pods * POD_MILLI_CPU  # what the init namespace leaves
    assert _cpu(measured, "min") + _cpu(init, "min") == pods + w.init_pods * POD_MILLI_CPU
    assert w.profile_extra == CAPACITY_PROFILE
    assert w.corral_only
    assert w.nodes == (5000 if full else 1000)
    assert w.params()["sp_quotas"] is True


def test_a_plain_workload_has_no_quotas() -> None:
    assert workloads()["SchedulingBasic"].elastic_quotas(INIT_NAMESPACE, MEASURED_NAMESPACE) == []
