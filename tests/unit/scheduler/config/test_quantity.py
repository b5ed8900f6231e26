"""Quantity parsing, exact like resource.Quantity's Value()/MilliValue() for these forms."""

from __future__ import annotations

import pytest

from corral.scheduler.config import quantity


@pytest.mark.parametrize(
    ("text", "value", "milli"),
    [
        pytest.param("1", 1, 1000, id="plain"),
        pytest.param("100m", 1, 100, id="milli rounds value up"),
        pytest.param("0.5", 1, 500, id="decimal"),
        pytest.param(".5", 1, 500, id="leading dot"),
        pytest.param("2.", 2, 2000, id="trailing dot"),
        pytest.param("1Ki", 1024, 1024000, id="Ki"),
        pytest.param("500Mi", 500 * 2**20, 500 * 2**20 * 1000, id="Mi"),
        pytest.param("32Gi", 32 * 2**30, 32 * 2**30 * 1000, id="Gi"),
        pytest.param("1.5Gi", 3 * 2**29, 3 * 2**29 * 1000, id="fractional binary"),
        pytest.param("1k", 1000, 10**6, id="k"),
        pytest.param("2M", 2 * 10**6, 2 * 10**9, id="M"),
        pytest.param("1G", 10**9, 10**12, id="G"),
        pytest.param("1P", 10**15, 10**18, id="P is peta"),
        pytest.param("1e3", 1000, 10**6, id="exponent"),
        pytest.param("15E-1", 2, 1500, id="negative exponent"),
        pytest.param("1u", 1, 1, id="micro rounds milli up"),
        pytest.param("999n", 1, 1, id="nano"),
        pytest.param("+3", 3, 3000, id="sign"),
        pytest.param(5, 5, 5000, id="JSON number"),
    ],
)
def test_parse(text: str | int, value: int, milli: int) -> None:
    amount = quantity.parse(text)
    assert quantity.value(amount) == value
    assert quantity.milli_value(amount) == milli


@pytest.mark.parametrize("text", ["", "abc", "1KB", "1 Gi", "1e", "--1", "1.2.3"])
def test_invalid(text: str) -> None:
    with pytest.raises(quantity.QuantityError):
        quantity.parse(text)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        pytest.param("1e999999999", "quantity '1e999999999' is out of range", id="huge exponent"),
        pytest.param("1E-99", "quantity '1E-99' is out of range", id="tiny exponent"),
        pytest.param("9" * 5000, "is too long", id="5000 digits"),
        pytest.param(["1"], "quantity is a list, not a number or a string", id="a list"),
        pytest.param(True, "is not a number", id="a boolean"),
        pytest.param("99999999999999999999Ei", "is out of range", id="beyond int64"),
    ],
)
def test_absurd_quantities_are_refused_at_once(text: object, message: str) -> None:
    with pytest.raises(quantity.QuantityError, match=message):
        quantity.parse(text)  # type: ignore[arg-type]


def test_milli_values_stay_in_int64() -> None:
    assert quantity.value(quantity.parse("1E")) == 10**18  # E is exa, in range as a value
    assert quantity.milli_value(quantity.parse("9P")) == 9 * 10**18
    with pytest.raises(quantity.QuantityError, match="is out of range in thousandths"):
        quantity.milli_value(quantity.parse("10P"))
