"""SchedulingGates (PreEnqueue): a pod with ``spec.schedulingGates`` waits, gated, until they
are all removed; the queue re-runs PreEnqueue when the pod is updated."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from corral.scheduler.framework.cluster_events import (
    TARGET_POD,
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
)
from corral.scheduler.framework.interface import Handle
from corral.scheduler.framework.status import Code, Status
from corral.scheduler.framework.types import PodInfo
from corral.scheduler.plugins import names

NAME: Final = names.SCHEDULING_GATES


class SchedulingGates:
    name: str = NAME

    def pre_enqueue(self, pod: PodInfo) -> Status | None:
        if not pod.scheduling_gates:
            return None
        gates = " ".join(pod.scheduling_gates)
        return Status.of(
            Code.UNSCHEDULABLE_AND_UNRESOLVABLE, f"waiting for scheduling gates: [{gates}]"
        )

    def events_to_register(self) -> Sequence[ClusterEventWithHint]:
        # No hint: the pod's last gate went, always worth PreEnqueue again.
        gates_gone = ActionType.UPDATE_POD_SCHEDULING_GATES_ELIMINATED
        return (ClusterEventWithHint(ClusterEvent(TARGET_POD, gates_gone)),)


def new(args: object, handle: Handle) -> SchedulingGates:
    if args is not None:
        raise TypeError(f"{NAME} takes no args")
    return SchedulingGates()
