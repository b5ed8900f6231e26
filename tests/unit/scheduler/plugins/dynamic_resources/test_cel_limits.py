"""Bounded work for CEL selectors: length and nesting before parsing, the estimated cost at
compile time, the runtime cost limit and a deadline inside one evaluation; the three ways a
selector runs (interpreter, closures, the fast path) give the same answers and costs; an
existing device is found among 100,000 on the fast path."""

from __future__ import annotations

import re
import time
from typing import Any

import pytest

from corral.scheduler.plugins.dynamic_resources import cel, cel_fast, cel_limits
from corral.scheduler.plugins.dynamic_resources.allocator import (
    AllocationError,
    AllocationTimeoutError,
    Allocator,
)

from .dra_builders import (
    CLAIM0,
    CLASS_A,
    DRIVER_A,
    NODE1,
    POOL1,
    REQ0,
    claim,
    device,
    device_class,
    node,
    request,
    resource_slice,
)

LIST_1000 = "[" + ",".join(str(i) for i in range(1000)) + "]"
LIST_100 = "[" + ",".join(str(i) for i in range(100)) + "]"
# About 600,000 units of cost: under the limit, seconds of work on cel-python.
SLOW = f"{LIST_1000}.all(x, {LIST_100}.exists(y, x == y + 1000))"
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
RECURSION = "compilation failed: ERROR: <input>: expression recursion limit exceeded: 250"


@pytest.mark.parametrize(
    ("expression", "error"),
    [
        pytest.param("(" * 300 + "true" + ")" * 300, RECURSION, id="300 parentheses"),
        pytest.param("[" * 251 + "]" * 251, RECURSION, id="251 nested lists"),
        pytest.param("1" + " + 1" * 300 + " > 0", RECURSION, id="300 additions"),
        pytest.param("!" * 300 + "true", RECURSION, id="300 negations"),
        pytest.param("[1].all(x, " * 260 + "true" + ")" * 260, RECURSION, id="260 nested macros"),
        pytest.param("x" * 10241, "compilation failed: ERROR: <input>: Too long: may not be more "
                     "than 10240 bytes", id="past 10 KiB"),
        pytest.param("!" * 220 + "device" + ".a" * 220 + " * 1" * 220 + " + 1" * 220 + " > 0",
                     "compilation failed: ERROR: <input>: expression nested",
                     id="deeper than the evaluator takes, 250 a rule or less"),
        pytest.param(f"{LIST_1000}.all(x, {LIST_1000}.all(y, x != y || true))",
                     cel_limits.TOO_COMPLEX, id="a million iterations: estimated too complex"),
        pytest.param(f"{LIST_1000}.map(x, {LIST_1000}.filter(y, y > x)).size() > 0",
                     cel_limits.TOO_COMPLEX, id="map of filter"),
    ],
)  # fmt: skip
def test_refused_before_it_runs(expression: str, error: str) -> None:
    start = time.process_time()
    compiled = cel.compile_selector(expression)
    assert isinstance(compiled, cel.SelectorError)
    assert str(compiled).startswith(error)
    assert time.process_time() - start < 10  # refused, not run: a hang or a crash fails too


@pytest.mark.parametrize(
    ("expression", "at_most"),
    [
        pytest.param('device.driver == "gpu.example.com"', 5, id="driver"),
        pytest.param(f"{LIST_1000}.exists(x, x == 999)", 20_000, id="one comprehension"),
        pytest.param(SLOW, cel_limits.MAX_COST, id="nested, under the limit"),
    ],
)
def test_the_estimate_bounds_the_actual_cost(expression: str, at_most: int) -> None:
    estimate = cel.estimated_cost(expression)
    assert estimate <= at_most
    selector = cel.compile_selector(expression)
    assert isinstance(selector, cel.Selector)
    tracker = cel_limits.Tracker()
    selector.evaluate(cel.activation(GPU), tracker)
    assert 0 < tracker.cost <= estimate


