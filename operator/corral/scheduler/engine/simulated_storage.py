"""The storage controllers of a simulation, and its API for ResourceClaims.

:class:`SimulatedStorage`: what VolumeBinding's PreBind writes is completed at once, as the PV
controller and a provisioner would complete it on a real cluster.

``update(kind, obj)`` (the ``ObjectUpdater`` seam) stores ``obj`` with the next
``resourceVersion``, then:
- a PersistentVolume whose ``claimRef`` names a claim: the PV is ``Bound`` (its ``claimRef``
  gets the claim's uid) and the claim names it, ``Bound`` and ``pv.kubernetes.io/bind-completed``
  as the PV controller leaves them;
- a claim carrying ``volume.kubernetes.io/selected-node``: a new PV ``pvc-<namespace>-<name>``
  of the requested size and the claim's class, with node affinity to that node's hostname (a
  local volume, the simplest topology a provisioner reports), bound to the claim as above.
Capacity objects are not decremented (real drivers publish new CSIStorageCapacities later).

:class:`SimulatedClaims`: DynamicResources' writes (the claim's finalizer, its allocation and
reservation, the claims it creates for extended resources) are stored as the API server would
store them, so that later pods see the devices as allocated.

Every write is reported to ``on_change(kind, old, new)`` (``new`` None for a deletion), as the
engine's informers report them, so waiting pods are requeued by the same events.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any, Final, cast

from corral.scheduler.backend.objects import DELETED, MODIFIED, ObjectStore
from corral.scheduler.framework import listers
from corral.scheduler.framework.api_types import ObjectMeta, PodStatus, RawObject, ResourceClaim

SELECTED_NODE: Final = "volume.kubernetes.io/selected-node"
BIND_COMPLETED: Final = "pv.kubernetes.io/bind-completed"
HOSTNAME: Final = "kubernetes.io/hostname"


Change = Callable[[str, RawObject | None, RawObject | None], None]


def _unchanged(kind: str, old: RawObject | None, new: RawObject | None) -> None:
    pass


class _Writer:
    def __init__(self, objects: ObjectStore, on_change: Change = _unchanged) -> None:
        self.objects = objects
        self.on_change = on_change
        self._versions = itertools.count(1_000_000)

    def _store(self, kind: str, obj: RawObject) -> dict[str, Any]:
        meta = {**(obj.get("metadata") or {}), "resourceVersion": str(next(self._versions))}
        stored = {**obj, "metadata": meta}
        old = self.objects.get(kind, str(meta.get("namespace") or ""), str(meta.get("name") or ""))
        self.objects.apply(kind, MODIFIED, stored)
        self.on_change(kind, old, stored)
        return stored


class SimulatedStorage(_Writer):
    def update(self, kind: str, obj: RawObject) -> RawObject:
        stored = self._store(kind, obj)
        if kind == listers.PERSISTENT_VOLUME:
            ref = (stored.get("spec") or {}).get("claimRef")
            if ref is not None:
                self._bind(stored, str(ref.get("namespace", "")), str(ref.get("name", "")))
        elif kind == listers.PERSISTENT_VOLUME_CLAIM:
            node = ((stored.get("metadata") or {}).get("annotations") or {}).get(SELECTED_NODE)
            if node and not (stored.get("spec") or {}).get("volumeName"):
                self._provision(stored, str(node))
        return stored

    def _provision(self, claim: RawObject, node: str) -> None:
        meta = claim.get("metadata") or {}
        spec = claim.get("spec") or {}
        size = ((spec.get("resources") or {}).get("requests") or {}).get("storage", "0")
        term = {"matchExpressions": [{"key": HOSTNAME, "operator": "In", "values": [node]}]}
        volume = {
            "apiVersion": "v1",
            "kind": "PersistentVolume",
            "metadata": {"name": f"pvc-{meta.get('namespace', '')}-{meta.get('name', '')}"},
            "spec": {
                "capacity": {"storage": size},
                "accessModes": list(spec.get("accessModes") or ()),
                "storageClassName": spec.get("storageClassName") or "",
                "nodeAffinity": {"required": {"nodeSelectorTerms": [term]}},
                "claimRef": {"namespace": meta.get("namespace", ""), "name": meta.get("name")},
            },
        }
        self._bind(self._store(listers.PERSISTENT_VOLUME, volume),
                   str(meta.get("namespace", "")), str(meta.get("name", "")))  # fmt: skip

    def _bind(self, volume: RawObject, namespace: str, name: str) -> None:
        claim = self.objects.get(listers.PERSISTENT_VOLUME_CLAIM, namespace, name)
        if claim is None:
            return
        meta = claim.get("metadata") or {}
        uid = str(meta.get("uid") or f"simulated-claim-{namespace}-{name}")
        volume_name = str((volume.get("metadata") or {}).get("name", ""))
        spec = volume.get("spec") or {}
        self._store(listers.PERSISTENT_VOLUME, {
            **volume,
            "spec": {**spec, "claimRef": {**spec.get("claimRef", {}), "uid": uid}},
            "status": {"phase": "Bound"},
        })  # fmt: skip
        self._store(listers.PERSISTENT_VOLUME_CLAIM, {
            **claim,
            "metadata": {**meta, "uid": uid,
                         "annotations": {**(meta.get("annotations") or {}), BIND_COMPLETED: "yes"}},
            "spec": {**(claim.get("spec") or {}), "volumeName": volume_name},
            "status": {"phase": "Bound"},
        })  # fmt: skip


class SimulatedClaims(_Writer):
    """Implements :class:`corral.scheduler.framework.listers.ResourceClaimWriter` over the
    simulation's objects."""

    def __init__(self, objects: ObjectStore, on_change: Change = _unchanged) -> None:
        super().__init__(objects, on_change)
        self._names = itertools.count(1)

    def get(self, namespace: str, name: str) -> ResourceClaim:
        claim = self.objects.get(listers.RESOURCE_CLAIM, namespace, name)
        if claim is None:
            raise listers.WriteError(f'resourceclaims "{name}" not found', not_found=True)
        return cast("ResourceClaim", claim)

    def update(self, claim: ResourceClaim) -> ResourceClaim:
        return self._store_claim(claim)

    def update_status(self, claim: ResourceClaim) -> ResourceClaim:
        return self._store_claim(claim)

    def create(self, claim: ResourceClaim) -> ResourceClaim:
        meta: ObjectMeta = {**(claim.get("metadata") or {})}
        if not meta.get("name"):
            meta["name"] = f"{meta.get('generateName') or 'claim-'}{next(self._names):05d}"
        meta.setdefault("uid", f"simulated-claim-{meta.get('namespace', '')}-{meta['name']}")
        return self._store_claim({**claim, "metadata": meta})

    def _store_claim(self, claim: ResourceClaim) -> ResourceClaim:
        return cast("ResourceClaim", self._store(listers.RESOURCE_CLAIM, claim))

    def delete(self, namespace: str, name: str) -> None:
        old = self.objects.get(listers.RESOURCE_CLAIM, namespace, name)
        if old is None:
            return
        self.objects.apply(listers.RESOURCE_CLAIM, DELETED, old)
        self.on_change(listers.RESOURCE_CLAIM, old, None)

    def patch_pod_status(self, namespace: str, name: str, status: PodStatus) -> None:
        """The pod's extendedResourceClaimStatus: nothing the simulation reads again."""
