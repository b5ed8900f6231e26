"""The storage objects the capacity plugins read (CheckCSIStorageCapacity, LvmVolumeCapacity),
as ``(kind, object)`` pairs, and pods naming claims."""

from __future__ import annotations

from typing import Any

from corral.scheduler.framework import listers
from corral.scheduler.framework.status import Code
from corral.testing.builders import pod
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
