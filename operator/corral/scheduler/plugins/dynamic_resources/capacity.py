"""Consumable capacity (DRAConsumableCapacity, beta and on in 1.37): what a request consumes of
a device's capacities, and whether that still fits beside the device's other allocations.

Upstream's ``structured/internal/incubating/consumable_capacity.go`` (the allocator variant the
default gates select) with DRAFractionalCapacityRange off, its default at 1.37 (its on-default
needs ``--min-compatibility-version=1.37``): ranges are computed in integers of
``Quantity.Value()``, which rounds up.

Per capacity of the device, a request consumes (:func:`consumed`):

- nothing requested: the policy's ``default``, else the whole ``value``;
- no ``requestPolicy``: what it requests;
- ``validRange``: below ``min`` rounds up to ``min``; with a ``step``, up to the next
  ``min + n*step``; else what it requests;
- ``validValues``: the first value at least the request, else the request itself.

A device fits a request (:func:`fits`) when it has every capacity the request names, no
consumption violates its policy (over ``max``, off the step, not a valid value), and what other
allocations hold plus what this allocation attempt already took plus this request stays within
each ``value``. A request the range arithmetic cannot represent and a negative consumption are
:class:`CapacityError`: upstream aborts the allocation rather than trying another device.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Final

from corral.scheduler.config import quantity as q
from corral.scheduler.framework.api_types import RawObject

Amounts = Mapping[str, Fraction]  # capacity name → consumed amount
MAX_INT64: Final = 2**63 - 1
NOT_REPRESENTABLE: Final = "capacity request cannot be represented in the device's range arithmetic"
NEGATIVE: Final = "capacity value is negative"

BINARY_SI: Final = "BinarySI"
DECIMAL_SI: Final = "DecimalSI"
DECIMAL_EXPONENT: Final = "DecimalExponent"
_BINARY_SUFFIXES: Final = ("", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei")
_DECIMAL_SUFFIXES: Final = {0: "", 3: "k", 6: "M", 9: "G", 12: "T", 15: "P", 18: "E"}
_SUFFIX: Final = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(.*)\Z")


class CapacityError(Exception):
    """The allocation must stop: the message is upstream's (without the claim prefix)."""


@dataclass(frozen=True, slots=True)
class Consumed:
    """An amount and its text as a claim's ``consumedCapacity`` records it (upstream's form)."""

    amount: Fraction
    text: str


def quantity(raw: Any) -> Consumed:
    text = str(raw if raw is not None else "0")
    try:
        return Consumed(q.exact(text), text)
    except q.QuantityError as err:
        raise CapacityError(str(err)) from err


def consumed(requested: Any, capacity: RawObject) -> Consumed:
    """Upstream ``calculateConsumedCapacity`` (``requested`` None: nothing requested)."""
    policy = capacity.get("requestPolicy")
    if requested is None:
        default = (policy or {}).get("default")
        return quantity(default if default is not None else capacity.get("value"))
    request = quantity(requested)
    if policy is None:
        return request
    valid_range = policy.get("validRange")
    if valid_range is not None and valid_range.get("min") is not None:
        return _round_up_range(request, valid_range)
    valid_values = policy.get("validValues")
    if valid_values is not None:
        for raw in valid_values:
            value = quantity(raw)
            if request.amount <= value.amount:
                return value
    return request


