"""Device binding conditions (upstream's DRADeviceBindingConditions and
DRAResourceClaimDeviceStatus, beta and on in 1.37), with upstream's rules and texts.

A device may publish ``bindingConditions`` (and ``bindingFailureConditions``): it is allocated
like any other, but the pod is bound only once its driver (or a controller) has set every
binding condition True in the claim's ``status.devices[].conditions``.

- Allocation: pools holding such a device come after all other pools, both in (driver, pool)
  order (upstream ``GatherPools``), so a device without conditions is preferred; a result copies
  the device's condition names; ``bindsToNode`` ties the allocation to the chosen node.
- PreBind: after writing the allocation, :func:`wait` checks the claims at once, then every
  :data:`POLL_SECONDS`, until all are ready, a failure condition is True, a claim's
  ``allocationTimestamp`` is older than ``bindingTimeout``, or the timeout itself passes: each
  of those is an Error, so the pod is retried.
- The retry's Filter finds the claim :func:`unusable` on every node ("resourceclaim not
  available on the node") and PostFilter deallocates it, so another device may be chosen.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from datetime import datetime, timedelta
from typing import Final

from corral.scheduler.framework.api_types import (
    AllocatedDeviceStatus,
    DeviceRequestAllocationResult,
    RawObject,
    ResourceClaim,
    ResourceClaimStatus,
)
from corral.scheduler.plugins.dynamic_resources.pools import Pool

BINDING_TIMEOUT_DEFAULT: Final = 600.0  # config.DynamicResourcesBindingTimeoutDefault
POLL_SECONDS: Final = 5.0  # PreBind's wait.PollUntilContextTimeout interval
ERR_TIMEOUT: Final = "device binding timeout"  # ErrDeviceBindingTimeout
ERR_FAILED: Final = "device binding failed"  # ErrDeviceBindingFailed


class BindingFailedError(Exception):
    """A binding failure condition is True; the message is upstream's."""


# --- allocation ----------------------------------------------------------------------------


def pools_last(pools: list[Pool]) -> list[Pool]:
    """``pools`` (sorted by ID) with those holding a device with binding conditions last."""
    plain = [p for p in pools if not _has_conditions(p)]
    if len(plain) == len(pools):
        return pools
    return plain + [p for p in pools if _has_conditions(p)]


def _has_conditions(pool: Pool) -> bool:
    if pool.with_binding_conditions is None:  # pools are kept while their slices are
        pool.with_binding_conditions = any(
            device.get("bindingConditions")
            for slice_ in pool.slices
            for device in (slice_.get("spec") or {}).get("devices") or ()
        )
    return pool.with_binding_conditions


def result_fields(device: RawObject) -> DeviceRequestAllocationResult:
    """What an allocation result copies of the device: its condition names."""
    fields: DeviceRequestAllocationResult = {}
    if device.get("bindingConditions"):
        fields["bindingConditions"] = list(device["bindingConditions"])
    if device.get("bindingFailureConditions"):
        fields["bindingFailureConditions"] = list(device["bindingFailureConditions"])
    return fields


# --- readiness -----------------------------------------------------------------------------


def _results(claim: ResourceClaim) -> Sequence[DeviceRequestAllocationResult]:
    allocation = (claim.get("status") or {}).get("allocation") or {}
    return (allocation.get("devices") or {}).get("results") or ()


def pending(claims: Sequence[ResourceClaim]) -> bool:
    """Whether any allocated claim has a device with binding conditions (upstream
    ``hasBindingConditions``): only then does PreBind wait."""
    return any(r.get("bindingConditions") for c in claims for r in _results(c))


def claim_ready(claim: ResourceClaim) -> bool:
    """Upstream ``isClaimReadyForBinding``: every binding condition of every allocated device
    is True; raises :class:`BindingFailedError` when a failure condition is True first."""
    status = claim.get("status") or {}
    if not status.get("allocation"):
        return False
    name = (claim.get("metadata") or {}).get("name") or ""
    for result in _results(claim):
        if not result.get("bindingConditions"):
            continue
        device = _device_status(status, result)
        if device is None:
            return False
        conditions = {c.get("type"): c for c in device.get("conditions") or ()}
        for wanted in result.get("bindingFailureConditions") or ():
            failed = conditions.get(wanted)
            if failed is not None and failed.get("status") == "True":
                raise BindingFailedError(
                    f"{ERR_FAILED}: claim={name}, reason={failed.get('reason') or ''},"
                    f" message={_go_quote(failed.get('message') or '')}"
                )
        for wanted in result.get("bindingConditions") or ():
            if (conditions.get(wanted) or {}).get("status") != "True":
                return False
    return True


def timed_out(claim: ResourceClaim, timeout: float, now: datetime) -> bool:
    """Upstream ``isClaimTimeout``: a device with binding conditions was allocated more than
    ``timeout`` seconds before ``now`` (an aware datetime)."""
    allocation = (claim.get("status") or {}).get("allocation") or {}
    stamp = allocation.get("allocationTimestamp")
    if not stamp or not any(r.get("bindingConditions") for r in _results(claim)):
        return False
    return datetime.fromisoformat(str(stamp)) + timedelta(seconds=timeout) < now


def unusable(claim: ResourceClaim, timeout: float, now: datetime) -> bool:
    """Filter's check of an allocated claim: its binding failed, or timed out unready."""
    try:
        return not claim_ready(claim) and timed_out(claim, timeout, now)
    except BindingFailedError:
        return True


def _device_status(
    status: ResourceClaimStatus, result: DeviceRequestAllocationResult
) -> AllocatedDeviceStatus | None:
    for device in status.get("devices") or ():
        if (device.get("driver"), device.get("pool"), device.get("device")) == (
            result.get("driver"),
            result.get("pool"),
            result.get("device"),
        ):
            return device
    return None


def _go_quote(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)


# --- PreBind's wait ------------------------------------------------------------------------


def wait(
    claims: Sequence[ResourceClaim],
    current: Callable[[ResourceClaim], ResourceClaim | None],
    timeout: float,
    *,
    clock: Callable[[], float],
    sleep: Callable[[float], object],
    now: Callable[[], datetime],
    stopped: Callable[[], bool],
) -> str | None:
    """Upstream PreBind's wait for ``claims``' binding conditions: ``None`` once every claim is
    ready, else the error message. ``current(claim)`` is the claim as the informers have it now
    (``None``: gone); ``sleep`` returns early when ``stopped()`` turns True."""
    deadline = clock() + timeout
    while True:
        message = _check(claims, current, timeout, now())
        if message != "":
            return message
        left = deadline - clock()
        if left <= 0:
            return f"{ERR_TIMEOUT}: context deadline exceeded"
        sleep(min(POLL_SECONDS, left))
        if stopped():
            return "context canceled"
        if clock() >= deadline:
            return f"{ERR_TIMEOUT}: context deadline exceeded"


def _check(
    claims: Sequence[ResourceClaim],
    current: Callable[[ResourceClaim], ResourceClaim | None],
    timeout: float,
    now: datetime,
) -> str | None:
    """Upstream ``isPodReadyForBinding``: ``None`` when ready, ``""`` to poll again, else the
    error message."""
    for claim in claims:
        latest = current(claim)
        name = (claim.get("metadata") or {}).get("name") or ""
        if latest is None:
            return f'resourceclaim.resource.k8s.io "{name}" not found'
        try:
            ready = claim_ready(latest)
        except BindingFailedError as err:
            return str(err)
        if not ready:
            if timed_out(latest, timeout, now):
                return f"{ERR_TIMEOUT}: claim={name}"
            return ""
    return None
