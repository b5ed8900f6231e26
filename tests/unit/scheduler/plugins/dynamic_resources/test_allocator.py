"""The DRA allocator: upstream's allocator test cases (structured/internal/allocatortesting,
same names as ids) where the rules apply, then Corral's own cases for what they do not cover."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pytest

from corral.scheduler.plugins.dynamic_resources.allocator import (
    AllocationError,
    Allocator,
)
from corral.scheduler.plugins.dynamic_resources.pools import DeviceID, Node

from .dra_builders import (
    CLAIM0,
    CLAIM1,
    CLASS_A,
    CLASS_B,
    DRIVER_A,
    DRIVER_B,
    NODE1,
    NODE2,
    POOL1,
    POOL2,
    REGION1,
    REGION2,
    REQ0,
    REQ1,
    Json,
    all_request,
    allocation,
    claim,
    device,
    device_class,
    first_available,
    label_selector,
    local,
    node,
    one_device_slice,
    opaque,
    request,
    resource_slice,
    result,
    sub_request,
)

NUMA = f"{DRIVER_A}/numa"
VERSION = f"{DRIVER_A}/driverVersion"
STRING = f"{DRIVER_A}/stringAttribute"
BOOL = f"{DRIVER_A}/boolAttribute"
TAINT_NO_SCHEDULE = {"key": "taint-key", "value": "taint-value", "effect": "NoSchedule"}
TAINT_NO_EXECUTE = {"key": "taint-key", "value": "taint-value-2", "effect": "NoExecute"}
TOLERATE_NO_EXECUTE = {"key": "taint-key", "operator": "Exists", "effect": "NoExecute"}


def memory(name: str, size: str) -> Json:
    return device(name, {"memory": size})


def at_least(size: str) -> str:
    return f'device.capacity["{DRIVER_A}"].memory.compareTo(quantity("{size}")) >= 0'


def counters(name: str, **values: str) -> Json:
    return {"name": name, "counters": {k: {"value": v} for k, v in values.items()}}


def consumes(counter_set: str, **values: str) -> Json:
    return {"counterSet": counter_set, "counters": {k: {"value": v} for k, v in values.items()}}


@dataclass
class Case:
    """One allocation: ``want`` is in the parametrization; ``error`` a fatal error's text."""

    claims: list[Json]
    slices: list[Json] = field(default_factory=list)
    classes: list[Json] = field(default_factory=lambda: [device_class(CLASS_A, DRIVER_A)])
    node: Node = field(default_factory=node)
    allocated: tuple[DeviceID, ...] = ()
    want: list[Json] | None = None  # None: the claims do not fit the node
    error: str = ""


SIMPLE = [one_device_slice("slice-1", NODE1, POOL1, DRIVER_A)]
ATTRS = {
    "driverVersion": {"version": "1.0.0"},
    "numa": {"int": 1},
    "stringAttribute": {"string": "stringAttributeValue"},
    "boolAttribute": {"bool": True},
}

