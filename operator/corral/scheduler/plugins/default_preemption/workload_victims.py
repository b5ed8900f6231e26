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
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from corral.scheduler.framework.podgroup import PodGroupState
from corral.scheduler.framework.snapshot import Snapshot
from corral.scheduler.framework.types import PodInfo
from corral.scheduler.plugins.default_preemption.victims import split_by_pdb as split_pods
from corral.scheduler.plugins.default_preemption.victims import start_time

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
