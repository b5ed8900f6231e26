"""Real dynamic provisioning (``csi_storage``: the CSI external-provisioner publishing
CSIStorageCapacity, and its driver) under upstream kube-scheduler and under Corral's engine, and
the seed-000 sample (config/samples/seed-storage.yaml) with its two storage plugins."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from corral.api import OperatorDefaults, load_profile
from corral.k8s import JSON, Client
from corral.k8s.kubeconfig import write_token_kubeconfig
from corral.render import render
from corral.scheduler.config import quantity
from corral.testing import LocalCluster
from corral.testing.nodes import ZONE_LABEL
from corral_dev.storage import DRIVER, CsiStorage
from support.engine_process import EngineProcess, engine_config, pod, wait_until

SAMPLE = Path(__file__).resolve().parents[3] / "config" / "samples" / "seed-storage.yaml"
GI = 2**30
HOSTNAME = "kubernetes.io/hostname"
SELECTED_NODE = "volume.kubernetes.io/selected-node"
REASON_SPACE = "did not have enough free storage"  # upstream VolumeBinding's
RBAC_KINDS = ("ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding")


def claim(name: str, namespace: str, storage_class: str, size: str) -> JSON:
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
            "metadata": {"name": name, "namespace": namespace},
            "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": storage_class,
                     "resources": {"requests": {"storage": size}}}}  # fmt: skip


def pod_with_claims(name: str, namespace: str, scheduler: str, *claims: str, **spec: Any) -> JSON:
    volumes = [{"name": f"v{i}", "persistentVolumeClaim": {"claimName": c}}
               for i, c in enumerate(claims)]  # fmt: skip
    return pod(name, namespace, scheduler, volumes=volumes, **spec)


def two_zones(
    namespace: str, fake_nodes: Callable[..., list[str]], storage: CsiStorage
) -> dict[str, str]:
    """zone -> its one node (both in pool=<namespace>), registered with the driver."""
    nodes = {}
    for zone in (f"{namespace}-a", f"{namespace}-b"):
        (nodes[zone],) = fake_nodes(1, labels={ZONE_LABEL: zone, "pool": namespace})
    storage.register_nodes(nodes.values())
    return nodes


def csi_class(namespace: str, storage: CsiStorage, capacity: dict[str, int]) -> str:
    """A WaitForFirstConsumer class of the driver, once ``capacity`` is published for it."""
    sc = f"{namespace}-csi"
    storage.storage_class(sc)
    storage.set_capacity(capacity)
    wait_until("capacity published", lambda: published(storage, sc) == capacity)
    return sc


def published(storage: CsiStorage, storage_class: str) -> dict[str, int]:
    """zone -> bytes, from the CSIStorageCapacity objects the provisioner maintains."""
    out = {}
    for c in storage.capacities():
        zone = ((c.get("nodeTopology") or {}).get("matchLabels") or {}).get(ZONE_LABEL)
        if c.get("storageClassName") == storage_class and zone and "capacity" in c:
            out[zone] = quantity.value(quantity.parse(c["capacity"]))
    return out


def failed_scheduling(kube: Client, namespace: str, name: str) -> str:
    events = kube.list_items("v1", "Event", namespace, field_selector="reason=FailedScheduling")
    return " | ".join(e["message"] for e in events if e["involvedObject"]["name"] == name)


def phase(kube: Client, namespace: str, claim_name: str) -> str:
    got = kube.get("v1", "PersistentVolumeClaim", claim_name, namespace)
    return str((got.get("status") or {}).get("phase", ""))


def volume_zone(kube: Client, namespace: str, claim_name: str) -> str:
    """The zone the provisioned PV is confined to (its required node affinity)."""
    got = kube.get("v1", "PersistentVolumeClaim", claim_name, namespace)
    volume = kube.get("v1", "PersistentVolume", got["spec"]["volumeName"])
    assert volume["spec"]["csi"]["driver"] == DRIVER
    (term,) = volume["spec"]["nodeAffinity"]["required"]["nodeSelectorTerms"]
    (expr,) = term["matchExpressions"]
    assert (expr["key"], expr["operator"]) == (ZONE_LABEL, "In")
    (zone,) = expr["values"]
    return str(zone)


def node_of(kube: Client, namespace: str, name: str) -> str:
    return str(kube.get("v1", "Pod", name, namespace)["spec"].get("nodeName") or "")


def test_upstream_scheduler_gets_a_volume_in_its_nodes_zone(
    kube: Client, namespace: str, fake_nodes: Callable[..., list[str]], csi_storage: CsiStorage
) -> None:
    """The fixture itself, with upstream kube-scheduler: capacity is published per zone, a
    WaitForFirstConsumer claim is provisioned in the zone of the node the scheduler chose,
    and the driver's capacity there shrinks by the volume."""
    nodes = two_zones(namespace, fake_nodes, csi_storage)
    za, zb = nodes
    sc = csi_class(namespace, csi_storage, {za: 10 * GI, zb: 10 * GI})
    kube.create(claim("data", namespace, sc, "4Gi"))
    kube.create(pod_with_claims("p", namespace, "default-scheduler", "data",
                                nodeSelector={HOSTNAME: nodes[zb]}))  # fmt: skip

    wait_until("the claim Bound", lambda: phase(kube, namespace, "data") == "Bound", timeout=90)
    assert volume_zone(kube, namespace, "data") == zb
    wait_until("the pod bound", lambda: node_of(kube, namespace, "p") == nodes[zb])
    wait_until("zone b's capacity less the volume",
               lambda: published(csi_storage, sc) == {za: 10 * GI, zb: 6 * GI})  # fmt: skip
    # Least privilege is enough: the provisioner was never refused anything.
    log = (csi_storage.directory / "logs" / "csi-provisioner.log").read_text()
    assert "forbidden" not in log.lower()


