"""The claims a pod will have provisioned on the node it lands on, for the capacity plugins
(CheckCSIStorageCapacity, LvmVolumeCapacity).

Contract: :func:`pending_claims` lists every PVC-backed volume of the pod that is not bound
yet (``spec.volumeName`` empty) and whose StorageClass exists and binds
``WaitForFirstConsumer``: such a claim is provisioned in the topology of the node the
scheduler picks. A generic ephemeral volume whose claim does not exist yet counts with its
``volumeClaimTemplate``. Claims of Immediate classes are provisioned before scheduling, and
claims without a (known) class are not provisioned by anyone: neither is listed. A missing
claim (not ephemeral) is UnschedulableAndUnresolvable with upstream's NotFound message, as in
every volume plugin. The size is ``spec.resources.requests.storage`` in bytes (0 if unset).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from corral.scheduler.config import quantity
from corral.scheduler.framework.interface import Handle
from corral.scheduler.framework.status import Status
from corral.scheduler.framework.types import PodInfo
from corral.scheduler.plugins.helper import volumes


@dataclass(frozen=True, slots=True)
class PendingClaim:
    name: str
    storage_class: Mapping[str, Any]
    request: int  # bytes


def class_name(storage_class: Mapping[str, Any]) -> str:
    return str((storage_class.get("metadata") or {}).get("name") or "")


def _request(spec: Mapping[str, Any]) -> int:
    storage = ((spec.get("resources") or {}).get("requests") or {}).get("storage")
    if storage is None:
        return 0
    try:
        return quantity.value(quantity.parse(storage))
    except ValueError:  # the API server validates requests: only a hand-made object lands here
        return 0


def _claim_spec(
    handle: Handle | None, pod: PodInfo, volume: Mapping[str, Any]
) -> tuple[str, Mapping[str, Any] | None, Status | None]:
    """(claim name, the claim object or an ephemeral claim's stand-in, failure)."""
    source = volume.get("persistentVolumeClaim")
    if source is not None:
        name = str(source.get("claimName", ""))
        claim, failure = volumes.find_pvc(handle, pod.namespace, name)
        return name, claim, failure
    ephemeral = volume.get("ephemeral")
    if ephemeral is None:
        return "", None, None
    name = f"{pod.name}-{volume.get('name', '')}"
    claim = volumes.pvc(handle, pod.namespace, name)
    if claim is None:  # not created yet: the template says what will be asked for
        template = ephemeral.get("volumeClaimTemplate") or {}
        claim = {"metadata": template.get("metadata") or {}, "spec": template.get("spec") or {}}
    return name, claim, None


def pending_claims(handle: Handle | None, pod: PodInfo) -> tuple[list[PendingClaim], Status | None]:
    out: list[PendingClaim] = []
    for volume in (pod.raw.get("spec") or {}).get("volumes") or ():
        name, claim, failure = _claim_spec(handle, pod, volume)
        if failure is not None:
            return [], failure
        if claim is None or volumes.volume_name(claim):
            continue
        sc = volumes.claim_storage_class(handle, claim)
        if sc is None or sc.get("volumeBindingMode") != volumes.WAIT_FOR_FIRST_CONSUMER:
            continue
        out.append(PendingClaim(name, sc, _request(claim.get("spec") or {})))
    return out, None
