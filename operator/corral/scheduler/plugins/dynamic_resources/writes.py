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
from typing import Any, Final

from corral.scheduler.framework import listers
from corral.scheduler.framework.api_types import RawObject as Json
from corral.scheduler.framework.types import PodInfo
from corral.scheduler.plugins.dynamic_resources.allocator import claim_key

FINALIZER: Final = "resource.kubernetes.io/delete-protection"
_RETRIES: Final = 5  # client-go retry.DefaultRetry.Steps


def bind_claim(
    writer: listers.ResourceClaimWriter, claim: Json, allocation: Json | None, pod: PodInfo
) -> Json:
    """Upstream ``bindClaim``: finalizer, allocation and reservation, retried on conflict;
    returns the claim as stored. ``claim`` (the informer's, shared) is not changed: the writes
    replace whole values in copies of its top level, metadata and status, never edit nested ones
    (a deep copy of every claim was an eighth of a binding thread's CPU)."""
    current: dict[str, Any] = {
        **claim,
        "metadata": dict(claim.get("metadata") or {}),
        "status": dict(claim.get("status") or {}),
    }
    key = claim_key(claim)
    for attempt in range(_RETRIES):
        if attempt:
            meta = current.get("metadata") or {}
            current = dict(writer.get(meta.get("namespace") or "", meta.get("name") or ""))
        try:
            return _bind_once(writer, current, allocation, pod, key)
        except listers.WriteError as err:
            if err.conflict and attempt + 1 < _RETRIES:
                continue
            raise
    raise AssertionError("unreachable: the last attempt returns or raises")


def _bind_once(
    writer: listers.ResourceClaimWriter,
    claim: dict[str, Any],
    allocation: Json | None,
    pod: PodInfo,
    key: str,
) -> Json:
    meta = claim.setdefault("metadata", {})
    status = claim.setdefault("status", {})
    if meta.get("deletionTimestamp"):
        raise listers.WriteError(f"claim {key} got deleted in the meantime")
    if allocation is not None:
        if status.get("allocation"):
            raise listers.WriteError(f"claim {key} got allocated elsewhere in the meantime")
        if FINALIZER not in (meta.get("finalizers") or ()):
            meta["finalizers"] = [*(meta.get("finalizers") or ()), FINALIZER]
            try:
                claim.update(copy.deepcopy(dict(writer.update(claim))))
            except listers.WriteError as err:
                raise listers.WriteError(
                    f"add finalizer to claim {key}: {err}", conflict=err.conflict
                ) from err
            status = claim.setdefault("status", {})
        status["allocation"] = copy.deepcopy(dict(allocation))
    status["reservedFor"] = [
        *(status.get("reservedFor") or ()),
        {"resource": "pods", "name": pod.name, "uid": pod.uid},
    ]
    if not status.get("allocation"):
        raise listers.WriteError(f"claim {key} got deallocated elsewhere in the meantime")
    if not status["allocation"].get("allocationTimestamp"):
        now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        status["allocation"] = {**status["allocation"], "allocationTimestamp": now}
    try:
        return writer.update_status(claim)
    except listers.WriteError as err:
        what = (
            "add allocation and reservation to" if allocation is not None else "add reservation to"
        )
        raise listers.WriteError(f"{what} claim {key}: {err}", conflict=err.conflict) from err


def create_claim(writer: listers.ResourceClaimWriter, claim: Json) -> Json:
    """Upstream ``createExtendedResourceClaimInAPI``: named by the API server."""
    body = copy.deepcopy(dict(claim))
    meta = body.setdefault("metadata", {})
    namespace = meta.get("namespace") or ""
    for key in ("name", "uid"):
        meta.pop(key, None)
    body.pop("status", None)
    try:
        return writer.create(body)
    except listers.WriteError as err:
        raise listers.WriteError(
            f"create claim for extended resources {namespace}/: {err}", conflict=err.conflict
        ) from err


def delete_claim(writer: listers.ResourceClaimWriter, claim: Json) -> None:
    """Upstream ``deleteClaim``: the delete-protection finalizer off (retried on conflict),
    then the delete; a claim already gone is fine."""
    current: dict[str, Any] = copy.deepcopy(dict(claim))
    meta = current.get("metadata") or {}
    namespace, name = meta.get("namespace") or "", meta.get("name") or ""
    for attempt in range(_RETRIES):
        if attempt:
            current = dict(writer.get(namespace, name))
        meta = current.setdefault("metadata", {})
        meta["finalizers"] = [f for f in meta.get("finalizers") or () if f != FINALIZER]
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
