"""The informer kinds come from the plugin declarations' reads (one source with their RBAC), and
the object store keeps what the informers give it."""

from __future__ import annotations

import pytest

from corral.scheduler.backend.objects import (
    ADDED,
    BOOKMARK,
    DELETED,
    MODIFIED,
    OPTIONAL_KINDS,
    WATCHED,
    ObjectStore,
    kinds_for,
    unwatched_reads,
)
from corral.scheduler.config import IN_TREE, PluginDeclaration
from corral.scheduler.framework import listers

_SPREAD = ["Service", "ReplicationController", "ReplicaSet", "StatefulSet"]
_PV = ["PersistentVolumeClaim", "PersistentVolume"]


def _declared(name: str) -> PluginDeclaration:
    (declaration,) = [d for d in IN_TREE if d.name == name]
    return declaration


def test_every_in_tree_read_has_an_informer() -> None:
    assert unwatched_reads(IN_TREE) == []


@pytest.mark.parametrize(
    ("plugin", "kinds"),
    [
        # The kinds each in-tree plugin's informers were hand-listed with before they were
        # derived from the declarations: the derivation starts the same informers.
        pytest.param("PodTopologySpread", _SPREAD, id="PodTopologySpread"),
        pytest.param("InterPodAffinity", ["Namespace"], id="InterPodAffinity"),
        pytest.param("VolumeBinding",
                     [*_PV, "StorageClass", "CSINode", "CSIDriver", "CSIStorageCapacity"],
                     id="VolumeBinding"),
        pytest.param("VolumeZone", [*_PV, "StorageClass"], id="VolumeZone"),
        pytest.param("VolumeRestrictions", ["PersistentVolumeClaim"], id="VolumeRestrictions"),
        pytest.param("NodeVolumeLimits",
                     [*_PV, "StorageClass", "CSINode", "CSIDriver", "VolumeAttachment"],
                     id="NodeVolumeLimits"),
        pytest.param("DefaultPreemption", ["PodDisruptionBudget"], id="DefaultPreemption"),
        pytest.param("DynamicResources",
                     ["ResourceClaim", "ResourceSlice", "DeviceClass", "DeviceTaintRule"],
                     id="DynamicResources"),
        pytest.param("CheckCSIStorageCapacity",
                     [*_PV, "StorageClass", "CSIDriver", "CSIStorageCapacity"],
                     id="CheckCSIStorageCapacity"),
        pytest.param("LvmVolumeCapacity", [*_PV, "StorageClass"], id="LvmVolumeCapacity"),
        pytest.param("NodeResourcesFit", [], id="NodeResourcesFit-reads-nothing"),
    ],
)  # fmt: skip
def test_a_plugins_informers_are_its_declared_reads(plugin: str, kinds: list[str]) -> None:
    assert sorted(kinds_for([_declared(plugin)])) == sorted(kinds)


def test_kinds_come_in_watched_order_once_each() -> None:
    kinds = kinds_for(IN_TREE)
    order = [kind for kind, _ in WATCHED.values()]
    assert kinds == [k for k in order if k in kinds]
    assert len(kinds) == len(set(kinds))


def test_an_out_of_tree_plugins_reads_start_informers() -> None:
    plugin = PluginDeclaration(
        "ReadsServicesAndConfigMaps",
        "example:new",
        frozenset({"filter"}),
        "",
        cluster_reads=(("", "services"), ("", "configmaps")),
    )
    assert kinds_for([plugin]) == [listers.SERVICE]
    assert unwatched_reads([plugin]) == [("ReadsServicesAndConfigMaps", ("", "configmaps"))]


def _obj(name: str, namespace: str = "ns", rv: str = "1") -> dict[str, object]:
    return {"metadata": {"name": name, "namespace": namespace, "resourceVersion": rv}}


@pytest.mark.parametrize(
    ("kind", "optional"),
    [
        # resource.k8s.io/v1 is served from 1.34 on: against v1.33 the engine waited for these
        # informers for ever and scheduled nothing (make compat: 1 of 8).
        pytest.param(listers.RESOURCE_CLAIM, True, id="ResourceClaim: v1 from 1.34"),
        pytest.param(listers.RESOURCE_SLICE, True, id="ResourceSlice: v1 from 1.34"),
        pytest.param(listers.DEVICE_CLASS, True, id="DeviceClass: v1 from 1.34"),
        pytest.param(listers.DEVICE_TAINT_RULE, True, id="DeviceTaintRule: v1 from 1.37"),
        pytest.param(listers.SP_POD_GROUP, True, id="PodGroup: a CRD"),
        # GA for years: a 404 there is a broken server or path, not an older release.
        pytest.param(listers.SERVICE, False, id="Service: core"),
        pytest.param(listers.PERSISTENT_VOLUME_CLAIM, False, id="PVC: core"),
        pytest.param(listers.CSI_STORAGE_CAPACITY, False, id="CSIStorageCapacity: v1 since 1.24"),
    ],
)
def test_kinds_an_older_server_may_not_serve_sync_empty(kind: str, optional: bool) -> None:
    assert (kind in OPTIONAL_KINDS) is optional


def test_the_store_applies_watch_events() -> None:
    store = ObjectStore()
    store.apply("Service", ADDED, _obj("a"))
    store.apply("Service", ADDED, _obj("b", "other"))
    store.apply("Service", MODIFIED, _obj("a", rv="2"))
    store.apply("Service", BOOKMARK, _obj("ignored"))
    assert store.get("Service", "ns", "a") == _obj("a", rv="2")
    assert [o["metadata"] for o in store.list("Service", "other")] == [
        _obj("b", "other")["metadata"]
    ]
    generation = store.generation("Service")
    store.apply("Service", DELETED, _obj("a"))
    assert store.get("Service", "ns", "a") is None
    assert store.generation("Service") == generation + 1
    store.replace("Service", [_obj("c")])
    assert [o["metadata"]["name"] for o in store.list("Service")] == ["c"]  # type: ignore[index]


def test_an_unknown_event_type_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown watch event type 'ERROR'"):
        ObjectStore().apply("Service", "ERROR", _obj("a"))
