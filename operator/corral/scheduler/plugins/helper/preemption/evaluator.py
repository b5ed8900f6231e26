"""The preemption evaluator (upstream ``preemption.Evaluator.Preempt``), shared by the
PostFilter plugins that preempt: DefaultPreemption and scheduler-plugins' PreemptionToleration.

When no node fits, find nodes where evicting lower-priority pods would make room and nominate
the best one:

1. Eligibility: ``preemptionPolicy: Never`` → ``not eligible due to preemptionPolicy=Never.``;
   a nominated node that is not UnschedulableAndUnresolvable and still has a lower-priority pod
   that ``blocks_nomination`` (upstream: terminating by preemption) → ``not eligible due to a
   terminating pod on the nominated node.``
2. Candidates (``candidates.py``): potential nodes are those whose Filter status is
   Unschedulable; victims are chosen per node (``victims.py``) honouring PDBs, among the pods
   the ``evictable`` predicate (built per preemptor) allows.
3. Extenders that support preemption narrow the candidates; then one node is picked.
4. The handle's :class:`~corral.scheduler.framework.listers.PreemptionExecutor` evicts the
   victims (victims waiting on Permit are rejected, in the plugin's name, instead) and clears
   lower-priority nominations on that node; the result nominates the node for the preemptor.

Every message is prefixed ``preemption: ``; a success says ``found a potential placement for pod
on node <node>, preempting <n> victims`` (1.37), which ends the pod's FitError. With no candidate,
the message is a nested FitError in which nodes not dry-run read ``Preemption is not helpful for
scheduling``. Without an executor (simulation, tests) the decision is returned and nothing is
evicted.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import Any, Final, Protocol

from corral.scheduler.framework import explanation as x
from corral.scheduler.framework import listers
from corral.scheduler.framework.cycle_state import CycleState
from corral.scheduler.framework.diagnosis import Diagnosis, FitError, NodeToStatus
from corral.scheduler.framework.extender import Victims
from corral.scheduler.framework.interface import Handle, PostFilterResult
from corral.scheduler.framework.snapshot import Snapshot
from corral.scheduler.framework.status import Code, Status, StatusError
from corral.scheduler.framework.types import PodInfo
from corral.scheduler.plugins.helper.preemption import candidates as cand
from corral.scheduler.plugins.helper.preemption import workload_victims as wv
from corral.scheduler.plugins.helper.preemption.extenders import call_preemption_extenders

NOT_ELIGIBLE_NEVER: Final = "not eligible due to preemptionPolicy=Never."
NOT_ELIGIBLE_TERMINATING: Final = "not eligible due to a terminating pod on the nominated node."
NOT_HELPFUL: Final = "Preemption is not helpful for scheduling"
# Since 1.37 a successful preemption says so; the FitError (FailedScheduling) ends with it.
FOUND: Final = "found a potential placement for pod on node {node}, preempting {victims} victims"

# preemptor -> whether a pod may be one of its victims (may raise StatusError: that node's).
VictimFilter = Callable[[PodInfo], Callable[[PodInfo], bool]]
# (cycle state, preemptor, pods on its nominated node) -> why it may not preempt again ("" if
# it may): a plugin's own rule in place of the lower-priority ``blocks_nomination`` scan.
NominatedNodeCheck = Callable[[CycleState, PodInfo, Sequence[PodInfo]], str]


class MinCandidateNodes(Protocol):
    """How many candidate nodes the dry run looks for: DefaultPreemptionArgs' two fields, which
    scheduler-plugins' PreemptionTolerationArgs reuses (defaulted by ``plugin_args``)."""

    min_candidate_nodes_percentage: int | None
    min_candidate_nodes_absolute: int | None


def prefixed(code: Code, message: str) -> Status:
    return Status.of(code, "preemption: " + message)


def _terminating_by_preemption(pod: PodInfo) -> bool:
    return pod.terminating_by_preemption


