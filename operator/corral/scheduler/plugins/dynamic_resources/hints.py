"""DynamicResources' queueing hints (upstream ``isSchedulableAfterClaimChange`` and
``isSchedulableAfterTargetPodUpdate``, 1.37): whether a ResourceClaim event or the rejected
pod's own update may make it schedulable. Node, DeviceClass and ResourceSlice events (a
DeviceTaintRule's change arrives as the updates of the slices it re-taints) have no hint:
upstream queues on each.

The claim hint queues a pod when an allocated claim is deleted or deallocated (its devices are
free for anyone), when one of the pod's own claims is created, or when one of its claims'
status changed; it skips claims the pod does not use, changes outside a claim's status (a
finalizer), and pods whose claims cannot all be resolved now (PreEnqueue still rejects them).
Unless the change deallocated the claim, a pod that cannot name it (another namespace, another
name) is skipped before its claims are looked up: both answers would be skip, and the claim
events of a busy cluster reach every pending pod (upstream narrows them to the pods naming the
claim in its queue, with the same outcome). :data:`CLAIM_NARROWING` tells the queue the same by
keys, so it does not ask about the others at all. A deletion found by a relist carries only the
claim's name (upstream's ``DeletedFinalStateUnknown``): its allocation is unknown, so it queues.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from typing import Any, cast

from corral.scheduler.framework import cluster_events as ev
from corral.scheduler.framework import listers
from corral.scheduler.framework.api_types import ResourceClaim
from corral.scheduler.framework.cluster_events import Narrowing, QueueingHint
from corral.scheduler.framework.types import PodInfo
from corral.scheduler.plugins.dynamic_resources.claims import (
    ClaimError,
    may_name,
    named_claims,
    pod_claims,
    uid_of,
)


def _allocated(claim: Mapping[str, Any]) -> bool:
    return (claim.get("status") or {}).get("allocation") is not None


def _semantic(value: Any) -> Any:
    """``value`` without empty fields, so that JSON that omits a field equals JSON that has it
    empty (apimachinery's semantic equality: nil and empty lists and maps are equal)."""
    if isinstance(value, Mapping):
        return {k: _semantic(v) for k, v in value.items() if v not in (None, [], {})}
    if isinstance(value, list):
        return [_semantic(v) for v in value]
    return value


def after_claim_change(
    objects: listers.ObjectLister, pod: PodInfo, old: object, new: object
) -> QueueingHint:
    original, modified = cast("tuple[ResourceClaim | None, ResourceClaim | None]",
                              ev.as_objects(old, new, dict))  # fmt: skip
    if modified is None:
        # Deleted: only an allocation it held can help (the deallocation is normally seen
        # first); a relist's tombstone (no spec) does not tell whether it had one.
        if original is not None and "spec" in original and not _allocated(original):
            return QueueingHint.QUEUE_SKIP
        return QueueingHint.QUEUE
    deallocated = original is not None and _allocated(original) and not _allocated(modified)
    if not deallocated and not may_name(pod, modified):
        return QueueingHint.QUEUE_SKIP  # as below: unresolvable claims, or not the pod's claim
    try:
        claims = pod_claims(pod, objects)
    except ClaimError:
        return QueueingHint.QUEUE_SKIP
    if deallocated:
        return QueueingHint.QUEUE  # its devices are free for any pod
    if not any(uid_of(c) == uid_of(modified) for c in claims):
        return QueueingHint.QUEUE_SKIP
    if original is None:
        return QueueingHint.QUEUE  # one of the pod's claims got created
    if _semantic(original.get("status")) == _semantic(modified.get("status")):
        return QueueingHint.QUEUE_SKIP
    return QueueingHint.QUEUE


def after_target_pod_update(
    objects: listers.ObjectLister, pod: PodInfo, old: object, new: object
) -> QueueingHint:
    _, modified = ev.as_objects(old, new, PodInfo)
    assert modified is not None
    try:
        pod_claims(modified, objects)
    except ClaimError:
        return QueueingHint.QUEUE_SKIP
    return QueueingHint.QUEUE


def pod_claim_keys(pod: PodInfo) -> frozenset[Hashable]:
    """(namespace, name) of every claim the pod can name (what :func:`may_name` accepts)."""
    return named_claims(pod)


def claim_event_keys(old: object, new: object) -> frozenset[Hashable] | None:
    """The claim's (namespace, name), unless the event may queue any pod (a deletion or a
    deallocation: :func:`after_claim_change` skips only pods that cannot name the claim)."""
    if not isinstance(new, Mapping) or not (old is None or isinstance(old, Mapping)):
        return None
    if old is not None and _allocated(old) and not _allocated(new):
        return None
    meta = new.get("metadata") or {}
    return frozenset({(meta.get("namespace"), meta.get("name"))})


CLAIM_NARROWING = Narrowing(pod_claim_keys, claim_event_keys)
