"""Storage: local PVs with node affinity (per node and per zone) already bound to claims,
ReadWriteOncePod claims some running pods hold, and WaitForFirstConsumer claims that no node can
serve (too big for every PV; a provisioner's class whose CSIStorageCapacity is too small or whose
allowedTopologies name no node's zone). Immediate unbound claims are created but no pod uses them:
upstream ends that PreFilter rejection with DynamicResources' PostFilter error "not found", a
difference of that plugin (tests/e2e/engine/test_volume_binding_upstream.py lists it).

Every claim a pod to schedule uses is either bound already or cannot be bound anywhere, so no
decision writes to a shared claim or PV: the copies each scheduler decides see the same state
(binding WaitForFirstConsumer claims is proven by tests/e2e/engine/test_volume_*.py instead).
"""

from __future__ import annotations

import random
from typing import Final

from bench.conformance.generate import HOSTNAME, JSON, ZONE, ZONES, Scenario, build
from bench.conformance.kinds import Kind, Sizes, register

LOCAL: Final = "conf-local"
IMMEDIATE: Final = "conf-immediate"
TRACKED: Final = "conf-tracked"
NOWHERE: Final = "conf-nowhere"
DRIVER: Final = "conf.csi.example.com"
MODES: Final = ("ReadWriteOnce", "ReadWriteMany", "ReadWriteOncePod")


def _class(
    name: str, provisioner: str, mode: str = "WaitForFirstConsumer", **extra: object
) -> JSON:
    return {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": name},
            "provisioner": provisioner, "volumeBindingMode": mode, **extra}  # fmt: skip


def _affinity(key: str, value: str) -> JSON:
    expr = {"key": key, "operator": "In", "values": [value]}
    return {"required": {"nodeSelectorTerms": [{"matchExpressions": [expr]}]}}


def _claim(
    name: str, namespace: str, storage_class: str, size: str, mode: str, *, volume: str = ""
) -> JSON:
    spec: JSON = {"accessModes": [mode], "storageClassName": storage_class,
                  "resources": {"requests": {"storage": size}}}  # fmt: skip
    if volume:
        spec["volumeName"] = volume
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
            "metadata": {"name": name, "namespace": namespace}, "spec": spec}  # fmt: skip


def _pv(name: str, size: str, mode: str, affinity: JSON, claim: tuple[str, str]) -> JSON:
    return {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": name},
            "spec": {"capacity": {"storage": size}, "accessModes": [mode],
                     "storageClassName": LOCAL, "persistentVolumeReclaimPolicy": "Retain",
                     "local": {"path": f"/mnt/{name}"}, "nodeAffinity": affinity,
                     "claimRef": {"namespace": claim[0], "name": claim[1]}}}  # fmt: skip


def _volumes(pod: JSON, claims: list[str]) -> None:
    pod["spec"]["volumes"] = [
        {"name": f"v{i}", "persistentVolumeClaim": {"claimName": c}} for i, c in enumerate(claims)
    ]


def _make(rng: random.Random, seed: int, sizes: Sizes) -> Scenario:
    scenario = build(rng, seed, nodes=sizes.nodes, running=sizes.running, pods=sizes.pods)
    namespaces = sorted(scenario.namespaces)
    objects: list[JSON] = [
        _class(LOCAL, "kubernetes.io/no-provisioner"),
        _class(IMMEDIATE, "kubernetes.io/no-provisioner", "Immediate"),
        _class(TRACKED, DRIVER),
        _class(NOWHERE, "example.com/none",
               allowedTopologies=[{"matchLabelExpressions": [{"key": ZONE,
                                                              "values": ["zone-none"]}]}]),
        {"apiVersion": "storage.k8s.io/v1", "kind": "CSIDriver", "metadata": {"name": DRIVER},
         "spec": {"storageCapacity": True, "attachRequired": False}},
    ]  # fmt: skip
    bound: dict[str, list[str]] = {ns: [] for ns in namespaces}  # namespace -> bound claims
    rwop: dict[str, list[str]] = {ns: [] for ns in namespaces}
    nodes = [n["metadata"]["name"] for n in scenario.nodes]
    for i in range(max(4, len(nodes) // 2)):
        ns = rng.choice(namespaces)
        mode = rng.choice(MODES)
        size = rng.choice(("1Gi", "5Gi", "20Gi"))
        if rng.random() < 0.6:
            affinity = _affinity(HOSTNAME, rng.choice(nodes))
        else:
            affinity = _affinity(ZONE, rng.choice(ZONES))
        claim = f"bound-{i}"
        objects.append(_pv(f"conf-pv-{seed}-{i}", size, mode, affinity, (ns, claim)))
        objects.append(_claim(claim, ns, LOCAL, size, mode, volume=f"conf-pv-{seed}-{i}"))
        (rwop if mode == "ReadWriteOncePod" else bound)[ns].append(claim)
    for ns in namespaces:
        objects.append(_claim("too-big", ns, LOCAL, "500Gi", "ReadWriteOnce"))
        objects.append(_claim("no-capacity", ns, TRACKED, "10Gi", "ReadWriteOnce"))
        objects.append(_claim("no-zone", ns, NOWHERE, "1Gi", "ReadWriteOnce"))
        objects.append(_claim("immediate", ns, IMMEDIATE, "1Gi", "ReadWriteOnce"))
        objects.append({"apiVersion": "storage.k8s.io/v1", "kind": "CSIStorageCapacity",
                        "metadata": {"name": "small", "namespace": ns},
                        "storageClassName": TRACKED, "capacity": "1Gi",
                        "nodeTopology": {"matchLabels": {ZONE: rng.choice(ZONES)}}})  # fmt: skip
    # Some running pods hold ReadWriteOncePod claims.
    for pod in scenario.running:
        held = rwop.get(pod["metadata"]["namespace"]) or []
        if held and rng.random() < 0.3:
            _volumes(pod, [rng.choice(held)])
    for pod in scenario.pods:
        ns = pod["metadata"]["namespace"]
        roll = rng.random()
        usable = bound[ns] + rwop[ns]
        if roll < 0.55 and usable:
            _volumes(pod, rng.sample(usable, min(len(usable), rng.choice((1, 1, 2)))))
        elif roll < 0.65:
            _volumes(pod, ["too-big"])
        elif roll < 0.75:
            _volumes(pod, ["no-capacity"])
        elif roll < 0.82:
            _volumes(pod, ["no-zone"])
        elif roll < 0.85:  # Immediate unbound: see the module's docstring
            _volumes(pod, ["too-big", "no-zone"])
    scenario.objects = objects
    return scenario


register(
    Kind(
        "storage",
        "bound local PVs (node and zone affinity), ReadWriteOncePod, WaitForFirstConsumer claims "
        "no node serves (size, CSIStorageCapacity, allowedTopologies)",
        _make,
        Sizes(nodes=30, running=60, pods=60),
    )
)
