"""Builders of storage objects as the API returns them (raw JSON): PVs, PVCs, StorageClasses,
CSIDrivers and CSIStorageCapacities, for unit tables and e2e tests alike."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from corral.testing.builders import pod

JSON = dict[str, Any]
HOSTNAME = "kubernetes.io/hostname"
WFFC = "WaitForFirstConsumer"
NO_PROVISIONER = "kubernetes.io/no-provisioner"


def node_affinity(key: str, *values: str) -> JSON:
    expr = {"key": key, "operator": "In", "values": list(values)}
    return {"required": {"nodeSelectorTerms": [{"matchExpressions": [expr]}]}}


def pv(
    name: str,
    size: str = "10Gi",
    storage_class: str = "wffc",
    *,
    node: str | None = None,
    modes: Sequence[str] = ("ReadWriteOnce",),
    volume_mode: str | None = None,
    labels: Mapping[str, str] | None = None,
    claim: tuple[str, str, str] | None = None,  # (namespace, name, uid)
    phase: str = "Available",
    resource_version: str = "1",
    local_path: str | None = None,
) -> JSON:
    spec: JSON = {
        "capacity": {"storage": size},
        "accessModes": list(modes),
        "storageClassName": storage_class,
        "persistentVolumeReclaimPolicy": "Retain",
    }
    if node is not None:
        spec["nodeAffinity"] = node_affinity(HOSTNAME, node)
    if volume_mode is not None:
        spec["volumeMode"] = volume_mode
    if claim is not None:
        ns, claim_name, uid = claim
        spec["claimRef"] = {"namespace": ns, "name": claim_name, "uid": uid}
    if local_path is not None:
        spec["local"] = {"path": local_path}
    else:
        spec["hostPath"] = {"path": f"/tmp/{name}"}
    meta: JSON = {"name": name, "resourceVersion": resource_version}
    if labels:
        meta["labels"] = dict(labels)
    return {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": meta, "spec": spec,
            "status": {"phase": phase}}  # fmt: skip


def pvc(
    name: str = "data",
    size: str | None = "5Gi",
    storage_class: str = "wffc",
    *,
    namespace: str = "default",
    uid: str = "",
    modes: Sequence[str] = ("ReadWriteOnce",),
    volume: str = "",
    bound: bool = False,
    selected_node: str | None = None,
    selector: JSON | None = None,
    volume_mode: str | None = None,
    resource_version: str = "1",
) -> JSON:
    spec: JSON = {"accessModes": list(modes), "storageClassName": storage_class}
    if size is not None:
        spec["resources"] = {"requests": {"storage": size}}
    if volume:
        spec["volumeName"] = volume
    if selector is not None:
        spec["selector"] = selector
    if volume_mode is not None:
        spec["volumeMode"] = volume_mode
    annotations: JSON = {}
    if bound:
        annotations["pv.kubernetes.io/bind-completed"] = "yes"
    if selected_node is not None:
        annotations["volume.kubernetes.io/selected-node"] = selected_node
    meta: JSON = {"name": name, "namespace": namespace, "resourceVersion": resource_version}
    if uid:
        meta["uid"] = uid
    if annotations:
        meta["annotations"] = annotations
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": meta, "spec": spec}


def storage_class(
    name: str = "wffc",
    provisioner: str = NO_PROVISIONER,
    *,
    mode: str = WFFC,
    topologies: Sequence[Mapping[str, Sequence[str]]] = (),
) -> JSON:
    sc: JSON = {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "StorageClass",
        "metadata": {"name": name},
        "provisioner": provisioner,
        "volumeBindingMode": mode,
    }
    if topologies:
        sc["allowedTopologies"] = [
            {"matchLabelExpressions": [{"key": k, "values": list(v)} for k, v in t.items()]}
            for t in topologies
        ]
    return sc


def csi_driver(name: str, *, storage_capacity: bool = True) -> JSON:
    return {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "CSIDriver",
        "metadata": {"name": name},
        "spec": {"storageCapacity": storage_capacity},
    }


def capacity(
    name: str,
    storage_class: str,
    size: str | None,
    *,
    topology: Mapping[str, str] | None,
    maximum: str | None = None,
    namespace: str = "default",
) -> JSON:
    out: JSON = {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "CSIStorageCapacity",
        "metadata": {"name": name, "namespace": namespace},
        "storageClassName": storage_class,
    }
    if size is not None:
        out["capacity"] = size
    if maximum is not None:
        out["maximumVolumeSize"] = maximum
    if topology is not None:
        out["nodeTopology"] = {"matchLabels": dict(topology)}
    return out


def pod_with_claims(name: str, *claims: str, namespace: str = "default") -> JSON:
    raw = pod(name)
    raw["metadata"]["namespace"] = namespace
    raw["spec"]["volumes"] = [
        {"name": f"v{i}", "persistentVolumeClaim": {"claimName": c}} for i, c in enumerate(claims)
    ]
    return raw
