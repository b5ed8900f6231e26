"""VolumeBinding end to end: `corral scheduler` binds WaitForFirstConsumer claims on the real
control plane, whose kube-controller-manager runs the real PV controller."""

from __future__ import annotations

import uuid
from collections.abc import Callable

from corral.k8s import JSON, Client
from corral.testing import LocalCluster
from support.engine_process import (
    EngineProcess,
    create_all,
    engine_config,
    pod,
    wait_until,
)
from support.storage import capacity, csi_driver, pv, pvc, storage_class

REASON_BIND = "didn't find available persistent volumes to bind"
REASON_SPACE = "did not have enough free storage"
SELECTED_NODE = "volume.kubernetes.io/selected-node"


def create(kube: Client, keep: list[JSON], obj: JSON) -> JSON:
    keep.append(obj)
    return kube.create(obj)


def without_rv(obj: JSON) -> JSON:
    obj["metadata"].pop("resourceVersion", None)
    return obj


def pod_with_claim(name: str, namespace: str, scheduler: str, claim: str, **spec: object) -> JSON:
    volumes = [{"name": "data", "persistentVolumeClaim": {"claimName": claim}}]
    return pod(name, namespace, scheduler, volumes=volumes, **spec)


def failed_scheduling(kube: Client, namespace: str, name: str) -> str:
    events = kube.list_items("v1", "Event", namespace, field_selector="reason=FailedScheduling")
    return next((e["message"] for e in events if e["involvedObject"]["name"] == name), "")


def test_static_local_pvs_put_each_pod_on_its_volumes_node(
    kube: Client,
    cluster: LocalCluster,
    namespace: str,
    fake_nodes: Callable[..., list[str]],
    engines: Callable[..., EngineProcess],
    cluster_scoped: list[JSON],
) -> None:
    pool = {"pool": namespace}
    nodes = fake_nodes(4, labels=pool)
    sc_name = f"local-{namespace}"
    create(kube, cluster_scoped, storage_class(sc_name))
    # One local PV on each of three nodes (sizes differ: each claim fits exactly one); none on
    # the fourth.
    sizes = ("1Gi", "2Gi", "3Gi")
    volumes = [f"{namespace}-pv-{i}" for i in range(3)]
    for volume, node_name, size in zip(volumes, nodes, sizes, strict=False):
        create(kube, cluster_scoped, without_rv(pv(volume, size, sc_name, node=node_name,
                                                   local_path=f"/mnt/{volume}")))  # fmt: skip
    claims = [
        without_rv(pvc(f"data-{i}", size, sc_name, namespace=namespace))
        for i, size in enumerate(("3Gi", "2Gi", "1Gi", "1Gi"))
    ]
    create_all(kube, claims)
    name = f"corral-{uuid.uuid4().hex[:6]}"
    engines(engine_config(cluster.kubeconfig, name))
    create_all(kube, [pod_with_claim(f"p-{i}", namespace, name, f"data-{i}", nodeSelector=pool)
                      for i in range(4)])  # fmt: skip

    def placed() -> dict[str, str]:
        return {p["metadata"]["name"]: p["spec"].get("nodeName", "")
                for p in kube.list_items("v1", "Pod", namespace)}  # fmt: skip

    wait_until("three pods bound", lambda: sum(1 for n in placed().values() if n) == 3)
    claim_of = {c["metadata"]["name"]: c for c in kube.list_items("v1", "PersistentVolumeClaim",
                                                                 namespace)}  # fmt: skip
    pv_node = dict(zip(volumes, nodes, strict=False))
    where = placed()
    # data-0 asks 3Gi: only pv-2 (3Gi, third node) holds it; data-1 (2Gi) takes pv-1 or pv-2,
    # and pv-2 is data-0's, so pv-1; data-2 (1Gi) takes the smallest left, pv-0.
    wait_until("the PV controller binds the claims", lambda: all(
        c["status"].get("phase") == "Bound"
        for c in kube.list_items("v1", "PersistentVolumeClaim", namespace)
        if c["metadata"]["name"] != "data-3"
    ))  # fmt: skip
    claim_of = {c["metadata"]["name"]: c for c in kube.list_items("v1", "PersistentVolumeClaim",
                                                                 namespace)}  # fmt: skip
    for i in range(3):
        volume = claim_of[f"data-{i}"]["spec"]["volumeName"]
        assert where[f"p-{i}"] == pv_node[volume], (i, volume)
    assert {claim_of[f"data-{i}"]["spec"]["volumeName"] for i in range(3)} == set(volumes)
    # The fourth claim has no PV left anywhere, and no provisioner: upstream's reason.
    assert where["p-3"] == ""
    wait_until("p-3's FailedScheduling", lambda: REASON_BIND in failed_scheduling(
        kube, namespace, "p-3"))  # fmt: skip


