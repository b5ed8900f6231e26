"""DeviceTaintRules applied to ResourceSlices, as upstream's ResourceSlice tracker does
(``k8s.io/dynamic-resource-allocation/resourceslice/tracker``, DRADeviceTaintRules, GA and on
in 1.37).

A rule adds its one ``spec.taint`` to every device its ``spec.deviceSelector`` matches, as if
the driver had published the taint in the slice: the allocator then treats a NoSchedule or
NoExecute taint the request does not tolerate as it treats a slice's own. The selector's
``driver``, ``pool`` and ``device`` must each equal the slice's driver, pool name and the
device's name when set; the empty selector matches every device, no selector none (1.37 has no
class or CEL criteria: both were tombstoned in 1.35).

Contract: :func:`patch` never changes its input; it returns the slice itself when no rule
applies, else a copy whose matched devices carry the rules' taints after their own, the rules
taken in name order (upstream's order is its informer's, which taint checks do not depend on).
:func:`slice_updates` gives, for one rule's change, the slices whose devices' taints it
changed, before and after: upstream's tracker reports each as a ResourceSlice update, the event
DynamicResources registers for.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from corral.scheduler.framework.api_types import RawObject


def _selector(rule: RawObject) -> RawObject | None:
    selector: RawObject | None = (rule.get("spec") or {}).get("deviceSelector")
    return selector


def _applies_to_slice(selector: RawObject, slice_spec: RawObject) -> bool:
    driver, pool = selector.get("driver"), selector.get("pool")
    if driver is not None and driver != (slice_spec.get("driver") or ""):
        return False
    return pool is None or pool == ((slice_spec.get("pool") or {}).get("name") or "")


def _by_name(rules: Iterable[RawObject]) -> list[RawObject]:
    return sorted(rules, key=lambda r: str((r.get("metadata") or {}).get("name") or ""))


def patch(slice_: RawObject, rules: Sequence[RawObject]) -> RawObject:
    """``slice_`` with the taints of the ``rules`` (in the given order) that match its devices."""
    spec = slice_.get("spec") or {}
    patched: dict[str, Any] | None = None
    for rule in rules:
        selector, taint = _selector(rule), (rule.get("spec") or {}).get("taint")
        if selector is None or not isinstance(taint, Mapping):
            continue
        if not _applies_to_slice(selector, spec):
            continue
        device_name = selector.get("device")
        for index, device in enumerate(spec.get("devices") or ()):
            if device_name is not None and device_name != (device.get("name") or ""):
                continue
            if patched is None:
                patched = copy.deepcopy(dict(slice_))
            target = patched["spec"]["devices"][index]
            target["taints"] = [*(target.get("taints") or ()), dict(taint)]
    return slice_ if patched is None else patched


def patch_all(slices: Iterable[RawObject], rules: Iterable[RawObject]) -> list[RawObject]:
    """Every slice with the taints of the rules that match it (upstream
    ``ListPatchedResourceSlices``)."""
    ordered = _by_name(rules)
    return [patch(s, ordered) for s in slices] if ordered else list(slices)


def _taints(slice_: RawObject) -> list[list[tuple[Any, ...]]]:
    """Per device, its taints as upstream's ``taintsEqual`` compares them."""
    return [
        [
            (t.get("key"), t.get("effect"), t.get("value") or "", t.get("timeAdded"))
            for t in device.get("taints") or ()
        ]
        for device in (slice_.get("spec") or {}).get("devices") or ()
    ]


def slice_updates(
    slices: Iterable[RawObject],
    rules_before: Iterable[RawObject],
    rules_after: Iterable[RawObject],
    changed: Iterable[RawObject | None],
) -> list[tuple[RawObject, RawObject]]:
    """The slices a rule change re-taints, each as (patched before, patched after).

    ``changed`` are the rule as it was and as it is (``None`` for the side an add or delete
    lacks): only slices their selectors reach are looked at (upstream ``sliceNamesForRule``),
    every slice when one side is a relist's tombstone (metadata only, no ``spec``).
    """
    present = [r for r in changed if r is not None]
    unknown = any("spec" not in r for r in present)
    selectors = [s for s in (_selector(r) for r in present) if s is not None]
    if not selectors and not unknown:
        return []
    before, after = _by_name(rules_before), _by_name(rules_after)
    out = []
    for slice_ in slices:
        spec = slice_.get("spec") or {}
        if not unknown and not any(_applies_to_slice(s, spec) for s in selectors):
            continue
        old, new = patch(slice_, before), patch(slice_, after)
        if _taints(old) != _taints(new):
            out.append((old, new))
    return out
