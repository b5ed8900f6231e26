"""The pod-group workloads (scheduler_perf's podgroup and workload_preemption): gates, PodGroups
and each measured pod's group, at both sizes; run only when named."""

from __future__ import annotations

import pytest
from bench.workloads import MEASURED_NAMESPACE, POD_GROUPS, SP_PLUGINS, workloads

GROUPED = ("GangScheduling", "PodGroupBasicScheduling", "GangPreemptionBasic")


@pytest.mark.parametrize("full", [False, True])
@pytest.mark.parametrize("name", GROUPED)
def test_pods_belong_to_pod_groups_of_the_workloads_size(name: str, full: bool) -> None:
    w = workloads(full, named=True)[name]
    assert w.feature_gates == {"GenericWorkload": True}
    groups = w.pod_groups(MEASURED_NAMESPACE)
    assert len(groups) * w.pods_per_group == w.measured_pods
    policy = groups[0]["spec"]["schedulingPolicy"]
    if w.group_policy == "gang":
        assert policy == {"gang": {"minCount": w.pods_per_group}}
    else:
        assert policy == {"basic": {}}
    last = w.measured_pod(f"pod-{w.measured_pods - 1}", MEASURED_NAMESPACE, "s")
    assert last["spec"]["schedulingGroup"] == {"podGroupName": groups[-1]["metadata"]["name"]}
    if w.group_priority_class:  # members carry their group's priority (validatePodGroup)
        assert last["spec"]["priorityClassName"] == groups[0]["spec"]["priorityClassName"]


@pytest.mark.parametrize(
    ("pods", "min_counts"),
    [
        pytest.param(9, [3, 3, 3], id="a multiple of the group size"),
        pytest.param(7, [3, 3, 1], id="the last gang is what is left"),
        pytest.param(2, [2], id="fewer pods than one group"),
    ],
)
def test_a_short_last_gang_needs_only_its_members(pods: int, min_counts: list[int]) -> None:
    w = POD_GROUPS["GangScheduling"].sized(4, None, pods)
    groups = w.pod_groups(MEASURED_NAMESPACE)
    assert [g["spec"]["schedulingPolicy"]["gang"]["minCount"] for g in groups] == min_counts
    members = [w.measured_pod(f"pod-{i}", MEASURED_NAMESPACE, "s") for i in range(pods)]
    per_group = [
        sum(p["spec"]["schedulingGroup"]["podGroupName"] == g["metadata"]["name"] for p in members)
        for g in groups
    ]
    assert per_group == min_counts


@pytest.mark.parametrize("full", [False, True])
def test_the_default_set_has_no_gates_or_groups(full: bool) -> None:
    default = workloads(full)
    assert not set(GROUPED) & set(default)
    assert set(workloads(full, named=True)) == set(default) | set(GROUPED) | set(SP_PLUGINS)
    for w in default.values():
        assert w.feature_gates == {}
        assert w.pod_groups(MEASURED_NAMESPACE) == []
        assert "schedulingGroup" not in w.measured_pod("pod-0", MEASURED_NAMESPACE, "s")["spec"]


def test_full_gang_preemption_is_one_gang_of_a_hundred() -> None:
    assert workloads(full=True, named=True)["GangPreemptionBasic"].pods_per_group == 100
    assert POD_GROUPS["GangPreemptionBasic"].pods_per_group == 10
