"""A pod's ResourceClaims (upstream ``resourceclaim.Name`` / ``IsForPod`` and the plugin's
``foreachPodResourceClaim``), with upstream's error texts.

``spec.resourceClaims[i]`` names a claim (``resourceClaimName``) or a template
(``resourceClaimTemplateName``): then the claim is the one the resourceclaim controller recorded
in ``status.resourceClaimStatuses`` for that entry (no entry yet: not created yet; an entry
without a name: no claim needed), and it must be owned by the pod.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

from corral.scheduler.framework import listers
from corral.scheduler.framework.api_types import (
    ObjectMeta,
    PodResourceClaim,
    PodResourceClaimStatus,
    ResourceClaim,
)
from corral.scheduler.framework.types import PodInfo


class ClaimError(Exception):
    """The pod's claims cannot be resolved now (unschedulable until an event changes that)."""


def claim_named(objects: listers.ObjectLister, namespace: str, name: str) -> ResourceClaim | None:
    """The claim ``namespace/name`` from the informer, as the typed view of its JSON."""
    return cast("ResourceClaim | None", objects.get(listers.RESOURCE_CLAIM, namespace, name))


def claims_of(
    objects: listers.ObjectLister, namespace: str | None = None
) -> Sequence[ResourceClaim]:
    """Every claim the informer holds (in ``namespace`` when given)."""
    return cast("Sequence[ResourceClaim]", objects.list(listers.RESOURCE_CLAIM, namespace))


def pod_claims(pod: PodInfo, objects: listers.ObjectLister) -> list[ResourceClaim]:
    """The pod's claims, in ``spec.resourceClaims`` order; raises :class:`ClaimError`."""
    spec = pod.raw.get("spec") or {}
    statuses = (pod.raw.get("status") or {}).get("resourceClaimStatuses") or ()
    out: list[ResourceClaim] = []
    for entry in spec.get("resourceClaims") or ():
        name, check_owner = _claim_name(pod, entry, statuses)
        if not name:
            continue
        claim = claim_named(objects, pod.namespace, name)
        if claim is None:
            raise ClaimError(f'resourceclaim.resource.k8s.io "{name}" not found')
        meta = claim.get("metadata") or {}
        if meta.get("deletionTimestamp"):
            raise ClaimError(f'resourceclaim "{name}" is being deleted')
        if check_owner and not _owned_by(meta, pod.uid):
            raise ClaimError(
                f"ResourceClaim {pod.namespace}/{name} was not created for Pod"
                f" {pod.namespace}/{pod.name} (Pod is not owner)"
            )
        out.append(claim)
    return out


def may_name(pod: PodInfo, claim: ResourceClaim) -> bool:
    """Whether ``claim`` can be one of :func:`pod_claims`' answers, from the pod alone (no
    lookups): in the pod's namespace, named by ``spec.resourceClaims`` or by the claims the
    resourceclaim controller recorded for it. False is certain; True says nothing."""
    meta = claim.get("metadata") or {}
    return (meta.get("namespace"), meta.get("name")) in named_claims(pod)


def named_claims(pod: PodInfo) -> frozenset[tuple[str, str]]:
    """(namespace, name) of every claim the pod names in ``spec.resourceClaims`` or in
    ``status.resourceClaimStatuses``."""
    raw = pod.raw
    entries = (raw.get("spec") or {}).get("resourceClaims") or ()
    statuses = (raw.get("status") or {}).get("resourceClaimStatuses") or ()
    names = [e.get("resourceClaimName") for e in entries]
    names += [s.get("resourceClaimName") for s in statuses]
    return frozenset((pod.namespace, str(n)) for n in names if n)


def _claim_name(
    pod: PodInfo, entry: PodResourceClaim, statuses: Sequence[PodResourceClaimStatus]
) -> tuple[str, bool]:
    if entry.get("resourceClaimName"):
        return str(entry["resourceClaimName"]), False
    if entry.get("resourceClaimTemplateName"):
        for status in statuses:
            if status.get("name") == entry.get("name"):
                return str(status.get("resourceClaimName") or ""), True
        raise ClaimError(f'pod "{pod.namespace}/{pod.name}": ResourceClaim not created yet')
    raise ClaimError(
        f'pod "{pod.namespace}/{pod.name}", spec.resourceClaim "{entry.get("name") or ""}":'
        " none of the supported fields are set"
    )


def _owned_by(meta: ObjectMeta, uid: str) -> bool:
    return any(
        ref.get("uid") == uid and ref.get("controller") for ref in meta.get("ownerReferences") or ()
    )


def reserved_for(claim: ResourceClaim, uid: str) -> bool:
    return any(r.get("uid") == uid for r in (claim.get("status") or {}).get("reservedFor") or ())


def uid_of(claim: ResourceClaim) -> str:
    return str((claim.get("metadata") or {}).get("uid") or "")


def key_of(claim: ResourceClaim) -> str:
    meta = claim.get("metadata") or {}
    return f"{meta.get('namespace') or ''}/{meta.get('name') or ''}"
