"""DefaultPreemption (PreEnqueue, PostFilter).

When no node fits, find nodes where evicting lower-priority pods would make room and nominate
the best one (upstream ``Evaluator.Preempt``):

1. Eligibility: ``preemptionPolicy: Never`` → ``not eligible due to preemptionPolicy=Never.``;
   a nominated node that is not UnschedulableAndUnresolvable and still has a lower-priority pod
   terminating by preemption → ``not eligible due to a terminating pod on the nominated node.``
2. Candidates (``candidates.py``): potential nodes are those whose Filter status is
   Unschedulable; victims are chosen per node (``victims.py``) honouring PDBs.
3. Extenders that support preemption narrow the candidates; then one node is picked.
4. The handle's :class:`~corral.scheduler.framework.listers.PreemptionExecutor` evicts the
   victims (victims waiting on Permit are rejected instead) and clears lower-priority
   nominations on that node; the result nominates the node for the preemptor.

Every message is prefixed ``preemption: ``; a success says ``found a potential placement for pod
on node <node>, preempting <n> victims`` (1.37), which ends the pod's FitError. With no candidate,
the message is a
nested FitError in which nodes not dry-run read ``Preemption is not helpful for scheduling``.
Without an executor (simulation, tests) the decision is returned and nothing is evicted.

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
from corral.scheduler.framework.diagnosis import Diagnosis, FitError, NodeToStatus
from corral.scheduler.framework.extender import Victims
from corral.scheduler.framework.interface import (
    Handle,
    MutableSnapshot,
    PodGroupSchedulingFunc,
    PostFilterResult,
)
from corral.scheduler.framework.podgroup import PodGroupRecord
from corral.scheduler.framework.snapshot import Snapshot
from corral.scheduler.framework.status import Code, Status, StatusError
from corral.scheduler.framework.types import PodInfo
from corral.scheduler.plugins import names
from corral.scheduler.plugins.default_preemption import candidates as cand
from corral.scheduler.plugins.default_preemption import workload_victims as wv
from corral.scheduler.plugins.default_preemption.extenders import call_preemption_extenders
from corral.scheduler.plugins.default_preemption.podgroup import preempt_pod_group
from corral.scheduler.plugins.default_preemption.victims import NO_VICTIMS

NAME: Final = names.DEFAULT_PREEMPTION
NOT_ELIGIBLE_NEVER: Final = "not eligible due to preemptionPolicy=Never."
NOT_ELIGIBLE_TERMINATING: Final = "not eligible due to a terminating pod on the nominated node."
NOT_HELPFUL: Final = "Preemption is not helpful for scheduling"
WAITING: Final = "waiting for the preemption for this pod to be finished"
WAITING_GROUP: Final = "waiting for the preemption for this pod group to be finished"
# Since 1.37 a successful preemption says so; the FitError (FailedScheduling) ends with it.
FOUND: Final = "found a potential placement for pod on node {node}, preempting {victims} victims"

__all__ = [
    "NAME",
    "NOT_HELPFUL",
    "NO_VICTIMS",
    "WAITING",
    "DefaultPreemption",
    "DefaultPreemptionArgs",
]


def _prefixed(code: Code, message: str) -> Status:
    return Status.of(code, "preemption: " + message)


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
        pct, absolute = args.min_candidate_nodes_percentage, args.min_candidate_nodes_absolute
        assert pct is not None, "defaulted by plugin_args"
        assert absolute is not None, "defaulted by plugin_args"
        self.min_candidates = (pct, absolute)
        self.handle = handle
        self.rng = rng or random.Random()
        self.clock = clock

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
            return Status.of(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, WAITING)
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
        snapshot = self.handle.snapshot()
        if snapshot is None:
            return None, Status.error("preemption: no snapshot of the cycle")
        by_slot = dict(statuses.items())
        reason = self._not_eligible(pod, snapshot, by_slot.get, statuses.absent)
        if reason:
            return None, _prefixed(Code.UNSCHEDULABLE, reason)
        now = float(self.clock())
        absent = _code(statuses.absent)
        if by_slot:
            potential = [
                s
                for s in snapshot.order.tolist()
                if (_code(by_slot[s]) if s in by_slot else absent) is Code.UNSCHEDULABLE
            ]
        else:  # one status for every node (a PreFilter's rejection): all of them or none
            potential = snapshot.order.tolist() if absent is Code.UNSCHEDULABLE else []
        found: list[cand.Candidate] = []
        tried = NodeToStatus()
        if potential:
            objects = self.handle.objects
            pdbs = objects.list(listers.POD_DISRUPTION_BUDGET) if objects is not None else []
            wanted = cand.num_candidates(
                len(potential),
                *self.min_candidates,
            )
            offset = self.rng.randrange(len(potential))
            found, tried = cand.dry_run(
                self.handle,
                state,
                pod,
                snapshot,
                potential=potential,
                pdbs=pdbs,
                offset=offset,
                wanted=wanted,
                now=now,
                evictable=_evictable(self.handle.preemption_executor),
            )
            errors = [s for _, s in tried.items() if s.code is Code.ERROR]
            if errors and not found:
                return None, _prefixed(Code.ERROR, errors[0].message)
        if not found:
            self._clear_own_nomination(pod)
            diagnosis = Diagnosis(node_to_status=tried)
            tried.absent = Status.of(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, NOT_HELPFUL)
            message = FitError(pod.key, snapshot.num_nodes, diagnosis).message()
            return PostFilterResult(""), _prefixed(Code.UNSCHEDULABLE, message)
        found, err = self._call_extenders(pod, snapshot, found)
        if err is not None:
            return None, err
        best = cand.pick_one(found, now)
        if best is None:
            return None, _prefixed(Code.UNSCHEDULABLE, "no candidate node for preemption")
        err = self._prepare(pod, best)
        if err is not None:
            return None, err
        found_message = FOUND.format(node=best.node_name, victims=len(best.victims))
        return PostFilterResult(best.node_name), _prefixed(Code.SUCCESS, found_message)

    # --- steps ------------------------------------------------------------------------------

    def _not_eligible(
        self,
        pod: PodInfo,
        snapshot: Snapshot,
        status_of: Callable[[int], Status | None],
        absent: Status | None,
    ) -> str:
        if pod.preemption_policy == "Never":
            return NOT_ELIGIBLE_NEVER
        slot = snapshot.slot_of.get(pod.nominated_node_name) if pod.nominated_node_name else None
        if slot is None:
            return ""
        if _code(status_of(slot) or absent) is Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
            return ""
        groups = snapshot.pod_groups if self.handle.generic_workload else {}
        for other in snapshot.pods.pods_on(slot):
            # A victim's priority is its PodGroup's with GenericWorkload (NewPodVictim).
            priority = wv.pod_priority(other, groups) if groups else other.priority
            if priority < pod.priority and other.terminating_by_preemption:
                return NOT_ELIGIBLE_TERMINATING
        return ""

    def _clear_own_nomination(self, pod: PodInfo) -> None:
        executor = self.handle.preemption_executor
        if executor is not None and pod.nominated_node_name:
            executor.clear_nominated_node_name([pod])

    def _call_extenders(
        self, pod: PodInfo, snapshot: Snapshot, found: list[cand.Candidate]
    ) -> tuple[list[cand.Candidate], Status | None]:
        extenders = [e for e in self.handle.extenders if e.supports_preemption()]
        if not extenders:
            return found, None

        def pods_on_node(name: str) -> Sequence[PodInfo]:
            return snapshot.pods.pods_on(snapshot.slot_of[name])

        victims = {c.node_name: Victims(c.victims, c.num_pdb_violations) for c in found}
        try:
            kept = call_preemption_extenders(
                extenders,
                pod,
                victims,
                pods_on_node,
                evictable=_evictable(self.handle.preemption_executor),
            )
        except StatusError as exc:
            return [], _prefixed(Code.ERROR, exc.status.message)
        return [
            cand.Candidate(name, tuple(v.pods), v.num_pdb_violations) for name, v in kept.items()
        ], None

    def _prepare(self, pod: PodInfo, best: cand.Candidate) -> Status | None:
        """Upstream ``prepareCandidate``: reject waiting victims, evict the rest, clear the
        nominations of lower-priority pods nominated to the node."""
        evict = []
        for victim in best.victims:
            waiting = self.handle.get_waiting_pod(victim.uid)
            if waiting is not None:
                waiting.reject(NAME, "preempted")
            else:
                evict.append(victim)
        executor = self.handle.preemption_executor
        if executor is None:
            return None
        nominator = self.handle.nominator
        lower = [
            p
            for p in (nominator.nominated_pods_for_node(best.node_name) if nominator else ())
            if p.priority < pod.priority
        ]
        s = executor.preempt(pod, best.node_name, evict, lower)
        if s is not None and not s.is_success:
            return _prefixed(Code.ERROR, s.message)
        return None

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


def _code(status: Status | None) -> Code:
    # Nodes without a status were not evaluated: upstream's default absent status.
    return Code.UNSCHEDULABLE_AND_UNRESOLVABLE if status is None else status.code


def new(args: object, handle: Handle) -> DefaultPreemption:
    return DefaultPreemption(plugin_args(NAME, args), handle)
