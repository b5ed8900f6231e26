"""Shared lookups of the volume plugins: a pod's claims and their PVCs, PVs, StorageClasses,
read from the Handle's object lister, with upstream's NotFound wording.

Contract: a lookup failure that stops a pod is UnschedulableAndUnresolvable (:func:`unresolvable`)
in every volume plugin, as upstream: no node can fix a missing object.
"""

from __future__ import annotations

from typing import Final

from corral.scheduler.framework import listers
from corral.scheduler.framework.api_types import RawObject
from corral.scheduler.framework.interface import Handle
from corral.scheduler.framework.status import Code, Status
from corral.scheduler.framework.types import PodInfo

WAIT_FOR_FIRST_CONSUMER: Final = "WaitForFirstConsumer"
READ_WRITE_ONCE_POD: Final = "ReadWriteOncePod"


def not_found(resource: str, name: str) -> str:
    """The apiserver's NotFound message, as upstream surfaces it."""
    return f'{resource} "{name}" not found'


def unresolvable(message: str) -> Status:
    return Status.of(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, message)


def claims(pod: PodInfo) -> list[tuple[str, bool]]:
    """(claim name, generic ephemeral?) for every PVC-backed volume of the pod."""
    out = []
    for volume in (pod.raw.get("spec") or {}).get("volumes") or ():
        claim = volume.get("persistentVolumeClaim")
        if claim is not None:
            out.append((str(claim.get("claimName", "")), False))
        elif volume.get("ephemeral") is not None:
            out.append((f"{pod.name}-{volume.get('name', '')}", True))
    return out


def _get(handle: Handle | None, kind: str, namespace: str, name: str) -> RawObject | None:
    objects = handle.objects if handle is not None else None
    return objects.get(kind, namespace, name) if objects is not None else None


def pvc(handle: Handle | None, namespace: str, name: str) -> RawObject | None:
    return _get(handle, listers.PERSISTENT_VOLUME_CLAIM, namespace, name)


def find_pvc(
    handle: Handle | None, namespace: str, name: str
) -> tuple[RawObject | None, Status | None]:
    """The claim, or ``None`` and the status of upstream's failed PVC lister lookup
    (UnschedulableAndUnresolvable ``persistentvolumeclaim "<name>" not found``)."""
    claim = pvc(handle, namespace, name)
    if claim is None:
        return None, unresolvable(not_found("persistentvolumeclaim", name))
    return claim, None


def pv(handle: Handle | None, name: str) -> RawObject | None:
    return _get(handle, listers.PERSISTENT_VOLUME, "", name)


def storage_class(handle: Handle | None, name: str) -> RawObject | None:
    return _get(handle, listers.STORAGE_CLASS, "", name)


def csi_driver(handle: Handle | None, name: str) -> RawObject | None:
    return _get(handle, listers.CSI_DRIVER, "", name)


def claim_storage_class(handle: Handle | None, claim: RawObject) -> RawObject | None:
    """The StorageClass an unbound claim asks for (``None`` if it names none or it is missing)."""
    return storage_class(handle, claim_class(claim))


def claim_class(claim: RawObject) -> str:
    """Upstream ``GetPersistentVolumeClaimClass``: the beta annotation wins over the field."""
    annotations = (claim.get("metadata") or {}).get("annotations") or {}
    beta = annotations.get("volume.beta.kubernetes.io/storage-class")
    if beta is not None:
        return str(beta)
    return str((claim.get("spec") or {}).get("storageClassName") or "")


def volume_name(claim: RawObject) -> str:
    return str((claim.get("spec") or {}).get("volumeName") or "")
