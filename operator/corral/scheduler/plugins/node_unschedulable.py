"""NodeUnschedulable (PreFilter, Filter): a node with ``spec.unschedulable`` only takes pods that
tolerate the ``node.kubernetes.io/unschedulable:NoSchedule`` taint.

The PreFilter (1.37) does nothing: upstream's skips the plugin only for a pod whose resize is
deferred (InPlacePodVerticalScalingSchedulerPreemption, alpha and off)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

import numpy as np

from corral.scheduler.framework import cluster_events as ev
from corral.scheduler.framework.cluster_events import (
    NODE,
    TARGET_POD,
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    QueueingHint,
)
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
from corral.scheduler.framework.types import NodeInfo, NodeRecord, PodInfo
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

    # --- queueing hints ---------------------------------------------------------------------

    def events_to_register(self) -> Sequence[ClusterEventWithHint]:
        return (
            ClusterEventWithHint(
                ClusterEvent(NODE, ActionType.ADD | ActionType.UPDATE_NODE_TAINT),
                self.hint_node_change,
            ),
            ClusterEventWithHint(
                ClusterEvent(TARGET_POD, ActionType.UPDATE_POD_TOLERATION),
                self.hint_target_pod_toleration_change,
            ),
        )

    def hint_node_change(self, pod: PodInfo, old: object, new: object) -> QueueingHint:
        """A schedulable node added, or a node that became schedulable."""
        original, modified = ev.as_objects(old, new, NodeRecord)
        assert modified is not None
        became = original is None or original.unschedulable
        if became and not modified.unschedulable:
            return QueueingHint.QUEUE
        return QueueingHint.QUEUE_SKIP

    def hint_target_pod_toleration_change(
        self, pod: PodInfo, old: object, new: object
    ) -> QueueingHint:
        """The pod now tolerates the unschedulable taint (tolerations can only be added)."""
        _, modified = ev.as_objects(old, new, PodInfo)
        assert modified is not None
        if tolerations_tolerate(modified.tolerations, _UNSCHEDULABLE_TAINT):
            return QueueingHint.QUEUE
        return QueueingHint.QUEUE_SKIP


def new(args: object, handle: Handle) -> NodeUnschedulable:
    if args is not None:
        raise TypeError(f"{NAME} takes no args")
    return NodeUnschedulable()
