"""VolumeBinding's queueing hints (upstream ``isSchedulableAfter...`` in ``volume_binding.go``),
over the API's raw JSON objects.

- A claim the pod uses (its PVC volumes and generic ephemeral claims) added or changed: Queue.
- A StorageClass added, or its ``allowedTopologies`` changed: Queue.
- A CSINode added, or its migrated-plugins annotation changed: Queue.
- A CSIStorageCapacity added, or its limit (``maximumVolumeSize``, else ``capacity``) grown: Queue.
- A CSIDriver of one of the pod's inline CSI volumes that stopped tracking capacity: Queue.
PersistentVolume and Node events have no hint (always Queue), as upstream.
"""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction
from typing import Any, Final

from corral.scheduler.config import quantity
from corral.scheduler.framework import cluster_events as ev
from corral.scheduler.framework.cluster_events import QueueingHint
from corral.scheduler.framework.types import PodInfo
from corral.scheduler.plugins.helper import volumes

Q, SKIP = QueueingHint.QUEUE, QueueingHint.QUEUE_SKIP
MIGRATED_PLUGINS: Final = "storage.alpha.kubernetes.io/migrated-plugins"


def _objects(old: object, new: object) -> tuple[Mapping[str, Any] | None, Mapping[str, Any]]:
    original, modified = ev.as_objects(old, new, dict)
    assert modified is not None
    return original, modified


def _meta(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    return obj.get("metadata") or {}


def after_claim_change(pod: PodInfo, old: object, new: object) -> QueueingHint:
    _, claim = _objects(old, new)
    meta = _meta(claim)
    if meta.get("namespace") != pod.namespace:
        return SKIP
    return Q if meta.get("name") in {name for name, _ in volumes.claims(pod)} else SKIP


def after_class_change(pod: PodInfo, old: object, new: object) -> QueueingHint:
    original, modified = _objects(old, new)
    if original is None:
        return Q
    same = original.get("allowedTopologies") == modified.get("allowedTopologies")
    return SKIP if same else Q


def after_csi_node_change(pod: PodInfo, old: object, new: object) -> QueueingHint:
    original, modified = _objects(old, new)
    if original is None:
        return Q
    was = (_meta(original).get("annotations") or {}).get(MIGRATED_PLUGINS)
    now = (_meta(modified).get("annotations") or {}).get(MIGRATED_PLUGINS)
    return Q if was != now else SKIP


def _limit(capacity: Mapping[str, Any]) -> Fraction | None:
    raw = capacity.get("maximumVolumeSize")
    raw = raw if raw is not None else capacity.get("capacity")
    if raw is None:
        return None
    try:
        return quantity.parse(raw)
    except quantity.QuantityError:
        return None


def after_capacity_change(pod: PodInfo, old: object, new: object) -> QueueingHint:
    original, modified = _objects(old, new)
    if original is None:
        return Q
    was, now = _limit(original), _limit(modified)
    return Q if now is not None and (was is None or now > was) else SKIP


def after_csi_driver_change(pod: PodInfo, old: object, new: object) -> QueueingHint:
    original, modified = _objects(old, new)
    name = _meta(modified).get("name")
    inline = {
        (v.get("csi") or {}).get("driver")
        for v in (pod.raw.get("spec") or {}).get("volumes") or ()
        if v.get("csi") is not None
    }
    if name not in inline or original is None:
        return SKIP
    was = (original.get("spec") or {}).get("storageCapacity") is True
    now = (modified.get("spec") or {}).get("storageCapacity") is True
    return Q if was and not now else SKIP
