"""The plugins of upstream 1.37's registry whose gates are off by default: they run as upstream's
do with the gate off (GangScheduling also refuses a pod it cannot honour)."""

from __future__ import annotations

from corral.scheduler.framework.cycle_state import CycleState
from corral.scheduler.framework.status import Code, Status
from corral.scheduler.plugins import (
    deferred_pod_scheduling,
    gang_scheduling,
    pod_group_pods_count,
    topology_placement_generator,
)
from corral.testing.builders import node, pod, pod_info, snapshot_of
from corral.testing.framework import FakeHandle
from support.builders import pod_from_json


def test_gang_scheduling_lets_plain_pods_through_and_refuses_scheduling_groups() -> None:
    plugin = gang_scheduling.new(None, FakeHandle())
    assert plugin.pre_enqueue(pod_info("p")) is None
    assert plugin.permit(CycleState(), pod_info("p"), "n") == (None, 0.0)
    grouped = pod("g")
    grouped["spec"]["schedulingGroup"] = {"podGroupName": "pg"}
    assert plugin.pre_enqueue(pod_from_json(grouped)) == Status.of(
        Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
        "pod is in a scheduling group: Corral does not run gang scheduling (GenericWorkload)",
    )


def test_deferred_pod_scheduling_skips_every_pod() -> None:
    plugin = deferred_pod_scheduling.new(None, FakeHandle())
    snapshot = snapshot_of([node("n")])
    result, status = plugin.pre_filter(CycleState(), pod_info("p"), snapshot)
    assert result is None
    assert status is not None
    assert status.is_skip
    assert plugin.filter(CycleState(), pod_info("p"), snapshot.node_info(0)) is None
    assert plugin.permit(CycleState(), pod_info("p"), "n") == (None, 0.0)


def test_pod_group_plugins_take_no_args_and_run_nowhere() -> None:
    for module in (topology_placement_generator, pod_group_pods_count):
        plugin = module.new(None, FakeHandle())
        assert plugin.name == module.NAME
        assert not [m for m in ("filter", "score", "pre_filter", "permit") if hasattr(plugin, m)]
