"""PodTopologySpread's PreScore, Score and NormalizeScore (ScheduleAnyway constraints).

Upstream ``initPreScoreState``/``PreScore``/``Score``: with ``require_all`` (the pod has its own
constraints, or defaults are not the System ones), feasible nodes missing a key are *ignored*
(score 0). Domains of a non-hostname key are the values among the other feasible nodes — a
node without the key contributes the value "" when not ignored, as upstream reads a missing
label as "". Their counts sum the matching pods of every node that passes the inclusion
policies (and, with ``require_all``, has all keys). The weight of a constraint is
``ln(#domains + 2)`` (hostname: the number of scored nodes). A node's raw score is
``round(sum(count * weight + maxSkew - 1))`` over the keys it carries; NormalizeScore maps it
to ``100 * (max + min - s) / max`` (100 for all when max is 0), ignored nodes to 0.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from corral.scheduler.framework.interface import MAX_NODE_SCORE, Scores, Slots
from corral.scheduler.framework.snapshot import Snapshot
from corral.scheduler.framework.types import NodeInfo, PodInfo
from corral.scheduler.plugins.pod_topology_spread import common


@dataclass(slots=True)
class PreScoreState:
    namespace: str
    constraints: tuple[common.Constraint, ...]
    ignored: frozenset[str]  # node names
    ignored_mask: npt.NDArray[np.bool_]  # aligned with the scored slots
    counts: list[dict[str, int]] = field(default_factory=list)  # per non-hostname constraint
    weights: list[float] = field(default_factory=list)

    def clone(self) -> PreScoreState:
        return self


def go_round(x: npt.NDArray[np.float64]) -> npt.NDArray[np.int64]:
    """Go's ``math.Round`` (half away from zero) for non-negative values, exactly."""
    whole = np.trunc(x)
    return (whole + (x - whole >= 0.5)).astype(np.int64)


def compute(
    pod: PodInfo,
    snapshot: Snapshot,
    slots: Slots,
    constraints: tuple[common.Constraint, ...],
    *,
    require_all: bool,
) -> PreScoreState:
    names = snapshot.names
    if require_all:
        ignored_mask = ~common.has_all_keys(snapshot, constraints)[slots]
    else:
        ignored_mask = np.zeros(len(slots), dtype=np.bool_)
    scored = slots[~ignored_mask]
    state = PreScoreState(
        namespace=pod.namespace,
        constraints=constraints,
        ignored=frozenset(names[s] for s in slots[ignored_mask].tolist()),
        ignored_mask=ignored_mask,
    )
    masks = common.NodeMasks(snapshot, pod)
    all_keys = common.has_all_keys(snapshot, constraints) if require_all else None
    table = snapshot.pods
    for c in constraints:
        if c.topology_key == common.HOSTNAME:
            state.counts.append({})
            state.weights.append(math.log(len(scored) + 2))
            continue
        column, values = _domains(snapshot, c.topology_key)
        present = np.zeros(len(values), dtype=np.bool_)
        present[column[scored]] = True
        state.weights.append(math.log(int(present.sum()) + 2))
        eligible = masks.eligible(c)
        eligible[~_live(snapshot)] = False
        if all_keys is not None:
            eligible &= all_keys
        rows = common.matching_rows(snapshot, c, pod.namespace)
        rows &= eligible[np.maximum(table.node_slot[: table.size], 0)]
        per_value = table.domain_counts(rows, column, len(values))
        state.counts.append(
            {values[v]: int(per_value[v]) for v in np.flatnonzero(present).tolist()}
        )
    return state


def _live(snapshot: Snapshot) -> npt.NDArray[np.bool_]:
    m = np.zeros(snapshot.capacity, dtype=np.bool_)
    m[snapshot.order] = True
    return m


def _domains(snapshot: Snapshot, key: str) -> tuple[npt.NDArray[np.int32], list[str]]:
    """The key's per-slot value ids with a missing label read as the value "" (an extra id
    when no node has ""), and the id → value list."""
    vocab = snapshot.label_vocab.get(key)
    values = list(vocab.values) if vocab is not None else []
    blank = vocab.ids.get("") if vocab is not None else None
    if blank is None:
        blank = len(values)
        values.append("")
    column = snapshot.label(key)
    if column is None:
        return np.full(snapshot.capacity, blank, dtype=np.int32), values
    return np.where(column >= 0, column, blank).astype(np.int32), values


def score_node(state: PreScoreState, node: NodeInfo) -> int:
    if node.name in state.ignored:
        return 0
    total = 0.0
    for i, c in enumerate(state.constraints):
        value = node.labels.get(c.topology_key)
        if value is None:
            continue
        if c.topology_key == common.HOSTNAME:
            cnt = common.count_on_node(node, c, state.namespace)
        else:
            cnt = state.counts[i][value]
        total += float(cnt) * state.weights[i] + float(c.max_skew - 1)
    return int(go_round(np.array([total]))[0])


def score_batch(state: PreScoreState, snapshot: Snapshot, slots: Slots) -> Scores:
    total = np.zeros(len(slots), dtype=np.float64)
    table = snapshot.pods
    for i, c in enumerate(state.constraints):
        column = snapshot.label(c.topology_key)
        if column is None:
            continue
        has = column[slots] >= 0
        if c.topology_key == common.HOSTNAME:
            rows = common.matching_rows(snapshot, c, state.namespace)
            per_slot = np.bincount(table.node_slot[: table.size][rows], minlength=snapshot.capacity)
            cnt = per_slot[slots].astype(np.float64)
        else:
            vocab = snapshot.label_vocab[c.topology_key]
            lookup = np.zeros(len(vocab) + 1, dtype=np.float64)
            for value, count in state.counts[i].items():
                vid = vocab.ids.get(value)
                if vid is not None:
                    lookup[vid] = count
            cnt = lookup[column[slots]]
        contribution = cnt * state.weights[i] + float(c.max_skew - 1)
        total = np.where(has, total + contribution, total)
    out = go_round(total)
    out[state.ignored_mask] = 0
    return out


def normalize(state: PreScoreState, scores: Scores) -> None:
    keep = ~state.ignored_mask
    if len(scores) != len(keep):
        keep = np.ones(len(scores), dtype=np.bool_)
    if not keep.any():
        scores[:] = 0
        return
    high = max(int(scores[keep].max()), 0)
    low = int(scores[keep].min())
    if high == 0:
        scores[:] = np.where(keep, MAX_NODE_SCORE, 0)
        return
    scores[:] = np.where(keep, MAX_NODE_SCORE * (high + low - scores) // high, 0)
