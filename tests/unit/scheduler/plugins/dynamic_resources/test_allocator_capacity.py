"""Consumable capacity in the allocator: upstream's allocator test cases for it
(structured/internal/allocatortesting, same names as ids), then Corral's own."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import pytest

from corral.scheduler.plugins.dynamic_resources.allocator import (
    AllocationError,
    Allocator,
)
from corral.scheduler.plugins.dynamic_resources.pools import DeviceID

from .dra_builders import (
    CLAIM0,
    CLAIM1,
    CLASS_A,
    DRIVER_A,
    NODE1,
    POOL1,
    REQ0,
    REQ1,
    Json,
    all_request,
    allocation,
    claim,
    device,
    device_class,
    first_available,
    local,
    node,
    request,
    resource_slice,
    result,
    sub_request,
)

CAP0, CAP1 = "capacity-0", "capacity-1"
DEV1, DEV2, DEV3 = "device-1", "device-2", "device-3"
STRING = f"{DRIVER_A}/stringAttribute"
SHARE = "<share-id>"  # every result's shareID is a fresh UUID: compared by presence


def multi_class(name: str = CLASS_A, multi: bool = True) -> Json:
    expression = (
        f'device.driver == "{DRIVER_A}" && device.allowMultipleAllocations == {str(multi).lower()}'
    )
    return device_class(name, DRIVER_A, selectors=(expression,))


def shared(name: str, capacity: dict[str, Any] | None = None, **extra: Any) -> Json:
    """A device with ``allowMultipleAllocations``; ``capacity`` values are quantities or full
    DeviceCapacity objects."""
    out = device(name, allowMultipleAllocations=True, **extra)
    if capacity:
        out["capacity"] = {
            k: v if isinstance(v, dict) else {"value": v} for k, v in capacity.items()
        }
    return out


def ranged(value: str) -> Json:
    """Upstream's withCapacityRequestPolicyRange: default 2, min 2, step 2, max 4."""
    policy = {"default": "2", "validRange": {"min": "2", "step": "2", "max": "4"}}
    return {"value": value, "requestPolicy": policy}


def valid_values(value: str, default: str, *more: str) -> Json:
    return {"value": value, "requestPolicy": {"default": default, "validValues": [default, *more]}}


def wants(amount: str, name: str = CAP0) -> Json:
    return {"capacity": {"requests": {name: amount}}}


def share(req: str, dev: str, consumed: dict[str, str] | None = None) -> Json:
    out = result(req, DRIVER_A, POOL1, dev, shareID=SHARE)
    if consumed:
        out["consumedCapacity"] = consumed
    return out


def slice_of(*devices: Json, **spec: Any) -> Json:
    return resource_slice("slice-1", NODE1, POOL1, DRIVER_A, *devices, **spec)


def on_node1(*results: Json) -> Json:
    return allocation(local(NODE1), *results)


@dataclass
class Case:
    claims: list[Json]
    slices: list[Json] = field(default_factory=list)
    classes: list[Json] = field(default_factory=lambda: [multi_class()])
    allocated: tuple[DeviceID, ...] = ()
    shared: dict[DeviceID, dict[str, Fraction]] = field(default_factory=dict)
    error: str = ""


D1 = DeviceID(DRIVER_A, POOL1, DEV1)
PLAIN_CLASS = [device_class(CLASS_A, DRIVER_A)]
MODE_B = f'device.attributes["{DRIVER_A}"].mode == "b"'
STRING_IS = f'device.attributes["{DRIVER_A}"].stringAttribute == "{{}}"'
MEMORY_AT_LEAST = f'device.capacity["{DRIVER_A}"].memory.compareTo(quantity("{{}}")) >= 0'


def kind(value: str) -> str:
    return f'device.attributes["{DRIVER_A}"].kind == "{value}"'


def attrs(**values: str) -> Json:
    return {k: {"string": v} for k, v in values.items()}


def uses_memory(amount: str) -> Json:
    return {"counterSet": "counter-set-1", "counters": {"memory": {"value": amount}}}


USES_C = {"counterSet": "counter-set-1", "counters": {"c": {"value": "1"}}}
COUNTERS_C = resource_slice(
    "slice-2",
    NODE1,
    POOL1,
    DRIVER_A,
    count=2,
    sharedCounters=[{"name": "counter-set-1", "counters": {"c": {"value": "1"}}}],
)

