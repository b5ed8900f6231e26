"""DefaultPreemption (PreEnqueue, PostFilter, PodGroupPostFilter).

PostFilter: upstream's preemption evaluator (:mod:`corral.scheduler.plugins.helper.preemption`,
``evaluator.py``: eligibility, the dry run over candidates, extenders, the pick, the executor),
with upstream's victims: every lower-priority pod the executor may evict, PDBs charged up to the
first violated one, ``No preemption victims found for incoming pod`` on a node without victims.

PreEnqueue: while the executor still carries out a pod's preemption (asynchronously, as
upstream's default ``SchedulerAsyncPreemption``), the pod is gated with
``waiting for the preemption for this pod to be finished``; a Pod deletion re-runs the gate.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final

from corral.scheduler.config import plugin_args
from corral.scheduler.config.args import DefaultPreemptionArgs
from corral.scheduler.framework import listers
from corral.scheduler.framework.cluster_events import (
    ASSIGNED_POD,
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    QueueingHint,
)
from corral.scheduler.framework.cycle_state import CycleState
from corral.scheduler.framework.diagnosis import NodeToStatus
from corral.scheduler.framework.interface import (
    Handle,
    MutableSnapshot,
    PodGroupSchedulingFunc,
    PostFilterResult,
)
from corral.scheduler.framework.podgroup import PodGroupRecord
from corral.scheduler.framework.status import Code, Status
from corral.scheduler.framework.types import PodInfo
from corral.scheduler.plugins import names
from corral.scheduler.plugins.helper.preemption.evaluator import (
    NOT_ELIGIBLE_NEVER,
    NOT_ELIGIBLE_TERMINATING,
    NOT_HELPFUL,
    Evaluator,
)
from corral.scheduler.plugins.helper.preemption.podgroup import preempt_pod_group
from corral.scheduler.plugins.helper.preemption.victims import NO_VICTIMS

NAME: Final = names.DEFAULT_PREEMPTION
WAITING: Final = "waiting for the preemption for this pod to be finished"
WAITING_GROUP: Final = "waiting for the preemption for this pod group to be finished"
# PreEnqueue's answer while the preemption runs, built once: on every victim's deletion each
# gated preemptor asks again (upstream's rule), and a new Status each time was 5% of the event
# loop on PreemptionBasic. It names the plugin already, so the runner keeps it as it is.
_WAITING_STATUS: Final = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (WAITING,), NAME)

__all__ = [
    "NAME",
    "NOT_ELIGIBLE_NEVER",
    "NOT_ELIGIBLE_TERMINATING",
    "NOT_HELPFUL",
    "NO_VICTIMS",
    "WAITING",
    "DefaultPreemption",
    "DefaultPreemptionArgs",
]


class DefaultPreemption:
    name: str = NAME

    def __init__(
        self,
        args: DefaultPreemptionArgs,
        handle: Handle,
        *,
        rng: random.Random | None = None,
        clock: Any = time.time,
    ) -> None:
        self.handle = handle
        self.clock = clock
        self.evaluator = Evaluator(NAME, handle, args, rng=rng, clock=clock)

    def pre_enqueue(self, pod: PodInfo) -> Status | None:
        executor = self.handle.preemption_executor
        if executor is None:
            return None
        if pod.scheduling_group and self.handle.generic_workload:
            # A group member waits for its group's preemption (by the PodGroup's uid); a
            # group not observed is not this plugin's to hold back.
            manager = self.handle.pod_groups
            group = manager.pod_group(pod.pod_group_key) if manager is not None else None
            if group is not None and executor.is_running_preemption(group.uid):
                return Status.of(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, WAITING_GROUP)
            return None
        if executor.is_running_preemption(pod.uid):
            return _WAITING_STATUS
        return None

    def pod_group_post_filter(
        self,
        group: PodGroupRecord,
        members: Sequence[PodInfo],
        snapshot: MutableSnapshot,
        schedule: PodGroupSchedulingFunc,
        states: Mapping[str, CycleState],
    ) -> tuple[Mapping[str, str] | None, Status | None]:
        """Workload-aware preemption (``podgroup.py``); messages prefixed ``pod group
        preemption: `` as upstream's."""
        nominations, s = preempt_pod_group(
            self.handle, group, members, snapshot, schedule,
            now=float(self.clock()), evictable=_evictable(self.handle.preemption_executor),
        )  # fmt: skip
        if s is not None and s.message:
            s = Status(s.code, ("pod group preemption: " + s.message,))
        return nominations, s

    def post_filter(
        self, state: CycleState, pod: PodInfo, statuses: NodeToStatus
    ) -> tuple[PostFilterResult | None, Status | None]:
        return self.evaluator.preempt(state, pod, statuses)

    def events_to_register(self) -> Sequence[ClusterEventWithHint]:
        # Registered so that a preemptor it gates gets PreEnqueue again when a victim goes;
        # whether the deletion helps is for the pod's other rejectors' hints to say (upstream).
        return (
            ClusterEventWithHint(ClusterEvent(ASSIGNED_POD, ActionType.DELETE), _never_by_itself),
        )


def _never_by_itself(pod: PodInfo, old: object, new: object) -> QueueingHint:
    return QueueingHint.QUEUE_SKIP


def _evictable(executor: listers.PreemptionExecutor | None) -> Callable[[PodInfo], bool]:
    return executor.may_evict if executor is not None else lambda _pod: True


def new(args: object, handle: Handle) -> DefaultPreemption:
    return DefaultPreemption(plugin_args(NAME, args), handle)
