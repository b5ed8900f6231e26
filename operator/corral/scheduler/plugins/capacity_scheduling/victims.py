"""CapacityScheduling's preemption rules (SP ``capacity_scheduling.go``: the ``preemptor``'s
``SelectVictimsOnNode`` and ``PodEligibleToPreemptOthers``), run by the shared evaluator.

Potential victims on a node, least important first, among the pods the executor may evict:

- the preemptor's namespace has an ElasticQuota and ``used + request`` (with the nominated pods
  of its namespace that are at least as important) is over its ``min``: pods of **its own
  namespace** with lower priority;
- its namespace has one and the request is within its ``min`` (other quotas borrowed it): pods
  of **other namespaces whose quota is over its min**, of any priority — each removal updates
  the quotas, so a namespace stops giving pods up once it is back at its min;
- its namespace has none: lower-priority pods of namespaces that have none either.

None → UnschedulableAndUnresolvable ``No victims found on node <node> for preemptor pod <pod>``.
With them all removed the pod must pass the filters, and (with a quota) neither its max nor the
sum of mins may be exceeded by its request (``global quota max exceeded``). Reprieve: PDB
violators first, then the rest, most important first; a pod stays unless the filters then fail
or the quotas (with the nominated pods) are exceeded again.

Corral's difference: a reprieved pod that both fails the filters and exceeds the quotas is one
victim; SP removes it twice, the second removal fails and the whole node is an Error.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from corral.scheduler.framework.cycle_state import CycleState
from corral.scheduler.framework.interface import Handle
from corral.scheduler.framework.status import Code, Status
from corral.scheduler.framework.types import NodeInfo, PodInfo, Resources
from corral.scheduler.plugins.capacity_scheduling import elastic_quota as eq
from corral.scheduler.plugins.helper.preemption.victims import importance_key, split_by_pdb

PRE_FILTER_STATE_KEY: Final = "PreFilterCapacityScheduling"
SNAPSHOT_KEY: Final = "ElasticQuotaSnapshot"
NO_VICTIMS: Final = "No victims found on node {node} for preemptor pod {pod}"
QUOTA_EXCEEDED: Final = "global quota max exceeded"
NO_SNAPSHOT_STATE: Final = "Failed to read elasticQuotaSnapshot from cycleState"
NO_PRE_FILTER_STATE: Final = "Failed to read preFilterState from cycleState"
NOT_ELIGIBLE_NO_STATE: Final = "not eligible due to failed to read from cycleState"
NOT_ELIGIBLE_TERMINATING: Final = "not eligible due to a terminating pod on the nominated node."


@dataclass(frozen=True, slots=True)
class PreFilterState:
    """SP ``PreFilterState``: the pod's request; plus the nominated pods of its namespace at
    least as important (``in_quota``); plus those of other quotas within their min (``all``)."""

    pod_request: Resources
    in_quota: Resources
    all: Resources

    def clone(self) -> PreFilterState:
        return self


@dataclass(slots=True)
class QuotaSnapshot:
    """SP ``ElasticQuotaSnapshotState``: the quotas as this cycle sees them; preemption's dry
    runs change their clones through the PreFilter extensions."""

    infos: eq.QuotaInfos

    def clone(self) -> QuotaSnapshot:
        return QuotaSnapshot(eq.clone_all(self.infos))


def states(state: CycleState) -> tuple[QuotaSnapshot | None, PreFilterState | None]:
    return state.read(SNAPSHOT_KEY, QuotaSnapshot), state.read(PRE_FILTER_STATE_KEY, PreFilterState)


class _Trial:
    """The node as the dry run changes it, the cycle state's quotas following through the
    PreFilter extensions."""

    def __init__(self, handle: Handle, state: CycleState, pod: PodInfo, node: NodeInfo) -> None:
        self.handle, self.state, self.pod, self.node = handle, state, pod, node

    def remove(self, victim: PodInfo) -> Status | None:
        self.node = self.node.without_pod(victim)
        s = self.handle.run_pre_filter_extension_remove_pod(self.state, self.pod, victim, self.node)
        return None if s is None or s.is_success else s

    def add(self, victim: PodInfo) -> Status | None:
        self.node = self.node.with_pod(victim)
        s = self.handle.run_pre_filter_extension_add_pod(self.state, self.pod, victim, self.node)
        return None if s is None or s.is_success else s

    def fits(self) -> Status | None:
        s = self.handle.run_filter_plugins_with_nominated_pods(self.state, self.pod, self.node)
        return None if s is None or s.is_success else s


def _chosen(pod: PodInfo, p: PodInfo, infos: eq.QuotaInfos, over_min: bool) -> bool:
    """Whether ``p`` may be a victim of ``pod`` as the quotas stand now."""
    theirs = infos.get(p.namespace)
    if pod.namespace not in infos:
        return theirs is None and p.priority < pod.priority
    if theirs is None:
        return False
    if over_min:  # its own min is not borrowed: its own namespace's lower-priority pods
        return p.namespace == pod.namespace and p.priority < pod.priority
    # Within its min: what other quotas borrowed beyond theirs.
    return p.namespace != pod.namespace and theirs.used_over_min()


def select_victims_on_node(
    handle: Handle,
    state: CycleState,
    pod: PodInfo,
    node: NodeInfo,
    pdbs: Sequence[Mapping[str, Any]],
    *,
    now: float,
    evictable: Callable[[PodInfo], bool],
) -> tuple[list[PodInfo], int, Status | None]:
    quotas, pre = states(state)
    if quotas is None:
        return [], 0, Status.of(Code.UNSCHEDULABLE, NO_SNAPSHOT_STATE)
    if pre is None:
        return [], 0, Status.of(Code.UNSCHEDULABLE, NO_PRE_FILTER_STATE)
    infos = quotas.infos
    own = infos.get(pod.namespace)
    trial = _Trial(handle, state, pod, node)
    over_min = own is not None and own.used_over_min_with(pre.in_quota)
    potential: list[PodInfo] = []
    for p in sorted(node.pods, key=importance_key(now), reverse=True):  # least important first
        if _chosen(pod, p, infos, over_min) and evictable(p):
            potential.append(p)
            err = trial.remove(p)
            if err is not None:
                return [], 0, err
    if not potential:
        message = NO_VICTIMS.format(node=node.name, pod=pod.name)
        return [], 0, Status.of(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, message)
    s = trial.fits()
    if s is not None:
        return [], 0, s
    if own is not None and (
        own.used_over_max_with(pre.pod_request)
        or eq.aggregated_used_over_min_with(infos, pre.pod_request)
    ):
        return [], 0, Status.of(Code.UNSCHEDULABLE, QUOTA_EXCEEDED)

    def exceeded() -> bool:
        return own is not None and (
            own.used_over_max_with(pre.in_quota) or eq.aggregated_used_over_min_with(infos, pre.all)
        )

    victims: list[PodInfo] = []

    def reprieve(p: PodInfo) -> tuple[bool, Status | None]:
        before = trial.node
        err = trial.add(p)
        if err is not None:
            return False, err
        fits = trial.fits() is None
        if fits and not exceeded():
            return True, None
        trial.node = before
        s = handle.run_pre_filter_extension_remove_pod(state, pod, p, before)
        if s is not None and not s.is_success:
            return False, s
        victims.append(p)
        return fits, None

    potential.sort(key=importance_key(now))
    violating, fine = split_by_pdb(potential, pdbs, charge_every_pdb=True)
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


def nominated_node_check(state: CycleState, pod: PodInfo, on_node: Sequence[PodInfo]) -> str:
    """SP ``PodEligibleToPreemptOthers`` past the policy and the Unresolvable nominated node:
    a terminating pod on the nominated node whose going makes room for this preemptor (its
    own namespace's, of lower priority; or, within its min, one of a quota over its min; or,
    without a quota, a lower-priority pod outside every quota) makes it wait."""
    quotas, pre = states(state)
    if pre is None:
        return NOT_ELIGIBLE_NO_STATE
    if quotas is None:
        return ""
    infos = quotas.infos
    own = infos.get(pod.namespace)
    if own is not None:
        over_min = own.used_over_min_with(pre.in_quota)
        for p in on_node:
            theirs = infos.get(p.namespace)
            if not p.deleting or theirs is None:
                continue
            if p.namespace == pod.namespace and p.priority < pod.priority:
                return NOT_ELIGIBLE_TERMINATING
            if p.namespace != pod.namespace and not over_min and theirs.used_over_min():
                return NOT_ELIGIBLE_TERMINATING
        return ""
    for p in on_node:
        if p.namespace in infos:
            continue
        if p.deleting and p.priority < pod.priority:
            return NOT_ELIGIBLE_TERMINATING
    return ""
