"""Dynamic provisioning end to end: `corral scheduler` with the real CSI external-provisioner
(publishing CSIStorageCapacity) and its driver (``csi_storage``), and the real PV controller."""

from __future__ import annotations

import uuid
from collections.abc import Callable

from corral.k8s import JSON, Client
from corral.testing import LocalCluster
from corral_dev.storage import TOPOLOGY_KEY, CsiStorage
from support.engine_process import EngineProcess, engine_config, pod, wait_until

GI = 1024**3
SELECTED_NODE = "volume.kubernetes.io/selected-node"


def zoned_nodes(fake_nodes: Callable[..., list[str]], namespace: str, count: int) -> dict[str, str]:
    """``count`` nodes of this test's pool, each in a zone of its own: node → zone."""
    out = {}
    for i in range(count):
        zone = f"{namespace}-z{i}"
        (name,) = fake_nodes(1, labels={"pool": namespace, TOPOLOGY_KEY: zone})
        out[name] = zone
    return out


def published(storage: CsiStorage, storage_class: str) -> int:
    return sum(1 for c in storage.capacities() if c.get("storageClassName") == storage_class)


def stateful_set(name: str, namespace: str, scheduler: str, storage_class: str) -> JSON:
    template = pod(name, namespace, scheduler, nodeSelector={"pool": namespace},
                   labels={"app": name})  # fmt: skip
    template["spec"]["containers"][0]["volumeMounts"] = [{"name": "data", "mountPath": "/data"}]
    return {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "replicas": 3,
            "podManagementPolicy": "Parallel",
            "serviceName": name,
            "selector": {"matchLabels": {"app": name}},
            "template": {"metadata": {"labels": {"app": name}}, "spec": template["spec"]},
            "volumeClaimTemplates": [{
                "metadata": {"name": "data"},
                "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": storage_class,
                         "resources": {"requests": {"storage": "1Gi"}}},
            }],
        },
    }  # fmt: skip


def test_stateful_set_claims_are_provisioned_where_corral_placed_the_pods(
    kube: Client,
    cluster: LocalCluster,
    namespace: str,
    fake_nodes: Callable[..., list[str]],
    engines: Callable[..., EngineProcess],
    csi_storage: CsiStorage,
) -> None:
    zones = zoned_nodes(fake_nodes, namespace, 3)
    csi_storage.register_nodes(zones)
    csi_storage.set_capacity(dict.fromkeys(zones.values(), 10 * GI))
    sc_name = f"{namespace}-csi"
    csi_storage.storage_class(sc_name)
    wait_until(
        "capacity published for the three zones", lambda: published(csi_storage, sc_name) >= 3
    )
    name = f"corral-{uuid.uuid4().hex[:6]}"
    engines(engine_config(cluster.kubeconfig, name))
    kube.create(stateful_set("db", namespace, name, sc_name))

    def pods() -> list[JSON]:
        return kube.list_items("v1", "Pod", namespace, label_selector="app=db")

    wait_until("3 pods bound", lambda: len(pods()) == 3 and all(
        p["spec"].get("nodeName") for p in pods()), timeout=120)  # fmt: skip
    wait_until("3 claims bound", lambda: all(
        c["status"].get("phase") == "Bound"
        for c in kube.list_items("v1", "PersistentVolumeClaim", namespace)
    ) and len(kube.list_items("v1", "PersistentVolumeClaim", namespace)) == 3)  # fmt: skip
    for p in pods():
        node = p["spec"]["nodeName"]
        claim = kube.get("v1", "PersistentVolumeClaim", f"data-{p['metadata']['name']}", namespace)
        assert claim["metadata"]["annotations"][SELECTED_NODE] == node
        volume = kube.get("v1", "PersistentVolume", claim["spec"]["volumeName"])
        terms = volume["spec"]["nodeAffinity"]["required"]["nodeSelectorTerms"]
        zones_of_volume = {v for t in terms for e in t["matchExpressions"]
                           if e["key"] == TOPOLOGY_KEY for v in e["values"]}  # fmt: skip
        assert zones_of_volume == {zones[node]}, (node, terms)


def test_too_little_published_capacity_then_enough(
    kube: Client,
    cluster: LocalCluster,
    namespace: str,
    fake_nodes: Callable[..., list[str]],
    engines: Callable[..., EngineProcess],
    csi_storage: CsiStorage,
) -> None:
    zones = zoned_nodes(fake_nodes, namespace, 2)
    csi_storage.register_nodes(zones)
    csi_storage.set_capacity(dict.fromkeys(zones.values(), GI // 2))
    sc_name = f"{namespace}-csi"
    csi_storage.storage_class(sc_name)
    wait_until("capacity published", lambda: published(csi_storage, sc_name) >= 2)
    kube.create({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                 "metadata": {"name": "data", "namespace": namespace},
                 "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": sc_name,
                          "resources": {"requests": {"storage": "1Gi"}}}})  # fmt: skip
    name = f"corral-{uuid.uuid4().hex[:6]}"
    engines(engine_config(cluster.kubeconfig, name))
    volumes = [{"name": "data", "persistentVolumeClaim": {"claimName": "data"}}]
    kube.create(pod("p", namespace, name, volumes=volumes, nodeSelector={"pool": namespace}))

    def message() -> str:
        events = kube.list_items("v1", "Event", namespace, field_selector="reason=FailedScheduling")
        return next((e["message"] for e in events if e["involvedObject"]["name"] == "p"), "")

    wait_until("FailedScheduling for lack of storage", lambda: "2 node(s) did not have enough "
               "free storage" in message())  # fmt: skip
    big_zone = next(iter(zones.values()))
    csi_storage.set_capacity({zone: (10 * GI if zone == big_zone else GI // 2)
                              for zone in zones.values()})  # fmt: skip
    wait_until("the pod bound in the zone that grew", lambda: zones.get(
        kube.get("v1", "Pod", "p", namespace)["spec"].get("nodeName", "")) == big_zone,
        timeout=120)  # fmt: skip
