"""PersistentVolume matching as upstream's component-helpers ``storage/volume`` and VolumeBinding's
binder do it, split into what depends on the node and what does not.

Contract (upstream ``FindMatchingVolume`` with a node and delay binding, VolumeAttributesClass on):
a PV bound to another claim (``claimRef`` naming another claim, or the same name with another
UID) is never a candidate. Among the rest, a PV must hold the request (quantities compared
exactly), have the claim's volume mode (``Filesystem`` when unset) and VolumeAttributesClass, and
not be deleting. A PV pre-bound to the claim then wins outright: it matches exactly on the nodes
its node affinity admits and nowhere else. Otherwise a PV must be ``Available``, match the
claim's selector and class, offer every access mode the claim asks for and admit the node; the
smallest such PV is chosen (ties: by name, where upstream's index order is arbitrary).

Node affinity is read as ``CheckNodeAffinity`` reads it: against the node's labels only (a
``matchFields`` term sees a node without a name). Everything here is plain data; the masks over
the snapshot's columns are computed once per pod by the plugin.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Final

import numpy as np

from corral.scheduler.config import quantity
from corral.scheduler.framework import labels
from corral.scheduler.framework import nodeselector as ns
from corral.scheduler.framework.api_types import RawObject
from corral.scheduler.framework.snapshot import Snapshot

Mask = ns.Mask

ANN_BIND_COMPLETED: Final = "pv.kubernetes.io/bind-completed"
ANN_BOUND_BY_CONTROLLER: Final = "pv.kubernetes.io/bound-by-controller"
ANN_SELECTED_NODE: Final = "volume.kubernetes.io/selected-node"
ANN_BETA_STORAGE_CLASS: Final = "volume.beta.kubernetes.io/storage-class"
NOT_SUPPORTED_PROVISIONER: Final = "kubernetes.io/no-provisioner"
FILESYSTEM: Final = "Filesystem"
AVAILABLE: Final = "Available"
STORAGE: Final = "storage"


def _meta(obj: RawObject) -> Mapping[str, Any]:
    return obj.get("metadata") or {}


def _spec(obj: RawObject) -> Mapping[str, Any]:
    return obj.get("spec") or {}


def annotations_of(obj: RawObject) -> Mapping[str, str]:
    return _meta(obj).get("annotations") or {}


def resource_version(obj: RawObject) -> str:
    return str(_meta(obj).get("resourceVersion") or "")


def amount(raw: object) -> Fraction:
    """A quantity from an object's spec; a missing or unreadable one is zero, as the API's
    zero ``Quantity``."""
    if raw is None:
        return Fraction(0)
    try:
        return quantity.parse(raw)  # type: ignore[arg-type]
    except quantity.QuantityError:
        return Fraction(0)


def requested(claim: RawObject) -> Fraction | None:
    """The claim's storage request, ``None`` when it asks for none."""
    requests = (_spec(claim).get("resources") or {}).get("requests") or {}
    raw = requests.get(STORAGE)
    return None if raw is None else amount(raw)


def pv_capacity(pv: RawObject) -> Fraction:
    return amount((_spec(pv).get("capacity") or {}).get(STORAGE))


def pv_class(pv: RawObject) -> str:
    """Upstream ``GetPersistentVolumeClass``: the beta annotation wins over the field."""
    beta = annotations_of(pv).get(ANN_BETA_STORAGE_CLASS)
    return str(beta) if beta is not None else str(_spec(pv).get("storageClassName") or "")


def is_fully_bound(claim: RawObject) -> bool:
    """Upstream ``isPVCFullyBound``: a volume name and the PV controller's bind-completed mark."""
    return bool(_spec(claim).get("volumeName")) and ANN_BIND_COMPLETED in annotations_of(claim)


def is_bound_to(pv: RawObject, claim: RawObject) -> bool:
    """Upstream ``IsVolumeBoundToClaim``."""
    ref = _spec(pv).get("claimRef")
    if ref is None:
        return False
    meta = _meta(claim)
    if ref.get("name") != meta.get("name") or ref.get("namespace") != meta.get("namespace"):
        return False
    uid = ref.get("uid") or ""
    return not uid or uid == (meta.get("uid") or "")


