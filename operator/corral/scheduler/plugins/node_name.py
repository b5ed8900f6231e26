"""NodeName (PreFilter, Filter): a pod with ``spec.nodeName`` fits only that node.

PreFilter (1.37) restricts the cycle to that node (upstream reaches it with pods whose resize is
deferred, an alpha feature; Corral's queue holds unassigned pods only, so in practice it returns
all nodes)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

import numpy as np

from corral.scheduler.framework.cluster_events import NODE, ActionType, ClusterEvent
from corral.scheduler.framework.cycle_state import CycleState
from corral.scheduler.framework.interface import (
    FilterVerdict,
    Handle,
    PreFilterExtensions,
    PreFilterResult,
)
from corral.scheduler.framework.snapshot import Snapshot
from corral.scheduler.framework.status import Code, Status
from corral.scheduler.framework.types import NodeInfo, PodInfo
from corral.scheduler.plugins import names

NAME: Final = names.NODE_NAME
ERR_REASON: Final = "node(s) didn't match the requested node name"

_REJECTED: Final = Status.of(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON)


class NodeName:
    name: str = NAME

    def pre_filter(
        self, state: CycleState, pod: PodInfo, snapshot: Snapshot
    ) -> tuple[PreFilterResult | None, Status | None]:
        if pod.node_name:
            return PreFilterResult(frozenset((pod.node_name,))), None
        return None, None

    def pre_filter_extensions(self) -> PreFilterExtensions | None:
        return None

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status | None:
        if not pod.node_name or pod.node_name == node.name:
            return None
        return _REJECTED

    def filter_batch(self, state: CycleState, pod: PodInfo, snapshot: Snapshot) -> FilterVerdict:
        if not pod.node_name:
            return FilterVerdict.uniform(np.ones(snapshot.capacity, dtype=np.bool_), _REJECTED)
        passed = np.zeros(snapshot.capacity, dtype=np.bool_)
        slot = snapshot.slot_of.get(pod.node_name)
        if slot is not None:
            passed[slot] = True
        return FilterVerdict.uniform(passed, _REJECTED)

    def events_to_register(self) -> Sequence[ClusterEvent]:
        # No hint: an added node is always worth a retry (it may be the one named).
        return (ClusterEvent(NODE, ActionType.ADD),)


def new(args: object, handle: Handle) -> NodeName:
    if args is not None:
        raise TypeError(f"{NAME} takes no args")
    return NodeName()
