"""CheckPodCountLimit (Filter) — Corral's own.

A node is filtered out when it already runs ``podCountLimit`` pods of this scheduler. Counted:
pods bound to the node or assumed on it (being bound) whose ``spec.schedulerName`` equals the
incoming pod's — which is this profile's schedulerName, since a profile only schedules its own
pods — and that are not terminal (phase Succeeded or Failed). Terminating pods still count
(they hold the node until they are gone). Rejection: Unschedulable, so preemption of lower
priority pods of this scheduler may free room.

Batch form: ``bincount`` of the pod table's matching rows over node slots.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

import numpy as np

from corral.scheduler.config import plugin_args
from corral.scheduler.config.args import CheckPodCountLimitArgs
from corral.scheduler.framework.cluster_events import NODE, POD, ActionType, ClusterEvent
from corral.scheduler.framework.cycle_state import CycleState
from corral.scheduler.framework.interface import FilterVerdict, Handle
from corral.scheduler.framework.snapshot import Snapshot
from corral.scheduler.framework.status import Code, Status
from corral.scheduler.framework.types import NodeInfo, PodInfo
from corral.scheduler.plugins import names

NAME: Final = names.CHECK_POD_COUNT_LIMIT
EXTENSION_POINTS: Final = ("filter",)


def reason(scheduler_name: str, limit: int) -> str:
    return f"node(s) already run {limit} pod(s) of scheduler {scheduler_name}"


def counts(pod: PodInfo, other: PodInfo) -> bool:
    return other.scheduler_name == pod.scheduler_name and not other.terminal


class CheckPodCountLimit:
    name: str = NAME

    def __init__(self, args: CheckPodCountLimitArgs) -> None:
        self.limit = args.pod_count_limit or 0  # required and >= 1: checked by plugin_args

    def _status(self, pod: PodInfo) -> Status:
        return Status.of(Code.UNSCHEDULABLE, reason(pod.scheduler_name, self.limit))

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status | None:
        if sum(1 for p in node.pods if counts(pod, p)) >= self.limit:
            return self._status(pod)
        return None

    def filter_batch(self, state: CycleState, pod: PodInfo, snapshot: Snapshot) -> FilterVerdict:
        table = snapshot.pods
        sid = table.scheduler_ids.get(pod.scheduler_name)
        if sid is None:
            return FilterVerdict.uniform(
                np.ones(snapshot.capacity, dtype=np.bool_), self._status(pod)
            )
        rows = (table.scheduler[: table.size] == sid) & ~table.terminal[: table.size]
        running = table.per_slot(rows, snapshot.capacity)
        return FilterVerdict.uniform(running < self.limit, self._status(pod))

    def events_to_register(self) -> Sequence[ClusterEvent]:
        return (
            ClusterEvent(POD, ActionType.DELETE | ActionType.UPDATE),
            ClusterEvent(NODE, ActionType.ADD),
        )


def new(args: object, handle: Handle) -> CheckPodCountLimit:
    return CheckPodCountLimit(plugin_args(NAME, args))
