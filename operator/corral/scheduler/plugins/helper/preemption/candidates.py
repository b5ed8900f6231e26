"""Candidate nodes for preemption: the dry run over potential nodes and the pick of one.

Dry run (upstream ``DryRunPreemption``): from a random offset, wrapping around the potential
nodes (those whose Filter status is Unschedulable), run :func:`select_victims_on_node` on a copy
of the node and of the cycle state; stop once at least one candidate violates no PDB and
``numCandidates`` candidates were found. Candidates without PDB violations come first.

Pick (upstream ``pickOneNodeForPreemption``), each criterion breaking the previous one's ties:
fewest PDB violations; lowest highest-victim priority; lowest sum of (priority + 2^31); fewest
victims; latest earliest-start-time among the highest-priority victims; then the first
candidate (upstream iterates a Go map there, i.e. an arbitrary one).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, Protocol

from corral.scheduler.framework.cycle_state import CycleState
from corral.scheduler.framework.diagnosis import NodeToStatus
from corral.scheduler.framework.interface import Handle
from corral.scheduler.framework.snapshot import Snapshot
from corral.scheduler.framework.status import Status
from corral.scheduler.framework.types import NodeInfo, PodInfo
from corral.scheduler.plugins.helper.preemption import workload_victims as wv
from corral.scheduler.plugins.helper.preemption.victims import (
    NO_VICTIMS,
    select_victims_on_node,
    start_time,
)

_PRIORITY_OFFSET = 2**31


class SelectVictims(Protocol):
    """A plugin's own ``SelectVictimsOnNode`` (scheduler-plugins' CapacityScheduling): the same
    contract as :func:`~corral.scheduler.plugins.helper.preemption.victims.select_victims_on_node`
    on a copy of the node and of the cycle state."""

    def __call__(
        self,
        handle: Handle,
        state: CycleState,
        pod: PodInfo,
        node: NodeInfo,
        pdbs: Sequence[Mapping[str, Any]],
        *,
        now: float,
        evictable: Callable[[PodInfo], bool],
    ) -> tuple[list[PodInfo], int, Status | None]: ...


@dataclass(frozen=True, slots=True)
class Candidate:
    node_name: str
    victims: tuple[PodInfo, ...]  # most important first
    num_pdb_violations: int


def num_candidates(num_nodes: int, percentage: int, absolute: int) -> int:
    """Upstream ``calculateNumCandidates``."""
    n = num_nodes * percentage // 100
    return min(max(n, absolute), num_nodes)


def dry_run(
    handle: Handle,
    state: CycleState,
    pod: PodInfo,
    snapshot: Snapshot,
    *,
    potential: Sequence[int],
    pdbs: Sequence[Mapping[str, Any]],
    offset: int,
    wanted: int,
    now: float,
    evictable: Callable[[PodInfo], bool] = lambda _pod: True,
    no_victims: Callable[[str], str] | None = None,
    charge_every_pdb: bool = False,
    select: SelectVictims | None = None,
) -> tuple[list[Candidate], NodeToStatus]:
    """``no_victims``: the message of a node without victims, by node name (default
    ``NO_VICTIMS``); ``charge_every_pdb``: see :func:`split_by_pdb` (both for single pods;
    the GenericWorkload path keeps upstream's); ``select``: the plugin's own victim selection
    in place of upstream's (single pods only)."""
    statuses = NodeToStatus()
    clean: list[Candidate] = []
    violating: list[Candidate] = []
    for i in range(len(potential)):
        slot = potential[(offset + i) % len(potential)]
        node = snapshot.node_info(slot)
        if handle.generic_workload:  # a group's pods on other nodes may be among the victims
            victims, violations, s = wv.select_victims_on_node(
                handle, state.clone(), pod, snapshot, slot, pdbs=pdbs, now=now, evictable=evictable
            )
        elif select is not None:
            victims, violations, s = select(
                handle, state.clone(), pod, node, pdbs, now=now, evictable=evictable
            )
        else:
            victims, violations, s = select_victims_on_node(
                handle,
                state.clone(),
                pod,
                node,
                pdbs,
                now=now,
                evictable=evictable,
                no_victims=no_victims(node.name) if no_victims is not None else NO_VICTIMS,
                charge_every_pdb=charge_every_pdb,
            )
        if s is None and victims:
            c = Candidate(node.name, tuple(victims), violations)
            (violating if violations else clean).append(c)
            if clean and len(clean) + len(violating) >= wanted:
                break
            continue
        if s is None:
            s = Status.error(f'expected at least one victim pod on node "{node.name}"')
        statuses.set(slot, s)
    return clean + violating, statuses


def _earliest_start_of_top(victims: Sequence[PodInfo], now: float) -> float:
    """Upstream ``GetEarliestPodStartTime``."""
    top = victims[0].priority
    earliest = start_time(victims[0], now)
    for p in victims:
        if p.priority == top:
            earliest = min(earliest, start_time(p, now))
        elif p.priority > top:
            top, earliest = p.priority, start_time(p, now)
    return earliest


# Upstream pickOneNodeForPreemption's rules, in order, as the explanation words them.
PICK_RULES: Final = (
    "fewest PodDisruptionBudget violations",
    "lowest priority of its most important victim",
    "lowest sum of victim priorities",
    "fewest victims",
    "latest start of its most important victim",
)
PICK_FIRST: Final = "the first of the candidates tied on every rule"
PICK_ONLY: Final = "the only candidate"


def pick_one(candidates: Sequence[Candidate], now: float) -> Candidate | None:
    return pick_one_why(candidates, now)[0]


def pick_one_why(candidates: Sequence[Candidate], now: float) -> tuple[Candidate | None, str]:
    """Upstream ``pickOneNodeForPreemption``, and the rule that decided (for ``--explain``)."""
    if not candidates:
        return None, ""
    if len(candidates) == 1:
        return candidates[0], PICK_ONLY
    scorers: list[Callable[[Candidate], float]] = [
        lambda c: -c.num_pdb_violations,
        lambda c: -c.victims[0].priority,
        lambda c: -sum(p.priority + _PRIORITY_OFFSET for p in c.victims),
        lambda c: -len(c.victims),
        lambda c: _earliest_start_of_top(c.victims, now),
    ]
    remaining = list(candidates)
    for rule, score in zip(PICK_RULES, scorers, strict=True):
        values = [score(c) for c in remaining]
        best = max(values)
        remaining = [c for c, v in zip(remaining, values, strict=True) if v == best]
        if len(remaining) == 1:
            return remaining[0], rule
    return remaining[0], PICK_FIRST
