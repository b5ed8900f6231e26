"""VolumeBinding's assume cache over the engine's object lister (upstream's passive assume cache).

Contract: ``assume(obj)`` records a changed PV or PVC that the binder is about to write; it is
refused unless the lister holds the object at the same ``resourceVersion`` (the message is
upstream's ``"<key>" is out of sync (stored: <rv>, assume: <rv>)``). Reads (``get``,
``list_pvs``) return the assumed version while the lister's version is the one it was assumed
from; once the informer delivers a newer version (or a deletion) the assumed one is dropped, as
upstream's ``mayExpire``. ``restore(obj)`` drops the assumption made from ``obj``'s version.

So a PV assumed for one pod carries that pod's claim in ``claimRef`` and no later pod matches it,
until the API's answer replaces it. Thread-safe: Reserve runs on the scheduling thread, PreBind's
failures restore on binding threads.
"""

from __future__ import annotations

import threading
from typing import Final

from corral.scheduler.framework import listers
from corral.scheduler.framework.api_types import RawObject
from corral.scheduler.plugins.volume_binding import matching as vm

Key = tuple[str, str, str]  # kind, namespace, name

RESOURCES: Final = {
    listers.PERSISTENT_VOLUME: "persistentvolumes",
    listers.PERSISTENT_VOLUME_CLAIM: "persistentvolumeclaims",
}


def key_of(kind: str, obj: RawObject) -> Key:
    meta = obj.get("metadata") or {}
    return kind, str(meta.get("namespace") or ""), str(meta.get("name") or "")


def display(key: Key) -> str:
    """Upstream's cache key: ``name`` or ``namespace/name``."""
    return f"{key[1]}/{key[2]}" if key[1] else key[2]


def not_found(key: Key) -> str:
    return f'{RESOURCES.get(key[0], key[0])} "{display(key)}" not found'


class AssumeCache:
    def __init__(self, objects: listers.ObjectLister | None) -> None:
        self._objects = objects
        self._lock = threading.Lock()
        self._assumed: dict[Key, RawObject] = {}
        self._by_class: tuple[int, dict[str, list[RawObject]]] = (-1, {})

    def get_api(self, kind: str, namespace: str, name: str) -> RawObject | None:
        """The informer's object, assumptions ignored (upstream ``GetAPIObj``)."""
        return None if self._objects is None else self._objects.get(kind, namespace, name)

    def get(self, kind: str, namespace: str, name: str) -> RawObject | None:
        stored = self.get_api(kind, namespace, name)
        key = (kind, namespace, name)
        with self._lock:
            return self._overlay(key, stored)

    def _overlay(self, key: Key, stored: RawObject | None) -> RawObject | None:
        assumed = self._assumed.get(key)
        if assumed is None:
            return stored
        if stored is not None and vm.resource_version(assumed) == vm.resource_version(stored):
            return assumed
        del self._assumed[key]  # the informer moved on: the assumption has expired
        return stored

    def list_pvs(self, storage_class: str) -> list[RawObject]:
        """PVs of a class (upstream's storage-class index), assumed versions in place."""
        if self._objects is None:
            return []
        generation = self._objects.generation(listers.PERSISTENT_VOLUME)
        with self._lock:
            cached_generation, by_class = self._by_class
        if cached_generation != generation:
            by_class = {}
            for pv in self._objects.list(listers.PERSISTENT_VOLUME):
                by_class.setdefault(vm.pv_class(pv), []).append(pv)
            with self._lock:
                self._by_class = (generation, by_class)
        with self._lock:
            out = []
            for pv in by_class.get(storage_class, ()):
                got = self._overlay(key_of(listers.PERSISTENT_VOLUME, pv), pv)
                if got is not None:
                    out.append(got)
            return out

    def assume(self, kind: str, obj: RawObject) -> str | None:
        """Record ``obj``; the error message when it cannot be."""
        key = key_of(kind, obj)
        stored = self.get_api(*key)
        if stored is None:
            return not_found(key)
        with self._lock:
            if vm.resource_version(stored) != vm.resource_version(obj):
                return (
                    f'"{display(key)}" is out of sync (stored: {vm.resource_version(stored)}, '
                    f"assume: {vm.resource_version(obj)})"
                )
            self._assumed[key] = obj
        return None

    def restore(self, kind: str, obj: RawObject) -> None:
        key = key_of(kind, obj)
        with self._lock:
            assumed = self._assumed.get(key)
            if assumed is not None and vm.resource_version(assumed) == vm.resource_version(obj):
                del self._assumed[key]
