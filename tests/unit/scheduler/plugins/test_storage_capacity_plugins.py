"""CheckCSIStorageCapacity and LvmVolumeCapacity: which claims count, how capacity is matched,
their reasons and codes, and LvmVolumeCapacityArgs' defaults and validation."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from corral.cli import main
from corral.scheduler.backend.records import pod_from_json
from corral.scheduler.config import ValidationError, plugin_args
from corral.scheduler.framework import listers
from corral.scheduler.framework.cycle_state import CycleState
from corral.scheduler.framework.status import Code, Status
from corral.scheduler.plugins import check_csi_storage_capacity as csi
from corral.scheduler.plugins import lvm_volume_capacity as lvm
from corral.testing.builders import node, pod, snapshot_of
from corral.testing.framework import FakeHandle

Obj = tuple[str, dict[str, Any]]
U = Code.UNSCHEDULABLE
WFFC = "WaitForFirstConsumer"
ZONE = "topology.kubernetes.io/zone"


def handle(*objects: Obj) -> FakeHandle:
    """A Handle over ``(kind, object)`` pairs."""
    return FakeHandle(*({"kind": kind, **obj} for kind, obj in objects))


def claim(name: str, sc: str, size: str | None = "1Gi", *, volume: str = "") -> Obj:
    spec: dict[str, Any] = {"storageClassName": sc, "volumeName": volume}
    if size is not None:
        spec["resources"] = {"requests": {"storage": size}}
    return listers.PERSISTENT_VOLUME_CLAIM, {
        "metadata": {"name": name, "namespace": "default"},
        "spec": spec,
    }


def storage_class(
    name: str, provisioner: str, mode: str = WFFC, parameters: dict[str, str] | None = None
) -> Obj:
    return listers.STORAGE_CLASS, {
        "metadata": {"name": name},
        "provisioner": provisioner,
        "volumeBindingMode": mode,
        "parameters": parameters or {},
    }


def csi_driver(name: str, capacity: bool = True) -> Obj:
    return listers.CSI_DRIVER, {"metadata": {"name": name}, "spec": {"storageCapacity": capacity}}


def capacity(
    name: str, sc: str, size: str | None, zone: str | None, maximum: str | None = None
) -> Obj:
    obj: dict[str, Any] = {"metadata": {"name": name, "namespace": "kube-system"}}
    obj["storageClassName"] = sc
    if size is not None:
        obj["capacity"] = size
    if maximum is not None:
        obj["maximumVolumeSize"] = maximum
    if zone is not None:
        obj["nodeTopology"] = {"matchLabels": {ZONE: zone}}
    return listers.CSI_STORAGE_CAPACITY, obj


def pod_with(*claims: str, ephemeral: dict[str, Any] | None = None) -> dict[str, Any]:
    raw = pod("p")
    raw["spec"]["volumes"] = [
        {"name": f"v{i}", "persistentVolumeClaim": {"claimName": c}} for i, c in enumerate(claims)
    ]
    if ephemeral is not None:
        raw["spec"]["volumes"].append({"name": "scratch", "ephemeral": ephemeral})
    return raw


# --- CheckCSIStorageCapacity -------------------------------------------------------------------

CSI_BASE: tuple[Obj, ...] = (storage_class("fast", "csi.example"), csi_driver("csi.example"))
NOT_ENOUGH = Status.of(U, csi.reason("fast"))


def run_csi(objects: tuple[Obj, ...], raw: dict[str, Any], zone: str) -> tuple[str, Status | None]:
    """('skip' | 'filter'), and the zone-labelled node's status (PreFilter's if it failed)."""
    plugin = csi.new(None, handle(*objects))
    state, info = CycleState(), pod_from_json(raw)
    snapshot = snapshot_of([node("n", labels={ZONE: zone})])
    _, status = plugin.pre_filter(state, info, snapshot)
    if status is not None and status.code == Code.SKIP:
        return "skip", None
    if status is not None:
        return "pre_filter", status
    return "filter", plugin.filter(state, info, snapshot.node_info(0))


@pytest.mark.parametrize(
    ("objects", "raw", "want"),
    [
        pytest.param(CSI_BASE, pod("p"), ("skip", None), id="no volumes"),
        pytest.param(
            (*CSI_BASE, claim("a", "fast"), capacity("c", "fast", "10Gi", "a")),
            pod_with("a"),
            ("filter", None),
            id="fits in the node's zone",
        ),
        pytest.param(
            (*CSI_BASE, claim("a", "fast"), capacity("c", "fast", "10Gi", "b")),
            pod_with("a"),
            ("filter", NOT_ENOUGH),
            id="capacity only in another zone",
        ),
        pytest.param(
            (*CSI_BASE, claim("a", "fast", "20Gi"), capacity("c", "fast", "10Gi", "a")),
            pod_with("a"),
            ("filter", NOT_ENOUGH),
            id="too small",
        ),
        pytest.param(
            (*CSI_BASE, claim("a", "fast", "10Gi"), capacity("c", "fast", "10Gi", "a")),
            pod_with("a"),
            ("filter", None),
            id="exactly enough",
        ),
        pytest.param(
            (
                *CSI_BASE,
                claim("a", "fast", "6Gi"),
                claim("b", "fast", "6Gi"),
                capacity("c", "fast", "10Gi", "a"),
            ),
            pod_with("a", "b"),
            ("filter", NOT_ENOUGH),
            id="claims of one class are summed (upstream checks each alone)",
        ),
        pytest.param(
            (*CSI_BASE, claim("a", "fast", "6Gi"), capacity("c", "fast", "10Gi", "a", "5Gi")),
            pod_with("a"),
            ("filter", NOT_ENOUGH),
            id="largest claim over maximumVolumeSize",
        ),
        pytest.param(
            (*CSI_BASE, claim("a", "fast", "5Gi"), capacity("c", "fast", "10Gi", "a", "5Gi")),
            pod_with("a"),
            ("filter", None),
            id="within maximumVolumeSize and capacity",
        ),
        pytest.param(
            (*CSI_BASE, claim("a", "fast"), capacity("c", "fast", None, "a", "5Gi")),
            pod_with("a"),
            ("filter", NOT_ENOUGH),
            id="capacity unset: cannot hold anything",
        ),
        pytest.param(
            (*CSI_BASE, claim("a", "fast"), capacity("c", "fast", "10Gi", None)),
            pod_with("a"),
            ("filter", NOT_ENOUGH),
            id="nodeTopology unset selects no node",
        ),
        pytest.param(
            (*CSI_BASE, claim("a", "fast"), capacity("c", "other", "10Gi", "a")),
            pod_with("a"),
            ("filter", NOT_ENOUGH),
            id="capacity of another class",
        ),
        pytest.param(
            (*CSI_BASE, claim("a", "fast", volume="pv-1")),
            pod_with("a"),
            ("skip", None),
            id="bound claim: nothing to provision",
        ),
        pytest.param(
            (storage_class("fast", "csi.example", "Immediate"), claim("a", "fast")),
            pod_with("a"),
            ("skip", None),
            id="immediate class: provisioned before scheduling",
        ),
        pytest.param(
            (storage_class("fast", "csi.example"), claim("a", "fast")),
            pod_with("a"),
            ("skip", None),
            id="no CSIDriver object: capacity not tracked",
        ),
        pytest.param(
            (
                storage_class("fast", "csi.example"),
                csi_driver("csi.example", False),
                claim("a", "fast"),
            ),
            pod_with("a"),
            ("skip", None),
            id="CSIDriver without storageCapacity",
        ),
        pytest.param(
            (*CSI_BASE, claim("a", "fast", None)),
            pod_with("a"),
            ("skip", None),
            id="claim requests no storage",
        ),
        pytest.param(
            (claim("a", "missing"),),
            pod_with("a"),
            ("skip", None),
            id="class not found: nobody provisions it",
        ),
        pytest.param(
            CSI_BASE,
            pod_with("a"),
            (
                "pre_filter",
                Status.of(
                    Code.UNSCHEDULABLE_AND_UNRESOLVABLE, 'persistentvolumeclaim "a" not found'
                ),
            ),
            id="missing claim",
        ),
        pytest.param(
            (*CSI_BASE, capacity("c", "fast", "1Gi", "a")),
            pod_with(
                ephemeral={
                    "volumeClaimTemplate": {
                        "spec": {
                            "storageClassName": "fast",
                            "resources": {"requests": {"storage": "2Gi"}},
                        }
                    }
                }
            ),
            ("filter", NOT_ENOUGH),
            id="ephemeral claim not created yet: its template counts",
        ),
    ],
)
def test_check_csi_storage_capacity(
    objects: tuple[Obj, ...], raw: dict[str, Any], want: tuple[str, Status | None]
) -> None:
    assert run_csi(objects, raw, "a") == want


def test_check_csi_storage_capacity_filter_without_pre_filter() -> None:
    objects = (*CSI_BASE, claim("a", "fast", "2Gi"), capacity("c", "fast", "1Gi", "a"))
    plugin = csi.new(None, handle(*objects))
    snapshot = snapshot_of([node("n", labels={ZONE: "a"})])
    status = plugin.filter(CycleState(), pod_from_json(pod_with("a")), snapshot.node_info(0))
    assert status == NOT_ENOUGH


def test_check_csi_storage_capacity_names_the_plugin_and_class() -> None:
    assert csi.reason("fast") == (
        'node(s) did not have enough CSI storage capacity for StorageClass "fast" '
        "(CheckCSIStorageCapacity)"
    )


# --- LvmVolumeCapacity -------------------------------------------------------------------------

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


# --- the demo of docs/plugins/{CheckCSIStorageCapacity,LvmVolumeCapacity}.md ------------------


def test_seed_sample_demo_in_corral_simulate(capsys: pytest.CaptureFixture[str]) -> None:
    """examples/simulate/seed-storage.yaml under config/samples/seed-storage.yaml: two claims
    that fit zone b one by one but not together go to zone a; LVM claims go where the device
    class has room, or nowhere."""
    root = Path(__file__).resolve().parents[4]
    code = main(["simulate", "-f", str(root / "config" / "samples" / "seed-storage.yaml"),
                 "-f", str(root / "examples" / "simulate" / "seed-storage.yaml")])  # fmt: skip
    assert code == 1
    assert capsys.readouterr().out.splitlines() == [
        "default/two-zonal-claims -> node-a  (evaluated 2 nodes, 1 feasible)",
        "default/lvm-db -> node-b  (evaluated 2 nodes, 1 feasible)",
        "default/lvm-archive: unschedulable: 0/2 nodes are available: 2 node(s) did not have "
        'enough free LVM capacity in device class "ssd" (LvmVolumeCapacity).',
    ]
