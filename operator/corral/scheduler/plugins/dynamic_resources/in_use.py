"""The devices other claims hold, as upstream's ``GatherAllocatedState`` (DRAConsumableCapacity
on): a result without a ``shareID`` holds its device alone (*dedicated*); one with a
``shareID`` shares it and holds its ``consumedCapacity`` (*shared*, summed per device). Results
with admin access hold nothing.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from fractions import Fraction

from corral.scheduler.framework.api_types import AllocationResult, ResourceClaim
from corral.scheduler.plugins.dynamic_resources import capacity as cap
from corral.scheduler.plugins.dynamic_resources.pools import DeviceID


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


def gather(allocations: Iterable[AllocationResult | None]) -> InUse:
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
    """:func:`gather` over every claim, kept by difference: the claims change one at a time,
    and PreFilter gathers them all whenever one did.

    Contract: a claim object is never changed in place (the stores hand out the same object
    until the claim changes, and a new version is a new object). So the claims that came and
    went since the last call are told apart by object identity, with set operations in C, and
    only their shares are read, added or taken away. Each claim seen is held until it goes, so
    its identity is not reused meanwhile.
    """

    def __init__(self) -> None:
        self._known: dict[int, tuple[ResourceClaim, InUse]] = {}  # id(claim) → (claim, its share)
        self._holders: dict[DeviceID, int] = {}  # device → how many claims hold it alone
        self._sharing: dict[int, InUse] = {}  # the shares that hold shared devices, by id
        self._shared: dict[DeviceID, dict[str, Fraction]] = {}
        self._answer = InUse()

    def gather(self, claims: Iterable[ResourceClaim]) -> InUse:
        current = {id(claim): claim for claim in claims}
        gone = self._known.keys() - current.keys()
        new = current.keys() - self._known.keys()
        if not gone and not new:
            return self._answer
        shares_changed = False
        for key in gone:
            _claim, share = self._known.pop(key)
            self._hold(share.dedicated, -1)
            shares_changed |= self._sharing.pop(key, None) is not None
        for key in new:
            claim = current[key]
            share = gather([(claim.get("status") or {}).get("allocation")])
            self._known[key] = (claim, share)
            self._hold(share.dedicated, 1)
            if share.shared:
                self._sharing[key] = share
                shares_changed = True
        if shares_changed:  # summed anew: a share taken away may leave a capacity no one holds
            self._shared = {}
            for share in self._sharing.values():
                _add(self._shared, share.shared.items())
        shared = {device: dict(amounts) for device, amounts in self._shared.items()}
        self._answer = InUse(frozenset(self._holders), shared)
        return self._answer

    def _hold(self, devices: Iterable[DeviceID], change: int) -> None:
        holders = self._holders
        for device in devices:
            count = holders.get(device, 0) + change
            if count:
                holders[device] = count
            else:
                del holders[device]


def _amounts(consumed: Mapping[str, str]) -> dict[str, Fraction]:
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