CASES = [
    pytest.param(Case(claims=[]), [], id="empty"),
    pytest.param(
        Case([claim(CLAIM0, request(REQ0, CLASS_A))], SIMPLE),
        [allocation(local(NODE1), result(REQ0, DRIVER_A, POOL1, "device-1"))],
        id="simple",
    ),
    pytest.param(
        Case(
            [claim(CLAIM0, request(REQ0, CLASS_A))],
            [
                one_device_slice("slice-1", NODE1, POOL1, DRIVER_B),
                one_device_slice("slice-2", NODE2, POOL2, DRIVER_A),
            ],
            node=node(NODE2, REGION2),
        ),
        [allocation(local(NODE2), result(REQ0, DRIVER_A, POOL2, "device-1"))],
        id="other-node",
    ),
    pytest.param(
        Case(
            [
                claim(
                    CLAIM0,
                    request(REQ0, CLASS_A, 1, at_least("1Gi")),
                    request(REQ1, CLASS_A, 1, at_least("2Gi")),
                )
            ],
            [
                resource_slice(
                    "slice-1",
                    NODE1,
                    POOL1,
                    DRIVER_A,
                    memory("device-1", "1Gi"),
                    memory("device-2", "2Gi"),
                )
            ],
        ),
        [
            allocation(
                local(NODE1),
                result(REQ0, DRIVER_A, POOL1, "device-1"),
                result(REQ1, DRIVER_A, POOL1, "device-2"),
            )
        ],
        id="small-and-large",
    ),
    pytest.param(
        Case(
            [
                claim(CLAIM0, request(REQ0, CLASS_A, 1, at_least("1Gi"))),
                claim(CLAIM1, request(REQ1, CLASS_A, 1, at_least("2Gi"))),
            ],
            [
                resource_slice(
                    "slice-1",
                    NODE1,
                    POOL1,
                    DRIVER_A,
                    memory("device-2", "2Gi"),
                    memory("device-1", "1Gi"),
                )
            ],
        ),
        [
            allocation(local(NODE1), result(REQ0, DRIVER_A, POOL1, "device-1")),
            allocation(local(NODE1), result(REQ1, DRIVER_A, POOL1, "device-2")),
        ],
        id="small-and-large-backtrack-claims",
    ),
    pytest.param(
        Case(
            [claim(CLAIM0, request(REQ0, CLASS_A, 2))],
            [
                one_device_slice("slice-1", NODE1, POOL1, DRIVER_A),
                one_device_slice("slice-2", NODE1, POOL2, DRIVER_A),
            ],
        ),
        [
            allocation(
                local(NODE1),
                result(REQ0, DRIVER_A, POOL1, "device-1"),
                result(REQ0, DRIVER_A, POOL2, "device-1"),
            )
        ],
        id="devices-split-across-different-slices",
    ),
    pytest.param(
        Case(
            [claim(CLAIM0, request(REQ0, CLASS_A))],
            [
                resource_slice(
                    "slice-1-obsolete", NODE1, POOL1, DRIVER_A, device("device-1"), count=2
                ),
                resource_slice(
                    "slice-1-obsolete",
                    NODE1,
                    POOL1,
                    DRIVER_A,
                    device("device-2"),
                    count=2,
                    generation=2,
                ),
            ],
        ),
        None,
        id="obsolete-slice",
    ),
    pytest.param(
        Case(
            [claim(CLAIM0, request(REQ0, CLASS_A))],
            [
                resource_slice("slice-1", NODE1, POOL1, DRIVER_A, device("device-1"), count=2),
                resource_slice("slice-1-2", NODE1, POOL1, DRIVER_A, device("device-1"), count=2),
            ],
            error="invalid resource pools were encountered",
        ),
        None,
        id="duplicate-slice",
    ),
    pytest.param(Case([claim(CLAIM0, request(REQ0, CLASS_A))], []), None, id="no-slices"),
    pytest.param(
        Case(
            [claim(CLAIM0, request(REQ0, CLASS_A)), claim(CLAIM0, request(REQ1, CLASS_A))], SIMPLE
        ),
        None,
        id="not-enough-suitable-devices",
    ),
    pytest.param(
        Case(
            [claim(CLAIM0, request(REQ0, "unknown-class"))],
            SIMPLE,
            error="claim claim-0, request req-0: could not retrieve device class unknown-class",
        ),
        None,
        id="unknown-class",
    ),
    pytest.param(
        Case(
            [claim(CLAIM0, request(REQ0, ""))],
            SIMPLE,
            error="claim claim-0, request req-0: missing device class name"
            " (unsupported request type?)",
        ),
        None,
        id="empty-class",
    ),
    pytest.param(
        Case([claim(CLAIM0, all_request(REQ0, CLASS_A))], SIMPLE),
        [allocation(local(NODE1), result(REQ0, DRIVER_A, POOL1, "device-1"))],
        id="all-devices-single",
    ),
    pytest.param(
        Case(
            [claim(CLAIM0, all_request(REQ0, CLASS_A))],
            [resource_slice("slice-1", NODE1, POOL1, DRIVER_A, device("device-1"), count=2)],
            error="claim claim-0, request req-0: asks for all devices, but resource pool"
            " driver-a/pool-1 is currently being updated",
        ),
        None,
        id="all-devices-of-the-incomplete-pool",
    ),
    pytest.param(
        Case(
            [claim(CLAIM0, all_request(REQ0, CLASS_A)), claim(CLAIM1, request(REQ0, CLASS_B))],
            [
                one_device_slice("slice-1", NODE1, POOL1, DRIVER_A),
                one_device_slice("slice-1", NODE1, POOL1, DRIVER_B),
            ],
            classes=[device_class(CLASS_A, DRIVER_A), device_class(CLASS_B, DRIVER_B)],
        ),
        [
            allocation(local(NODE1), result(REQ0, DRIVER_A, POOL1, "device-1")),
            allocation(local(NODE1), result(REQ0, DRIVER_B, POOL1, "device-1")),
        ],
        id="all-devices-plus-another",
    ),
    pytest.param(
        Case(
            [claim(CLAIM1, request(REQ0, CLASS_A)), claim(CLAIM0, all_request(REQ0, CLASS_A))],
            SIMPLE,
        ),
        None,
        id="all-devices-no-solution",
    ),
    pytest.param(
        Case(
            [claim(CLAIM0, all_request(REQ0, CLASS_A))],
            [
                resource_slice(
                    "slice-1", NODE1, POOL1, DRIVER_A, device("device-1"), device("device-2")
                )
            ],
            allocated=(DeviceID(DRIVER_A, POOL1, "device-1"),),
        ),
        None,
        id="all-devices-some-allocated",
    ),
    pytest.param(
        Case(
            [claim(CLAIM0, all_request(REQ0, CLASS_A, adminAccess=True))],
            [
                resource_slice(
                    "slice-1", NODE1, POOL1, DRIVER_A, device("device-1"), device("device-2")
                )
            ],
            allocated=(DeviceID(DRIVER_A, POOL1, "device-1"),),
        ),
        [
            allocation(
                local(NODE1),
                result(REQ0, DRIVER_A, POOL1, "device-1", adminAccess=True),
                result(REQ0, DRIVER_A, POOL1, "device-2", adminAccess=True),
            )
        ],
        id="all-devices-some-allocated-admin-access",
    ),
    pytest.param(
        Case(
            [claim(CLAIM0, request(REQ0, CLASS_A))],
            [one_device_slice("slice-1", label_selector("region", REGION1), POOL1, DRIVER_A)],
        ),
        [allocation(label_selector("region", REGION1), result(REQ0, DRIVER_A, POOL1, "device-1"))],
        id="network-attached-device",
    ),
    pytest.param(
        Case(
            [claim(CLAIM0, request(REQ0, CLASS_A))],
            [one_device_slice("slice-1", label_selector("region", REGION2), POOL1, DRIVER_A)],
        ),
        None,
        id="unsuccessful-allocation-network-attached-device",
    ),
    pytest.param(
        Case(
            [claim(CLAIM0, request(REQ0, CLASS_A))],
            SIMPLE,
            allocated=(
                DeviceID(DRIVER_A, POOL1, "device-1"),
                DeviceID(DRIVER_A, POOL1, "device-2"),
            ),
        ),
        None,
        id="already-allocated-devices",
    ),
    pytest.param(
        Case(
            [claim(CLAIM0, request(REQ0, CLASS_A, adminAccess=True))],
            SIMPLE,
            allocated=(
                DeviceID(DRIVER_A, POOL1, "device-1"),
                DeviceID(DRIVER_A, POOL1, "device-2"),
            ),
        ),
        [allocation(local(NODE1), result(REQ0, DRIVER_A, POOL1, "device-1", adminAccess=True))],
        id="admin-access-enabled",
    ),
    pytest.param(
        Case(
            [
                claim(
                    CLAIM0,
                    request(REQ0, CLASS_A),
                    request(REQ1, CLASS_A),
                    constraints=[{"matchAttribute": a} for a in (NUMA, VERSION, STRING, BOOL)],
                )
            ],
            [
                resource_slice(
                    "slice-1",
                    NODE1,
                    POOL1,
                    DRIVER_A,
                    device("device-1", attributes=ATTRS),
                    device("device-2", attributes=ATTRS),
                )
            ],
        ),
        [
            allocation(
                local(NODE1),
                result(REQ0, DRIVER_A, POOL1, "device-1"),
                result(REQ1, DRIVER_A, POOL1, "device-2"),
            )
        ],
        id="with-constraint",
    ),
    pytest.param(
        Case(
            [
                claim(
                    CLAIM0,
                    request(REQ0, CLASS_A),
                    constraints=[{"matchAttribute": f"{DRIVER_A}/NonExistentAttribute"}],
                )
            ],
            SIMPLE,
        ),
        None,
        id="with-constraint-non-existent-attribute",
    ),
    *(
        pytest.param(
            Case(
                [
                    claim(
                        CLAIM0,
                        request(REQ0, CLASS_A),
                        request(REQ1, CLASS_A),
                        constraints=[{"matchAttribute": attr}],
                    )
                ],
                [
                    resource_slice(
                        "slice-1",
                        NODE1,
                        POOL1,
                        DRIVER_A,
                        device("device-1", attributes={attr.split("/")[1]: dict(one)}),
                        device("device-2", attributes={attr.split("/")[1]: dict(other)}),
                    )
                ],
            ),
            None,
            id=f"with-constraint-not-matching-{kind}-attribute",
        )
        for kind, attr, one, other in (
            ("int", NUMA, {"int": 1}, {"int": 2}),
            ("string", STRING, {"string": "a"}, {"string": "b"}),
            ("bool", BOOL, {"bool": True}, {"bool": False}),
            ("version", VERSION, {"version": "1.0.0"}, {"version": "2.0.0"}),
        )
    ),
    pytest.param(
        Case(
            [claim(CLAIM0, all_request(REQ0, CLASS_A), constraints=[{"matchAttribute": NUMA}])],
            [
                resource_slice(
                    "slice-1",
                    NODE1,
                    POOL1,
                    DRIVER_A,
                    device("device-1", attributes={"numa": {"int": 1}}),
                    device("device-2", attributes={"numa": {"int": 2}}),
                )
            ],
            error="claim claim-0, request req-0: cannot add device driver-a/pool-1/device-2 because"
            " a claim constraint would not be satisfied",
        ),
        None,
        id="with-constraint-not-matching-int-attribute-all-devices",
    ),
    pytest.param(
        Case(
            [
                claim(
                    CLAIM0,
                    request(REQ0, CLASS_A),
                    request(REQ1, CLASS_A),
                    constraints=[
                        {"requests": [REQ0], "matchAttribute": VERSION},
                        {"matchAttribute": STRING},
                    ],
                )
            ],
            [
                resource_slice(
                    "slice-1",
                    NODE1,
                    POOL1,
                    DRIVER_A,
                    device(
                        "device-1",
                        attributes={
                            "driverVersion": {"version": "1.0.0"},
                            "stringAttribute": {"string": "a"},
                        },
                    ),
                    device(
                        "device-2",
                        attributes={
                            "driverVersion": {"version": "2.0.0"},
                            "stringAttribute": {"string": "b"},
                        },
                    ),
                    device(
                        "device-3",
                        attributes={
                            "driverVersion": {"version": "3.0.0"},
                            "stringAttribute": {"string": "b"},
                        },
                    ),
                )
            ],
        ),
        [
            allocation(
                local(NODE1),
                result(REQ0, DRIVER_A, POOL1, "device-2"),
                result(REQ1, DRIVER_A, POOL1, "device-3"),
            )
        ],
        id="with-constraint-for-request-retry",
    ),
    pytest.param(
        Case(
            [claim(CLAIM0, request(REQ0, CLASS_A))],
            SIMPLE,
            classes=[device_class(CLASS_A, DRIVER_A, opaque(DRIVER_A, "classAttribute"))],
        ),
        [
            allocation(
                local(NODE1),
                result(REQ0, DRIVER_A, POOL1, "device-1"),
                config=[{"source": "FromClass", **opaque(DRIVER_A, "classAttribute")}],
            )
        ],
        id="with-class-device-config",
    ),
    pytest.param(
        Case(
            [
                claim(
                    CLAIM0,
                    request(REQ0, CLASS_A),
                    request(REQ1, CLASS_A),
                    config=[{"requests": [REQ0], **opaque(DRIVER_A, "deviceAttribute")}],
                )
            ],
            [
                resource_slice(
                    "slice-1", NODE1, POOL1, DRIVER_A, device("device-1"), device("device-2")
                )
            ],
        ),
        [
            allocation(
                local(NODE1),
                result(REQ0, DRIVER_A, POOL1, "device-1"),
                result(REQ1, DRIVER_A, POOL1, "device-2"),
                config=[
                    {
                        "source": "FromClaim",
                        "requests": [REQ0],
                        **opaque(DRIVER_A, "deviceAttribute"),
                    }
                ],
            )
        ],
        id="claim-with-device-config",
    ),
    pytest.param(
        Case(
            [claim(CLAIM0, request(REQ0, CLASS_A, 1, "noSuchVar"))],
            SIMPLE,
            error="undeclared reference to 'noSuchVar'",
        ),
        None,
        id="invalid-CEL-one-device",
    ),
    pytest.param(
        Case(
            [claim(CLAIM0, request(REQ0, CLASS_A))],
            SIMPLE,
            classes=[device_class(CLASS_A, DRIVER_A, selectors=("noSuchVar",))],
            error="class class-a: selector #0 on device driver-a/pool-1/device-1:"
            " CEL runtime error: undeclared reference to 'noSuchVar'",
        ),
        None,
        id="invalid-CEL-one-device-class",
    ),
    pytest.param(
        Case([claim(CLAIM0, request(REQ0, CLASS_A, 500))], error="exceeds the claim limit"),
        None,
        id="too-many-devices-single-request",
    ),
    pytest.param(
        Case(
            [claim(CLAIM0, request(REQ0, CLASS_A, 16), request(REQ1, CLASS_A, 17))],
            error="claim claim-0, request req-1: adding 17 devices exceeds the claim limit of 32,"
            " with 16 already accounted for",
        ),
        None,
        id="too-many-devices-total",
    ),
    pytest.param(
        Case(
            [
                claim(
                    CLAIM0,
                    first_available(
                        REQ0, sub_request("subReq-0", CLASS_B), sub_request("subReq-1", CLASS_A)
                    ),
                )
            ],
            SIMPLE,
            classes=[device_class(CLASS_A, DRIVER_A), device_class(CLASS_B, DRIVER_B)],
        ),
        [allocation(local(NODE1), result("req-0/subReq-1", DRIVER_A, POOL1, "device-1"))],
        id="prioritized-list-first-unavailable",
    ),
    pytest.param(
        Case(
            [
                claim(
                    CLAIM0,
                    first_available(
                        REQ0,
                        sub_request("subReq-0", CLASS_B, 2),
                        sub_request("subReq-1", CLASS_A, 2),
                    ),
                )
            ],
            [
                one_device_slice("slice-1", NODE1, POOL1, DRIVER_A),
                one_device_slice("slice-2", NODE1, POOL2, DRIVER_B),
            ],
            classes=[device_class(CLASS_A, DRIVER_A), device_class(CLASS_B, DRIVER_B)],
        ),
        None,
        id="prioritized-list-non-available",
    ),
    pytest.param(
        Case(
            [
                claim(
                    CLAIM0,
                    first_available(
                        REQ0,
                        sub_request("subReq-0", CLASS_A, 1, at_least("8Gi")),
                        sub_request("subReq-1", CLASS_A, 1, at_least("4Gi")),
                    ),
                    request(REQ1, CLASS_A, 1, at_least("8Gi")),
                )
            ],
            [
                resource_slice("slice-1", NODE1, POOL1, DRIVER_A, memory("device-1", "8Gi")),
                resource_slice("slice-2", NODE1, POOL2, DRIVER_A, memory("device-2", "4Gi")),
            ],
        ),
        [
            allocation(
                local(NODE1),
                result("req-0/subReq-1", DRIVER_A, POOL2, "device-2"),
                result(REQ1, DRIVER_A, POOL1, "device-1"),
            )
        ],
        id="prioritized-list-with-backtracking",
    ),
    pytest.param(
        Case(
            [claim(CLAIM0, request(REQ0, CLASS_A))],
            [
                resource_slice(
                    "slice-1",
                    NODE1,
                    POOL1,
                    DRIVER_A,
                    device("device-1", consumesCounters=[consumes("counter-set-1", memory="4Gi")]),
                    count=2,
                ),
                resource_slice(
                    "slice-2",
                    NODE1,
                    POOL1,
                    DRIVER_A,
                    count=2,
                    sharedCounters=[counters("counter-set-1", memory="8Gi")],
                ),
            ],
        ),
        [allocation(local(NODE1), result(REQ0, DRIVER_A, POOL1, "device-1"))],
        id="partitionable-devices-single-device",
    ),
    pytest.param(
        Case(
            [claim(CLAIM0, request(REQ0, CLASS_A), request(REQ1, CLASS_A))],
            [
                resource_slice(
                    "slice-1",
                    NODE1,
                    POOL1,
                    DRIVER_A,
                    *(
                        device(
                            f"device-{i}", consumesCounters=[consumes("counter-set-1", memory=size)]
                        )
                        for i, size in ((1, "4Gi"), (2, "6Gi"), (3, "4Gi"))
                    ),
                    count=2,
                ),
                resource_slice(
                    "slice-2",
                    NODE1,
                    POOL1,
                    DRIVER_A,
                    count=2,
                    sharedCounters=[counters("counter-set-1", memory="8Gi")],
                ),
            ],
        ),
        [
            allocation(
                local(NODE1),
                result(REQ0, DRIVER_A, POOL1, "device-1"),
                result(REQ1, DRIVER_A, POOL1, "device-3"),
            )
        ],
        id="partitionable-devices-multiple-devices",
    ),
    pytest.param(
        Case(
            [claim(CLAIM0, request(REQ0, CLASS_A))],
            [
                resource_slice(
                    "slice-1",
                    NODE1,
                    POOL1,
                    DRIVER_A,
                    device("device-1", taints=[TAINT_NO_SCHEDULE]),
                    device("device-2", taints=[TAINT_NO_EXECUTE]),
                )
            ],
        ),
        None,
        id="tainted-two-devices",
    ),
    pytest.param(
        Case(
            [claim(CLAIM0, request(REQ0, CLASS_A, tolerations=[TOLERATE_NO_EXECUTE]))],
            [
                resource_slice(
                    "slice-1",
                    NODE1,
                    POOL1,
                    DRIVER_A,
                    device("device-1", taints=[TAINT_NO_SCHEDULE]),
                    device("device-2", taints=[TAINT_NO_EXECUTE]),
                )
            ],
        ),
        [
            allocation(
                local(NODE1),
                result(REQ0, DRIVER_A, POOL1, "device-2", tolerations=[TOLERATE_NO_EXECUTE]),
            )
        ],
        id="tainted-two-devices-tolerated",
    ),
    pytest.param(
        Case(
            [claim(CLAIM0, request(REQ0, CLASS_A))],
            [
                resource_slice(
                    "slice-1",
                    NODE1,
                    POOL1,
                    DRIVER_A,
                    device("device-1", taints=[{"key": "k", "value": "v", "effect": "None"}]),
                )
            ],
        ),
        [allocation(local(NODE1), result(REQ0, DRIVER_A, POOL1, "device-1"))],
        id="tainted-no-effect",
    ),
]


