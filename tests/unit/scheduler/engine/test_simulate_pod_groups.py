"""``corral simulate``'s engine with GenericWorkload: a PodGroup's members go through the
engine's own pod-group cycle offline (the queue's group entity, GangScheduling, group
preemption), are bound when it places them, and the PodGroup's condition is what the cycle
wrote. Without the gate, members are scheduled one by one, as kube-scheduler's are."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from corral.scheduler.config import FeatureGates
from corral.scheduler.engine.frameworks import load_engine_config
from corral.scheduler.engine.simulate import (
    GATED,
    SCHEDULED,
    UNSCHEDULABLE,
    Placement,
    SimulatedEngine,
    Simulator,
)
from corral.scheduler.framework import listers
from corral.testing.builders import JSON, node, pod, pod_group

GATES = FeatureGates({"GenericWorkload": True})
CONFIG: JSON = {
    "apiVersion": "kubescheduler.config.k8s.io/v1",
    "kind": "KubeSchedulerConfiguration",
    "profiles": [{"schedulerName": "default-scheduler"}],
}
NO_VICTIMS = "pod group preemption: No preemption victims found for incoming preemptor"


def simulate(
    objects: Sequence[JSON],
    nodes: Sequence[JSON],
    running: Sequence[JSON],
    pending: Sequence[JSON],
    *,
    gates: FeatureGates = GATES,
) -> tuple[Simulator, list[Placement]]:
    simulator = Simulator([SimulatedEngine("test", load_engine_config(CONFIG, gates))], seed=0)
    for obj in objects:
        assert simulator.add_object(obj)
    for n in nodes:
        simulator.add_node(n)
    for p in running:
        simulator.add_running_pod(p)
    return simulator, simulator.run(pending)


def members(group: str, n: int, cpu: str = "1", **kwargs: Any) -> list[JSON]:
    return [pod(f"{group}-{i}", cpu=cpu, group=group, **kwargs) for i in range(n)]


def condition(simulator: Simulator, key: str) -> str:
    found = simulator.pod_group_condition(key)
    if found is None:
        return "none"
    return f"{found['status']}/{found['reason']}: {found['message']}"


TWO_NODES = [node("n1", cpu="2"), node("n2", cpu="2")]


@pytest.mark.parametrize(
    ("group", "pending", "verdicts", "wanted"),
    [
        pytest.param(
            pod_group("g", min_count=3), members("g", 3),
            [SCHEDULED] * 3, "True/Scheduled: ", id="a gang that fits is placed whole",
        ),
        pytest.param(
            pod_group("g", min_count=5), members("g", 5),
            [UNSCHEDULABLE] * 5,
            "False/Unschedulable: minCount (5) cannot be satisfied: 4 scheduled, 0 remaining, "
            + NO_VICTIMS,
            id="a gang that does not fit places none",
        ),
        pytest.param(
            pod_group("g", min_count=4), members("g", 3),
            [GATED] * 3, "none",
            id="fewer members than minCount: they wait in the queue, no cycle",
        ),
        pytest.param(
            pod_group("g"), members("g", 5),
            [SCHEDULED] * 4 + [UNSCHEDULABLE], "True/Scheduled: ",
            id="a basic group places what fits",
        ),
    ],
)  # fmt: skip
def test_the_pod_group_cycle_decides(
    group: JSON, pending: list[JSON], verdicts: list[str], wanted: str
) -> None:
    simulator, placements = simulate([group], TWO_NODES, [], pending)
    assert [p.verdict for p in placements] == verdicts, [p.message for p in placements]
    assert {p.pod_group for p in placements} == {"default/g"}
    assert condition(simulator, "default/g") == wanted
    placed = [p.node for p in placements if p.placed]
    assert all(placed.count(n) <= 2 for n in ("n1", "n2"))  # 2 cpu each, 1 cpu per member
    if UNSCHEDULABLE in verdicts and SCHEDULED not in verdicts:
        # The 4 that fitted in the cycle get the group's words, the last its own FitError.
        assert [p.message.startswith("pod group is unschedulable") for p in placements] == [
            True, True, True, True, False]  # fmt: skip
        assert placements[-1].message == "0/2 nodes are available: 2 Insufficient cpu."


def test_without_the_gate_members_are_scheduled_one_by_one() -> None:
    """kube-scheduler without GenericWorkload ignores spec.schedulingGroup: the gang of 5 gets
    4 of its pods placed, and nothing is written on the PodGroup."""
    simulator, placements = simulate(
        [pod_group("g", min_count=5)], TWO_NODES, [], members("g", 5), gates=FeatureGates()
    )
    assert [p.verdict for p in placements] == [SCHEDULED] * 4 + [UNSCHEDULABLE]
    assert {p.pod_group for p in placements} == {""}
    assert condition(simulator, "default/g") == "none"


def test_a_gang_preempts_lower_priority_pods_and_is_bound() -> None:
    """Workload-aware preemption: the group's victims leave the cache (counted on its first
    member), its members are nominated, then bound on the retry the evictions bring."""
    running = [pod(f"low-{i}", cpu="2", node_name=f"n{i + 1}", priority=0) for i in range(2)]
    gang = members("g", 4, priority=100)
    simulator, placements = simulate(
        [pod_group("g", min_count=4, priority=100)], TWO_NODES, running, gang
    )
    assert [p.verdict for p in placements] == [SCHEDULED] * 4, [p.message for p in placements]
    assert sorted(v for p in placements for v in p.victims) == ["default/low-0", "default/low-1"]
    assert sorted(str(p.node) for p in placements) == ["n1", "n1", "n2", "n2"]
    assert all(p.attempts == 2 for p in placements)
    assert condition(simulator, "default/g") == "True/Scheduled: "


def test_the_group_priority_comes_from_its_priority_class() -> None:
    """Admission fills a hand-written PodGroup's spec.priority from priorityClassName, as it
    does a pod's: without it the members' priority would not be the group's (a SchedulerError)."""
    high: JSON = {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
                  "metadata": {"name": "high"}, "value": 1000}  # fmt: skip
    group = pod_group("g", min_count=2)
    group["spec"]["priorityClassName"] = "high"
    gang = members("g", 2)
    for p in gang:
        p["spec"]["priorityClassName"] = "high"
    simulator, placements = simulate([group, high], TWO_NODES, [], gang)
    assert [p.verdict for p in placements] == [SCHEDULED] * 2, [p.message for p in placements]
    assert condition(simulator, "default/g") == "True/Scheduled: "


def test_a_gang_that_can_never_fit_ends_the_simulation() -> None:
    """Upstream retries a group on backoff, not on events: the simulation stops once a round of
    retries changes nothing, instead of retrying to the attempt limit."""
    _, placements = simulate([pod_group("g", min_count=5)], TWO_NODES, [], members("g", 5))
    assert all(p.attempts == 2 and not p.given_up for p in placements)


def test_a_scheduler_plugins_pod_group_is_coscheduling_s_not_a_workload_group() -> None:
    """Two CRDs are called PodGroup: scheduler-plugins' (scheduling.x-k8s.io) is an object
    Coscheduling reads, never a GenericWorkload group."""
    theirs: JSON = {
        "apiVersion": "scheduling.x-k8s.io/v1alpha1",
        "kind": "PodGroup",
        "metadata": {"name": "g", "namespace": "default"},
        "spec": {"minMember": 2},
    }
    simulator, placements = simulate([theirs], TWO_NODES, [], members("g", 2))
    assert simulator.objects.get(listers.SP_POD_GROUP, "default", "g") is not None
    assert simulator.pod_groups == {}
    assert [p.verdict for p in placements] == [GATED] * 2  # theirs is not their group
