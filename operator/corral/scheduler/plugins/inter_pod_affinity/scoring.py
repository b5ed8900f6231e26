"""InterPodAffinity's PreScore, Score and NormalizeScore.

PreScore accumulates ``topology_score[key][value]`` from existing pods (upstream
``processExistingPod``): +w / -w for every incoming preferred affinity / anti-affinity term an
existing pod matches; +hardPodAffinityWeight for each existing pod's required affinity term the
incoming pod matches; +w / -w for each existing pod's preferred affinity / anti-affinity term
the incoming pod matches. Each contribution lands on the existing pod's node's value of the
term's key. A node scores the sum over keys it carries. Skip when nothing was accumulated.
NormalizeScore: ``int(100 * ((s - min) / (max - min)))``, all 0 when max == min.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from corral.scheduler.framework import podaffinity
from corral.scheduler.framework.interface import MAX_NODE_SCORE, Handle, Scores, Slots
from corral.scheduler.framework.snapshot import LabelVocab, Snapshot
from corral.scheduler.framework.types import PodInfo
from corral.scheduler.plugins.inter_pod_affinity import common


@dataclass(slots=True)
class PreScoreState:
    """Per topology key, the accumulated score of each node label value (indexed by the
    snapshot's value ids of that key); a key is present once any term landed on it."""

    scores: dict[str, npt.NDArray[np.int64]] = field(default_factory=dict)
    vocabs: dict[str, LabelVocab] = field(default_factory=dict)

    def clone(self) -> PreScoreState:
        return self

    @property
    def empty(self) -> bool:
        return not self.scores


def _add(
    snapshot: Snapshot, state: PreScoreState, key: str, rows: common.Rows, weight: int
) -> None:
    """Upstream ``scoreMap.processTerm`` for every matching pod in ``rows`` at once."""
    column = snapshot.label(key)
    vocab = snapshot.label_vocab.get(key)
    if column is None or vocab is None or not rows.any():
        return
    per_value = snapshot.pods.domain_counts(rows, column, len(vocab))
    if not per_value.any():
        return
    found = state.scores.get(key)
    if found is None:
        found = state.scores[key] = np.zeros(len(per_value), dtype=np.int64)
        state.vocabs[key] = vocab
    found += per_value[: len(found)] * weight


def compute(
    handle: Handle | None,
    pod: PodInfo,
    snapshot: Snapshot,
    *,
    hard_weight: int,
    ignore_existing_preferred: bool,
) -> PreScoreState | None:
    """The accumulated scores, or ``None`` for Skip."""
    spec = pod.affinity or podaffinity.EMPTY
    has_constraints = spec.has_preferred_terms
    if ignore_existing_preferred and not has_constraints:
        return None
    score = PreScoreState()
    live = snapshot.pods.live()
    for sign, weighted in (
        (1, common.merge_weighted(handle, spec.preferred_affinity)),
        (-1, common.merge_weighted(handle, spec.preferred_anti_affinity)),
    ):
        for w in weighted:
            rows = common.term_rows(snapshot, w.term) & live
            _add(snapshot, score, w.term.topology_key, rows, sign * w.weight)
    ns_labels = common.namespace_labels(handle, pod.namespace)
    for existing, rows in common.spec_groups(snapshot):
        if hard_weight > 0:
            for term in existing.required_affinity:
                if term.matches(pod.namespace, pod.labels, ns_labels):
                    _add(snapshot, score, term.topology_key, rows, hard_weight)
        for sign, weighted in (
            (1, existing.preferred_affinity),
            (-1, existing.preferred_anti_affinity),
        ):
            for w in weighted:
                if w.term.matches(pod.namespace, pod.labels, ns_labels):
                    _add(snapshot, score, w.term.topology_key, rows, sign * w.weight)
    return None if score.empty else score


def score_node(state: PreScoreState, node_labels: Mapping[str, str]) -> int:
    total = 0
    for key, values in state.scores.items():
        value = node_labels.get(key)
        vid = state.vocabs[key].ids.get(value) if value is not None else None
        if vid is not None and vid < len(values):
            total += int(values[vid])
    return total


def score_batch(state: PreScoreState, snapshot: Snapshot, slots: Slots) -> Scores:
    out = np.zeros(len(slots), dtype=np.int64)
    for key, values in state.scores.items():
        column = snapshot.label(key)
        if column is not None:
            table = np.concatenate([values, np.zeros(1, dtype=np.int64)])
            ids = column[slots]
            out += table[np.where(ids < len(values), ids, -1)]
    return out


def normalize(scores: Scores) -> None:
    if not len(scores):
        return
    low, high = int(scores.min()), int(scores.max())
    diff = high - low
    if diff <= 0:
        scores[:] = 0
        return
    scaled = float(MAX_NODE_SCORE) * ((scores - low).astype(np.float64) / float(diff))
    scores[:] = scaled.astype(np.int64)
