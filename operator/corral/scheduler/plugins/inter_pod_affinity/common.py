"""Shared pieces of InterPodAffinity: counts per topology pair, namespace handling, and the
grouping of existing pods by their (interned) affinity spec."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import numpy.typing as npt

from corral.scheduler.framework import listers, podaffinity
from corral.scheduler.framework.interface import Handle
from corral.scheduler.framework.snapshot import LabelVocab, Snapshot

Pair = tuple[str, str]
Rows = npt.NDArray[np.bool_]
Int64Array = npt.NDArray[np.int64]


class DomainCounts:
    """Upstream ``topologyToMatchedTermCount``: a count per topology pair (key, value).

    Held as one int64 array per key over the snapshot's value ids of that key, so PreFilter adds
    a whole ``bincount`` at once and batch Filter indexes a node column with it; a dict keyed by
    pair costs a Python step per pair, and hostname-keyed terms make a pair per existing pod.
    Upstream deletes a pair whose count drops to 0 and its first-pod rule asks whether any pair
    is left: here that is "any nonzero count". A pair whose value (or key) the snapshot's
    vocabulary lacks, which only a node from outside the snapshot can bring, is kept in a dict.
    """

    __slots__ = ("_arrays", "_other", "_vocabs")

    def __init__(self, vocabs: Mapping[str, LabelVocab]) -> None:
        self._vocabs = vocabs
        self._arrays: dict[str, Int64Array] = {}
        self._other: dict[Pair, int] = {}

    def __bool__(self) -> bool:
        return bool(self._other) or any(a.any() for a in self._arrays.values())

    def clone(self) -> DomainCounts:
        out = DomainCounts(self._vocabs)
        out._arrays = {k: a.copy() for k, a in self._arrays.items()}
        out._other = dict(self._other)
        return out

    def get(self, key: str, value: str) -> int:
        vocab = self._vocabs.get(key)
        vid = vocab.ids.get(value) if vocab is not None else None
        if vid is None:
            return self._other.get((key, value), 0)
        array = self._arrays.get(key)
        return int(array[vid]) if array is not None and vid < len(array) else 0

    def add(self, node_labels: Mapping[str, str], key: str, delta: int) -> None:
        """Upstream ``topologyToMatchedTermCount.update``: ``delta`` onto the node's pair."""
        value = node_labels.get(key)
        if value is None:
            return
        vocab = self._vocabs.get(key)
        vid = vocab.ids.get(value) if vocab is not None else None
        if vid is None:
            pair = (key, value)
            total = self._other.get(pair, 0) + delta
            if total:
                self._other[pair] = total
            else:
                self._other.pop(pair, None)
            return
        self._array(key, vid + 1)[vid] += delta

    def add_domains(self, snapshot: Snapshot, key: str, rows: Rows, weight: int = 1) -> None:
        """``weight`` per pod in ``rows`` onto the pair (key, value of the pod's node)."""
        column = snapshot.label(key)
        vocab = snapshot.label_vocab.get(key)
        if column is None or vocab is None or not rows.any():
            return
        per_value = snapshot.pods.domain_counts(rows, column, len(vocab))
        if per_value.any():
            self._array(key, len(per_value))[: len(per_value)] += per_value * weight

    def table(self, key: str) -> Int64Array:
        """Counts of ``key`` indexed by value id, with a trailing 0 for nodes without the key
        (id -1): ``table(key)[column]`` is each node's count."""
        vocab = self._vocabs.get(key)
        out = np.zeros((len(vocab) if vocab is not None else 0) + 1, dtype=np.int64)
        array = self._arrays.get(key)
        if array is not None:
            size = min(len(array), len(out) - 1)
            out[:size] = array[:size]
        return out

    def nonzero_keys(self) -> list[str]:
        """Keys with a nonzero count on a value the snapshot knows."""
        return [k for k, a in self._arrays.items() if a.any()]

    def pairs(self) -> dict[Pair, int]:
        """Every nonzero pair, as upstream's map (what the tests compare)."""
        out = dict(self._other)
        for key, array in self._arrays.items():
            values = self._vocabs[key].values
            for vid in np.flatnonzero(array).tolist():
                out[(key, values[vid])] = int(array[vid])
        return out

    def _array(self, key: str, size: int) -> Int64Array:
        array = self._arrays.get(key)
        if array is None:
            array = self._arrays[key] = np.zeros(max(size, len(self._vocabs[key])), np.int64)
        elif len(array) < size:  # the vocabulary grew since the array was made
            array = self._arrays[key] = np.concatenate(
                [array, np.zeros(size - len(array), dtype=np.int64)]
            )
        return array


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


def term_rows(snapshot: Snapshot, term: podaffinity.AffinityTerm) -> Rows:
    return snapshot.pods.term_mask(term)