@pytest.mark.parametrize("interpret", [pytest.param(False, id="closures"),
                                       pytest.param(True, id="interpreter")])  # fmt: skip
def test_the_runtime_cost_limit_cancels(interpret: bool) -> None:
    selector = cel.compile_selector(f"{LIST_100}.all(x, x >= 0)")
    assert isinstance(selector, cel.Selector)
    tracker = cel_limits.Tracker()
    selector.evaluate(cel.activation(GPU), tracker, interpret=interpret)
    full = tracker.cost
    with pytest.raises(cel.SelectorError, match=f"^{re.escape(cel_limits.COST_EXCEEDED)}$"):
        selector.matches(cel.activation(GPU), cost_limit=full - 1, interpret=interpret)
    assert selector.matches(cel.activation(GPU), cost_limit=full, interpret=interpret)


@pytest.mark.parametrize("interpret", [pytest.param(False, id="closures"),
                                       pytest.param(True, id="interpreter")])  # fmt: skip
def test_the_deadline_holds_inside_one_evaluation(interpret: bool) -> None:
    selector = cel.compile_selector(SLOW)
    assert isinstance(selector, cel.Selector)
    tracker = cel_limits.Tracker(deadline=time.monotonic() - 1)  # already past
    with pytest.raises(cel.SelectorInterruptedError, match=r"^operation interrupted$"):
        selector.evaluate(cel.activation(GPU), tracker, interpret=interpret)
    # Stopped at the first check, not after the ~600,000 units the whole evaluation costs.
    assert tracker.cost <= cel_limits.CHECK_COST + 100


def test_the_allocator_times_out_inside_a_devices_evaluation() -> None:
    """One device and one slow selector: without a deadline inside the evaluation, the search
    would evaluate it to the end and report the device does not match (``None``)."""
    allocator = Allocator(
        {CLASS_A: device_class(CLASS_A, DRIVER_A)},
        [resource_slice("s", NODE1, POOL1, DRIVER_A, device("d0"))],
        set(),
    )
    claims = [claim(CLAIM0, request(REQ0, CLASS_A, 1, SLOW))]
    with pytest.raises(AllocationTimeoutError):
        allocator.allocate(node(), claims, deadline=time.monotonic() + 0.05)


def test_the_runtime_cost_limit_is_a_claim_error() -> None:
    allocator = Allocator(
        {CLASS_A: device_class(CLASS_A, DRIVER_A)},
        [resource_slice("s", NODE1, POOL1, DRIVER_A, device("d0"))],
        set(),
    )
    claims = [claim(CLAIM0, request(REQ0, CLASS_A, 1, f"{LIST_1000}.all(x, {LIST_1000}"
                                    ".all(y, x != y || true))"))]  # fmt: skip
    with pytest.raises(AllocationError, match="selector #0: CEL compile error: too complex"):
        allocator.allocate(node(), claims)


# --- three paths, one answer --------------------------------------------------------------

EXPRESSIONS = [
    'device.driver == "gpu.example.com"',
    'device.driver != "gpu.example.com"',
    'device.attributes["gpu.example.com"].model == "a100"',
    'device.attributes["gpu.example.com"].model < "b"',
    "device.attributes['gpu.example.com'].cores > 100 && device.attributes['numa.example.com']"
    ".node == 1",
    'device.attributes["gpu.example.com"].cores == "108"',  # a type mismatch
    'device.attributes["gpu.example.com"].missing == 1',  # no such key
    'device.attributes["other.io"].x == 1 || true',
    'has(device.attributes["gpu.example.com"].model) && !has(device.attributes["gpu.example.com"]'
    ".nope)",
    'has(device.attributes["gpu.example.com"].driverVersion)',
    'device.attributes["gpu.example.com"].driverVersion.isGreaterThan(semver("1.0.0"))',
    'device.capacity["gpu.example.com"].memory.compareTo(quantity("40Gi")) > 0',
    "device.attributes['gpu.example.com'].mig",
    "[1, 2, 3].map(x, x * 2).filter(y, y > 2).size() == 2",
    "[1, 2, 3].exists_one(x, x == 2) && [1, 2].all(x, x > 0)",
    '{"a": 1}["a"] == 1 ? "yes" == "yes" : false',
    "1 / 0 == 1",
    "device.attributes.gpu.model == 'a100'",
    "9223372036854775807 + 1 > 0",
    "[1, 2].map(x, x / 0).size() == 2",
    "device.driver.startsWith('gpu') && device.driver.contains('example')",
    "'abc' + 'def' == 'abcdef' && 2 in [1, 2, 3]",
    "-device.attributes['gpu.example.com'].cores < 0",
]
DEVICES = [
    GPU,
    cel.Device("gpu.example.com", {"model": {"string": "h100"}, "cores": {"int": 7}}, {}),
    cel.Device("other.io", {}, {}),
]


