"""Preemption victims with GenericWorkload (upstream ``preemption/types.go``, ``util.go``).

- A pod whose PodGroup has ``disruptionMode: all`` is not a victim alone: its whole group is one
  victim, every scheduled pod of it cluster-wide (the snapshot's pod-group state). Any other pod
  is a victim by itself.
- A victim's priority is its PodGroup's (``spec.priority``) when the pod is in a group whose
  PodGroup is known, else the pod's own.
- Its kind is ``podgroup`` for a whole group and, as upstream's NewPodVictim records it, for a
  single pod that is in a scheduling group; ``pod`` otherwise.
- :func:`more_important` is upstream's MoreImportantVictim: higher priority; podgroup before
  pod; more pods; earlier start (a pod without ``status.startTime`` started now).
- :func:`split_by_pdb`: a victim is violating when any of its pods would violate a PDB (a group
  is evicted whole or not at all); it counts each violating pod.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from corral.scheduler.framework.cycle_state import CycleState
from corral.scheduler.framework.interface import Handle
from corral.scheduler.framework.podgroup import PodGroupState
from corral.scheduler.framework.snapshot import Snapshot
from corral.scheduler.framework.status import Code, Status
from corral.scheduler.framework.types import NodeInfo, PodInfo
from corral.scheduler.plugins.helper.preemption.victims import NO_VICTIMS, start_time
from corral.scheduler.plugins.helper.preemption.victims import split_by_pdb as split_pods

POD: Final = "pod"
POD_GROUP: Final = "podgroup"
_RANK: Final = {POD: 1, POD_GROUP: 2}


@dataclass(frozen=True, slots=True, eq=False)
class Victim:
    pods: tuple[PodInfo, ...]
    priority: int
    kind: str
    earliest_start: float

    def nodes(self) -> set[str]:
        return {p.node_name for p in self.pods}


def pod_priority(pod: PodInfo, groups: Mapping[str, PodGroupState]) -> int:
    """Upstream GetPodPriority (hierarchies off)."""
    state = groups.get(pod.pod_group_key) if pod.scheduling_group else None
    if state is None or state.group is None:
        return pod.priority
    return state.group.priority


def _victim(pods: Sequence[PodInfo], priority: int, kind: str, now: float) -> Victim:
    return Victim(tuple(pods), priority, kind, min(start_time(p, now) for p in pods))


def single(pod: PodInfo, groups: Mapping[str, PodGroupState], now: float) -> Victim:
    """Upstream NewPodVictim with the PodGroup lister on."""
    kind = POD_GROUP if pod.scheduling_group else POD
    return _victim((pod,), pod_priority(pod, groups), kind, now)


def cross_node_victims(snapshot: Snapshot, slots: Iterable[int], now: float) -> list[Victim]:
    """Upstream getCrossNodesVictims over these nodes, in node then pod order."""
    groups = snapshot.pod_groups
    seen: set[str] = set()
    out: list[Victim] = []
    for slot in slots:
        for pod in snapshot.pods.pods_on(slot):
            state = groups.get(pod.pod_group_key) if pod.scheduling_group else None
            group = state.group if state is not None else None
            if state is None or group is None or not group.disruption_all:
                key = f"pod:{pod.key}"
                if key not in seen:
                    seen.add(key)
                    out.append(single(pod, groups, now))
                continue
            if group.key in seen:
                continue
            seen.add(group.key)
            members = state.scheduled_pods()
            if not members:  # cannot happen: the pod is on a node of the snapshot
                out.append(single(pod, groups, now))
                continue
            out.append(_victim(members, group.priority, POD_GROUP, now))
    return out


def _compare(a: Victim, b: Victim) -> int:
    if a.priority != b.priority:
        return -1 if a.priority > b.priority else 1
    ra, rb = _RANK[a.kind], _RANK[b.kind]
    if ra != rb:
        return -1 if ra > rb else 1
    if len(a.pods) != len(b.pods):
        return -1 if len(a.pods) > len(b.pods) else 1
    if a.earliest_start != b.earliest_start:
        return -1 if a.earliest_start < b.earliest_start else 1
    return 0


def by_importance(victims: Sequence[Victim]) -> list[Victim]:
    """Most important first (upstream sorts with MoreImportantVictim)."""
    return sorted(victims, key=functools.cmp_to_key(_compare))


def split_by_pdb(
    victims: Sequence[Victim], pdbs: Sequence[Mapping[str, Any]]
) -> tuple[list[tuple[Victim, int]], list[Victim]]:
    """(violating victims with their violating pods' count, the others), order kept; the PDBs'
    budgets are spent across victims in that order, as upstream's podIsViolating."""
    flat = [p for v in victims for p in v.pods]
    violating_pods, _ = split_pods(flat, pdbs)
    bad = {p.uid for p in violating_pods}
    violating: list[tuple[Victim, int]] = []
    fine: list[Victim] = []
    for victim in victims:
        count = sum(1 for p in victim.pods if p.uid in bad)
        if count:
            violating.append((victim, count))
        else:
            fine.append(victim)
    return violating, fine


def select_victims_on_node(
    handle: Handle,
    state: CycleState,
    preemptor: PodInfo,
    snapshot: Snapshot,
    slot: int,
    *,
    pdbs: Sequence[Mapping[str, Any]],
    now: float,
    evictable: Callable[[PodInfo], bool],
) -> tuple[list[PodInfo], int, Status | None]:
    """Upstream DefaultPreemption.SelectVictimsOnNode with GenericWorkload: the victims are the
    node's cross-node victims of lower priority than the preemptor (a whole group with
    ``disruptionMode: all``); only the main node's NodeInfo changes, the PreFilter extensions
    see every removed or re-added pod on its own node. (victim pods, PDB violations, None) or
    ([], 0, the node's status)."""
    node = snapshot.node_info(slot)
    main = node.name
    potential = [
        v
        for v in cross_node_victims(snapshot, (slot,), now)
        if v.priority < preemptor.priority and all(evictable(p) for p in v.pods)
    ]
    if not potential:
        return [], 0, Status.of(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, NO_VICTIMS)
    remote: dict[str, NodeInfo] = {}

    def node_of(pod: PodInfo) -> NodeInfo:
        if pod.node_name == main:
            return node
        info = remote.get(pod.node_name)
        if info is None:
            info = remote[pod.node_name] = snapshot.node_info(snapshot.slot_of[pod.node_name])
        return info

    extensions = handle.has_pre_filter_extensions(state)

    def move(victim: Victim, *, back: bool) -> Status | None:
        """Take ``victim``'s pods off their nodes (``back``: put them back): the main node's
        NodeInfo changes, and the PreFilter extensions see each pod on its own node."""
        nonlocal node
        extension = (
            handle.run_pre_filter_extension_add_pod
            if back
            else handle.run_pre_filter_extension_remove_pod
        )
        for pod in victim.pods:
            if pod.node_name == main:
                node = node.with_pod(pod) if back else node.without_pod(pod)
            if extensions:
                s = extension(state, preemptor, pod, node_of(pod))
                if s is not None and not s.is_success:
                    return s
        return None

    for victim in potential:
        s = move(victim, back=False)
        if s is not None:
            return [], 0, s
    s = handle.run_filter_plugins_with_nominated_pods(state, preemptor, node)
    if s is not None and not s.is_success:
        return [], 0, s
    ordered = by_importance(potential)
    violating, fine = split_by_pdb(ordered, pdbs)
    chosen: list[Victim] = []

    def reprieve(victim: Victim) -> tuple[bool, Status | None]:
        s = move(victim, back=True)
        if s is not None:
            return False, s
        status = handle.run_filter_plugins_with_nominated_pods(state, preemptor, node)
        if status is None or status.is_success:
            return True, None
        s = move(victim, back=False)
        if s is not None:
            return False, s
        chosen.append(victim)
        return False, None

    violations = 0
    for victim, count in violating:
        fits, err = reprieve(victim)
        if err is not None:
            return [], 0, err
        if not fits:
            violations += count
    for victim in fine:
        _, err = reprieve(victim)
        if err is not None:
            return [], 0, err
    if violating and fine:
        chosen = by_importance(chosen)
    return [p for v in chosen for p in v.pods], violations, None
