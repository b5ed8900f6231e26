"""GangScheduling: plain pods pass, pods of a scheduling group are refused (1.37's stub)."""

from __future__ import annotations

from corral.scheduler.backend.records import pod_from_json
from corral.scheduler.framework.cycle_state import CycleState
from corral.scheduler.framework.status import Code, Status
from corral.scheduler.plugins import (
    gang_scheduling,
)
from corral.testing.builders import pod, pod_info
from corral.testing.framework import FakeHandle


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
