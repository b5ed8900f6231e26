"""The volume plugins' PVC/PV/StorageClass lookups (shared in ``plugins.volumes``): upstream's
messages and codes when an object is missing, and what a found claim leads to."""

from __future__ import annotations

from typing import Any

import pytest

from corral.scheduler.backend.records import pod_from_json
from corral.scheduler.framework import listers
from corral.scheduler.framework.cycle_state import CycleState
from corral.scheduler.framework.status import Code, Status
from corral.scheduler.plugins import (
    node_volume_limits,
    volume_binding,
    volume_restrictions,
    volume_zone,
)
from corral.testing.builders import node, pod, snapshot_of
from corral.testing.framework import FakeHandle

UUR = Code.UNSCHEDULABLE_AND_UNRESOLVABLE
MISSING_CLAIM = Status.of(UUR, 'persistentvolumeclaim "data" not found')


def handle(*objects: tuple[str, dict[str, Any]]) -> FakeHandle:
    """A Handle over ``(kind, object)`` pairs."""
    return FakeHandle(*({"kind": kind, **obj} for kind, obj in objects))


def claim(
    name: str = "data", *, volume: str = "", storage_class: str = "", modes: tuple[str, ...] = ()
) -> tuple[str, dict[str, Any]]:
    spec: dict[str, Any] = {"volumeName": volume, "storageClassName": storage_class}
    if modes:
        spec["accessModes"] = list(modes)
    metadata: dict[str, Any] = {"name": name, "namespace": "default"}
    if volume:  # as the PV controller leaves a claim it has bound
        metadata["annotations"] = {"pv.kubernetes.io/bind-completed": "yes"}
    return listers.PERSISTENT_VOLUME_CLAIM, {"metadata": metadata, "spec": spec}


def storage_class(name: str, **fields: str) -> tuple[str, dict[str, Any]]:
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


@pytest.mark.parametrize(
    "module", [volume_binding, volume_zone, volume_restrictions], ids=lambda m: m.NAME
)
def test_missing_claim_in_pre_filter(module: Any) -> None:
    assert pre_filter_status(module.new(None, handle()), PVC_POD) == MISSING_CLAIM


def test_node_volume_limits_missing_claim_in_filter() -> None:
    plugin = node_volume_limits.new(None, handle())
    snapshot = snapshot_of([node("n")])
    status = plugin.filter(CycleState(), pod_from_json(PVC_POD), snapshot.node_info(0))
    assert status == Status.of(
        UUR, 'looking up PVC default/data: persistentvolumeclaim "data" not found'
    )


@pytest.mark.parametrize(
    ("objects", "raw", "want"),
    [
        pytest.param(
            (),
            EPHEMERAL_POD,
            Status.of(
                UUR,
                'waiting for ephemeral volume controller to create the persistentvolumeclaim "p-v"',
            ),
            id="ephemeral claim not created yet",
        ),
        pytest.param(
            (claim(storage_class="fast"), storage_class("fast")),
            PVC_POD,
            Status.of(UUR, volume_binding.ERR_REASON_UNBOUND_IMMEDIATE),
            id="unbound immediate",
        ),
        pytest.param(
            (
                claim(storage_class="wffc"),
                storage_class("wffc", volumeBindingMode="WaitForFirstConsumer"),
            ),
            PVC_POD,
            None,
            id="unbound wait-for-first-consumer waits for the node",
        ),
        pytest.param((claim(volume="pv-1"),), PVC_POD, None, id="bound to a missing PV"),
    ],
)
def test_volume_binding_pre_filter(
    objects: tuple[tuple[str, dict[str, Any]], ...], raw: dict[str, Any], want: Status | None
) -> None:
    assert pre_filter_status(volume_binding.new(None, handle(*objects)), raw) == want


@pytest.mark.parametrize(
    ("objects", "want"),
    [
        pytest.param(
            (claim(volume="pv-1"),),
            Status.of(UUR, 'persistentvolume "pv-1" not found'),
            id="missing PV",
        ),
        pytest.param(
            (claim(storage_class="gone"),),
            Status.of(UUR, 'storageclass.storage.k8s.io "gone" not found'),
            id="missing StorageClass",
        ),
        pytest.param(
            (
                claim(storage_class="wffc"),
                storage_class("wffc", volumeBindingMode="WaitForFirstConsumer"),
            ),
            None,
            id="unbound wait-for-first-consumer is passed over",
        ),
    ],
)
def test_volume_zone_pre_filter(
    objects: tuple[tuple[str, dict[str, Any]], ...], want: Status | None
) -> None:
    assert pre_filter_status(volume_zone.new(None, handle(*objects)), PVC_POD) == want


def test_node_volume_limits_counts_an_unbound_claim_by_provisioner() -> None:
    fake = handle(
        claim(storage_class="csi"),
        storage_class("csi", provisioner="ebs.csi"),
        (
            listers.CSI_NODE,
            {
                "metadata": {"name": "n"},
                "spec": {"drivers": [{"name": "ebs.csi", "allocatable": {"count": 0}}]},
            },
        ),
    )
    plugin = node_volume_limits.new(None, fake)
    snapshot = snapshot_of([node("n")])
    status = plugin.filter(CycleState(), pod_from_json(PVC_POD), snapshot.node_info(0))
    assert status == Status.of(
        Code.UNSCHEDULABLE, node_volume_limits.ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED
    )


def volume_pod(*volumes: dict[str, Any]) -> dict[str, Any]:
    return {**pod("p"), "spec": {**pod("p")["spec"], "volumes": list(volumes)}}


@pytest.mark.parametrize(
    ("raw", "skipped"),
    [
        pytest.param(pod("p"), True, id="no volumes"),
        pytest.param(volume_pod({"name": "kube-api-access", "projected": {"sources": []}}),
                     True, id="the ServiceAccount token's projected volume"),
        pytest.param(volume_pod({"name": "scratch", "emptyDir": {}}, {"name": "cfg",
                     "configMap": {"name": "c"}}), True, id="emptyDir and configMap"),
        pytest.param(volume_pod({"name": "inline", "csi": {"driver": "d.csi"}}), True,
                     id="CSI inline volumes are not attached"),
        pytest.param(PVC_POD, False, id="a claim"),
        pytest.param(volume_pod({"name": "e", "ephemeral": {"volumeClaimTemplate": {}}}),
                     False, id="a generic ephemeral volume"),
        pytest.param(volume_pod({"name": "pd", "gcePersistentDisk": {"pdName": "x"}}), False,
                     id="a migratable in-tree volume"),
    ],
)  # fmt: skip
def test_node_volume_limits_pre_filter_skips_like_upstream(
    raw: dict[str, Any], skipped: bool
) -> None:
    status = pre_filter_status(node_volume_limits.new(None, handle()), raw)
    assert (status is not None and status.code is Code.SKIP) is skipped