CASES = [
    pytest.param(
        Case(
            [claim(CLAIM0, request(REQ0, CLASS_A, 1, **wants("1")))],
            [slice_of(shared(DEV1, {CAP1: "1"}))],
        ),
        None,
        id="consumable-capacity-multi-allocatable-device-with-missing-capacity-request",
    ),
    pytest.param(
        Case(
            [claim(CLAIM0, all_request(REQ0, CLASS_A, **wants("1")))],
            [slice_of(shared(DEV1, {CAP1: "1"}))],
        ),
        None,
        id="consumable-capacity-multi-allocatable-device-allocation-mode-all-with-missing-capacity-request",
    ),
    pytest.param(
        Case(
            [claim(CLAIM0, request(REQ0, CLASS_A)), claim(CLAIM1, request(REQ0, CLASS_A))],
            [slice_of(shared(DEV1))],
        ),
        [on_node1(share(REQ0, DEV1)), on_node1(share(REQ0, DEV1))],
        id="consumable-capacity-multi-allocatable-device-without-capacity-without-capacity-request",
    ),
    pytest.param(
        Case(
            [claim(CLAIM0, request(REQ0, CLASS_A)), claim(CLAIM1, request(REQ0, CLASS_A))],
            [slice_of(shared(DEV1, {CAP0: "1"}), shared(DEV2, {CAP0: "1"}))],
        ),
        [on_node1(share(REQ0, DEV1, {CAP0: "1"})), on_node1(share(REQ0, DEV2, {CAP0: "1"}))],
        id="consumable-capacity-multi-allocatable-device-without-policy-without-capacity-request",
    ),
    pytest.param(
        Case(
            [claim(CLAIM0, request(REQ0, CLASS_A)), claim(CLAIM1, request(REQ0, CLASS_A))],
            [slice_of(shared(DEV1, {CAP0: "2"}))],
        ),
        None,
        id="consumable-capacity-multi-allocatable-device-without-policy-without-capacity-request-block",
    ),
    pytest.param(
        Case(
            [
                claim(CLAIM0, request(REQ0, CLASS_A, 1, **wants("1"))),
                claim(CLAIM1, request(REQ0, CLASS_A, 1, **wants("1"))),
            ],
            [slice_of(shared(DEV1, {CAP0: "2"}))],
        ),
        [on_node1(share(REQ0, DEV1, {CAP0: "1"})), on_node1(share(REQ0, DEV1, {CAP0: "1"}))],
        id="consumable-capacity-multi-allocatable-device-without-policy-with-capacity-request",
    ),
    pytest.param(
        Case(
            [claim(CLAIM0, request(REQ0, CLASS_A)), claim(CLAIM1, request(REQ0, CLASS_A))],
            [slice_of(shared(DEV1, {CAP0: ranged("4")}))],
        ),
        [on_node1(share(REQ0, DEV1, {CAP0: "2"})), on_node1(share(REQ0, DEV1, {CAP0: "2"}))],
        id="consumable-capacity-multi-allocatable-device-with-policy-without-capacity-request",
    ),
    pytest.param(
        Case(
            [claim(CLAIM0, request(REQ0, CLASS_A)), claim(CLAIM1, request(REQ0, CLASS_A))],
            [slice_of(shared(DEV1, {CAP0: valid_values("1", "0")}))],
        ),
        [on_node1(share(REQ0, DEV1, {CAP0: "0"})), on_node1(share(REQ0, DEV1, {CAP0: "0"}))],
        id="consumable-capacity-multi-allocatable-device-with-zero-request-policy",
    ),
    pytest.param(
        Case(
            [claim(CLAIM0, request(REQ0, CLASS_A, 1, **wants("1")))],
            [slice_of(shared(DEV1, {CAP0: valid_values("1", "0")}))],
        ),
        None,
        id="consumable-capacity-multi-allocatable-device-violates-zero-request-policy",
    ),
    pytest.param(
        Case(
            [
                claim(CLAIM0, request(REQ0, CLASS_A, 1, **wants("1"))),
                claim(CLAIM1, request(REQ0, CLASS_A, 1, **wants("1"))),
            ],
            [slice_of(shared(DEV1, {CAP0: ranged("4")}))],
        ),
        [on_node1(share(REQ0, DEV1, {CAP0: "2"})), on_node1(share(REQ0, DEV1, {CAP0: "2"}))],
        id="consumable-capacity-multi-allocatable-device-with-range-policy-with-capacity-request",
    ),
    pytest.param(
        Case(
            [claim(CLAIM0, request(REQ0, CLASS_A, 1, **wants("3")))],
            [slice_of(shared(DEV1, {CAP0: ranged("4")}))],
        ),
        [on_node1(share(REQ0, DEV1, {CAP0: "4"}))],
        id="consumable-capacity-multi-allocatable-device-with-range-policy-step",
    ),
    pytest.param(
        Case(
            [claim(CLAIM0, request(REQ0, CLASS_A, 1, **wants("18446744073709551616")))],
            [slice_of(shared(DEV1, {CAP0: ranged("4")}))],
            error="cannot be represented",
        ),
        None,
        id="consumable-capacity-range-policy-request-above-int64-rejected",
    ),
    pytest.param(
        Case(
            [claim(CLAIM0, request(REQ0, CLASS_A, 1, **wants("9223372036854775807")))],
            [slice_of(shared(DEV1, {CAP0: ranged("4")}))],
            error="cannot be represented",
        ),
        None,
        id="consumable-capacity-range-policy-rounded-value-overflow-rejected",
    ),
    pytest.param(
        Case(
            [claim(CLAIM0, request(REQ0, CLASS_A, 1, **wants("18446744073709551616")))],
            [
                slice_of(
                    shared(DEV1, {CAP0: ranged("4")}),
                    shared(DEV2, {CAP0: "36893488147419103232"}),
                )
            ],
            error="cannot be represented",
        ),
        None,
        id="consumable-capacity-range-policy-overflow-aborts-not-skip",
    ),
    pytest.param(
        Case(
            [claim(CLAIM0, all_request(REQ0, CLASS_A, **wants("18446744073709551616")))],
            [slice_of(shared(DEV1, {CAP0: ranged("4")}))],
            error="cannot be represented",
        ),
        None,
        id="consumable-capacity-range-policy-allocation-mode-all-overflow-aborts",
    ),
    pytest.param(
        Case(
            [claim(CLAIM0, request(REQ0, CLASS_A, 1, **wants("-5")))],
            [slice_of(shared(DEV1, {CAP0: "10"}))],
            error="negative",
        ),
        None,
        id="consumable-capacity-negative-request-aborts",
    ),
    pytest.param(
        Case(
            [claim(CLAIM0, request(REQ0, CLASS_A, 1, **wants("2")))],
            [slice_of(shared(DEV1, {CAP0: valid_values("4", "1", "2")}))],
        ),
        [on_node1(share(REQ0, DEV1, {CAP0: "2"}))],
        id="consumable-capacity-multi-allocatable-device-with-valid-values-policy",
    ),
    pytest.param(
        Case(
            [claim(CLAIM0, request(REQ0, CLASS_A, 1, **wants("2")))],
            [slice_of(shared(DEV1, {CAP0: valid_values("3", "1", "3")}))],
        ),
        [on_node1(share(REQ0, DEV1, {CAP0: "3"}))],
        id="consumable-capacity-multi-allocatable-device-with-valid-values-policy-round-up",
    ),
    pytest.param(
        Case(
            [
                claim(CLAIM0, request(REQ0, CLASS_A, 1, **wants("1"))),
                claim(CLAIM1, request(REQ0, CLASS_A, 1, **wants("2"))),
            ],
            [slice_of(shared(DEV1, {CAP0: ranged("2")}))],
        ),
        None,
        id="consumable-capacity-multi-allocatable-device-with-exceeded-consumable-capacity-request",
    ),
    pytest.param(
        Case(
            [claim(CLAIM0, request(REQ0, CLASS_A, 1, **wants("6")))],
            [slice_of(shared(DEV1, {CAP0: ranged("10")}))],
        ),
        None,
        id="consumable-capacity-multi-allocatable-device-with-request-over-max-sharing-policy",
    ),
    pytest.param(
        Case(
            [claim(CLAIM0, request(REQ0, CLASS_A, 1, **wants("2")))],
            [slice_of(shared(DEV1, {CAP0: ranged("4")}))],
            shared={D1: {CAP0: Fraction(2)}},
        ),
        [on_node1(share(REQ0, DEV1, {CAP0: "2"}))],
        id="consumable-capacity-multi-allocatable-device-with-allocated-capacity-use-remaining",
    ),
    pytest.param(
        Case(
            [claim(CLAIM0, request(REQ0, CLASS_A, 1, **wants("2")))],
            [slice_of(shared(DEV1, {CAP0: ranged("2")}), shared(DEV2, {CAP0: ranged("2")}))],
            shared={D1: {CAP0: Fraction(2)}},
        ),
        [on_node1(share(REQ0, DEV2, {CAP0: "2"}))],
        id="consumable-capacity-multi-allocatable-device-with-allocated-capacity-next-device",
    ),
    pytest.param(
        Case(
            [
                claim(
                    CLAIM0,
                    request(REQ0, CLASS_A, 1, **wants("2")),
                    request(REQ1, CLASS_A, 1, **wants("2")),
                    constraints=[{"matchAttribute": STRING}],
                ),
                claim(CLAIM1, request(REQ0, CLASS_A, 1, **wants("2"))),
            ],
            [
                slice_of(
                    shared(
                        DEV2,
                        {CAP0: ranged("2")},
                        attributes={"stringAttribute": {"string": "stringAttributeValue1"}},
                    ),
                    shared(
                        DEV1,
                        {CAP0: ranged("4")},
                        attributes={"stringAttribute": {"string": "stringAttributeValue2"}},
                    ),
                )
            ],
            classes=PLAIN_CLASS,
        ),
        [
            on_node1(share(REQ0, DEV1, {CAP0: "2"}), share(REQ1, DEV1, {CAP0: "2"})),
            on_node1(share(REQ0, DEV2, {CAP0: "2"})),
        ],
        id="consumable-capacity-with-multi-allocatable-device-backtrack",
    ),
    pytest.param(
        Case(
            [
                claim(
                    CLAIM0,
                    first_available(
                        REQ0,
                        sub_request("subReq-0", CLASS_A, 1, capacity={"requests": {CAP0: "4"}}),
                        sub_request("subReq-1", CLASS_A, 1, capacity={"requests": {CAP0: "2"}}),
                        sub_request("subReq-1", CLASS_A, 1),
                    ),
                )
            ],
            [slice_of(shared(DEV1, {CAP0: ranged("2")}))],
        ),
        [on_node1(share(f"{REQ0}/subReq-1", DEV1, {CAP0: "2"}))],
        id="consumable-capacity-multi-allocatable-device-with-subrequest",
    ),
    pytest.param(
        Case(
            [claim(CLAIM0, request(REQ0, CLASS_A, 1, **wants("2")))],
            [slice_of(shared(DEV1, {CAP0: ranged("2")}))],
            shared={D1: {CAP0: Fraction(2)}},
        ),
        None,
        id="consumable-capacity-multi-allocatable-device-with-no-available-consumable-capacity",
    ),
    pytest.param(
        Case(
            [claim(CLAIM0, all_request(REQ0, CLASS_A, **wants("2")))],
            [slice_of(shared(DEV1, {CAP0: "2"}), shared(DEV2))],
        ),
        [on_node1(share(REQ0, DEV1, {CAP0: "2"}))],
        id="consumable-capacity-multi-allocatable-device-allocation-mode-all-filter-out-no-capacity",
    ),
    pytest.param(
        Case(
            [claim(CLAIM0, all_request(REQ0, CLASS_A, **wants("2")))],
            [slice_of(shared(DEV1, {CAP0: "2"}), shared(DEV2, {CAP0: "1"}))],
        ),
        [on_node1(share(REQ0, DEV1, {CAP0: "2"}))],
        id="consumable-capacity-multi-allocatable-device-allocation-mode-all-filter-out-insufficient-capacity",
    ),
    pytest.param(
        Case(
            [
                claim(
                    CLAIM0,
                    request(REQ0, CLASS_A, 1, **wants("1")),
                    all_request(REQ1, CLASS_A, **wants("1")),
                )
            ],
            [slice_of(shared(DEV1, {CAP0: "2"}), shared(DEV2, {CAP0: "1"}))],
            classes=PLAIN_CLASS,
        ),
        [
            on_node1(
                share(REQ0, DEV1, {CAP0: "1"}),
                share(REQ1, DEV1, {CAP0: "1"}),
                share(REQ1, DEV2, {CAP0: "1"}),
            )
        ],
        id="consumable-capacity-multi-allocatable-device-allocation-mode-all-allocating-sufficient",
    ),
    pytest.param(
        Case(
            [claim(CLAIM0, all_request(REQ0, CLASS_A, **wants("1")))],
            [slice_of(shared(DEV1, {CAP0: "2"}), shared(DEV2, {CAP0: "1"}))],
            classes=PLAIN_CLASS,
            shared={D1: {CAP0: Fraction(1)}},
        ),
        [on_node1(share(REQ0, DEV1, {CAP0: "1"}), share(REQ0, DEV2, {CAP0: "1"}))],
        id="consumable-capacity-multi-allocatable-device-allocation-mode-all-in-use-sufficient",
    ),
    pytest.param(
        Case(
            [
                claim(
                    CLAIM0,
                    request(REQ0, CLASS_A, 1, **wants("1")),
                    all_request(REQ1, CLASS_A, **wants("1")),
                )
            ],
            [slice_of(shared(DEV1, {CAP0: "1"}), shared(DEV2, {CAP0: "1"}))],
            classes=PLAIN_CLASS,
        ),
        None,
        id="consumable-capacity-multi-allocatable-device-allocation-mode-all-allocating-insufficient",
    ),
    pytest.param(
        Case(
            [claim(CLAIM0, all_request(REQ0, CLASS_A, **wants("1")))],
            [slice_of(shared(DEV1, {CAP0: "1"}), shared(DEV2, {CAP0: "1"}))],
            classes=PLAIN_CLASS,
            shared={D1: {CAP0: Fraction(1)}},
        ),
        None,
        id="consumable-capacity-multi-allocatable-device-allocation-mode-all-in-use-insufficient",
    ),
    pytest.param(
        Case(
            [claim(CLAIM0, request(REQ0, CLASS_A, 1, **wants("1")))],
            [slice_of(device(DEV1, {CAP0: "1"}))],
            classes=[multi_class(multi=False)],
        ),
        [on_node1(result(REQ0, DRIVER_A, POOL1, DEV1))],
        id="consumable-capacity-dedicated-device-with-consumable-capacity-request",
    ),
    pytest.param(
        Case(
            [
                claim(CLAIM0, request(REQ0, CLASS_A, 1, **wants("1"))),
                claim(CLAIM1, request(REQ0, CLASS_A, 1, **wants("1"))),
            ],
            [slice_of({"name": DEV1, "capacity": {CAP0: ranged("2")}})],
            classes=[multi_class(multi=False)],
        ),
        None,
        id="consumable-capacity-dedicated-device-with-multiple-consumable-capacity-request",
    ),
    pytest.param(
        Case(
            [
                claim(
                    CLAIM0,
                    request(REQ0, CLASS_A, 1, **wants("2")),
                    request(REQ1, CLASS_A, 1, **wants("1000000000000000000000")),
                )
            ],
            [
                slice_of(
                    shared(
                        DEV1,
                        {
                            CAP0: {
                                "value": "1000000000000000000002",
                                "requestPolicy": {
                                    "default": "1000000000000000000000",
                                    "validRange": {"min": "2"},
                                },
                            }
                        },
                    )
                )
            ],
            classes=PLAIN_CLASS,
        ),
        [
            on_node1(
                share(REQ0, DEV1, {CAP0: "2"}),
                share(REQ1, DEV1, {CAP0: "1000000000000000000000"}),
            )
        ],
        id="consumable-capacity-requests-are-not-modified",
    ),
    pytest.param(
        Case(
            [claim(CLAIM0, request(REQ0, CLASS_A, 1, **wants("1")))],
            [slice_of(shared(DEV1, {CAP0: "1"}))],
            classes=[multi_class(multi=False)],
        ),
        None,
        id="allow-multiple-allocations-exclude-multi-allocatable-device-by-class-selector",
    ),
    pytest.param(
        Case(
            [claim(CLAIM0, request(REQ0, CLASS_A, 1, **wants("1")))],
            [slice_of(shared(DEV1, {CAP0: ranged("2")}))],
            allocated=(D1,),
        ),
        None,
        id="allow-multiple-allocations-not-allocate-multi-allocatable-device-which-already-dedicated",
    ),
    pytest.param(
        Case(
            [claim(CLAIM0, request(REQ0, CLASS_A, 1, **wants("1")))],
            [slice_of({"name": DEV1, "capacity": {CAP0: ranged("2")}})],
            shared={D1: {CAP0: Fraction(1)}},
        ),
        None,
        id="allow-multiple-allocations-not-allocate-dedicated-device-which-change-from-multi-allocatable",
    ),
    pytest.param(
        Case(
            [claim(CLAIM0, request(REQ0, CLASS_A, 1, MODE_B, **wants("1", "c")))],
            [
                slice_of(
                    shared(
                        DEV1,
                        {"c": "1"},
                        attributes={"mode": {"string": "a"}},
                        consumesCounters=[USES_C],
                    ),
                    shared(
                        DEV2,
                        {"c": "1"},
                        attributes={"mode": {"string": "b"}},
                        consumesCounters=[USES_C],
                    ),
                    count=2,
                ),
                COUNTERS_C,
            ],
            shared={D1: {"c": Fraction(1)}},
        ),
        None,
        id="allow-multiple-allocations-with-shared-device-counter-cross-cycle",
    ),
    pytest.param(
        Case(
            [claim(CLAIM0, request(REQ0, CLASS_A))],
            [
                slice_of(
                    shared(DEV1, consumesCounters=[USES_C]),
                    count=2,
                ),
                COUNTERS_C,
            ],
            classes=PLAIN_CLASS,
            shared={D1: {}},
        ),
        [on_node1(share(REQ0, DEV1))],
        id="partitionable-consumable-capacity-shared-device-counter-not-recharged",
    ),
    pytest.param(
        Case(
            [
                claim(
                    CLAIM0,
                    request(REQ0, CLASS_A, 1, **wants("1")),
                    request(REQ1, CLASS_A, 1, **wants("1")),
                    constraints=[{"distinctAttribute": STRING}],
                )
            ],
            [
                slice_of(
                    shared(
                        DEV1,
                        {CAP0: ranged("2")},
                        attributes={"stringAttribute": {"string": "stringAttributeValue"}},
                    )
                )
            ],
        ),
        None,
        id="distinct-constraint-one-multi-allocatable-device-with-distinct-constraint",
    ),
    pytest.param(
        Case(
            [
                claim(
                    CLAIM0,
                    request(REQ0, CLASS_A, 1, kind("shared")),
                    request(REQ1, CLASS_A, 1, kind("counteronly")),
                )
            ],
            [
                slice_of(
                    shared(DEV1, attributes=attrs(kind="shared"), consumesCounters=[USES_C]),
                    device(DEV2, attributes=attrs(kind="shared")),
                    device(DEV3, attributes=attrs(kind="counteronly"), consumesCounters=[USES_C]),
                    count=2,
                ),
                COUNTERS_C,
            ],
            classes=PLAIN_CLASS,
        ),
        [on_node1(result(REQ0, DRIVER_A, POOL1, DEV2), result(REQ1, DRIVER_A, POOL1, DEV3))],
        id="partitionable-consumable-capacity-backtrack-releases-counter",
    ),
    pytest.param(
        Case(
            [
                claim(CLAIM0, request(REQ0, CLASS_A, 1, STRING_IS.format("cap"), **wants("2"))),
                claim(
                    CLAIM1,
                    first_available(
                        REQ0,
                        sub_request(
                            "subReq-0",
                            CLASS_A,
                            1,
                            STRING_IS.format("cap"),
                            allocationMode="All",
                            capacity={"requests": {CAP0: "2"}},
                        ),
                        sub_request("subReq-1", CLASS_A, 1, STRING_IS.format("fb")),
                    ),
                    constraints=[{"matchAttribute": STRING}],
                ),
            ],
            [
                slice_of(
                    shared(DEV1, {CAP0: "2"}, attributes=attrs(stringAttribute="cap")),
                    device(DEV2, attributes=attrs(stringAttribute="fb")),
                )
            ],
            classes=PLAIN_CLASS,
        ),
        [
            on_node1(share(REQ0, DEV1, {CAP0: "2"})),
            on_node1(result(f"{REQ0}/subReq-1", DRIVER_A, POOL1, DEV2)),
        ],
        id="consumable-capacity-rejection-rolls-back-constraints",
    ),
    pytest.param(
        Case(
            [
                claim(CLAIM0, request(REQ0, CLASS_A, 1, kind("shared"))),
                claim(
                    CLAIM1,
                    request(REQ1, CLASS_A, 1, f"{kind('shared')} || {kind('fallback')}"),
                    request("req-2", CLASS_A, 1, kind("gate")),
                    request("req-3", CLASS_A, 1, kind("shared")),
                    constraints=[{"matchAttribute": STRING, "requests": [REQ1, "req-2"]}],
                ),
            ],
            [
                slice_of(
                    shared(
                        DEV1,
                        attributes=attrs(kind="shared", stringAttribute="red"),
                        consumesCounters=[USES_C],
                    ),
                    device(DEV2, attributes=attrs(kind="fallback", stringAttribute="blue")),
                    device(DEV3, attributes=attrs(kind="gate", stringAttribute="blue")),
                    count=2,
                ),
                COUNTERS_C,
            ],
            classes=PLAIN_CLASS,
        ),
        [
            on_node1(share(REQ0, DEV1)),
            on_node1(
                result(REQ1, DRIVER_A, POOL1, DEV2),
                result("req-2", DRIVER_A, POOL1, DEV3),
                share("req-3", DEV1),
            ),
        ],
        id="partitionable-empty-capacity-multiple-share-backtrack-keeps-counter-ownership",
    ),
    pytest.param(
        Case(
            [
                claim(
                    CLAIM0,
                    request(REQ0, CLASS_A),
                    first_available(
                        REQ1,
                        sub_request("subReq-0", CLASS_A, 1, MEMORY_AT_LEAST.format("6Gi")),
                        sub_request("subReq-1", CLASS_A, 1, MEMORY_AT_LEAST.format("4Gi")),
                    ),
                )
            ],
            [
                slice_of(
                    shared(DEV1, {"memory": "4Gi"}, consumesCounters=[uses_memory("4Gi")]),
                    shared(DEV2, {"memory": "6Gi"}, consumesCounters=[uses_memory("6Gi")]),
                    shared(DEV3, {"memory": "4Gi"}, consumesCounters=[uses_memory("4Gi")]),
                    count=2,
                ),
                resource_slice(
                    "slice-2",
                    NODE1,
                    POOL1,
                    DRIVER_A,
                    count=2,
                    sharedCounters=[
                        {"name": "counter-set-1", "counters": {"memory": {"value": "8Gi"}}}
                    ],
                ),
            ],
        ),
        [
            on_node1(
                share(REQ0, DEV1, {"memory": "4Gi"}),
                share(f"{REQ1}/subReq-1", DEV3, {"memory": "4Gi"}),
            )
        ],
        id="allow-multiple-allocations-with-partitionable-device",
    ),
    pytest.param(
        Case(
            [
                claim(
                    CLAIM0,
                    request(REQ0, CLASS_A, 1, **wants("2")),
                    request(REQ1, CLASS_A, 1, **wants("2")),
                    constraints=[{"distinctAttribute": STRING}],
                )
            ],
            [
                slice_of(
                    shared(
                        DEV1,
                        {CAP0: ranged("4")},
                        attributes=attrs(stringAttribute="stringAttributeValue1"),
                    ),
                    count=2,
                ),
                resource_slice(
                    "slice-2",
                    NODE1,
                    POOL1,
                    DRIVER_A,
                    shared(
                        DEV2,
                        {CAP0: ranged("4")},
                        attributes=attrs(stringAttribute="stringAttributeValue2"),
                    ),
                    count=2,
                ),
            ],
        ),
        [on_node1(share(REQ0, DEV1, {CAP0: "2"}), share(REQ1, DEV2, {CAP0: "2"}))],
        id="distinct-constraint-two-multi-allocatable-devices-with-distinct-constraint",
    ),
    pytest.param(
        Case(
            [claim(CLAIM0, request(REQ0, CLASS_A, 1, **wants("200m")))],
            [
                slice_of(
                    shared(
                        DEV1,
                        {
                            CAP0: {
                                "value": "1",
                                "requestPolicy": {
                                    "default": "200m",
                                    "validRange": {"min": "200m", "step": "100m", "max": "1"},
                                },
                            }
                        },
                    )
                )
            ],
        ),
        [on_node1(share(REQ0, DEV1, {CAP0: "1"}))],
        id="consumable-capacity-fractional-range-gate-disabled",
    ),
    # Corral's own: two requests of one claim share a device until its capacity is used up.
    pytest.param(
        Case(
            [
                claim(
                    CLAIM0,
                    request(REQ0, CLASS_A, 1, **wants("1Gi", "memory")),
                    request(REQ1, CLASS_A, 1, **wants("1Gi", "memory")),
                )
            ],
            [slice_of(shared(DEV1, {"memory": "2Gi"}))],
        ),
        [
            on_node1(
                share(REQ0, DEV1, {"memory": "1Gi"}),
                share(REQ1, DEV1, {"memory": "1Gi"}),
            )
        ],
        id="two-requests-share-one-device",
    ),
    # A step in Gi: the rounded amount is written in the step's format, as upstream.
    pytest.param(
        Case(
            [claim(CLAIM0, request(REQ0, CLASS_A, 1, **wants("1500Mi", "memory")))],
            [
                slice_of(
                    shared(
                        DEV1,
                        {
                            "memory": {
                                "value": "8Gi",
                                "requestPolicy": {
                                    "default": "1Gi",
                                    "validRange": {"min": "1Gi", "step": "1Gi"},
                                },
                            }
                        },
                    )
                )
            ],
        ),
        [on_node1(share(REQ0, DEV1, {"memory": "2Gi"}))],
        id="step-rounds-up-in-the-step-format",
    ),
    # A capacity request names a capacity the device lacks: not this device.
    pytest.param(
        Case(
            [claim(CLAIM0, request(REQ0, CLASS_A, 1, **wants("1", "memory")))],
            [slice_of(device(DEV1, {CAP0: "4"}), shared(DEV2, {"memory": "4"}))],
            classes=PLAIN_CLASS,
        ),
        [on_node1(share(REQ0, DEV2, {"memory": "1"}))],
        id="dedicated-device-without-the-requested-capacity-is-skipped",
    ),
]