def _round_up_range(request: Consumed, valid_range: RawObject) -> Consumed:
    minimum = quantity(valid_range["min"])
    if request.amount < minimum.amount:
        return minimum
    raw_step = valid_range.get("step")
    if raw_step is None:
        return request
    if request.amount > MAX_INT64:
        raise CapacityError(f"{NOT_REPRESENTABLE}: request {request.text} exceeds MaxInt64")
    step = quantity(raw_step)
    step_value, min_value = q.value(step.amount), q.value(minimum.amount)
    if step_value <= 0:
        return request  # refused by validation; upstream would divide by zero
    added = q.value(request.amount) - min_value
    n = -(-added // step_value)
    if min_value >= 0 and n > (MAX_INT64 - min_value) // step_value:
        raise CapacityError(
            f"{NOT_REPRESENTABLE}: rounding request {request.text} up to the next step"
            " passes MaxInt64"
        )
    rounded = min_value + step_value * n
    return Consumed(Fraction(rounded), canonical(rounded, quantity_format(step.text)))


def violates_policy(value: Consumed, policy: RawObject | None) -> bool:
    """Upstream ``violatesPolicy``. Its short cut for the default compares Quantity structs;
    by value here, which decides the same for every default validation admits."""
    if policy is None:
        return False
    default = policy.get("default")
    if default is not None and value.amount == quantity(default).amount:
        return False
    valid_range = policy.get("validRange")
    if valid_range is not None:
        maximum = valid_range.get("max")
        if maximum is not None and value.amount > quantity(maximum).amount:
            return True
        step = valid_range.get("step")
        if step is not None:
            step_value = q.value(quantity(step).amount)
            min_value = q.value(quantity(valid_range.get("min")).amount)
            off = q.value(value.amount) - min_value
            return step_value != 0 and abs(off) % abs(step_value) != 0
        return False
    valid_values = policy.get("validValues") or ()
    if valid_values:
        return all(value.amount != quantity(v).amount for v in valid_values)
    return False


def for_request(requests: RawObject | None, capacities: RawObject) -> dict[str, Consumed]:
    """What one allocation of a device consumes of each of its capacities (upstream
    ``GetConsumedCapacityFromRequest``); raises :class:`CapacityError`."""
    requests = requests or {}
    out: dict[str, Consumed] = {}
    for name, capacity in capacities.items():
        try:
            value = consumed(requests.get(name), capacity or {})
        except CapacityError as err:
            raise CapacityError(f'capacity "{name}": {err}') from err
        if value.amount < 0:
            raise CapacityError(f'capacity "{name}": {NEGATIVE}')
        out[name] = value
    return out


def fits(
    requests: RawObject | None, capacities: RawObject, in_use: Amounts, allocating: Amounts
) -> bool:
    """Upstream ``CmpRequestOverCapacity``: ``in_use`` is what allocated claims hold of the
    device, ``allocating`` what the current attempt gave other requests. Representability is
    checked for every capacity before any soft mismatch (the outcome must not depend on the
    capacities' order); raises :class:`CapacityError`."""
    if requests and any(name not in capacities for name in requests):
        return False
    wanted = for_request(requests, capacities)
    for name, capacity in capacities.items():
        value = wanted[name]
        if violates_policy(value, (capacity or {}).get("requestPolicy")):
            return False
        total = in_use.get(name, Fraction(0)) + value.amount + allocating.get(name, Fraction(0))
        if total > quantity((capacity or {}).get("value")).amount:
            return False
    return True


def quantity_format(text: str) -> str:
    """The format Go's ParseQuantity gives a quantity string (its suffix decides)."""
    match = _SUFFIX.match(text.strip())
    suffix = match.group(1) if match else ""
    if suffix in _BINARY_SUFFIXES[1:]:
        return BINARY_SI
    if suffix[:1] in ("e", "E") and suffix != "E":
        return DECIMAL_EXPONENT
    return DECIMAL_SI


def canonical(amount: int, fmt: str) -> str:
    """An integer in its canonical form for ``fmt``, as Go's ``Quantity.String()`` writes a
    ``resource.NewQuantity(amount, fmt)`` (BinarySI below 1024 is written as DecimalSI)."""
    if amount == 0:
        return "0"
    sign, rest = ("-" if amount < 0 else ""), abs(amount)
    if fmt == BINARY_SI and rest >= 1024:
        power = 0
        while rest >= 1024 and rest % 1024 == 0 and power < len(_BINARY_SUFFIXES) - 1:
            rest //= 1024
            power += 1
        return f"{sign}{rest}{_BINARY_SUFFIXES[power]}"
    exponent = 0
    while rest >= 10 and rest % 10 == 0:
        rest //= 10
        exponent += 1
    rest *= 10 ** (exponent % 3)
    exponent -= exponent % 3
    if fmt == DECIMAL_EXPONENT:
        return f"{sign}{rest}" + (f"e{exponent}" if exponent else "")
    return f"{sign}{rest}{_DECIMAL_SUFFIXES[exponent]}"
