"""PodTopologySpread's PreFilter state, Add/RemovePod extensions and Filter (DoNotSchedule).

PreFilter sums, per constraint and topology value, the matching pods of every node that carries
*all* constraint keys and passes that constraint's inclusion policies; each such node's value
is a domain even with 0 pods. Filter: a node without a key → UnschedulableAndUnresolvable;
``count[value] + selfMatch - globalMin > maxSkew`` → Unschedulable, where ``globalMin`` is the
smallest domain count, or 0 when there are fewer domains than ``minDomains``. A constraint with
no eligible domain at all is not checked (upstream skips it on the missing domain count).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Final

import numpy as np

from corral.scheduler.framework.interface import FilterVerdict
from corral.scheduler.framework.snapshot import Snapshot
from corral.scheduler.framework.status import Code, Status
from corral.scheduler.framework.types import NodeInfo, PodInfo
from corral.scheduler.plugins.pod_topology_spread import common

ERR_REASON_CONSTRAINTS_NOT_MATCH: Final = "node(s) didn't match pod topology spread constraints"
ERR_REASON_NODE_LABEL_NOT_MATCH: Final = (
    ERR_REASON_CONSTRAINTS_NOT_MATCH + " (missing required label)"
)

MISSING_LABEL: Final = Status.of(
    Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_NODE_LABEL_NOT_MATCH
)
SKEW: Final = Status.of(Code.UNSCHEDULABLE, ERR_REASON_CONSTRAINTS_NOT_MATCH)
_BY_CODE: Final = {1: MISSING_LABEL, 2: SKEW}


@dataclass(slots=True)
class PreFilterState:
    pod: PodInfo
    constraints: tuple[common.Constraint, ...] = ()
    # Per constraint: topology value → matching pods (every eligible domain has an entry).
    counts: list[dict[str, int]] = field(default_factory=list)

    def clone(self) -> PreFilterState:
        return PreFilterState(self.pod, self.constraints, [dict(c) for c in self.counts])

    def min_match(self, i: int) -> int | None:
        """The global minimum for constraint ``i``; ``None`` when it has no domain at all."""
        domains = self.counts[i]
        if not domains:
            return None
        if len(domains) < self.constraints[i].min_domains:
            return 0
        return min(domains.values())

    def update_with_pod(self, other: PodInfo, node: NodeInfo, sign: int) -> None:
        """Upstream ``updateWithPod`` (AddPod: +1, RemovePod: -1)."""
        if other.namespace != self.pod.namespace:
            return
        if any(c.topology_key not in node.labels for c in self.constraints):
            return
        for i, c in enumerate(self.constraints):
            if not c.selector.matches(other.labels):
                continue
            if not common.node_matches_policies(c, self.pod, node):
                continue
            value = node.labels[c.topology_key]
            self.counts[i][value] = self.counts[i].get(value, 0) + sign


def compute(
    pod: PodInfo, snapshot: Snapshot, constraints: tuple[common.Constraint, ...]
) -> PreFilterState:
    state = PreFilterState(pod, constraints)
    if not constraints:
        return state
    all_keys = common.has_all_keys(snapshot, constraints)
    masks = common.NodeMasks(snapshot, pod)
    table = snapshot.pods
    for c in constraints:
        column = snapshot.label(c.topology_key)
        if column is None:  # no node has the key: no domain (every node fails the filter)
            state.counts.append({})
            continue
        vocab = snapshot.label_vocab[c.topology_key]
        eligible = all_keys & masks.eligible(c)
        present = np.zeros(len(vocab), dtype=np.bool_)
        present[column[eligible]] = True
        rows = common.matching_rows(snapshot, c, pod.namespace)
        rows &= eligible[np.maximum(table.node_slot[: table.size], 0)]
        per_value = table.domain_counts(rows, column, len(vocab))
        state.counts.append(
            {vocab.values[v]: int(per_value[v]) for v in np.flatnonzero(present).tolist()}
        )
    return state


def filter_node(state: PreFilterState, pod: PodInfo, node: NodeInfo) -> Status | None:
    for i, c in enumerate(state.constraints):
        value = node.labels.get(c.topology_key)
        if value is None:
            return MISSING_LABEL
        low = state.min_match(i)
        if low is None:
            continue
        self_match = 1 if c.selector.matches(pod.labels) else 0
        if state.counts[i].get(value, 0) + self_match - low > c.max_skew:
            return SKEW
    return None


def filter_batch(state: PreFilterState, pod: PodInfo, snapshot: Snapshot) -> FilterVerdict:
    codes = np.zeros(snapshot.capacity, dtype=np.int64)
    for i, c in enumerate(state.constraints):
        column = snapshot.label(c.topology_key)
        if column is None:
            codes[codes == 0] = 1
            continue
        codes[(codes == 0) & (column < 0)] = 1
        low = state.min_match(i)
        if low is None:
            continue
        vocab = snapshot.label_vocab[c.topology_key]
        table = np.zeros(len(vocab) + 1, dtype=np.int64)
        for value, count in state.counts[i].items():
            table[vocab.ids[value]] = count
        self_match = 1 if c.selector.matches(pod.labels) else 0
        skewed = table[column] + self_match - low > c.max_skew
        codes[(codes == 0) & (column >= 0) & skewed] = 2
    return FilterVerdict(codes == 0, codes, lambda code: _BY_CODE[code])
