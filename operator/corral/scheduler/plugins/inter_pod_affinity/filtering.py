"""InterPodAffinity's PreFilter state, its Add/RemovePod extensions, and Filter.

PreFilter counts, per topology pair (upstream ``preFilterState``):
1. existing pods' required anti-affinity terms that match the incoming pod;
2. existing pods that match *all* of the incoming pod's required affinity terms (each such
   pod counts once for every term);
3. existing pods matching each of the incoming pod's required anti-affinity terms.
Existing pods are grouped by their interned affinity spec, so each distinct term is evaluated
once; pods are counted per domain with ``bincount`` over the pod table into ``DomainCounts``.

Filter, in order: affinity (every term's key on the node with a positive count, or the first-pod
rule) → UnschedulableAndUnresolvable; the pod's anti-affinity → Unschedulable; existing pods'
anti-affinity (any of the node's label pairs counted) → Unschedulable.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

import numpy as np

from corral.scheduler.framework import podaffinity
from corral.scheduler.framework.interface import FilterVerdict, Handle
from corral.scheduler.framework.snapshot import Snapshot
from corral.scheduler.framework.status import Code, Status
from corral.scheduler.framework.types import NodeInfo, PodInfo
from corral.scheduler.plugins.inter_pod_affinity import common

ERR_REASON_EXISTING_ANTI_AFFINITY: Final = (
    "node(s) didn't satisfy existing pods anti-affinity rules"
)
ERR_REASON_AFFINITY: Final = "node(s) didn't match pod affinity rules"
ERR_REASON_ANTI_AFFINITY: Final = "node(s) didn't match pod anti-affinity rules"

AFFINITY: Final = Status.of(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_AFFINITY)
ANTI_AFFINITY: Final = Status.of(Code.UNSCHEDULABLE, ERR_REASON_ANTI_AFFINITY)
EXISTING: Final = Status.of(Code.UNSCHEDULABLE, ERR_REASON_EXISTING_ANTI_AFFINITY)
_BY_CODE: Final = {1: AFFINITY, 2: ANTI_AFFINITY, 3: EXISTING}


@dataclass(slots=True)
class PreFilterState:
    namespace: str
    pod_labels: dict[str, str]
    affinity_terms: tuple[podaffinity.AffinityTerm, ...]
    anti_affinity_terms: tuple[podaffinity.AffinityTerm, ...]
    namespace_labels: dict[str, str]
    existing_anti_affinity_counts: common.DomainCounts
    affinity_counts: common.DomainCounts
    anti_affinity_counts: common.DomainCounts

    def clone(self) -> PreFilterState:
        return PreFilterState(
            self.namespace,
            self.pod_labels,
            self.affinity_terms,
            self.anti_affinity_terms,
            self.namespace_labels,
            self.existing_anti_affinity_counts.clone(),
            self.affinity_counts.clone(),
            self.anti_affinity_counts.clone(),
        )

    def update_with_pod(self, other: PodInfo, node: NodeInfo, sign: int) -> None:
        """Upstream ``preFilterState.updateWithPod`` (AddPod: +1, RemovePod: -1)."""
        spec = other.affinity
        if spec is not None:
            for term in spec.required_anti_affinity:
                if term.matches(self.namespace, self.pod_labels, self.namespace_labels):
                    self.existing_anti_affinity_counts.add(node.labels, term.topology_key, sign)
        if common.matches_all(self.affinity_terms, other.namespace, other.labels):
            for term in self.affinity_terms:
                self.affinity_counts.add(node.labels, term.topology_key, sign)
        for term in self.anti_affinity_terms:
            if term.matches(other.namespace, other.labels, {}):
                self.anti_affinity_counts.add(node.labels, term.topology_key, sign)


def compute(handle: Handle | None, pod: PodInfo, snapshot: Snapshot) -> PreFilterState:
    spec = pod.affinity or podaffinity.EMPTY
    state = PreFilterState(
        namespace=pod.namespace,
        pod_labels=dict(pod.labels),
        affinity_terms=common.merge_namespaces(handle, spec.required_affinity),
        anti_affinity_terms=common.merge_namespaces(handle, spec.required_anti_affinity),
        namespace_labels=dict(common.namespace_labels(handle, pod.namespace)),
        existing_anti_affinity_counts=common.DomainCounts(snapshot.label_vocab),
        affinity_counts=common.DomainCounts(snapshot.label_vocab),
        anti_affinity_counts=common.DomainCounts(snapshot.label_vocab),
    )
    for existing, rows in common.spec_groups(snapshot):
        for term in existing.required_anti_affinity:
            if term.matches(pod.namespace, pod.labels, state.namespace_labels):
                state.existing_anti_affinity_counts.add_domains(snapshot, term.topology_key, rows)
    if state.affinity_terms:
        every = np.ones(snapshot.pods.size, dtype=np.bool_)
        for term in state.affinity_terms:
            every &= common.term_rows(snapshot, term)
        for term in state.affinity_terms:
            state.affinity_counts.add_domains(snapshot, term.topology_key, every)
    for term in state.anti_affinity_terms:
        rows = common.term_rows(snapshot, term)
        state.anti_affinity_counts.add_domains(snapshot, term.topology_key, rows)
    return state


def filter_node(state: PreFilterState, node: NodeInfo) -> Status | None:
    if not _satisfies_affinity(state, node):
        return AFFINITY
    if state.anti_affinity_counts:
        for term in state.anti_affinity_terms:
            value = node.labels.get(term.topology_key)
            if value is not None and state.anti_affinity_counts.get(term.topology_key, value) > 0:
                return ANTI_AFFINITY
    if state.existing_anti_affinity_counts:
        for key, value in node.labels.items():
            if state.existing_anti_affinity_counts.get(key, value) > 0:
                return EXISTING
    return None


def _satisfies_affinity(state: PreFilterState, node: NodeInfo) -> bool:
    pods_exist = True
    for term in state.affinity_terms:
        value = node.labels.get(term.topology_key)
        if value is None:
            return False
        if state.affinity_counts.get(term.topology_key, value) <= 0:
            pods_exist = False
    if pods_exist:
        return True
    return not state.affinity_counts and common.matches_all(
        state.affinity_terms, state.namespace, state.pod_labels
    )


def filter_batch(state: PreFilterState, snapshot: Snapshot) -> FilterVerdict:
    cap = snapshot.capacity
    codes = np.zeros(cap, dtype=np.int64)
    if state.affinity_terms:
        all_keys = np.ones(cap, dtype=np.bool_)
        pods_exist = np.ones(cap, dtype=np.bool_)
        for term in state.affinity_terms:
            column = snapshot.label(term.topology_key)
            if column is None:
                all_keys[:] = False
                continue
            all_keys &= column >= 0
            pods_exist &= state.affinity_counts.table(term.topology_key)[column] > 0
        first_pod = not state.affinity_counts and common.matches_all(
            state.affinity_terms, state.namespace, state.pod_labels
        )
        ok = all_keys & (pods_exist | first_pod)
        codes[~ok] = 1
    if state.anti_affinity_counts:
        bad = np.zeros(cap, dtype=np.bool_)
        for term in state.anti_affinity_terms:
            column = snapshot.label(term.topology_key)
            if column is not None:
                bad |= state.anti_affinity_counts.table(term.topology_key)[column] > 0
        codes[(codes == 0) & bad] = 2
    if state.existing_anti_affinity_counts:
        bad = np.zeros(cap, dtype=np.bool_)
        for key in state.existing_anti_affinity_counts.nonzero_keys():
            column = snapshot.label(key)
            if column is not None:
                bad |= state.existing_anti_affinity_counts.table(key)[column] > 0
        codes[(codes == 0) & bad] = 3
    return FilterVerdict(codes == 0, codes, lambda c: _BY_CODE[c])