def _normalized(allocations: Sequence[Mapping[str, Any]] | None) -> Any:
    if allocations is None:
        return None
    out = []
    for given in allocations:
        results = []
        for r in given["devices"]["results"]:
            entry = dict(r)
            if "shareID" in entry:
                assert len(entry["shareID"]) == 36, entry["shareID"]
                entry["shareID"] = SHARE
            results.append(entry)
        out.append({**given, "devices": {**given["devices"], "results": results}})
    return out


@pytest.mark.parametrize(("case", "want"), CASES)
def test_allocate_with_consumable_capacity(case: Case, want: list[Json] | None) -> None:
    allocator = Allocator(
        {c["metadata"]["name"]: c for c in case.classes},
        case.slices,
        set(case.allocated),
        shared=case.shared,
    )
    if case.error:
        with pytest.raises(AllocationError) as raised:
            allocator.allocate(node(), case.claims)
        assert case.error in str(raised.value)
        return
    assert _normalized(allocator.allocate(node(), case.claims)) == want


def test_share_ids_are_distinct() -> None:
    claims = [claim(CLAIM0, request(REQ0, CLASS_A)), claim(CLAIM1, request(REQ0, CLASS_A))]
    got = Allocator({CLASS_A: multi_class()}, [slice_of(shared(DEV1))], set()).allocate(
        node(), claims
    )
    assert got is not None
    ids = {a["devices"]["results"][0]["shareID"] for a in got}
    assert len(ids) == 2


