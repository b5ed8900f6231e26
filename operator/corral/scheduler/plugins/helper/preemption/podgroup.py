"""Workload-aware preemption of a pod group (upstream ``preemption/podgrouppreemption.go``,
DefaultPreemption's PodGroupPostFilter). The domain is the whole cluster:

1. The group may not preempt when any member says ``preemptionPolicy: Never``
   (``not eligible due to preemptionPolicy=Never.``).
2. A preemption already under way (a member's nominated node holds a lower-priority pod
   terminating by preemption): Success ``ongoing preemption on nominated nodes``, the members'
   nominations kept.
3. Victims: every cross-node victim (``workload_victims``) of lower priority than the group's
   (that the executor may evict); none → UnschedulableAndUnresolvable ``No preemption victims
   found for incoming preemptor``.
4. All of them are taken off the cycle's snapshot and the group's algorithm runs again; if the
   group still does not fit, that status is the answer.
5. Reprieve, most important first, PDB-violating victims before the others: a victim's pods go
   back, every placed member is filtered again on its node in order (each one passing is placed
   and Reserved for the next); a victim that breaks any placement is preempted.
6. The executor evicts the victims (asynchronously); each placed member is nominated to its
   node. Success ``found a placement for podgroup, preempting N victims``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Final

from corral.scheduler.framework import listers
from corral.scheduler.framework.interface import (
    Handle,
    MutableSnapshot,
    PodGroupSchedulingFunc,
    ProposedAssignment,
)
from corral.scheduler.framework.podgroup import PodGroupRecord
from corral.scheduler.framework.snapshot import Snapshot
from corral.scheduler.framework.status import Code, Status
from corral.scheduler.framework.types import PodInfo
from corral.scheduler.plugins.helper.preemption import workload_victims as wv

NOT_ELIGIBLE_NEVER: Final = "not eligible due to preemptionPolicy=Never."
ONGOING: Final = "ongoing preemption on nominated nodes"
NO_VICTIMS_FOR_GROUP: Final = "No preemption victims found for incoming preemptor"
FOUND_FOR_GROUP: Final = "found a placement for podgroup, preempting {victims} victims"

Nominations = Mapping[str, str]


def preempt_pod_group(
    handle: Handle,
    group: PodGroupRecord,
    members: Sequence[PodInfo],
    snapshot: MutableSnapshot,
    schedule: PodGroupSchedulingFunc,
    *,
    now: float,
    evictable: Callable[[PodInfo], bool],
) -> tuple[Nominations | None, Status | None]:
    """Upstream PodGroupEvaluator.Preempt; messages unprefixed (the plugin prefixes them)."""
    if any(m.preemption_policy == "Never" for m in members):
        return None, Status.of(Code.UNSCHEDULABLE, NOT_ELIGIBLE_NEVER)
    base = snapshot.snapshot()
    if _ongoing(group, members, base):
        return {m.uid: m.nominated_node_name for m in members}, Status.of(Code.SUCCESS, ONGOING)
    objects = handle.objects
    pdbs = objects.list(listers.POD_DISRUPTION_BUDGET) if objects is not None else []
    potential = [
        v
        for v in wv.cross_node_victims(base, base.order.tolist(), now)
        if v.priority < group.priority and all(evictable(p) for p in v.pods)
    ]
    if not potential:
        return None, Status.of(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, NO_VICTIMS_FOR_GROUP)
    for victim in potential:
        for pod in victim.pods:
            snapshot.remove(pod)
    try:
        assignments, status = schedule()
        if status is not None and not status.is_success:
            return None, status
        chosen, err = _reprieve(handle, snapshot, potential, assignments, pdbs)
    finally:
        for victim in potential:  # the cycle's snapshot as it was (its mutations end here)
            for pod in victim.pods:
                if not _placed(snapshot, pod):
                    snapshot.restore(pod)
    if err is not None:
        return None, err
    victims = [p for v in chosen for p in v.pods]
    executor = handle.preemption_executor
    if executor is not None:
        evict: list[PodInfo] = []
        for pod in victims:
            waiting = handle.get_waiting_pod(pod.uid)
            if waiting is not None:
                waiting.reject("DefaultPreemption", "preempted")
            else:
                evict.append(pod)
        s = executor.preempt_group(group.uid, group.key, members, evict)
        if s is not None and not s.is_success:
            return None, Status.error(s.message)
    nominations = {a.pod.uid: a.node_name for a in assignments if a.node_name}
    return nominations, Status.of(Code.SUCCESS, FOUND_FOR_GROUP.format(victims=len(victims)))


def _placed(snapshot: MutableSnapshot, pod: PodInfo) -> bool:
    """Whether ``pod`` is on its node in the snapshot now (a reprieved victim went back)."""
    current = snapshot.snapshot()
    slot = current.slot_of.get(pod.node_name)
    return slot is not None and any(p.uid == pod.uid for p in current.pods.pods_on(slot))


def _ongoing(group: PodGroupRecord, members: Sequence[PodInfo], snapshot: Snapshot) -> bool:
    for node in {m.nominated_node_name for m in members if m.nominated_node_name}:
        slot = snapshot.slot_of.get(node)
        if slot is None:
            continue
        for pod in snapshot.pods.pods_on(slot):
            priority = wv.pod_priority(pod, snapshot.pod_groups)
            if priority < group.priority and pod.terminating_by_preemption:
                return True
    return False


def _reprieve(
    handle: Handle,
    snapshot: MutableSnapshot,
    potential: Sequence[wv.Victim],
    assignments: Sequence[ProposedAssignment],
    pdbs: Sequence[Mapping[str, object]],
) -> tuple[list[wv.Victim], Status | None]:
    """Upstream selectVictimsOnDomain after the group fits without every potential victim."""
    ordered = wv.by_importance(potential)
    violating, fine = wv.split_by_pdb(ordered, pdbs)
    placed = [a for a in assignments if a.node_name]
    chosen: list[wv.Victim] = []

    def extensions(pod: PodInfo, add: bool) -> Status | None:
        view = snapshot.snapshot()
        node = view.node_info(view.slot_of[pod.node_name])
        for a in placed:
            run = (
                handle.run_pre_filter_extension_add_pod
                if add
                else handle.run_pre_filter_extension_remove_pod
            )
            s = run(a.state, a.pod, pod, node)
            if s is not None and not s.is_success:
                return s
        return None

    def fits_back(victim: wv.Victim) -> tuple[bool, Status | None]:
        for pod in victim.pods:
            snapshot.restore(pod)
            s = extensions(pod, add=True)
            if s is not None:
                return False, Status.error(s.message)
        undo: list[ProposedAssignment] = []
        fits = True
        try:
            for a in placed:
                view = snapshot.snapshot()
                handle.set_snapshot(view)
                node = view.node_info(view.slot_of[a.node_name])
                s = handle.run_filter_plugins_with_nominated_pods(a.state, a.pod, node)
                if s is not None and not s.is_success:
                    fits = False
                    break
                snapshot.assume(a.pod, a.node_name)
                handle.run_reserve(a.state, a.pod, a.node_name)
                undo.append(a)
        finally:
            for a in reversed(undo):
                handle.run_unreserve(a.state, a.pod, a.node_name)
                snapshot.forget(a.pod)
        if fits:
            return True, None
        for pod in victim.pods:
            snapshot.remove(pod)
            s = extensions(pod, add=False)
            if s is not None:
                return False, Status.error(s.message)
        return False, None

    for victim, _count in violating:
        fits, err = fits_back(victim)
        if err is not None:
            return [], err
        if not fits:
            chosen.append(victim)
    for victim in fine:
        fits, err = fits_back(victim)
        if err is not None:
            return [], err
        if not fits:
            chosen.append(victim)
    return wv.by_importance(chosen), None
