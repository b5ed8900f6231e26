"""Shared pieces of InterPodAffinity: counts keyed by topology pair, namespace handling, and
the grouping of existing pods by their (interned) affinity spec.

Counts are keyed by (topologyKey, value) as upstream's ``topologyToMatchedTermCount``; an entry
that drops to 0 is deleted, because "no entry at all" is what the first-pod rule checks.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import numpy.typing as npt

from corral.scheduler.framework import listers, podaffinity
from corral.scheduler.framework.interface import Handle
from corral.scheduler.framework.snapshot import Snapshot

Pair = tuple[str, str]
Counts = dict[Pair, int]
Rows = npt.NDArray[np.bool_]


def update(counts: Counts, node_labels: Mapping[str, str], key: str, value: int) -> None:
    """Upstream ``topologyToMatchedTermCount.update``."""
    tv = node_labels.get(key)
    if tv is None:
        return
    pair = (key, tv)
    total = counts.get(pair, 0) + value
    if total == 0:
        counts.pop(pair, None)
    else:
        counts[pair] = total


def namespace_labels(handle: Handle | None, namespace: str) -> Mapping[str, str]:
    """Upstream ``GetNamespaceLabelsSnapshot``: empty when the namespace is unknown."""
    objects = handle.objects if handle is not None else None
    if objects is None:
        return {}
    ns = objects.get(listers.NAMESPACE, "", namespace)
    return dict((ns or {}).get("metadata", {}).get("labels") or {})


def merge_namespaces(
    handle: Handle | None, terms: tuple[podaffinity.AffinityTerm, ...]
) -> tuple[podaffinity.AffinityTerm, ...]:
    """Upstream ``mergeAffinityTermNamespacesIfNotEmpty`` for the incoming pod's terms."""
    if all(t.namespace_selector.empty or t.namespace_selector.nothing for t in terms):
        return terms
    objects = handle.objects if handle is not None else None
    all_ns: list[Any] = list(objects.list(listers.NAMESPACE)) if objects is not None else []
    out = []
    for term in terms:
        selector = term.namespace_selector
        if selector.empty or selector.nothing:
            out.append(term)
            continue
        names = frozenset(
            str(ns.get("metadata", {}).get("name", ""))
            for ns in all_ns
            if selector.matches(ns.get("metadata", {}).get("labels") or {})
        )
        out.append(term.with_namespaces(names))
    return tuple(out)


def merge_weighted(
    handle: Handle | None, terms: tuple[podaffinity.WeightedTerm, ...]
) -> tuple[podaffinity.WeightedTerm, ...]:
    merged = merge_namespaces(handle, tuple(w.term for w in terms))
    return tuple(podaffinity.WeightedTerm(t, w.weight) for t, w in zip(merged, terms, strict=True))


def matches_all(
    terms: tuple[podaffinity.AffinityTerm, ...], namespace: str, pod_labels: Mapping[str, str]
) -> bool:
    """Upstream ``podMatchesAllAffinityTerms`` (nil namespace labels: terms are merged)."""
    if not terms:
        return False
    return all(t.matches(namespace, pod_labels, {}) for t in terms)


def spec_groups(snapshot: Snapshot) -> list[tuple[podaffinity.PodAffinity, Rows]]:
    """Live existing pods grouped by affinity spec: (spec, row mask) per distinct spec."""
    table = snapshot.pods
    if not table.num_affinity:
        return []
    ids = table.affinity_id[: table.size]
    has = (ids >= 0) & table.live()
    if not has.any():
        return []
    out = []
    for sid in np.unique(ids[has]).tolist():
        out.append((table.affinity_specs[sid], has & (ids == sid)))
    return out


def node_pair_table(
    snapshot: Snapshot, key: str, counts: Mapping[Pair, int]
) -> npt.NDArray[np.int64]:
    """Counts of ``key``'s values as a table over the node label vocabulary of ``key``, with a
    trailing 0 for nodes without the key (id -1)."""
    vocab = snapshot.label_vocab.get(key)
    size = len(vocab) if vocab is not None else 0
    table = np.zeros(size + 1, dtype=np.int64)
    if vocab is None:
        return table
    for (k, v), c in counts.items():
        if k == key:
            vid = vocab.ids.get(v)
            if vid is not None and vid < size:
                table[vid] = c
    return table


def add_domain_counts(
    snapshot: Snapshot, counts: Counts, key: str, rows: Rows, weight: int = 1
) -> bool:
    """Add ``weight`` per row in ``rows`` to the pair (key, value of the row's node); whether
    any row's node had the key."""
    column = snapshot.label(key)
    vocab = snapshot.label_vocab.get(key)
    if column is None or vocab is None or not rows.any():
        return False
    per_value = snapshot.pods.domain_counts(rows, column, len(vocab))
    hit = np.flatnonzero(per_value)
    for vid in hit.tolist():
        update_pair(counts, (key, vocab.values[vid]), int(per_value[vid]) * weight)
    return bool(len(hit))


def update_pair(counts: Counts, pair: Pair, value: int) -> None:
    total = counts.get(pair, 0) + value
    if total == 0:
        counts.pop(pair, None)
    else:
        counts[pair] = total


def term_rows(snapshot: Snapshot, term: podaffinity.AffinityTerm) -> Rows:
    return snapshot.pods.term_mask(term)
