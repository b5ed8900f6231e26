"""DeviceTaintRules applied to slices as upstream's ResourceSlice tracker applies them (its
``TestListPatchedResourceSlices`` cases where they apply), the slice updates a rule's change
makes, and DynamicResources' Filter over the patched slices."""

from __future__ import annotations

import copy
from typing import Any, cast

import pytest

from corral.scheduler.backend.objects import ADDED, DELETED, ObjectStore
from corral.scheduler.framework import listers
from corral.scheduler.framework.cycle_state import CycleState
from corral.scheduler.framework.interface import Handle
from corral.scheduler.framework.status import Code, Status
from corral.scheduler.plugins.dynamic_resources import plugin as dra
from corral.scheduler.plugins.dynamic_resources import taint_rules
from corral.testing.builders import snapshot_of

from .dra_builders import Json, device, request, resource_slice
from .test_plugin import DRIVER, GPU_CLASS, NODES, SLICE_A, claim, claiming_pod, node_infos, store

TAINT = {"key": "example.com/broken", "value": "yes", "effect": "NoSchedule"}
OWN = {"key": "driver/own", "effect": "NoExecute"}
TWO = resource_slice("s", "node-1", "pool-1", "driver-a", device("dev-1"), device("dev-2"))
OTHER_POOL = resource_slice("o", "node-2", "pool-2", "driver-a", device("dev-1"))


def rule(name: str, selector: Json | None, taint: Json | None = None) -> Json:
    spec: dict[str, Any] = {"taint": taint or TAINT}
    if selector is not None:
        spec["deviceSelector"] = selector
    return {"metadata": {"name": name}, "spec": spec}


def taints_of(slice_: Json) -> list[list[Json]]:
    return [list(d.get("taints") or ()) for d in slice_["spec"]["devices"]]


@pytest.mark.parametrize(
    ("rules", "want"),
    [
        pytest.param([], [[], []], id="no rules"),
        pytest.param([rule("r", None)], [[], []], id="no selector matches nothing"),
        pytest.param([rule("r", {})], [[TAINT], [TAINT]], id="empty selector matches all"),
        pytest.param([rule("r", {"driver": "driver-a"})], [[TAINT], [TAINT]], id="driver"),
        pytest.param([rule("r", {"driver": "driver-b"})], [[], []], id="other driver"),
        pytest.param([rule("r", {"pool": "pool-1"})], [[TAINT], [TAINT]], id="pool"),
        pytest.param([rule("r", {"pool": "pool-2"})], [[], []], id="other pool"),
        pytest.param([rule("r", {"device": "dev-2"})], [[], [TAINT]], id="device"),
        pytest.param([rule("r", {"device": "dev-3"})], [[], []], id="other device"),
        pytest.param(
            [rule("r", {"driver": "driver-a", "pool": "pool-1", "device": "dev-1"})],
            [[TAINT], []],
            id="driver, pool and device",
        ),
        pytest.param(
            [rule("r", {"driver": "driver-a", "pool": "pool-2", "device": "dev-1"})],
            [[], []],
            id="all criteria must match",
        ),
        pytest.param(
            [rule("a", {"device": "dev-1"}), rule("b", {"device": "dev-1"}, OWN)],
            [[TAINT, OWN], []],
            id="one taint per matching rule",
        ),
        pytest.param(
            [{"metadata": {"name": "r"}, "spec": {"deviceSelector": {}}}],
            [[], []],
            id="a rule without a taint adds none",
        ),
    ],
)
def test_patch(rules: list[Json], want: list[list[Json]]) -> None:
    before = copy.deepcopy(TWO)
    (patched,) = taint_rules.patch_all([TWO], rules)
    assert taints_of(patched) == want
    assert before == TWO  # the informer's object is never changed
    if want == [[], []]:
        assert patched is TWO


def test_rule_taints_follow_the_drivers_own() -> None:
    owned = resource_slice("s", "node-1", "pool-1", "driver-a", device("dev-1", taints=[OWN]))
    (patched,) = taint_rules.patch_all([owned], [rule("r", {})])
    assert taints_of(patched) == [[OWN, TAINT]]


def test_rules_apply_in_name_order() -> None:
    rules = [rule("b", {}, OWN), rule("a", {})]
    (patched,) = taint_rules.patch_all([OTHER_POOL], rules)
    assert taints_of(patched) == [[TAINT, OWN]]


EFFECT_CHANGED = rule("r", {"pool": "pool-1"}, {**TAINT, "effect": "NoExecute"})


