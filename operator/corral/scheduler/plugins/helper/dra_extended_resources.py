"""Extended resources backed by DRA (upstream DRAExtendedResource, GA in 1.37): which
DeviceClass, if any, provides an extended resource a pod requests.

Shared by NodeResourcesFit (which leaves such a resource to DynamicResources on a node that
does not advertise it) and DynamicResources (which allocates devices of that class for it).

Contract (upstream ``extendedresourcecache.ExtendedResourceCache``): every DeviceClass ``c``
provides ``deviceclass.resource.kubernetes.io/<c>``, and ``spec.extendedResourceName`` when
set. When several classes name the same extended resource, the newest (creationTimestamp)
wins, the lower name on a tie. Upstream's cache is built from informer events, so after the
winning class is deleted it forgets the name until another class is added or updated; this
resolver is derived from the current classes and falls back to the next one at once.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from corral.scheduler.framework import listers
from corral.scheduler.framework.api_types import RawObject
from corral.scheduler.framework.types import is_extended_resource

DEVICE_CLASS_PREFIX: Final = "deviceclass.resource.kubernetes.io/"  # ResourceDeviceClassPrefix


def is_dra_extended_resource_name(name: str) -> bool:
    """Upstream ``IsDRAExtendedResourceName``: an extended resource name, or a class's
    implicit one."""
    return is_extended_resource(name) or name.startswith(DEVICE_CLASS_PREFIX)


def class_mapping(classes: list[RawObject]) -> dict[str, RawObject]:
    """Extended resource name → the DeviceClass that provides it."""
    out: dict[str, RawObject] = {}
    explicit: dict[str, RawObject] = {}
    for cls in classes:
        meta = cls.get("metadata") or {}
        out[DEVICE_CLASS_PREFIX + (meta.get("name") or "")] = cls
        wanted = (cls.get("spec") or {}).get("extendedResourceName")
        if not wanted:
            continue
        current = explicit.get(wanted)
        if current is None or _newer(cls, current):
            explicit[wanted] = cls
    out.update(explicit)
    return out


def _newer(a: RawObject, b: RawObject) -> bool:
    ma, mb = a.get("metadata") or {}, b.get("metadata") or {}
    ta, tb = ma.get("creationTimestamp") or "", mb.get("creationTimestamp") or ""
    if ta != tb:
        return bool(ta > tb)  # RFC 3339 in UTC, whole seconds: ordered as text
    return bool((ma.get("name") or "") < (mb.get("name") or ""))


class DeviceClassResolver:
    """Upstream ``DeviceClassResolver`` over the informers' DeviceClasses, rebuilt when they
    change. Without informers (``None``) no resource is backed by DRA."""

    def __init__(self, objects: listers.ObjectLister | None) -> None:
        self._objects = objects
        self._mapping: tuple[int, dict[str, RawObject]] = (-1, {})

    def get(self, resource: str) -> RawObject | None:
        """The class providing ``resource``, or ``None``."""
        return self.mapping().get(resource)

    def mapping(self) -> dict[str, RawObject]:
        if self._objects is None:
            return {}
        generation = self._objects.generation(listers.DEVICE_CLASS)
        if self._mapping[0] != generation:
            classes = list(self._objects.list(listers.DEVICE_CLASS))
            self._mapping = (generation, class_mapping(classes))
        return self._mapping[1]

    def backs_any(self, requests: Mapping[str, int]) -> bool:
        """Upstream ``hasDeviceClassMappedExtendedResource``: some positive request is an
        extended resource a class provides."""
        if not requests:
            return False
        mapping = self.mapping()
        return any(
            amount and is_dra_extended_resource_name(name) and name in mapping
            for name, amount in requests.items()
        )
