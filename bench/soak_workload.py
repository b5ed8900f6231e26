"""The soak's churn: what it creates and deletes, object by object (``bench.soak`` paces it).

Pods come in jobs of :data:`JOB_PODS`, labelled as the Job controller labels them (``job-name``,
``batch.kubernetes.io/controller-uid`` with a value of their own), so every value the engine's
vocabularies see is new, as in a cluster running Jobs. Per job, one kind of pod:

- plain (requests only);
- spread: a topology spread constraint over zones on the job's own label;
- anti-affine: pod anti-affinity on the job's own label (one new affinity spec per job);
- with a DRA claim from a ResourceClaimTemplate (kube-controller-manager creates one claim per
  pod, owned by it, and deletes it with the pod);
- with a volume: a PersistentVolumeClaim on a WaitForFirstConsumer class with a static
  PersistentVolume made for it, which the engine's VolumeBinding binds in PreBind.

Each pod lives :data:`LIFETIME` seconds (uniform), then is deleted with its volume objects.
"""

from __future__ import annotations

import random
import uuid
from dataclasses import dataclass, field
from typing import Any, Final

from corral.k8s import JSON
from corral_dev.dra import API_VERSION as DRA_API
from corral_dev.dra import Device, device_class

JOB_PODS: Final = 5
LIFETIME: Final = (10.0, 30.0)
KINDS: Final = (("plain", 0.5), ("spread", 0.15), ("anti", 0.15), ("claim", 0.1),
                ("volume", 0.1))  # fmt: skip
APPS: Final = 20
DRIVER: Final = "soak.corral.test"
DEVICE_CLASS: Final = "soak-device"
CLAIM_TEMPLATE: Final = "one-device"
STORAGE_CLASS: Final = "soak-local"
ZONE: Final = "topology.kubernetes.io/zone"


@dataclass
class Job:
    """One job's objects, in creation order, and when its pods are due for deletion."""

    name: str
    kind: str
    objects: list[JSON] = field(default_factory=list)  # PVs, PVCs, then pods
    expires: float = 0.0

    @property
    def pods(self) -> list[JSON]:
        return [o for o in self.objects if o["kind"] == "Pod"]


def setup_objects(namespaces: list[str]) -> list[JSON]:
    """What the churn needs to exist first: the DeviceClass, a claim template and the storage
    class (the ResourceSlices come from :class:`corral_dev.dra.TestDriver`)."""
    request = {"name": "dev", "exactly": {"deviceClassName": DEVICE_CLASS, "count": 1}}
    templates = [
        {"apiVersion": DRA_API, "kind": "ResourceClaimTemplate",
         "metadata": {"name": CLAIM_TEMPLATE, "namespace": ns},
         "spec": {"spec": {"devices": {"requests": [request]}}}}
        for ns in namespaces
    ]  # fmt: skip
    storage = {
        "apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
        "metadata": {"name": STORAGE_CLASS},
        "provisioner": "kubernetes.io/no-provisioner",
        "volumeBindingMode": "WaitForFirstConsumer",
        "reclaimPolicy": "Retain",
    }  # fmt: skip
    return [device_class(DEVICE_CLASS, f'device.driver == "{DRIVER}"'), *templates, storage]


def devices(count: int) -> list[Device]:
    return [Device(f"dev-{i}", {"index": i}) for i in range(count)]


def _pod(name: str, namespace: str, scheduler: str, labels: dict[str, str]) -> JSON:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace, "labels": labels},
        "spec": {
            "schedulerName": scheduler,
            "terminationGracePeriodSeconds": 0,
            "containers": [{"name": "c", "image": "pause",
                            "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}}}],
        },
    }  # fmt: skip


def _volume(name: str, namespace: str) -> tuple[JSON, JSON]:
    pv = {
        "apiVersion": "v1", "kind": "PersistentVolume",
        "metadata": {"name": f"{namespace}-{name}"},
        "spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"],
                 "storageClassName": STORAGE_CLASS, "persistentVolumeReclaimPolicy": "Retain",
                 "hostPath": {"path": f"/tmp/soak/{namespace}/{name}"}},
    }  # fmt: skip
    pvc = {
        "apiVersion": "v1", "kind": "PersistentVolumeClaim",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": STORAGE_CLASS,
                 "resources": {"requests": {"storage": "1Gi"}}},
    }  # fmt: skip
    return pv, pvc


def job(rng: random.Random, namespace: str, scheduler: str, now: float) -> Job:
    kind = rng.choices([k for k, _ in KINDS], [w for _, w in KINDS])[0]
    name = f"job-{uuid.UUID(int=rng.getrandbits(128)).hex[:12]}"
    selector = {"matchLabels": {"job-name": name}}
    made = Job(name, kind, expires=now + rng.uniform(*LIFETIME))
    for i in range(JOB_PODS):
        labels = {
            "app": f"app-{rng.randrange(APPS)}",
            "job-name": name,
            "batch.kubernetes.io/controller-uid": str(uuid.UUID(int=rng.getrandbits(128))),
            "batch.kubernetes.io/job-completion-index": str(i),
        }
        pod = _pod(f"{name}-{i}", namespace, scheduler, labels)
        spec: dict[str, Any] = pod["spec"]
        if kind == "spread":
            spec["topologySpreadConstraints"] = [{"maxSkew": 1, "topologyKey": ZONE,
                                                  "whenUnsatisfiable": "ScheduleAnyway",
                                                  "labelSelector": selector}]  # fmt: skip
        elif kind == "anti":
            term = {"weight": 100, "podAffinityTerm": {"topologyKey": "kubernetes.io/hostname",
                                                       "labelSelector": selector}}  # fmt: skip
            spec["affinity"] = {"podAntiAffinity": {
                "preferredDuringSchedulingIgnoredDuringExecution": [term]}}  # fmt: skip
        elif kind == "claim":
            spec["resourceClaims"] = [{"name": "dev", "resourceClaimTemplateName": CLAIM_TEMPLATE}]
            spec["containers"][0]["resources"]["claims"] = [{"name": "dev"}]
        elif kind == "volume":
            pv, pvc = _volume(f"{name}-{i}", namespace)
            made.objects += [pv, pvc]
            spec["volumes"] = [
                {"name": "data", "persistentVolumeClaim": {"claimName": pvc["metadata"]["name"]}}
            ]
        made.objects.append(pod)
    return made