@pytest.mark.parametrize(
    ("before", "after", "changed", "want"),
    [
        pytest.param(
            [],
            [rule("r", {"pool": "pool-1"})],
            (None, rule("r", {"pool": "pool-1"})),
            {"s": ([[], []], [[TAINT], [TAINT]])},
            id="added rule taints its pool's slice",
        ),
        pytest.param(
            [],
            [rule("r", {"pool": "pool-3"})],
            (None, rule("r", {"pool": "pool-3"})),
            {},
            id="added rule matching nothing",
        ),
        pytest.param(
            [],
            [rule("r", {"pool": "pool-1", "device": "dev-3"})],
            (None, rule("r", {"pool": "pool-1", "device": "dev-3"})),
            {},
            id="added rule for a device the pool lacks",
        ),
        pytest.param(
            [rule("r", {"pool": "pool-1"})],
            [],
            (rule("r", {"pool": "pool-1"}), None),
            {"s": ([[TAINT], [TAINT]], [[], []])},
            id="deleted rule",
        ),
        pytest.param(
            [rule("r", {"pool": "pool-1"})],
            [],
            ({"metadata": {"name": "r"}}, None),
            {"s": ([[TAINT], [TAINT]], [[], []])},
            id="deleted rule found by a relist: every slice looked at",
        ),
        pytest.param(
            [rule("r", {"pool": "pool-1"})],
            [rule("r", {"pool": "pool-2"})],
            (rule("r", {"pool": "pool-1"}), rule("r", {"pool": "pool-2"})),
            {"s": ([[TAINT], [TAINT]], [[], []]), "o": ([[]], [[TAINT]])},
            id="moved rule: both pools",
        ),
        pytest.param(
            [rule("r", {"pool": "pool-1"})],
            [EFFECT_CHANGED],
            (rule("r", {"pool": "pool-1"}), EFFECT_CHANGED),
            {"s": ([[TAINT], [TAINT]], [[EFFECT_CHANGED["spec"]["taint"]]] * 2)},
            id="changed effect",
        ),
        pytest.param(
            [rule("r", {"pool": "pool-1"})],
            [{**rule("r", {"pool": "pool-1"}), "status": {"conditions": []}}],
            (rule("r", {"pool": "pool-1"}), rule("r", {"pool": "pool-1"})),
            {},
            id="status only: no slice changes",
        ),
        pytest.param(
            [rule("a", {"pool": "pool-1"})],
            [rule("a", {"pool": "pool-1"}), rule("b", {"pool": "pool-1"})],
            (None, rule("b", {"pool": "pool-1"})),
            {"s": ([[TAINT], [TAINT]], [[TAINT, TAINT], [TAINT, TAINT]])},
            id="a second rule with the same taint",
        ),
    ],
)
def test_slice_updates(
    before: list[Json],
    after: list[Json],
    changed: tuple[Json | None, Json | None],
    want: dict[str, tuple[list[list[Json]], list[list[Json]]]],
) -> None:
    updates = taint_rules.slice_updates([TWO, OTHER_POOL], before, after, changed)
    got = {new["metadata"]["name"]: (taints_of(old), taints_of(new)) for old, new in updates}
    assert got == want


TAINT_A = (listers.DEVICE_TAINT_RULE, rule("broken-a", {"driver": DRIVER, "pool": "node-a"}))


def test_a_rule_keeps_the_device_from_pods_that_do_not_tolerate_it() -> None:
    handle = store(GPU_CLASS, SLICE_A, TAINT_A, (listers.RESOURCE_CLAIM, claim("c")))
    plugin = dra.DynamicResources(cast(Handle, handle))
    state = CycleState()
    plugin.pre_filter(state, claiming_pod("p", "c"), snapshot_of(NODES))
    assert plugin.filter(state, claiming_pod("p", "c"), node_infos()["node-a"]) == Status.of(
        Code.UNSCHEDULABLE_AND_UNRESOLVABLE, dra.ERR_CANNOT_ALLOCATE
    )


@pytest.mark.parametrize(
    "toleration",
    [
        pytest.param({"key": TAINT["key"], "operator": "Exists"}, id="exists"),
        pytest.param({"key": TAINT["key"], "value": "yes", "effect": "NoSchedule"}, id="equal"),
    ],
)
def test_a_tolerating_request_gets_the_tainted_device(toleration: Json) -> None:
    tolerant = claim("c", request("gpu", "gpu", 1, tolerations=[toleration]))
    handle = store(GPU_CLASS, SLICE_A, TAINT_A, (listers.RESOURCE_CLAIM, tolerant))
    plugin = dra.DynamicResources(cast(Handle, handle))
    state = CycleState()
    p = claiming_pod("p", "c")
    plugin.pre_filter(state, p, snapshot_of(NODES))
    assert plugin.filter(state, p, node_infos()["node-a"]) is None
    assert plugin.reserve(state, p, "node-a") is None


def test_rules_added_and_removed_take_effect_in_the_next_cycle() -> None:
    handle = store(GPU_CLASS, SLICE_A, (listers.RESOURCE_CLAIM, claim("c")))
    objects: ObjectStore = handle.objects
    plugin = dra.DynamicResources(cast(Handle, handle))
    p = claiming_pod("p", "c")

    def verdict() -> Status | None:
        state = CycleState()
        plugin.pre_filter(state, p, snapshot_of(NODES))
        return plugin.filter(state, p, node_infos()["node-a"])

    assert verdict() is None
    objects.apply(listers.DEVICE_TAINT_RULE, ADDED, TAINT_A[1])
    assert verdict() == Status.of(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, dra.ERR_CANNOT_ALLOCATE)
    objects.apply(listers.DEVICE_TAINT_RULE, DELETED, TAINT_A[1])
    assert verdict() is None
