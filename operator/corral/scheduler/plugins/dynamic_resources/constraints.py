"""Claim constraints over the devices allocated for some of a claim's requests.

``matchAttribute``: every device of the named requests (all requests when none are named) has
the attribute, with one value. ``distinctAttribute``: every such device has the attribute, each
with a different value. A device without the attribute never satisfies either. An attribute is
looked up by its fully qualified name, or by its bare name when the domain is the driver's.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol


class Constraint(Protocol):
    def add(self, request: str, sub_request: str, device: Mapping[str, Any], driver: str) -> bool:
        """Account ``device`` (False: the constraint would not hold; nothing was changed)."""

    def remove(self, request: str, sub_request: str) -> None:
        """Undo the latest successful :meth:`add` of a device of ``request``."""


def lookup_attribute(device: Mapping[str, Any], driver: str, name: str) -> Mapping[str, Any] | None:
    attributes: Mapping[str, Any] = device.get("attributes") or {}
    if name in attributes:
        found: Mapping[str, Any] = attributes[name]
        return found
    domain, sep, ident = name.partition("/")
    if sep and domain == driver and ident in attributes:
        bare: Mapping[str, Any] = attributes[ident]
        return bare
    return None


def _applies(names: frozenset[str], request: str, sub_request: str) -> bool:
    if not names:
        return True
    return request in names or (bool(sub_request) and f"{request}/{sub_request}" in names)


class MatchAttribute:
    def __init__(self, requests: frozenset[str], attribute: str) -> None:
        self._requests = requests
        self._attribute = attribute
        self._value: Mapping[str, Any] | None = None
        self._count = 0

    def add(self, request: str, sub_request: str, device: Mapping[str, Any], driver: str) -> bool:
        if not _applies(self._requests, request, sub_request):
            return True
        value = lookup_attribute(device, driver, self._attribute)
        if value is None:
            return False
        if self._count == 0:
            self._value = value
        elif dict(value) != dict(self._value or {}):
            return False
        self._count += 1
        return True

    def remove(self, request: str, sub_request: str) -> None:
        if _applies(self._requests, request, sub_request):
            self._count -= 1


class DistinctAttribute:
    def __init__(self, requests: frozenset[str], attribute: str) -> None:
        self._requests = requests
        self._attribute = attribute
        self._values: list[dict[str, Any]] = []

    def add(self, request: str, sub_request: str, device: Mapping[str, Any], driver: str) -> bool:
        if not _applies(self._requests, request, sub_request):
            return True
        value = lookup_attribute(device, driver, self._attribute)
        if value is None or dict(value) in self._values:
            return False
        self._values.append(dict(value))
        return True

    def remove(self, request: str, sub_request: str) -> None:
        if _applies(self._requests, request, sub_request):
            self._values.pop()