def _sorted(allocations: Sequence[Mapping[str, Any]] | None) -> Any:
    if allocations is None:
        return None
    out = []
    for given in allocations:
        a = {**given, "devices": dict(given["devices"])}
        a["devices"]["results"] = sorted(a["devices"]["results"], key=lambda r: sorted(r.items()))
        out.append(a)
    return out


@pytest.mark.parametrize(("case", "want"), CASES)
def test_allocate(case: Case, want: list[Json] | None) -> None:
    allocator = Allocator(
        {c["metadata"]["name"]: c for c in case.classes}, case.slices, set(case.allocated)
    )
    if case.error:
        with pytest.raises(AllocationError, match=None) as raised:
            allocator.allocate(case.node, case.claims)
        assert case.error in str(raised.value)
        return
    assert _sorted(allocator.allocate(case.node, case.claims)) == _sorted(want)


def test_requests_are_read_from_each_claim_object_searched() -> None:
    """One allocator searches every node of a cycle: a claim object searched again is parsed
    once, and a claim made anew per node (for extended resources) with the same metadata but
    other requests is read for what it asks."""
    allocator = Allocator(
        {CLASS_A: device_class(CLASS_A, DRIVER_A)},
        [resource_slice("s1", NODE1, POOL1, DRIVER_A, device("device-1"))],
        set(),
    )
    first, second = claim(CLAIM0, request(REQ0, CLASS_A)), claim(CLAIM0, request(REQ1, CLASS_A))
    for c in (first, second):
        c["metadata"].update(uid="same-uid", resourceVersion="1")
    assert allocator.requests_of(first) is allocator.requests_of(first)
    got = [allocator.allocate(node(), [c]) for c in (first, second, first)]
    assert [a[0]["devices"]["results"][0]["request"] for a in got if a] == [REQ0, REQ1, REQ0]
