"""CEL device selectors in Kubernetes' DRA environment: the device variable, quantities,
semver, upstream's error texts, and the compile cache."""

from __future__ import annotations

import pytest

from corral.scheduler.plugins.dynamic_resources import cel

GPU = cel.Device(
    "gpu.example.com",
    attributes={
        "model": {"string": "a100"},
        "cores": {"int": 108},
        "mig": {"bool": True},
        "driverVersion": {"version": "1.2.3"},
        "numa.example.com/node": {"int": 1},
    },
    capacity={"memory": {"value": "80Gi"}},
)


@pytest.mark.parametrize(
    ("expression", "want"),
    [
        pytest.param('device.driver == "gpu.example.com"', True, id="driver"),
        pytest.param('device.attributes["gpu.example.com"].model == "a100"', True, id="string"),
        pytest.param('device.attributes["gpu.example.com"].cores > 100', True, id="int"),
        pytest.param('device.attributes["gpu.example.com"].mig', True, id="bool"),
        pytest.param('device.attributes["numa.example.com"].node == 1', True, id="own domain"),
        pytest.param(
            'device.attributes["gpu.example.com"].model.startsWith("a")', True, id="string function"
        ),
        pytest.param(
            'device.attributes["gpu.example.com"].model.matches("^a[0-9]+$")', True, id="regex"
        ),
        pytest.param('has(device.attributes["gpu.example.com"].model)', True, id="has"),
        pytest.param(
            'has(device.attributes["other.io"].model)', False, id="unknown domain is empty"
        ),
        pytest.param("device.allowMultipleAllocations", False, id="allowMultipleAllocations"),
        pytest.param(
            'device.capacity["gpu.example.com"].memory.compareTo(quantity("40Gi")) > 0',
            True,
            id="quantity compareTo",
        ),
        pytest.param(
            'device.capacity["gpu.example.com"].memory == quantity("81920Mi")',
            True,
            id="quantity equal by value",
        ),
        pytest.param(
            'device.capacity["gpu.example.com"].memory.isLessThan(quantity("1Ti"))',
            True,
            id="quantity isLessThan",
        ),
        pytest.param(
            'device.capacity["gpu.example.com"].memory.add(quantity("48Gi")).isGreaterThan(quantity("127Gi"))',
            True,
            id="quantity add",
        ),
        pytest.param('quantity("1.5").isInteger()', False, id="quantity isInteger"),
        pytest.param('quantity("2k").asInteger() == 2000', True, id="quantity asInteger"),
        pytest.param('isQuantity("1Gi") && !isQuantity("1 Gi")', True, id="isQuantity"),
        pytest.param(
            'device.attributes["gpu.example.com"].driverVersion.isGreaterThan(semver("1.2.0"))',
            True,
            id="semver isGreaterThan",
        ),
        pytest.param(
            'device.attributes["gpu.example.com"].driverVersion == semver("1.2.3")',
            True,
            id="semver equal",
        ),
        pytest.param(
            'semver("1.0.0-alpha").isLessThan(semver("1.0.0"))', True, id="prerelease sorts first"
        ),
        pytest.param(
            'semver("1.0.0-alpha.1").compareTo(semver("1.0.0-alpha.beta")) < 0',
            True,
            id="numeric first",
        ),
        pytest.param('semver("2.3.4").minor() == 3', True, id="semver minor"),
        pytest.param('isSemver("1.2") || !isSemver("1.2.3")', False, id="isSemver"),
    ],
)
def test_selector_matches(expression: str, want: bool) -> None:
    selector = cel.compile_selector(expression)
    assert isinstance(selector, cel.Selector)
    assert selector.matches(cel.activation(GPU)) is want


@pytest.mark.parametrize(
    ("expression", "error"),
    [
        pytest.param(
            'device.attributes["gpu.example.com"].nope == 1',
            "no such key: nope. consider using CEL optional chaining (.? followed by orValue())"
            " or guarding the check with has() for optional fields",
            id="missing attribute",
        ),
        pytest.param("noSuchVar", "undeclared reference to 'noSuchVar'", id="undeclared"),
        pytest.param(
            'device.attributes["gpu.example.com"].cores',
            "CEL result of type IntType could not be converted to bool",
            id="not a bool",
        ),
    ],
)
def test_runtime_errors(expression: str, error: str) -> None:
    selector = cel.compile_selector(expression)
    assert isinstance(selector, cel.Selector)
    with pytest.raises(cel.SelectorError) as raised:
        selector.matches(cel.activation(GPU))
    assert str(raised.value) == error


def test_compile_error_is_a_value_and_cached() -> None:
    broken = cel.compile_selector("device.driver ==")
    assert isinstance(broken, cel.SelectorError)
    assert str(broken).startswith("compilation failed: ")
    assert cel.compile_selector("device.driver ==") is broken
    assert cel.compile_selector('device.driver == "x"') is cel.compile_selector(
        'device.driver == "x"'
    )