def test_corral_waits_for_capacity_then_provisions_in_its_zone(
    kube: Client,
    cluster: LocalCluster,
    namespace: str,
    fake_nodes: Callable[..., list[str]],
    engines: Callable[..., EngineProcess],
    csi_storage: CsiStorage,
) -> None:
    """Corral's engine (default plugins) with the real provisioner: too little published
    capacity anywhere gives upstream's FailedScheduling reason; once one zone grows, the pod
    lands there and its claim is provisioned in that zone."""
    nodes = two_zones(namespace, fake_nodes, csi_storage)
    za, zb = nodes
    sc = csi_class(namespace, csi_storage, {za: 1 * GI, zb: 1 * GI})
    name = f"corral-{uuid.uuid4().hex[:6]}"
    engines(engine_config(cluster.kubeconfig, name))
    kube.create(claim("data", namespace, sc, "5Gi"))
    kube.create(pod_with_claims("p", namespace, name, "data", nodeSelector={"pool": namespace}))

    wait_until("FailedScheduling for lack of storage",
               lambda: REASON_SPACE in failed_scheduling(kube, namespace, "p"))  # fmt: skip
    assert f"2 node(s) {REASON_SPACE}" in failed_scheduling(kube, namespace, "p")
    csi_storage.set_capacity({za: 1 * GI, zb: 8 * GI})
    wait_until("the pod bound", lambda: node_of(kube, namespace, "p") == nodes[zb], timeout=90)
    assert phase(kube, namespace, "data") == "Bound"
    assert volume_zone(kube, namespace, "data") == zb


@pytest.fixture
def seed_sample(kube: Client, namespace: str, tmp_path: Path) -> Iterator[tuple[str, JSON]]:
    """The sample rendered into ``namespace`` as the operator would: its RBAC applied for real
    and its KubeSchedulerConfiguration (leader election on) run with its ServiceAccount's
    token, so the engine has exactly the rights the rendered profile grants."""
    profile = load_profile(yaml.safe_load(SAMPLE.read_text()),
                           operator=OperatorDefaults(namespace=namespace))  # fmt: skip
    rendered = render(profile)
    rbac = [o for o in rendered.objects if o["kind"] in RBAC_KINDS]
    for obj in rbac:
        kube.apply(obj, field_manager="corral-tests")
    (account,) = [o["metadata"]["name"] for o in rbac if o["kind"] == "ServiceAccount"]
    kubeconfig = tmp_path / "seed-storage.kubeconfig"
    write_token_kubeconfig(kubeconfig, kube, kube.request_token(namespace, account), account)
    config: JSON = yaml.safe_load(rendered.config_yaml)
    config["clientConnection"] = {"kubeconfig": str(kubeconfig)}
    (scheduler,) = config["profiles"]
    yield str(scheduler["schedulerName"]), config
    for obj in rbac:
        if obj["kind"] in ("ClusterRole", "ClusterRoleBinding"):
            kube.delete(obj["apiVersion"], obj["kind"], obj["metadata"]["name"])


def set_lvm_free(kube: Client, node: str, device_class: str, amount: int) -> None:
    patch = {"metadata": {"annotations": {f"capacity.topolvm.io/{device_class}": str(amount)}}}
    kube.request("PATCH", f"/api/v1/nodes/{node}", body=patch,
                 content_type="application/merge-patch+json")  # fmt: skip