def bind_volume_to_claim(pv: RawObject, claim: RawObject) -> tuple[dict[str, Any], bool]:
    """Upstream ``GetBindVolumeToClaim``: the PV with ``claimRef`` naming the claim and the
    bound-by-controller annotation, and whether anything changed."""
    out: dict[str, Any] = {**pv, "metadata": dict(_meta(pv)), "spec": dict(_spec(pv))}
    meta = _meta(claim)
    ref = _spec(pv).get("claimRef") or {}
    dirty = False
    set_by_controller = not is_bound_to(pv, claim)
    if (
        ref.get("name") != meta.get("name")
        or ref.get("namespace") != meta.get("namespace")
        or (ref.get("uid") or "") != (meta.get("uid") or "")
    ):
        out["spec"]["claimRef"] = {
            "kind": "PersistentVolumeClaim",
            "namespace": meta.get("namespace", ""),
            "name": meta.get("name", ""),
            "uid": meta.get("uid", ""),
            "apiVersion": "v1",
            "resourceVersion": meta.get("resourceVersion", ""),
        }
        dirty = True
    if set_by_controller and ANN_BOUND_BY_CONTROLLER not in annotations_of(pv):
        out["metadata"]["annotations"] = {**annotations_of(pv), ANN_BOUND_BY_CONTROLLER: "yes"}
        dirty = True
    return out, dirty


def with_selected_node(claim: RawObject, node_name: str) -> dict[str, Any]:
    meta = dict(_meta(claim))
    meta["annotations"] = {**annotations_of(claim), ANN_SELECTED_NODE: node_name}
    return {**claim, "metadata": meta}


# --- node affinity, by labels only ---------------------------------------------------------------


def pv_affinity(pv: RawObject) -> ns.NodeSelector | None:
    """``spec.nodeAffinity.required`` as ``CheckNodeAffinity`` evaluates it (``None``: any node).
    A ``matchFields`` requirement sees an empty node name: ``In`` never holds, ``NotIn`` always."""
    required = (_spec(pv).get("nodeAffinity") or {}).get("required")
    if required is None:
        return None
    selector = ns.parse_node_selector(required)
    terms = []
    for term in selector.terms:
        if any(f.operator == ns.IN for f in term.fields):
            continue
        terms.append(ns.Term(term.expressions, (), term.error))
    return ns.NodeSelector(tuple(terms))


def affinity_matches(selector: ns.NodeSelector | None, node_labels: Mapping[str, str]) -> bool:
    return selector is None or ns.selector_matches(selector, node_labels, "")


def affinity_mask(selector: ns.NodeSelector | None, snap: Snapshot) -> Mask:
    if selector is None:
        return np.ones(snap.capacity, dtype=np.bool_)
    return ns.selector_mask(selector, snap)


def label_selector_mask(selector: labels.Selector, snap: Snapshot) -> Mask:
    """A metav1.LabelSelector over the nodes' labels (CSIStorageCapacity ``nodeTopology``)."""
    keys = {r.key for r in selector.requirements}
    columns = {k: c for k in keys if (c := snap.label(k)) is not None}
    ids = {k: snap.label_vocab[k].ids for k in columns}
    return labels.mask(selector, labels.ColumnSource(snap.capacity, columns, ids))


def topology_mask(terms: Sequence[Mapping[str, Any]] | None, snap: Snapshot) -> Mask:
    """Upstream ``MatchTopologySelectorTerms`` over the nodes: no terms match every node; terms
    are ORed, a term's ``matchLabelExpressions`` ANDed (label present with one of the values)."""
    if not terms:
        return np.ones(snap.capacity, dtype=np.bool_)
    out = np.zeros(snap.capacity, dtype=np.bool_)
    for term in terms:
        hit = np.ones(snap.capacity, dtype=np.bool_)
        for expr in term.get("matchLabelExpressions") or ():
            values = tuple(str(v) for v in expr.get("values") or ())
            req = ns.Requirement(str(expr.get("key", "")), ns.IN, values)
            hit &= ns.requirement_mask(req, snap)
        out |= hit
    return out


