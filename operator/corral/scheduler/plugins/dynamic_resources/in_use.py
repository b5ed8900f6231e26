"""The devices other claims hold, as upstream's ``GatherAllocatedState`` (DRAConsumableCapacity
on): a result without a ``shareID`` holds its device alone (*dedicated*); one with a
``shareID`` shares it and holds its ``consumedCapacity`` (*shared*, summed per device). Results
with admin access hold nothing.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from corral.scheduler.plugins.dynamic_resources import capacity as cap
from corral.scheduler.plugins.dynamic_resources.pools import DeviceID

Json = Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class InUse:
    dedicated: frozenset[DeviceID] = frozenset()
    # Every shared device (an empty mapping when its shares consume no capacity).
    shared: Mapping[DeviceID, Mapping[str, Fraction]] = field(default_factory=dict)

    def plus(self, other: InUse) -> InUse:
        if not other.dedicated and not other.shared:
            return self
        shared = {device: dict(amounts) for device, amounts in self.shared.items()}
        _add(shared, other.shared.items())
        return InUse(self.dedicated | other.dedicated, shared)


def gather(allocations: Iterable[Json | None]) -> InUse:
    """What the allocations (``status.allocation`` of claims; None: not allocated) hold."""
    dedicated: set[DeviceID] = set()
    shared: dict[DeviceID, dict[str, Fraction]] = {}
    for allocation in allocations:
        if allocation is None:
            continue
        for result in (allocation.get("devices") or {}).get("results") or ():
            if result.get("adminAccess"):
                continue
            device = DeviceID(
                result.get("driver") or "", result.get("pool") or "", result.get("device") or ""
            )
            if result.get("shareID") is None:
                dedicated.add(device)
                continue
            _add(shared, [(device, _amounts(result.get("consumedCapacity") or {}))])
    return InUse(frozenset(dedicated), shared)


class ByClaim:
    """:func:`gather` over every claim, each claim's share read once per version: the claims
    change one at a time, and PreFilter gathers them all whenever one did."""

    def __init__(self) -> None:
        self._known: dict[str, tuple[str, InUse]] = {}  # uid → (resourceVersion, its share)

    def gather(self, claims: Iterable[Json]) -> InUse:
        dedicated: set[DeviceID] = set()
        shared: dict[DeviceID, dict[str, Fraction]] = {}
        known: dict[str, tuple[str, InUse]] = {}
        for claim in claims:
            meta = claim.get("metadata") or {}
            uid, version = str(meta.get("uid") or ""), str(meta.get("resourceVersion") or "")
            entry = self._known.get(uid)
            if entry is None or entry[0] != version or not uid:
                entry = (version, gather([(claim.get("status") or {}).get("allocation")]))
            if uid:
                known[uid] = entry  # a claim that is gone is forgotten
            share = entry[1]
            dedicated |= share.dedicated
            if share.shared:
                _add(shared, share.shared.items())
        self._known = known
        return InUse(frozenset(dedicated), shared)


def _amounts(consumed: Json) -> dict[str, Fraction]:
    out: dict[str, Fraction] = {}
    for name, value in consumed.items():
        try:
            out[name] = cap.quantity(value).amount
        except cap.CapacityError:
            continue  # not a quantity: the API server admits none such
    return out


def _add(
    into: dict[DeviceID, dict[str, Fraction]],
    items: Iterable[tuple[DeviceID, Mapping[str, Fraction]]],
) -> None:
    for device, amounts in items:
        held = into.setdefault(device, {})
        for name, amount in amounts.items():
            held[name] = held.get(name, Fraction(0)) + amount