def _outcome(run: Any) -> tuple[str, Any]:
    try:
        return "value", bool(run())
    except cel.SelectorError as err:
        return type(err).__name__, str(err)


@pytest.mark.parametrize("expression", EXPRESSIONS)
def test_interpreter_closures_and_fast_path_agree(expression: str) -> None:
    selector = cel.compile_selector(expression)
    assert isinstance(selector, cel.Selector), selector
    for dev in DEVICES:
        variables = cel.activation(dev)
        interpreted, compiled = cel_limits.Tracker(), cel_limits.Tracker()
        want = _outcome(lambda v=variables, t=interpreted: selector.evaluate(v, t, interpret=True))
        got = _outcome(lambda v=variables, t=compiled: selector.evaluate(v, t))
        assert got == want, (expression, dev)
        assert compiled.cost == interpreted.cost, (expression, dev)
        if selector.fast is not None:
            view = cel_fast.DeviceView.of(dev.driver, dev.attributes)
            answer = selector.fast.evaluate(view)
            assert answer is None or ("value", answer) == want, (expression, dev)


@pytest.mark.parametrize(
    ("expression", "fast"),
    [
        pytest.param('device.driver == "gpu.example.com"', True, id="driver"),
        pytest.param('device.attributes["a.io"].x == 1 && !(device.driver != "d")', True,
                     id="a conjunction of comparisons"),
        pytest.param('has(device.attributes["a.io"].x)', True, id="has"),
        pytest.param("[1].all(x, x > 0)", False, id="a comprehension is not"),
        pytest.param('device.capacity["a.io"].m.isGreaterThan(quantity("1"))', False,
                     id="a quantity method is not"),
    ],
)  # fmt: skip
def test_the_fast_path_takes_the_common_shape(expression: str, fast: bool) -> None:
    selector = cel.compile_selector(expression)
    assert isinstance(selector, cel.Selector)
    assert (selector.fast is not None) == fast
    assert selector.compiled


def test_an_existing_device_among_100000_is_found_on_the_fast_path() -> None:
    """Upstream's filterTimeout (10 s) passed here with 100,000 devices on cel-python's
    interpreter; each selector of this shape is answered from the device's JSON, so no
    device's CEL variable is built (bench: ``python -m bench.dra_devices``)."""
    per_slice, count = 128, 100_000
    slices = [
        resource_slice(
            f"slice-{s}", NODE1, POOL1, DRIVER_A,
            *(device(f"dev-{i}", attributes={"index": {"int": i}})
              for i in range(s * per_slice, min(count, (s + 1) * per_slice))),
            count=-(-count // per_slice),
        )
        for s in range(-(-count // per_slice))
    ]  # fmt: skip
    allocator = Allocator({CLASS_A: device_class(CLASS_A, DRIVER_A)}, slices, set())
    wanted = f"device.attributes['{DRIVER_A}'].index == {count - 1}"
    found = allocator.allocate(node(), [claim(CLAIM0, request(REQ0, CLASS_A, 1, wanted))])
    assert found is not None
    assert found[0]["devices"]["results"][0]["device"] == f"dev-{count - 1}"
    assert not allocator.variables  # every answer came from the fast path