def test_seed_sample_schedules_with_its_storage_plugins(
    kube: Client,
    namespace: str,
    fake_nodes: Callable[..., list[str]],
    engines: Callable[..., EngineProcess],
    csi_storage: CsiStorage,
    seed_sample: tuple[str, JSON],
) -> None:
    """seed-storage.yaml as rendered (its config, its RBAC): CheckCSIStorageCapacity refuses
    two claims that fit one by one (upstream's VolumeBinding lets them through) but not
    together, until the zone grows; LvmVolumeCapacity refuses nodes whose TopoLVM free
    capacity is too small, naming itself and the device class, and the pod goes to the node
    that has room."""
    nodes = two_zones(namespace, fake_nodes, csi_storage)
    za, zb = nodes
    sc = csi_class(namespace, csi_storage, {za: 5 * GI, zb: 5 * GI})
    name, config = seed_sample
    engines(config)
    pool = {"pool": namespace}
    kube.create(claim("a", namespace, sc, "3Gi"))
    kube.create(claim("b", namespace, sc, "3Gi"))
    kube.create(pod_with_claims("csi", namespace, name, "a", "b", nodeSelector=pool))

    want = f'2 node(s) did not have enough CSI storage capacity for StorageClass "{sc}" ' \
        "(CheckCSIStorageCapacity)"  # fmt: skip
    wait_until("CheckCSIStorageCapacity's FailedScheduling",
               lambda: want in failed_scheduling(kube, namespace, "csi"))  # fmt: skip
    csi_storage.set_capacity({za: 8 * GI, zb: 5 * GI})
    wait_until("the pod bound in zone a", lambda: node_of(kube, namespace, "csi") == nodes[za],
               timeout=90)  # fmt: skip
    assert {volume_zone(kube, namespace, c) for c in ("a", "b")} == {za}

    # LVM: a TopoLVM class (no TopoLVM here: the claim is only handed to a node, never bound).
    lvm = f"{namespace}-lvm"
    kube.create({"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
                 "metadata": {"name": lvm}, "provisioner": "topolvm.io",
                 "volumeBindingMode": "WaitForFirstConsumer",
                 "parameters": {"topolvm.io/device-class": "ssd"}})  # fmt: skip
    try:
        for node in nodes.values():
            set_lvm_free(kube, node, "ssd", 1 * GI)
        kube.create(claim("lv", namespace, lvm, "2Gi"))
        kube.create(pod_with_claims("lvm", namespace, name, "lv", nodeSelector=pool))
        want = '2 node(s) did not have enough free LVM capacity in device class "ssd" ' \
            "(LvmVolumeCapacity)"  # fmt: skip
        wait_until("LvmVolumeCapacity's FailedScheduling",
                   lambda: want in failed_scheduling(kube, namespace, "lvm"))  # fmt: skip
        set_lvm_free(kube, nodes[zb], "ssd", 4 * GI)

        def selected() -> str:
            got = kube.get("v1", "PersistentVolumeClaim", "lv", namespace)
            return str((got["metadata"].get("annotations") or {}).get(SELECTED_NODE, ""))

        wait_until("the LVM claim handed to the node with room", lambda: selected() == nodes[zb])
    finally:
        kube.delete("storage.k8s.io/v1", "StorageClass", lvm)


def test_statefulset_replicas_get_volumes_where_corral_put_them(
    kube: Client,
    cluster: LocalCluster,
    namespace: str,
    fake_nodes: Callable[..., list[str]],
    engines: Callable[..., EngineProcess],
    csi_storage: CsiStorage,
) -> None:
    """A StatefulSet of 3 replicas with a WaitForFirstConsumer volumeClaimTemplate on the
    provisioner's class: every pod bound by Corral, every claim provisioned in the zone of the
    node Corral chose for its pod."""
    zones = [f"{namespace}-{z}" for z in "abc"]
    nodes = [fake_nodes(1, labels={ZONE_LABEL: z, "pool": namespace})[0] for z in zones]
    csi_storage.register_nodes(nodes)
    sc = csi_class(namespace, csi_storage, dict.fromkeys(zones, 10 * GI))
    name = f"corral-{uuid.uuid4().hex[:6]}"
    engines(engine_config(cluster.kubeconfig, name))
    template = pod("unused", namespace, name, nodeSelector={"pool": namespace})
    volume = {"metadata": {"name": "data"}, "spec": claim("data", namespace, sc, "2Gi")["spec"]}
    spec = {
        "replicas": 3,
        "serviceName": "db",
        "podManagementPolicy": "Parallel",
        "selector": {"matchLabels": {"app": "db"}},
        "template": {"metadata": {"labels": {"app": "db"}}, "spec": template["spec"]},
        "volumeClaimTemplates": [volume],
    }
    kube.create({"apiVersion": "apps/v1", "kind": "StatefulSet",
                 "metadata": {"name": "db", "namespace": namespace}, "spec": spec})  # fmt: skip
    replicas = [f"db-{i}" for i in range(3)]

    def placed() -> bool:
        pods = {p["metadata"]["name"]: p for p in kube.list_items("v1", "Pod", namespace)}
        return all(pods.get(r, {}).get("spec", {}).get("nodeName") for r in replicas)

    wait_until("3 replicas bound", placed, timeout=180)
    for replica in replicas:
        node = kube.get("v1", "Node", node_of(kube, namespace, replica))
        wait_until(f"data-{replica} Bound",
                   lambda r=replica: phase(kube, namespace, f"data-{r}") == "Bound")  # fmt: skip
        zone = node["metadata"]["labels"][ZONE_LABEL]
        assert volume_zone(kube, namespace, f"data-{replica}") == zone
