"""NodeUnschedulable (PreFilter, Filter): a node with ``spec.unschedulable`` only takes pods that
tolerate the ``node.kubernetes.io/unschedulable:NoSchedule`` taint.

The PreFilter (1.37) does nothing: upstream's skips the plugin only for a pod whose resize is
deferred (InPlacePodVerticalScalingSchedulerPreemption, alpha and off)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

import numpy as np

from corral.scheduler.framework.cluster_events import NODE, ActionType, ClusterEvent
from corral.scheduler.framework.cycle_state import CycleState
from corral.scheduler.framework.interface import FilterVerdict, Handle
from corral.scheduler.framework.snapshot import Snapshot
from corral.scheduler.framework.status import Code, Status
from corral.scheduler.framework.taints import (
    NO_SCHEDULE,
    TAINT_NODE_UNSCHEDULABLE,
    Taint,
    tolerations_tolerate,
)
from corral.scheduler.framework.types import NodeInfo, PodInfo
from corral.scheduler.plugins import helper, names

NAME: Final = names.NODE_UNSCHEDULABLE
ERR_REASON_UNSCHEDULABLE: Final = "node(s) were unschedulable"

_UNSCHEDULABLE_TAINT: Final = Taint(key=TAINT_NODE_UNSCHEDULABLE, effect=NO_SCHEDULE)
_REJECTED: Final = Status.of(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_UNSCHEDULABLE)


class NodeUnschedulable(helper.NoOpPreFilter):
    name: str = NAME

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status | None:
        if not node.unschedulable:
            return None
        if tolerations_tolerate(pod.tolerations, _UNSCHEDULABLE_TAINT):
            return None
        return _REJECTED

    def filter_batch(self, state: CycleState, pod: PodInfo, snapshot: Snapshot) -> FilterVerdict:
        if tolerations_tolerate(pod.tolerations, _UNSCHEDULABLE_TAINT):
            return FilterVerdict.uniform(np.ones(snapshot.capacity, dtype=np.bool_), _REJECTED)
        return FilterVerdict.uniform(~snapshot.unschedulable, _REJECTED)

    def events_to_register(self) -> Sequence[ClusterEvent]:
        return (ClusterEvent(NODE, ActionType.ADD | ActionType.UPDATE_NODE_TAINT),)


def new(args: object, handle: Handle) -> NodeUnschedulable:
    if args is not None:
        raise TypeError(f"{NAME} takes no args")
    return NodeUnschedulable()
