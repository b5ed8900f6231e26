"""Pod (anti-)affinity terms as upstream's ``framework.AffinityTerm``, parsed once per pod.

Contract (upstream ``newAffinityTerm`` / ``AffinityTerm.Matches``):
- A term's namespaces are its ``namespaces`` list; when that list is empty *and*
  ``namespaceSelector`` is nil, the owning pod's namespace. ``namespaceSelector`` is kept as a
  selector over namespace labels (nil: matches nothing; ``{}``: every namespace).
- ``matches(pod, ns_labels)``: the pod's namespace is listed or its namespace's labels match the
  namespace selector, and the pod's labels match the label selector.
- Specs are interned (:func:`intern`): pods of one workload share one :class:`PodAffinity`
  object, so per-cycle work can be done once per distinct spec instead of once per pod.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from corral.scheduler.framework import labels
from corral.scheduler.framework.api_types import (
    Affinity,
    PodAffinityTerm,
    WeightedPodAffinityTerm,
)


@dataclass(frozen=True, slots=True)
class AffinityTerm:
    selector: labels.Selector
    namespaces: frozenset[str]
    namespace_selector: labels.Selector
    topology_key: str

    def matches(
        self, namespace: str, pod_labels: Mapping[str, str], ns_labels: Mapping[str, str]
    ) -> bool:
        if namespace in self.namespaces or self.namespace_selector.matches(ns_labels):
            return self.selector.matches(pod_labels)
        return False

    def with_namespaces(self, extra: frozenset[str]) -> AffinityTerm:
        """Upstream ``mergeAffinityTermNamespacesIfNotEmpty``: a non-empty namespace selector is
        resolved to names (``extra``) and replaced by "nothing"; ``{}`` and nil stay as they are."""
        if self.namespace_selector.empty or self.namespace_selector.nothing:
            return self
        return AffinityTerm(
            self.selector, self.namespaces | extra, labels.NOTHING, self.topology_key
        )


@dataclass(frozen=True, slots=True)
class WeightedTerm:
    term: AffinityTerm
    weight: int


@dataclass(frozen=True, slots=True)
class PodAffinity:
    required_affinity: tuple[AffinityTerm, ...] = ()
    required_anti_affinity: tuple[AffinityTerm, ...] = ()
    preferred_affinity: tuple[WeightedTerm, ...] = ()
    preferred_anti_affinity: tuple[WeightedTerm, ...] = ()
    error: str = ""

    @property
    def has_preferred_terms(self) -> bool:
        return bool(self.preferred_affinity or self.preferred_anti_affinity)


EMPTY: Final = PodAffinity()


def _term(namespace: str, raw: PodAffinityTerm) -> AffinityTerm:
    listed = raw.get("namespaces") or ()
    ns_selector_raw = raw.get("namespaceSelector")
    namespaces = (
        frozenset(listed) if listed or ns_selector_raw is not None else frozenset({namespace})
    )
    return AffinityTerm(
        selector=labels.parse(raw.get("labelSelector")),
        namespaces=namespaces,
        namespace_selector=labels.parse(ns_selector_raw),
        topology_key=str(raw.get("topologyKey", "")),
    )


def _terms(namespace: str, raws: Sequence[PodAffinityTerm] | None) -> tuple[AffinityTerm, ...]:
    return tuple(_term(namespace, r) for r in raws or ())


def _weighted(
    namespace: str, raws: Sequence[WeightedPodAffinityTerm] | None
) -> tuple[WeightedTerm, ...]:
    return tuple(
        WeightedTerm(_term(namespace, r.get("podAffinityTerm") or {}), int(r.get("weight") or 0))
        for r in raws or ()
    )


def parse(namespace: str, affinity: Affinity | None) -> PodAffinity | None:
    """``spec.affinity``'s pod affinity and anti-affinity; ``None`` when the pod has neither."""
    if not affinity:
        return None
    aff = affinity.get("podAffinity")
    anti = affinity.get("podAntiAffinity")
    if aff is None and anti is None:
        return None
    aff = aff or {}
    anti = anti or {}
    req: Final = "requiredDuringSchedulingIgnoredDuringExecution"
    pref: Final = "preferredDuringSchedulingIgnoredDuringExecution"
    spec = PodAffinity(
        required_affinity=_terms(namespace, aff.get(req)),
        required_anti_affinity=_terms(namespace, anti.get(req)),
        preferred_affinity=_weighted(namespace, aff.get(pref)),
        preferred_anti_affinity=_weighted(namespace, anti.get(pref)),
    )
    errors = [
        t.selector.error or t.namespace_selector.error
        for t in (
            *spec.required_affinity,
            *spec.required_anti_affinity,
            *(w.term for w in spec.preferred_affinity),
            *(w.term for w in spec.preferred_anti_affinity),
        )
        if t.selector.error or t.namespace_selector.error
    ]
    if errors:
        spec = PodAffinity(
            spec.required_affinity,
            spec.required_anti_affinity,
            spec.preferred_affinity,
            spec.preferred_anti_affinity,
            error=errors[0],
        )
    return intern(spec)


_interned: dict[PodAffinity, PodAffinity] = {}
_lock = threading.Lock()


def intern(spec: PodAffinity) -> PodAffinity:
    """The canonical object equal to ``spec`` (bounded: workloads have few distinct specs)."""
    found = _interned.get(spec)
    if found is not None:
        return found
    with _lock:
        if len(_interned) > 100_000:
            _interned.clear()
        return _interned.setdefault(spec, spec)
