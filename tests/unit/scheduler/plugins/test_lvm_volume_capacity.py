"""LvmVolumeCapacity (Corral): which claims count, how a node's device-class capacity is
matched, the reason and code, and LvmVolumeCapacityArgs' defaults and validation."""

from __future__ import annotations

from typing import Any

import pytest

from corral.scheduler.backend.records import pod_from_json
from corral.scheduler.config import ValidationError, plugin_args
from corral.scheduler.framework.cycle_state import CycleState
from corral.scheduler.framework.status import Code, Status
from corral.scheduler.plugins import lvm_volume_capacity as lvm
from corral.testing.builders import node, pod, snapshot_of
from support.capacity_objects import (
    Obj,
    U,
    claim,
    handle,
    pod_with,
    storage_class,
)

LVM_BASE: tuple[Obj, ...] = (
    storage_class("lvm", "topolvm.io"),
    storage_class("lvm-ssd", "topolvm.io", parameters={"topolvm.io/device-class": "ssd"}),
    storage_class("other", "csi.example"),
)


def run_lvm(
    objects: tuple[Obj, ...],
    raw: dict[str, Any],
    annotations: dict[str, str],
    args: dict[str, Any] | None = None,
) -> Status | None:
    plugin = lvm.new(args, handle(*objects))
    n = node("n")
    n["metadata"]["annotations"] = annotations
    snapshot = snapshot_of([n])
    return plugin.filter(CycleState(), pod_from_json(raw), snapshot.node_info(0))


def gi(n: int) -> str:
    return str(n * 2**30)


@pytest.mark.parametrize(
    ("objects", "raw", "annotations", "want"),
    [
        pytest.param(LVM_BASE, pod("p"), {}, None, id="no volumes"),
        pytest.param(
            (*LVM_BASE, claim("a", "lvm", "5Gi")),
            pod_with("a"),
            {"capacity.topolvm.io/00default": gi(10)},
            None,
            id="fits the default device class",
        ),
        pytest.param(
            (*LVM_BASE, claim("a", "lvm", "10Gi")),
            pod_with("a"),
            {"capacity.topolvm.io/00default": gi(10)},
            None,
            id="exactly the free capacity",
        ),
        pytest.param(
            (*LVM_BASE, claim("a", "lvm-ssd", "5Gi")),
            pod_with("a"),
            {"capacity.topolvm.io/ssd": gi(4), "capacity.topolvm.io/00default": gi(100)},
            Status.of(U, lvm.reason_insufficient("ssd")),
            id="too little in its device class",
        ),
        pytest.param(
            (*LVM_BASE, claim("a", "lvm", "3Gi"), claim("b", "lvm", "3Gi")),
            pod_with("a", "b"),
            {"capacity.topolvm.io/00default": gi(5)},
            Status.of(U, lvm.reason_insufficient("00default")),
            id="claims of one device class are summed",
        ),
        pytest.param(
            (*LVM_BASE, claim("a", "lvm", "3Gi"), claim("b", "lvm-ssd", "3Gi")),
            pod_with("a", "b"),
            {"capacity.topolvm.io/00default": gi(5), "capacity.topolvm.io/ssd": gi(5)},
            None,
            id="device classes counted apart",
        ),
        pytest.param(
            (*LVM_BASE, claim("a", "lvm-ssd")),
            pod_with("a"),
            {"capacity.topolvm.io/00default": gi(100)},
            Status.of(U, lvm.reason_missing("ssd")),
            id="node without the device class",
        ),
        pytest.param(
            (*LVM_BASE, claim("a", "lvm")),
            pod_with("a"),
            {"capacity.topolvm.io/00default": "lots"},
            Status.of(U, lvm.reason_insufficient("00default")),
            id="unparsable annotation counts as 0",
        ),
        pytest.param(
            (*LVM_BASE, claim("a", "other", "100Gi")),
            pod_with("a"),
            {},
            None,
            id="not an LVM class",
        ),
        pytest.param(
            (*LVM_BASE, claim("a", "lvm", "100Gi", volume="pv-1")),
            pod_with("a"),
            {},
            None,
            id="bound claim: already provisioned",
        ),
        pytest.param(
            (storage_class("lvm", "topolvm.io", "Immediate"), claim("a", "lvm", "100Gi")),
            pod_with("a"),
            {},
            None,
            id="immediate class: not provisioned for this node",
        ),
        pytest.param(
            LVM_BASE,
            pod_with("a"),
            {},
            Status.of(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, 'persistentvolumeclaim "a" not found'),
            id="missing claim",
        ),
    ],
)
def test_lvm_volume_capacity(
    objects: tuple[Obj, ...], raw: dict[str, Any], annotations: dict[str, str], want: Status | None
) -> None:
    assert run_lvm(objects, raw, annotations) == want


def test_lvm_volume_capacity_args_choose_provisioners_and_default_class() -> None:
    objects = (storage_class("lvm", "lvm.example"), claim("a", "lvm", "5Gi"))
    args = {"provisioners": ["lvm.example"], "defaultDeviceClass": "hdd"}
    assert run_lvm(objects, pod_with("a"), {"capacity.topolvm.io/hdd": gi(1)}, args) == Status.of(
        U, lvm.reason_insufficient("hdd")
    )
    assert run_lvm(objects, pod_with("a"), {}, None) is None  # not topolvm.io: not LVM


def test_lvm_volume_capacity_names_the_plugin_and_device_class() -> None:
    assert lvm.reason_insufficient("ssd") == (
        'node(s) did not have enough free LVM capacity in device class "ssd" (LvmVolumeCapacity)'
    )
    assert lvm.reason_missing("ssd") == 'node(s) had no LVM device class "ssd" (LvmVolumeCapacity)'


def test_lvm_volume_capacity_args_defaults() -> None:
    args = plugin_args("LvmVolumeCapacity", None)
    assert (args.provisioners, args.default_device_class) == (["topolvm.io"], "00default")


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        pytest.param(
            {"provisioners": ["topolvm.io", ""]}, "provisioners[1]: must not be empty", id="empty"
        ),
        pytest.param(
            {"defaultDeviceClass": "no/slash"},
            'defaultDeviceClass: "no/slash": not usable in the node annotation '
            '"capacity.topolvm.io/no/slash"',
            id="bad device class",
        ),
        pytest.param({"provisioner": ["x"]}, "provisioner", id="unknown field"),
        pytest.param({"provisioners": "topolvm.io"}, "provisioners", id="not a list"),
    ],
)
def test_lvm_volume_capacity_args_validation(raw: dict[str, Any], message: str) -> None:
    with pytest.raises(ValidationError) as err:
        plugin_args("LvmVolumeCapacity", raw)
    assert message in str(err.value)