@pytest.mark.parametrize(
    ("requests", "device_capacity", "message"),
    [
        pytest.param(
            {CAP0: "9223372036854775807"},
            ranged("4"),
            "claim claim-0, request req-0: checking capacity for device driver-a/pool-1/device-1:"
            ' capacity "capacity-0": capacity request cannot be represented in the device\'s'
            " range arithmetic: rounding request 9223372036854775807 up to the next step passes"
            " MaxInt64",
            id="rounding-overflow",
        ),
        pytest.param(
            {CAP0: "-1"},
            "4",
            "claim claim-0, request req-0: checking capacity for device driver-a/pool-1/device-1:"
            ' capacity "capacity-0": capacity value is negative',
            id="negative",
        ),
        pytest.param(
            {CAP0: "1x"},
            ranged("4"),
            "claim claim-0, request req-0: checking capacity for device driver-a/pool-1/device-1:"
            " capacity \"capacity-0\": unable to parse quantity's suffix: '1x'",
            id="not-a-quantity",
        ),
    ],
)
def test_bad_capacity_requests_stop_with_one_line(
    requests: Json, device_capacity: Any, message: str
) -> None:
    claims = [claim(CLAIM0, request(REQ0, CLASS_A, 1, capacity={"requests": requests}))]
    slices = [slice_of(shared(DEV1, {CAP0: device_capacity}))]
    allocator = Allocator({CLASS_A: multi_class()}, slices, set())
    with pytest.raises(AllocationError) as raised:
        allocator.allocate(node(), claims)
    assert str(raised.value) == message
