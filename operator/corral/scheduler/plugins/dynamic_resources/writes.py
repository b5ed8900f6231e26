"""DynamicResources' writes of ResourceClaims, as upstream's PreBind and Unreserve make them:
:func:`bind_claim` (finalizer, allocation, reservation), :func:`create_claim` (the extended
resources' claim) and :func:`delete_claim`, each through the handle's
:class:`~corral.scheduler.framework.listers.ResourceClaimWriter` and retried on conflict as
client-go's ``retry.DefaultRetry``. Failures raise
:class:`~corral.scheduler.framework.listers.WriteError` naming the claim and the write.
"""

from __future__ import annotations

import copy
from datetime import UTC, datetime
from typing import Final

from corral.scheduler.framework import listers
from corral.scheduler.framework.api_types import (
    AllocationResult,
    ResourceClaim,
    ResourceClaimStatus,
)
from corral.scheduler.framework.types import PodInfo
from corral.scheduler.plugins.dynamic_resources.allocator import claim_key

FINALIZER: Final = "resource.kubernetes.io/delete-protection"
_RETRIES: Final = 5  # client-go retry.DefaultRetry.Steps


def bind_claim(
    writer: listers.ResourceClaimWriter,
    claim: ResourceClaim,
    allocation: AllocationResult | None,
    pod: PodInfo,
) -> ResourceClaim:
    """Upstream ``bindClaim``: finalizer, allocation and reservation, retried on conflict;
    returns the claim as stored. ``claim`` (the informer's, shared) is not changed: the writes
    replace whole values in copies of its top level, metadata and status, never edit nested ones
    (a deep copy of every claim was an eighth of a binding thread's CPU)."""
    current: ResourceClaim = {**claim}
    key = claim_key(claim)
    for attempt in range(_RETRIES):
        if attempt:
            meta = current.get("metadata") or {}
            current = {**writer.get(meta.get("namespace") or "", meta.get("name") or "")}
        try:
            return _bind_once(writer, current, allocation, pod, key)
        except listers.WriteError as err:
            if err.conflict and attempt + 1 < _RETRIES:
                continue
            raise
    raise AssertionError("unreachable: the last attempt returns or raises")


def _bind_once(
    writer: listers.ResourceClaimWriter,
    claim: ResourceClaim,
    allocation: AllocationResult | None,
    pod: PodInfo,
    key: str,
) -> ResourceClaim:
    """One attempt; ``claim`` is a copy of the top level only: its metadata and status are
    replaced by new values, never changed."""
    meta = claim.get("metadata") or {}
    if meta.get("deletionTimestamp"):
        raise listers.WriteError(f"claim {key} got deleted in the meantime")
    if allocation is not None:
        if (claim.get("status") or {}).get("allocation"):
            raise listers.WriteError(f"claim {key} got allocated elsewhere in the meantime")
        if FINALIZER not in (meta.get("finalizers") or ()):
            claim["metadata"] = {**meta, "finalizers": [*(meta.get("finalizers") or ()), FINALIZER]}
            try:
                claim = copy.deepcopy(writer.update(claim))
            except listers.WriteError as err:
                raise listers.WriteError(
                    f"add finalizer to claim {key}: {err}", conflict=err.conflict
                ) from err
    status: ResourceClaimStatus = {**(claim.get("status") or {})}
    if allocation is not None:
        status["allocation"] = copy.deepcopy(allocation)
    status["reservedFor"] = [
        *(status.get("reservedFor") or ()),
        {"resource": "pods", "name": pod.name, "uid": pod.uid},
    ]
    allocated = status.get("allocation")
    if not allocated:
        raise listers.WriteError(f"claim {key} got deallocated elsewhere in the meantime")
    if not allocated.get("allocationTimestamp"):
        now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        status["allocation"] = {**allocated, "allocationTimestamp": now}
    claim["status"] = status
    try:
        return writer.update_status(claim)
    except listers.WriteError as err:
        what = (
            "add allocation and reservation to" if allocation is not None else "add reservation to"
        )
        raise listers.WriteError(f"{what} claim {key}: {err}", conflict=err.conflict) from err


def create_claim(writer: listers.ResourceClaimWriter, claim: ResourceClaim) -> ResourceClaim:
    """Upstream ``createExtendedResourceClaimInAPI``: named by the API server."""
    body = copy.deepcopy(claim)
    meta = body.get("metadata") or {}
    namespace = meta.get("namespace") or ""
    meta.pop("name", None)
    meta.pop("uid", None)
    body["metadata"] = meta
    body.pop("status", None)
    try:
        return writer.create(body)
    except listers.WriteError as err:
        raise listers.WriteError(
            f"create claim for extended resources {namespace}/: {err}", conflict=err.conflict
        ) from err


def delete_claim(writer: listers.ResourceClaimWriter, claim: ResourceClaim) -> None:
    """Upstream ``deleteClaim``: the delete-protection finalizer off (retried on conflict),
    then the delete; a claim already gone is fine."""
    current = copy.deepcopy(claim)
    meta = current.get("metadata") or {}
    namespace, name = meta.get("namespace") or "", meta.get("name") or ""
    for attempt in range(_RETRIES):
        if attempt:
            current = {**writer.get(namespace, name)}
        meta = current.get("metadata") or {}
        kept = [f for f in meta.get("finalizers") or () if f != FINALIZER]
        current["metadata"] = {**meta, "finalizers": kept}
        try:
            writer.update(current)
        except listers.WriteError as err:
            if err.conflict and attempt + 1 < _RETRIES:
                continue
            raise listers.WriteError(
                f"update resourceclaim {namespace}/{name}: {err}", conflict=err.conflict
            ) from err
        break
    writer.delete(namespace, name)
