"""Kubernetes resource quantities (``resource.Quantity``), exact.

Grammar as upstream: ``<sign><digits>[.<digits>]<suffix>`` where the suffix is binary SI
(``Ki Mi Gi Ti Pi Ei``), decimal SI (``n u m "" k M G T P E``) or a decimal exponent
(``e3``, ``E-2``). Values are exact fractions; ``value`` rounds up to an integer and
``milli_value`` rounds up the value in thousandths, like ``Quantity.Value()``/``MilliValue()``.
"""

from __future__ import annotations

import functools
import math
import re
from fractions import Fraction
from typing import Final

_NUMBER = re.compile(r"([+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+))(.*)\Z")
_EXPONENT = re.compile(r"[eE]([+-]?[0-9]+)\Z")

_SUFFIXES: Final[dict[str, Fraction]] = {
    "Ki": Fraction(2**10),
    "Mi": Fraction(2**20),
    "Gi": Fraction(2**30),
    "Ti": Fraction(2**40),
    "Pi": Fraction(2**50),
    "Ei": Fraction(2**60),
    "n": Fraction(1, 10**9),
    "u": Fraction(1, 10**6),
    "m": Fraction(1, 10**3),
    "": Fraction(1),
    "k": Fraction(10**3),
    "M": Fraction(10**6),
    "G": Fraction(10**9),
    "T": Fraction(10**12),
    "P": Fraction(10**15),
    "E": Fraction(10**18),
}


class QuantityError(ValueError):
    pass


# Bounds that keep parsing linear and amounts sane: upstream keeps quantities within int64 (of
# their unit) too; a number this long or an exponent this large is not a resource amount.
MAX_DIGITS: Final = 64
MAX_EXPONENT: Final = 64


def parse(text: str | int | float) -> Fraction:
    """The exact amount of a quantity string (numbers from JSON are accepted as they are).
    Amounts are kept as int64: larger ones are refused."""
    if not isinstance(text, str | int | float):
        # The value itself is not echoed: it may be any (huge) JSON value.
        raise QuantityError(f"quantity is a {type(text).__name__}, not a number or a string")
    amount = _parse(text)
    if abs(amount) >= 2**63:
        shown = text if not isinstance(text, str) or len(text) <= MAX_DIGITS else text[:MAX_DIGITS]
        raise QuantityError(f"quantity {shown!r} is out of range")
    return amount


@functools.lru_cache(maxsize=8192)
def _parse(text: str | int | float) -> Fraction:
    if isinstance(text, bool):
        raise QuantityError(f"quantity {text!r} is not a number")
    if isinstance(text, int):
        return Fraction(text)
    if isinstance(text, float):
        return Fraction(repr(text))
    if len(text) > 2 * MAX_DIGITS:
        raise QuantityError(f"quantity {text[:MAX_DIGITS]!r}... is too long")
    match = _NUMBER.match(text.strip())
    if not match:
        raise QuantityError(f"quantities must match the regular expression: {text!r}")
    number, suffix = match.groups()
    amount = Fraction(number)
    multiplier = _SUFFIXES.get(suffix)
    if multiplier is not None:
        return amount * multiplier
    exponent = _EXPONENT.match(suffix)
    if exponent is None:
        raise QuantityError(f"unable to parse quantity's suffix: {text!r}")
    if abs(int(exponent.group(1))) > MAX_EXPONENT:
        raise QuantityError(f"quantity {text!r} is out of range")
    return amount * Fraction(10) ** int(exponent.group(1))


def value(amount: Fraction) -> int:
    """Rounded up to an integer (``Quantity.Value()``)."""
    return math.ceil(amount)


def milli_value(amount: Fraction) -> int:
    """Thousandths, rounded up (``Quantity.MilliValue()``); cpu is kept in these, as int64."""
    milli = math.ceil(amount * 1000)
    if abs(milli) >= 2**63:
        raise QuantityError(f"quantity {float(amount):g} is out of range in thousandths")
    return milli


def exact(text: str | int | float) -> Fraction:
    """The exact amount without :func:`parse`'s int64 bound: DRA device capacities and
    capacity requests may pass it, and upstream compares them exactly."""
    if not isinstance(text, str | int | float):
        raise QuantityError(f"quantity is a {type(text).__name__}, not a number or a string")
    return _parse(text)
