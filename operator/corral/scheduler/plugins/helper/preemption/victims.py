"""Choosing victims on one node (upstream ``SelectVictimsOnNode``) and the PDB split.

1. Remove every pod of lower priority than the preemptor that ``evictable`` allows (a tenant
   scheduler's own namespaces; any pod otherwise; PreemptionToleration also keeps the pods that
   tolerate the preemptor) from a copy of the node (and from the cycle state through the
   PreFilter ``remove_pod`` extensions). None → UnschedulableAndUnresolvable
   ``No preemption victims found for incoming pod`` (or the caller's ``no_victims`` message).
2. The preemptor must then pass the filters (with nominated pods); otherwise the node's status
   is that failure.
3. Reprieve: in importance order (priority, then earlier start), PDB-violating pods first, then
   the rest, add each back; it stays if the filters still pass, else it is a victim (a violating
   victim counts a PDB violation).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final

from corral.scheduler.framework import labels
from corral.scheduler.framework.cycle_state import CycleState
from corral.scheduler.framework.interface import Handle
from corral.scheduler.framework.status import Code, Status, StatusError
from corral.scheduler.framework.types import NodeInfo, PodInfo

NO_VICTIMS: Final = "No preemption victims found for incoming pod"


def start_time(pod: PodInfo, now: float) -> float:
    """Upstream ``GetPodStartTime``: a pod without ``status.startTime`` started now."""
    return pod.start_time if pod.start_time is not None else now


def importance_key(now: float) -> Any:
    """Sort key for upstream ``MoreImportantPod``: higher priority, then earlier start."""
    return lambda p: (-p.priority, start_time(p, now))


def split_by_pdb(
    pods: Sequence[PodInfo], pdbs: Sequence[Mapping[str, Any]], *, charge_every_pdb: bool = False
) -> tuple[list[PodInfo], list[PodInfo]]:
    """Upstream ``FilterVictimsWithPDBViolation`` (1.37): (violating, non-violating), order kept.

    A pod stops at the first PDB it would violate: the PDBs after it are not charged for that pod.
    ``charge_every_pdb``: 1.36's ``filterPodsWithPDBViolation`` (scheduler-plugins' copy of it),
    which charges every matching PDB."""
    allowed = [int((pdb.get("status") or {}).get("disruptionsAllowed") or 0) for pdb in pdbs]
    parsed = [
        (
            str((pdb.get("metadata") or {}).get("namespace", "")),
            labels.parse((pdb.get("spec") or {}).get("selector")),
            (pdb.get("status") or {}).get("disruptedPods") or {},
        )
        for pdb in pdbs
    ]
    violating: list[PodInfo] = []
    fine: list[PodInfo] = []
    for pod in pods:
        violated = False
        if pod.labels:
            for i, (namespace, selector, disrupted) in enumerate(parsed):
                if namespace != pod.namespace or selector.error:
                    continue
                if selector.empty or not selector.matches(pod.labels):
                    continue  # an empty (or nil) selector matches nothing here
                if pod.name in disrupted:
                    continue
                allowed[i] -= 1
                if allowed[i] < 0:
                    violated = True
                    if not charge_every_pdb:
                        break
        (violating if violated else fine).append(pod)
    return violating, fine


def select_victims_on_node(
    handle: Handle,
    state: CycleState,
    pod: PodInfo,
    node: NodeInfo,
    pdbs: Sequence[Mapping[str, Any]],
    *,
    now: float | None = None,
    evictable: Callable[[PodInfo], bool] = lambda _pod: True,
    no_victims: str = NO_VICTIMS,
    charge_every_pdb: bool = False,
) -> tuple[list[PodInfo], int, Status | None]:
    """(victims in importance order, PDB violations, None) or ([], 0, the node's status).

    ``evictable`` may raise :class:`StatusError`: that status is the node's."""
    now = time.time() if now is None else now
    try:
        potential = [p for p in node.pods if p.priority < pod.priority and evictable(p)]
    except StatusError as exc:
        return [], 0, exc.status
    if not potential:
        return [], 0, Status.of(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, no_victims)
    if handle.has_pre_filter_extensions(state):
        for victim in potential:  # each extension sees the node as it is after its removal
            node = node.without_pod(victim)
            s = handle.run_pre_filter_extension_remove_pod(state, pod, victim, node)
            if s is not None and not s.is_success:
                return [], 0, s
    else:  # nobody looks at the intermediate nodes: one copy instead of one per victim
        node = node.without_pods(potential)
    s = handle.run_filter_plugins_with_nominated_pods(state, pod, node)
    if s is not None and not s.is_success:
        return [], 0, s
    potential.sort(key=importance_key(now))
    violating, fine = split_by_pdb(potential, pdbs, charge_every_pdb=charge_every_pdb)
    victims: list[PodInfo] = []

    def reprieve(p: PodInfo) -> tuple[bool, Status | None]:
        nonlocal node
        before = node
        node = node.with_pod(p)
        s = handle.run_pre_filter_extension_add_pod(state, pod, p, node)
        if s is not None and not s.is_success:
            return False, s
        status = handle.run_filter_plugins_with_nominated_pods(state, pod, node)
        if status is None or status.is_success:
            return True, None
        # The node without ``p`` again is the node before it was added (the copies are
        # values): no third copy per victim (upstream removes it from its mutable NodeInfo).
        node = before
        s = handle.run_pre_filter_extension_remove_pod(state, pod, p, node)
        if s is not None and not s.is_success:
            return False, s
        victims.append(p)
        return False, None

    violations = 0
    for p in violating:
        fits, err = reprieve(p)
        if err is not None:
            return [], 0, err
        violations += not fits
    for p in fine:
        _, err = reprieve(p)
        if err is not None:
            return [], 0, err
    if violating and fine:
        victims.sort(key=importance_key(now))
    return victims, violations, None