# --- claims against PVs --------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Candidates:
    """The PVs one unbound claim may take, before node affinity: ``prebound`` (a PV already
    naming the claim, which decides alone) or ``volumes`` smallest first."""

    prebound: RawObject | None
    volumes: tuple[RawObject, ...]


@dataclass(frozen=True, slots=True)
class PvFacts:
    """What matching reads of a PV besides ``claimRef``, parsed once per resourceVersion
    (an assumed PV differs from the informer's only in ``claimRef`` and annotations)."""

    name: str
    capacity: Fraction
    volume_mode: str
    vac: str
    deleting: bool
    available: bool
    labels: Mapping[str, str]
    storage_class: str
    modes: frozenset[str]
    affinity: ns.NodeSelector | None


class Facts:
    """:class:`PvFacts` by (name, resourceVersion), for one plugin instance (a simulation's
    hand-written PVs may repeat names and versions across runs; a cluster's never do)."""

    LIMIT: Final = 100_000

    def __init__(self) -> None:
        self._facts: dict[tuple[str, str], PvFacts] = {}

    def __call__(self, pv: RawObject) -> PvFacts:
        meta = _meta(pv)
        key = (str(meta.get("name", "")), resource_version(pv))
        found = self._facts.get(key) if key[1] else None
        if found is not None:
            return found
        spec = _spec(pv)
        found = PvFacts(
            name=key[0],
            capacity=pv_capacity(pv),
            volume_mode=_volume_mode(spec),
            vac=str(spec.get("volumeAttributesClassName") or ""),
            deleting=meta.get("deletionTimestamp") is not None,
            available=(pv.get("status") or {}).get("phase") == AVAILABLE,
            labels=meta.get("labels") or {},
            storage_class=pv_class(pv),
            modes=frozenset(spec.get("accessModes") or ()),
            affinity=pv_affinity(pv),
        )
        if key[1]:
            if len(self._facts) >= self.LIMIT:  # PVs come and go: start over, do not grow
                self._facts.clear()
            self._facts[key] = found
        return found


def _volume_mode(spec: Mapping[str, Any]) -> str:
    return str(spec.get("volumeMode") or FILESYSTEM)


def candidates(
    claim: RawObject, volumes: Sequence[RawObject], selector: labels.Selector | None, facts: Facts
) -> Candidates:
    """Upstream ``FindMatchingVolume``'s node-independent tests over the claim's class's PVs."""
    want = requested(claim) or Fraction(0)
    claim_spec = _spec(claim)
    claim_mode = _volume_mode(claim_spec)
    claim_vac = str(claim_spec.get("volumeAttributesClassName") or "")
    claim_class = str(
        annotations_of(claim).get(ANN_BETA_STORAGE_CLASS, claim_spec.get("storageClassName") or "")
    )
    claim_modes = frozenset(claim_spec.get("accessModes") or ())
    prebound: RawObject | None = None
    fitting: list[tuple[Fraction, str, RawObject]] = []
    for pv in sorted(volumes, key=lambda v: str(_meta(v).get("name", ""))):
        if _spec(pv).get("claimRef") is not None and not is_bound_to(pv, claim):
            continue
        f = facts(pv)
        if f.capacity < want or f.volume_mode != claim_mode or f.vac != claim_vac or f.deleting:
            continue
        if is_bound_to(pv, claim):
            prebound = prebound or pv
            continue
        if not f.available:
            continue
        if selector is not None and not selector.matches(f.labels):
            continue
        if f.storage_class != claim_class or not claim_modes <= f.modes:
            continue
        fitting.append((f.capacity, f.name, pv))
    fitting.sort(key=lambda item: (item[0], item[1]))
    return Candidates(prebound, tuple(pv for _, _, pv in fitting))


# --- CSIStorageCapacity --------------------------------------------------------------------------


def volume_limit(capacity: RawObject) -> Fraction | None:
    """Upstream ``volumeLimit``: ``maximumVolumeSize`` when set, else ``capacity``."""
    raw = capacity.get("maximumVolumeSize")
    if raw is None:
        raw = capacity.get("capacity")
    return None if raw is None else amount(raw)


def capacity_sufficient(capacity: RawObject, size: Fraction) -> bool:
    limit = volume_limit(capacity)
    return limit is not None and quantity.value(limit) >= quantity.value(size)