def test_wait_for_first_consumer_claim_gets_the_selected_node(
    kube: Client,
    cluster: LocalCluster,
    namespace: str,
    fake_nodes: Callable[..., list[str]],
    engines: Callable[..., EngineProcess],
    cluster_scoped: list[JSON],
) -> None:
    """A claim of a provisioner's class is handed to the node Corral chose
    (``volume.kubernetes.io/selected-node``); the pod binds once the volume is there (created
    here as an administrator provisions statically, pre-bound to the claim)."""
    pool = {"pool": namespace}
    fake_nodes(2, labels=pool)
    sc_name = f"dyn-{namespace}"
    create(kube, cluster_scoped, storage_class(sc_name, "example.com/manual"))
    kube.create(without_rv(pvc("data", "1Gi", sc_name, namespace=namespace)))
    name = f"corral-{uuid.uuid4().hex[:6]}"
    config = engine_config(cluster.kubeconfig, name)
    config["profiles"][0]["pluginConfig"] = [
        {"name": "VolumeBinding", "args": {"bindTimeoutSeconds": 120}}
    ]
    engines(config)
    kube.create(pod_with_claim("p", namespace, name, "data", nodeSelector=pool))

    def selected() -> str:
        claim = kube.get("v1", "PersistentVolumeClaim", "data", namespace)
        annotations = claim["metadata"].get("annotations") or {}
        return str(annotations.get("volume.kubernetes.io/selected-node", ""))

    wait_until("the claim's selected node", lambda: selected() != "")
    chosen = selected()
    claim = kube.get("v1", "PersistentVolumeClaim", "data", namespace)
    assert kube.get("v1", "Pod", "p", namespace)["spec"].get("nodeName", "") == ""
    volume = without_rv(pv(f"{namespace}-pv", "1Gi", sc_name, node=chosen,
                           claim=(namespace, "data", claim["metadata"]["uid"]),
                           local_path="/mnt/provisioned"))  # fmt: skip
    create(kube, cluster_scoped, volume)
    wait_until("the pod bound to the selected node", lambda: kube.get(
        "v1", "Pod", "p", namespace)["spec"].get("nodeName") == chosen)  # fmt: skip


def test_storage_capacity_too_small_then_grown(
    kube: Client,
    cluster: LocalCluster,
    namespace: str,
    fake_nodes: Callable[..., list[str]],
    engines: Callable[..., EngineProcess],
    cluster_scoped: list[JSON],
) -> None:
    """A CSI driver with capacity tracking publishes too little for the claim in the pool's
    topology: FailedScheduling carries upstream's reason; once the capacity grows the claim is
    handed to a node of that topology."""
    pool = {"pool": namespace}
    fake_nodes(2, labels=pool)
    driver = f"{namespace}.csi.example.com"
    sc_name = f"cap-{namespace}"
    create(kube, cluster_scoped, csi_driver(driver))
    create(kube, cluster_scoped, storage_class(sc_name, driver))
    capacity_object = capacity("cap", sc_name, "1Gi", topology=pool, namespace=namespace)
    kube.create(capacity_object)
    kube.create(without_rv(pvc("data", "5Gi", sc_name, namespace=namespace)))
    name = f"corral-{uuid.uuid4().hex[:6]}"
    engines(engine_config(cluster.kubeconfig, name))
    kube.create(pod_with_claim("p", namespace, name, "data", nodeSelector=pool))

    wait_until("FailedScheduling for lack of storage", lambda: REASON_SPACE in failed_scheduling(
        kube, namespace, "p"))  # fmt: skip
    assert "2 node(s) did not have enough free storage" in failed_scheduling(kube, namespace, "p")
    grown = kube.get("storage.k8s.io/v1", "CSIStorageCapacity", "cap", namespace)
    grown["capacity"] = "10Gi"
    kube.request("PUT", kube.path_of(grown), body=grown)

    def selected() -> str:
        claim = kube.get("v1", "PersistentVolumeClaim", "data", namespace)
        return str((claim["metadata"].get("annotations") or {}).get(SELECTED_NODE, ""))

    wait_until("the claim handed to a node of the topology", lambda: selected() != "")
    node = kube.get("v1", "Node", selected())
    assert node["metadata"]["labels"]["pool"] == namespace
