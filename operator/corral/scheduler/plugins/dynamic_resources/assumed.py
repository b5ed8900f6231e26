"""ResourceClaims as this scheduler last wrote them, over the informers' (upstream's claim assume
cache, ``AssumeClaimAfterAPICall``).

Contract: ``assume(claim)`` keeps the API server's answer to a write PreBind made. Reads
(``get``, ``list``) return it instead of the informer's copy while that copy is older (by
``resourceVersion``); once the informer delivers the same or a newer version, or the claim is
gone or replaced (another uid), the assumed copy is dropped. ``assume`` refuses a claim the
informer does not know or whose copy is already newer, as upstream's cache does. ``restore``
drops an assumption (a failed binding's Unreserve). Every other kind is read through unchanged.

So the pods that share a claim see it allocated as soon as PreBind's write returns, not only
when the watch delivers it: without this they fail with "in the process of being allocated" in
between, and write with a stale ``resourceVersion``. ``generation`` grows on every change either
side makes. Thread-safe: PreBind assumes on the binding threads; PreFilter reads on the
scheduling thread.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import cast

from corral.scheduler.framework import listers
from corral.scheduler.framework.api_types import RawObject, ResourceClaim
from corral.scheduler.plugins.dynamic_resources.claims import claim_named, uid_of

Key = tuple[str, str]  # namespace, name


def version(obj: RawObject) -> int:
    """``metadata.resourceVersion`` as a number (etcd's revision); 0 when missing or opaque."""
    text = str((obj.get("metadata") or {}).get("resourceVersion") or "0")
    return int(text) if text.isdigit() else 0


def _key(claim: RawObject) -> Key:
    meta = claim.get("metadata") or {}
    return str(meta.get("namespace") or ""), str(meta.get("name") or "")


class AssumedClaims:
    """An :class:`~corral.scheduler.framework.listers.ObjectLister` over ``objects``."""

    def __init__(self, objects: listers.ObjectLister) -> None:
        self._objects = objects
        self._lock = threading.Lock()
        self._assumed: dict[Key, ResourceClaim] = {}
        self._changes = 0

    def assume(self, claim: ResourceClaim) -> bool:
        """Keep ``claim`` (the API's answer to a write); False when the informer does not have
        it or already has a newer version."""
        key = _key(claim)
        seen = claim_named(self._objects, *key)
        if seen is None or uid_of(seen) != uid_of(claim) or version(seen) > version(claim):
            return False
        with self._lock:
            self._assumed[key] = claim
            self._changes += 1
        return True

    def restore(self, namespace: str, name: str) -> None:
        with self._lock:
            if self._assumed.pop((namespace, name), None) is not None:
                self._changes += 1

    def _overlay(self, key: Key, seen: ResourceClaim | None) -> ResourceClaim | None:
        """The claim to read for ``key`` given the informer's copy; drops a stale assumption.
        Called with the lock held."""
        mine = self._assumed.get(key)
        if mine is None:
            return seen
        if seen is None or uid_of(seen) != uid_of(mine) or version(seen) >= version(mine):
            del self._assumed[key]
            self._changes += 1
            return seen
        return mine

    # --- ObjectLister --------------------------------------------------------------------------

    def get(self, kind: str, namespace: str, name: str) -> RawObject | None:
        seen = self._objects.get(kind, namespace, name)
        if kind != listers.RESOURCE_CLAIM:
            return seen
        with self._lock:
            return self._overlay((namespace, name), cast("ResourceClaim | None", seen))

    def list(self, kind: str, namespace: str | None = None) -> Sequence[RawObject]:
        seen = self._objects.list(kind, namespace)
        if kind != listers.RESOURCE_CLAIM:
            return seen
        with self._lock:
            if not self._assumed:
                return seen
            mine = (self._overlay(_key(s), s) for s in cast("Sequence[ResourceClaim]", seen))
            return [c for c in mine if c is not None]

    def generation(self, kind: str) -> int:
        if kind != listers.RESOURCE_CLAIM:
            return self._objects.generation(kind)
        with self._lock:
            return self._objects.generation(kind) + self._changes
