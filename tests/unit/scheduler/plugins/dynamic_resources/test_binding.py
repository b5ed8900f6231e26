"""Binding conditions, bindingTimeout and filterTimeout: the allocator's handling of devices with
binding conditions (upstream's allocator cases by name, then Corral's), the readiness rules
PreBind and Filter apply to a claim's device conditions, PreBind's wait on a fake clock, and
Filter's abandoned search."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any, cast

import pytest

from corral.scheduler.framework import listers
from corral.scheduler.framework.cycle_state import CycleState
from corral.scheduler.framework.interface import Handle
from corral.scheduler.framework.status import Code, Status
from corral.scheduler.plugins.dynamic_resources import binding
from corral.scheduler.plugins.dynamic_resources import plugin as dra
from corral.scheduler.plugins.dynamic_resources.allocator import (
    AllocationTimeoutError,
    Allocator,
)
from corral.testing.builders import snapshot_of

from .dra_builders import (
    CLAIM0,
    CLASS_A,
    CLASS_B,
    DRIVER_A,
    DRIVER_B,
    NODE1,
    POOL1,
    POOL2,
    REQ0,
    REQ1,
    Json,
    allocation,
    claim,
    device,
    device_class,
    label_selector,
    local,
    node,
    request,
    resource_slice,
    result,
)
from .test_plugin import GPU_CLASS, NODES, SLICE_A, claiming_pod, node_infos, store
from .test_plugin import claim as api_claim

PREPARE = {"bindingConditions": ["IsPrepare"], "bindingFailureConditions": ["BindingFailed"]}
PREPARE2 = {"bindingConditions": ["IsPrepare2"], "bindingFailureConditions": ["BindingFailed2"]}
PREPARE3 = {"bindingConditions": ["IsPrepare3"], "bindingFailureConditions": ["BindingFailed3"]}
CLASSES = {CLASS_A: device_class(CLASS_A, DRIVER_A), CLASS_B: device_class(CLASS_B, DRIVER_B)}


@pytest.mark.parametrize(
    ("claims", "slices", "want"),
    [
        pytest.param(
            [claim(CLAIM0, request(REQ0, CLASS_A))],
            [resource_slice("slice-1", NODE1, POOL1, DRIVER_A, device("device-1", **PREPARE))],
            [allocation(local(NODE1), result(REQ0, DRIVER_A, POOL1, "device-1", **PREPARE))],
            id="device-binding-conditions",
        ),
        pytest.param(
            [claim(CLAIM0, request(REQ0, CLASS_A, 2), request(REQ1, CLASS_A))],
            [
                resource_slice(
                    "slice-1",
                    NODE1,
                    POOL1,
                    DRIVER_A,
                    device("device-1", **PREPARE),
                    device("device-2", **PREPARE2),
                    device("device-3", **PREPARE3),
                )
            ],
            [
                allocation(
                    local(NODE1),
                    result(REQ0, DRIVER_A, POOL1, "device-1", **PREPARE),
                    result(REQ0, DRIVER_A, POOL1, "device-2", **PREPARE2),
                    result(REQ1, DRIVER_A, POOL1, "device-3", **PREPARE3),
                )
            ],
            id="binding-conditions-multiple-devices",
        ),
        pytest.param(
            [claim(CLAIM0, request(REQ0, CLASS_A), request(REQ1, CLASS_A))],
            [
                resource_slice(
                    "slice-1",
                    NODE1,
                    POOL1,
                    DRIVER_A,
                    device("device-1"),
                    device("device-2", **PREPARE),
                )
            ],
            [
                allocation(
                    local(NODE1),
                    result(REQ0, DRIVER_A, POOL1, "device-1"),
                    result(REQ1, DRIVER_A, POOL1, "device-2", **PREPARE),
                )
            ],
            id="binding-conditions-with-and-without",
        ),
        pytest.param(
            [claim(CLAIM0, request(REQ0, CLASS_A))],
            [
                resource_slice(
                    "slice-1",
                    label_selector("planet", "earth"),
                    POOL1,
                    DRIVER_A,
                    device("device-1", bindsToNode=True),
                )
            ],
            [allocation(local(NODE1), result(REQ0, DRIVER_A, POOL1, "device-1"))],
            id="node-restriction",
        ),
        # Corral's: a pool with binding conditions comes after the others, whatever its name.
        pytest.param(
            [claim(CLAIM0, request(REQ0, CLASS_A))],
            [
                resource_slice("slice-1", NODE1, POOL1, DRIVER_A, device("device-1", **PREPARE)),
                resource_slice("slice-2", NODE1, POOL2, DRIVER_A, device("device-1")),
            ],
            [allocation(local(NODE1), result(REQ0, DRIVER_A, POOL2, "device-1"))],
            id="pool-without-conditions-first",
        ),
        pytest.param(
            [claim(CLAIM0, request(REQ0, CLASS_A, 2))],
            [
                resource_slice("slice-1", NODE1, POOL1, DRIVER_A, device("device-1", **PREPARE)),
                resource_slice("slice-2", NODE1, POOL2, DRIVER_A, device("device-1")),
            ],
            [
                allocation(
                    local(NODE1),
                    result(REQ0, DRIVER_A, POOL2, "device-1"),
                    result(REQ0, DRIVER_A, POOL1, "device-1", **PREPARE),
                )
            ],
            id="pool-with-conditions-last",
        ),
        pytest.param(
            [claim(CLAIM0, request(REQ0, CLASS_A))],
            [
                resource_slice(
                    "slice-1",
                    label_selector("planet", "earth"),
                    POOL1,
                    DRIVER_A,
                    device("device-1", bindsToNode=True, **PREPARE),
                )
            ],
            [allocation(local(NODE1), result(REQ0, DRIVER_A, POOL1, "device-1", **PREPARE))],
            id="binds-to-node-with-conditions",
        ),
    ],
)
def test_allocate_with_binding_conditions(
    claims: list[Json], slices: list[Json], want: list[Json]
) -> None:
    assert Allocator(CLASSES, slices, set()).allocate(node(), claims) == want


# Eight of twenty devices, then one device no node has: the search tries every order of the
# eight before it gives up (days in Python), unless a deadline stops it.
BLOW_UP = [request(REQ0, CLASS_A, 8), request(REQ1, CLASS_B)]


def twenty_devices(node_name: str) -> Json:
    devices = [device(f"device-{i}") for i in range(20)]
    return resource_slice("slice-1", node_name, POOL1, DRIVER_A, *devices)


def test_allocation_past_its_deadline_stops() -> None:
    allocator = Allocator(CLASSES, [twenty_devices(NODE1)], set())
    with pytest.raises(AllocationTimeoutError):
        allocator.allocate(node(), [claim(CLAIM0, *BLOW_UP)], deadline=0.0)


# --- readiness -----------------------------------------------------------------------------

NOW = datetime(2026, 1, 1, 12, 0, 0, tzinfo=UTC)
STAMP = "2026-01-01T11:59:00Z"  # a minute before NOW


def condition(kind: str, status: str = "True", **extra: str) -> Json:
    return {"type": kind, "status": status, "reason": "Test", "message": "", **extra}


def allocated(
    *conditions: Json, stamp: str = STAMP, with_status: bool = True, **fields: Any
) -> Json:
    out = api_claim("c")
    out["status"] = {
        "allocation": {
            "devices": {"results": [result("gpu", DRIVER_A, POOL1, "device-1", **fields)]},
            "allocationTimestamp": stamp,
        }
    }
    if with_status:
        device_status = {"driver": DRIVER_A, "pool": POOL1, "device": "device-1"}
        out["status"]["devices"] = [{**device_status, "conditions": list(conditions)}]
    return out


@pytest.mark.parametrize(
    ("c", "want"),
    [
        pytest.param(api_claim("c"), False, id="not allocated"),
        pytest.param(allocated(), True, id="no binding conditions"),
        pytest.param(allocated(with_status=False, **PREPARE), False, id="no device status yet"),
        pytest.param(allocated(**PREPARE), False, id="condition not set"),
        pytest.param(allocated(condition("IsPrepare", "False"), **PREPARE), False, id="false"),
        pytest.param(allocated(condition("IsPrepare"), **PREPARE), True, id="true"),
        pytest.param(
            allocated(condition("IsPrepare"), condition("BindingFailed", "False"), **PREPARE),
            True,
            id="failure condition false",
        ),
        pytest.param(
            allocated(
                condition("IsPrepare"),
                condition("BindingFailed", reason="Broken", message='no "link"'),
                **PREPARE,
            ),
            'device binding failed: claim=c, reason=Broken, message="no \\"link\\""',
            id="failure condition true",
        ),
    ],
)
def test_claim_ready(c: Json, want: bool | str) -> None:
    if isinstance(want, str):
        with pytest.raises(binding.BindingFailedError) as raised:
            binding.claim_ready(c)
        assert str(raised.value) == want
    else:
        assert binding.claim_ready(c) is want


@pytest.mark.parametrize(
    ("c", "timeout", "want_timed_out", "want_unusable"),
    [
        pytest.param(allocated(**PREPARE), 30.0, True, True, id="past the timeout"),
        pytest.param(allocated(**PREPARE), 60.0, False, False, id="exactly at the timeout"),
        pytest.param(allocated(**PREPARE), 600.0, False, False, id="within the timeout"),
        pytest.param(allocated(stamp=""), 1.0, False, False, id="no binding conditions"),
        pytest.param(allocated(stamp="", **PREPARE), 1.0, False, False, id="no timestamp"),
        pytest.param(
            allocated(condition("IsPrepare"), **PREPARE), 1.0, True, False, id="ready in time"
        ),
        pytest.param(
            allocated(condition("BindingFailed"), **PREPARE), 600.0, False, True, id="failed"
        ),
    ],
)
def test_timeout_and_unusable(
    c: Json, timeout: float, want_timed_out: bool, want_unusable: bool
) -> None:
    assert binding.timed_out(c, timeout, NOW) is want_timed_out
    assert binding.unusable(c, timeout, NOW) is want_unusable


# --- PreBind's wait ------------------------------------------------------------------------


class Clock:
    """A fake monotonic clock; ``sleep`` advances it and lets the driver act."""

    def __init__(self, on_sleep: Callable[[float], None] = lambda t: None) -> None:
        self.t = 0.0
        self.slept: list[float] = []
        self.on_sleep = on_sleep

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.t += seconds
        self.on_sleep(self.t)


def run_wait(
    claims: dict[str, Json | None],
    timeout: float = 600.0,
    changes: dict[float, Json] | None = None,
    stop_after: float | None = None,
) -> tuple[str | None, list[float]]:
    """``claims``: what the informers hold now; ``changes``: a claim the driver writes at a
    time of the clock."""

    def on_sleep(t: float) -> None:
        if changes and t in changes:
            claims["c"] = changes[t]

    clock = Clock(on_sleep)
    message = binding.wait(
        [allocated(**PREPARE)],
        lambda c: claims.get(c["metadata"]["name"]),
        timeout,
        clock=lambda: clock.t,
        sleep=clock.sleep,
        now=lambda: NOW - timedelta(seconds=60) + timedelta(seconds=clock.t),
        stopped=lambda: stop_after is not None and clock.t >= stop_after,
    )
    return message, clock.slept


@pytest.mark.parametrize(
    ("claims", "timeout", "changes", "stop_after", "want", "slept"),
    [
        pytest.param(
            {"c": allocated(condition("IsPrepare"), **PREPARE)},
            600.0,
            None,
            None,
            None,
            [],
            id="ready at once",
        ),
        pytest.param(
            {"c": allocated(**PREPARE)},
            600.0,
            {10.0: allocated(condition("IsPrepare"), **PREPARE)},
            None,
            None,
            [5.0, 5.0],
            id="ready on the third check",
        ),
        pytest.param(
            {"c": allocated(**PREPARE)},
            600.0,
            {5.0: allocated(condition("BindingFailed", reason="Gone"), **PREPARE)},
            None,
            'device binding failed: claim=c, reason=Gone, message=""',
            [5.0],
            id="failure condition set while waiting",
        ),
        pytest.param(
            {"c": allocated(**PREPARE)},
            12.0,
            None,
            None,
            "device binding timeout: context deadline exceeded",
            [5.0, 5.0, 2.0],
            id="bindingTimeout passes",
        ),
        pytest.param(
            {"c": allocated(stamp="2026-01-01T11:00:00Z", **PREPARE)},
            600.0,
            None,
            None,
            "device binding timeout: claim=c",
            [],
            id="allocated longer ago than bindingTimeout",
        ),
        pytest.param(
            {"c": None},
            600.0,
            None,
            None,
            'resourceclaim.resource.k8s.io "c" not found',
            [],
            id="claim gone",
        ),
        pytest.param(
            {"c": allocated(**PREPARE)},
            600.0,
            None,
            5.0,
            "context canceled",
            [5.0],
            id="engine stopping",
        ),
    ],
)
def test_wait(
    claims: dict[str, Json | None],
    timeout: float,
    changes: dict[float, Json] | None,
    stop_after: float | None,
    want: str | None,
    slept: list[float],
) -> None:
    assert run_wait(claims, timeout, changes, stop_after) == (want, slept)


def test_pending_only_with_binding_conditions() -> None:
    assert binding.pending([api_claim("a"), allocated(**PREPARE)])
    assert not binding.pending([api_claim("a"), allocated()])


# --- the plugin ----------------------------------------------------------------------------


def test_claim_failed_binding_is_unavailable_everywhere() -> None:
    failed = allocated(condition("BindingFailed"), **PREPARE)
    handle = store(GPU_CLASS, SLICE_A, (listers.RESOURCE_CLAIM, failed))
    plugin = dra.DynamicResources(cast(Handle, handle))
    state = CycleState()
    p = claiming_pod("p", "c")
    assert plugin.pre_filter(state, p, snapshot_of(NODES)) == (None, None)
    for info in node_infos().values():
        assert plugin.filter(state, p, info) == Status.of(
            Code.UNSCHEDULABLE_AND_UNRESOLVABLE, dra.ERR_NOT_AVAILABLE
        )


def test_filter_timeout_abandons_the_node() -> None:
    handle = store(
        (listers.DEVICE_CLASS, CLASSES[CLASS_A]),
        (listers.DEVICE_CLASS, CLASSES[CLASS_B]),
        (listers.RESOURCE_SLICE, twenty_devices("node-a")),
        (listers.RESOURCE_CLAIM, api_claim("c", *BLOW_UP)),
    )
    plugin = dra.DynamicResources(cast(Handle, handle), filter_timeout=0.01)
    state = CycleState()
    p = claiming_pod("p", "c")
    assert plugin.pre_filter(state, p, snapshot_of(NODES)) == (None, None)
    info = node_infos()["node-a"]
    assert plugin.filter(state, p, info) == Status.error(
        "node node-a: timed out trying to allocate devices"
    )


@pytest.mark.parametrize(
    ("args", "want"),
    [
        pytest.param(None, (10.0, 600.0), id="defaults"),
        pytest.param({"filterTimeout": "0s"}, (0.0, 600.0), id="filterTimeout 0 disables"),
        pytest.param(
            {"filterTimeout": "250ms", "bindingTimeout": "1m30s"}, (0.25, 90.0), id="both set"
        ),
    ],
)
def test_new_takes_the_timeouts(args: Json | None, want: tuple[float, float]) -> None:
    plugin = dra.new(args, cast(Handle, store()))
    assert (plugin.filter_timeout, plugin.binding_timeout) == want
