"""Pods with volumes and the claims and classes they name, as ``(kind, object)`` pairs, for the
volume plugins' PreFilter tables (VolumeBinding, VolumeZone, VolumeRestrictions,
NodeVolumeLimits)."""

from __future__ import annotations

from typing import Any

from corral.scheduler.backend.records import pod_from_json
from corral.scheduler.framework import listers
from corral.scheduler.framework.cycle_state import CycleState
from corral.scheduler.framework.status import Code, Status
from corral.testing.builders import node, pod, snapshot_of
from corral.testing.framework import FakeHandle

UUR = Code.UNSCHEDULABLE_AND_UNRESOLVABLE
MISSING_CLAIM = Status.of(UUR, 'persistentvolumeclaim "data" not found')


def pairs_handle(*objects: tuple[str, dict[str, Any]]) -> FakeHandle:
    """A Handle over ``(kind, object)`` pairs."""
    return FakeHandle(*({"kind": kind, **obj} for kind, obj in objects))


def claim_pair(
    name: str = "data", *, volume: str = "", storage_class: str = "", modes: tuple[str, ...] = ()
) -> tuple[str, dict[str, Any]]:
    spec: dict[str, Any] = {"volumeName": volume, "storageClassName": storage_class}
    if modes:
        spec["accessModes"] = list(modes)
    metadata: dict[str, Any] = {"name": name, "namespace": "default"}
    if volume:  # as the PV controller leaves a claim it has bound
        metadata["annotations"] = {"pv.kubernetes.io/bind-completed": "yes"}
    return listers.PERSISTENT_VOLUME_CLAIM, {"metadata": metadata, "spec": spec}


def class_pair(name: str, **fields: str) -> tuple[str, dict[str, Any]]:
    return listers.STORAGE_CLASS, {"metadata": {"name": name}, **fields}


def with_volume(volume: dict[str, Any]) -> dict[str, Any]:
    raw = pod("p")
    raw["spec"]["volumes"] = [{"name": "v", **volume}]
    return raw


PVC_POD = with_volume({"persistentVolumeClaim": {"claimName": "data"}})
EPHEMERAL_POD = with_volume({"ephemeral": {}})


def pre_filter_status(plugin: Any, raw: dict[str, Any]) -> Status | None:
    _, status = plugin.pre_filter(CycleState(), pod_from_json(raw), snapshot_of([node("n")]))
    return status  # type: ignore[no-any-return]