class Evaluator:
    def __init__(
        self,
        plugin: str,
        handle: Handle,
        args: MinCandidateNodes,
        *,
        rng: random.Random | None = None,
        clock: Any,
        victim_filter: VictimFilter | None = None,
        no_victims: Callable[[str, PodInfo], str] | None = None,
        charge_every_pdb: bool = False,
        blocks_nomination: Callable[[PodInfo], bool] = _terminating_by_preemption,
        select_victims: cand.SelectVictims | None = None,
        nominated_node_check: NominatedNodeCheck | None = None,
        every_candidate: bool = False,
    ) -> None:
        self.plugin = plugin
        self.handle = handle
        pct, absolute = args.min_candidate_nodes_percentage, args.min_candidate_nodes_absolute
        assert pct is not None, "defaulted by plugin_args"
        assert absolute is not None, "defaulted by plugin_args"
        self.min_candidates = pct, absolute
        # None: the profile's own (a simulation seeds it), else one of this evaluator's.
        self._rng = rng
        self._fallback = random.Random()
        self.clock = clock
        self.victim_filter = victim_filter
        self.no_victims = no_victims
        self.charge_every_pdb = charge_every_pdb
        self.blocks_nomination = blocks_nomination
        self.select_victims = select_victims
        self.nominated_node_check = nominated_node_check
        # Dry-run every potential node from the first (SP's GetOffsetAndNumCandidates(n) =
        # 0, n) instead of upstream's random offset and numCandidates.
        self.every_candidate = every_candidate

    @property
    def rng(self) -> random.Random:
        """The dry run's random offset: as upstream, random; repeatable when the profile's
        scheduler has a seeded generator (the handle's ``rng``, ``corral simulate --seed``)."""
        if self._rng is not None:
            return self._rng
        own = getattr(self.handle, "rng", None)
        return own if isinstance(own, random.Random) else self._fallback

    def preempt(
        self, state: CycleState, pod: PodInfo, statuses: NodeToStatus
    ) -> tuple[PostFilterResult | None, Status | None]:
        snapshot = self.handle.snapshot()
        if snapshot is None:
            return None, Status.error("preemption: no snapshot of the cycle")
        by_slot = dict(statuses.items())
        reason = self._not_eligible(state, pod, snapshot, by_slot.get, statuses.absent)
        if reason:
            return None, prefixed(Code.UNSCHEDULABLE, reason)
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
            if self.every_candidate:
                wanted, offset = len(potential), 0
            else:
                wanted = cand.num_candidates(len(potential), *self.min_candidates)
                offset = self.rng.randrange(len(potential))
            no_victims = self.no_victims
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
                evictable=self._evictable(pod),
                no_victims=(lambda n: no_victims(n, pod)) if no_victims is not None else None,
                charge_every_pdb=self.charge_every_pdb,
                select=self.select_victims,
            )
            errors = [s for _, s in tried.items() if s.code is Code.ERROR]
            if errors and not found:
                return None, prefixed(Code.ERROR, errors[0].message)
        if not found:
            if state.recorder is not None:
                state.recorder.preemption(x.Preemption(why="no node where evicting lower-priority "
                                                       "pods would make room"))  # fmt: skip
            self._clear_own_nomination(pod)
            diagnosis = Diagnosis(node_to_status=tried)
            tried.absent = Status.of(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, NOT_HELPFUL)
            message = FitError(pod.key, snapshot.num_nodes, diagnosis).message()
            return PostFilterResult(""), prefixed(Code.UNSCHEDULABLE, message)
        found, err = self._call_extenders(pod, snapshot, found)
        if err is not None:
            return None, err
        best, why = cand.pick_one_why(found, now)
        if state.recorder is not None:
            state.recorder.preemption(_explained(found, best, why))
        if best is None:
            return None, prefixed(Code.UNSCHEDULABLE, "no candidate node for preemption")
        err = self._prepare(pod, best)
        if err is not None:
            return None, err
        found_message = FOUND.format(node=best.node_name, victims=len(best.victims))
        return PostFilterResult(best.node_name), prefixed(Code.SUCCESS, found_message)

    # --- steps ------------------------------------------------------------------------------

    def _evictable(self, pod: PodInfo) -> Callable[[PodInfo], bool]:
        executor = self.handle.preemption_executor
        checks = [
            check
            for check in (
                executor.may_evict if executor is not None else None,
                self.victim_filter(pod) if self.victim_filter is not None else None,
            )
            if check is not None
        ]
        return lambda victim: all(check(victim) for check in checks)

    def _not_eligible(
        self,
        state: CycleState,
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
        if self.nominated_node_check is not None:
            return self.nominated_node_check(state, pod, snapshot.pods.pods_on(slot))
        groups = snapshot.pod_groups if self.handle.generic_workload else {}
        for other in snapshot.pods.pods_on(slot):
            # A victim's priority is its PodGroup's with GenericWorkload (NewPodVictim).
            priority = wv.pod_priority(other, groups) if groups else other.priority
            if priority < pod.priority and self.blocks_nomination(other):
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
                evictable=self._evictable(pod),
            )
        except StatusError as exc:
            return [], prefixed(Code.ERROR, exc.status.message)
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
                waiting.reject(self.plugin, "preempted")
            else:
                evict.append(victim)
        executor = self.handle.preemption_executor
        if executor is None:
            return None
        nominator = self.handle.nominator
        lower = [
            p
            for p in (
                nominator.nominated_pods_for_node(best.node_name) if nominator is not None else ()
            )
            if p.priority < pod.priority
        ]
        s = executor.preempt(pod, best.node_name, evict, lower)
        if s is not None and not s.is_success:
            return prefixed(Code.ERROR, s.message)
        return None


def _explained(
    found: Sequence[cand.Candidate], best: cand.Candidate | None, why: str
) -> x.Preemption:
    return x.Preemption(
        candidates=[
            x.PreemptionCandidate(
                c.node_name, [x.Victim(v.key, v.priority) for v in c.victims], c.num_pdb_violations
            )
            for c in found
        ],
        chosen=None if best is None else best.node_name,
        why=why,
    )


def _code(status: Status | None) -> Code:
    # Nodes without a status were not evaluated: upstream's default absent status.
    return Code.UNSCHEDULABLE_AND_UNRESOLVABLE if status is None else status.code
