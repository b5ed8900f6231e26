"""A new workload given to ``corral simulate -f``, expanded into the pods its controller would
create: what-if for Deployments, ReplicaSets, StatefulSets and Jobs.

Contract (each as its controller makes the pods, as far as scheduling can tell):

- Deployment: a ReplicaSet ``<name>-<hash>`` (the Deployment's selector, its template's labels
  plus ``pod-template-hash``) owning ``spec.replicas`` (default 1) pods
  ``<name>-<hash>-<i>``; the ReplicaSet is an object of the simulation, so default spreading
  (PodTopologySpread's system constraints) finds it through the pods' controller reference.
- ReplicaSet: itself, and ``spec.replicas`` pods ``<name>-<i>``.
- StatefulSet: itself, pods ``<name>-<ordinal>`` (label ``statefulset.kubernetes.io/pod-name``),
  and for each ``volumeClaimTemplates`` entry a claim ``<template>-<name>-<ordinal>`` that the
  pod mounts, as the StatefulSet controller creates them.
- Job: ``min(parallelism, completions)`` pods (defaults 1) ``<name>-<i>`` with the labels the
  Job controller sets (``batch.kubernetes.io/job-name``, ``controller-uid``).

Every object made carries a generated uid; the pods a ``controllerRef`` to their owner. Objects
of a snapshot of a cluster are never expanded: their pods are already in it.
"""

from __future__ import annotations

import copy
import hashlib
import json
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

DEPLOYMENT: Final = "Deployment"
REPLICA_SET: Final = "ReplicaSet"
STATEFUL_SET: Final = "StatefulSet"
JOB: Final = "Job"
EXPANDED: Final = frozenset({DEPLOYMENT, REPLICA_SET, STATEFUL_SET, JOB})
TEMPLATE_HASH: Final = "pod-template-hash"
POD_NAME: Final = "statefulset.kubernetes.io/pod-name"
JOB_NAME: Final = "batch.kubernetes.io/job-name"
CONTROLLER_UID: Final = "batch.kubernetes.io/controller-uid"


class WorkloadError(ValueError):
    """A workload whose pods cannot be made: ``path`` names the field."""

    def __init__(self, path: str, message: str) -> None:
        super().__init__(message)
        self.path = path
        self.message = message


@dataclass
class Expanded:
    kind: str
    name: str
    pods: list[dict[str, Any]] = field(default_factory=list)
    # Objects the simulation gets besides the pods (a ReplicaSet, the StatefulSet, its claims).
    objects: list[dict[str, Any]] = field(default_factory=list)


def _mapping(obj: object, path: str) -> Mapping[str, Any]:
    if not isinstance(obj, Mapping):
        raise WorkloadError(path, "required: an object")
    return obj


def _count(spec: Mapping[str, Any], key: str, path: str, default: int = 1) -> int:
    value = spec.get(key, default)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise WorkloadError(f"{path}.{key}", f"{value!r}: must be a whole number, 0 or more")
    return value


def _owner(obj: Mapping[str, Any], kind: str, api_version: str) -> dict[str, Any]:
    meta = obj["metadata"]
    return {
        "apiVersion": api_version,
        "kind": kind,
        "name": meta["name"],
        "uid": meta["uid"],
        "controller": True,
        "blockOwnerDeletion": True,
    }


def _pod(
    template: Mapping[str, Any],
    name: str,
    namespace: str,
    owner: Mapping[str, Any],
    labels: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    meta = dict(copy.deepcopy(template.get("metadata") or {}))
    meta["name"], meta["namespace"] = name, namespace
    meta["uid"] = str(uuid.uuid4())
    meta["labels"] = {**(meta.get("labels") or {}), **(labels or {})}
    meta["ownerReferences"] = [dict(owner)]
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": meta,
        "spec": copy.deepcopy(template.get("spec") or {}),
    }


def _with_uid(obj: Mapping[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(dict(obj))
    meta = out["metadata"] = dict(out.get("metadata") or {})
    meta.setdefault("uid", str(uuid.uuid4()))
    meta.setdefault("namespace", "default")
    return out


def template_hash(template: Mapping[str, Any]) -> str:
    """A stable short hash of a pod template (the Deployment controller's is FNV over the
    template; any stable one names the ReplicaSet the same way each run)."""
    digest = hashlib.sha256(json.dumps(template, sort_keys=True).encode("utf-8")).hexdigest()
    return digest[:10]


def expand(obj: Mapping[str, Any]) -> Expanded:
    """Raises :class:`WorkloadError`."""
    kind = str(obj.get("kind"))
    meta = _mapping(obj.get("metadata"), "metadata")
    if not isinstance(meta.get("name"), str) or not meta["name"]:
        raise WorkloadError("metadata.name", "required")
    spec = _mapping(obj.get("spec"), "spec")
    template = _mapping(spec.get("template"), "spec.template")
    if kind == DEPLOYMENT:
        return _deployment(obj, spec, template)
    workload = _with_uid(obj)
    name, namespace = workload["metadata"]["name"], workload["metadata"]["namespace"]
    out = Expanded(kind, name)
    if kind == REPLICA_SET:
        out.objects.append(workload)
        owner = _owner(workload, REPLICA_SET, "apps/v1")
        for i in range(_count(spec, "replicas", "spec")):
            out.pods.append(_pod(template, f"{name}-{i}", namespace, owner))
    elif kind == STATEFUL_SET:
        out.objects.append(workload)
        owner = _owner(workload, STATEFUL_SET, "apps/v1")
        for i in range(_count(spec, "replicas", "spec")):
            pod = _pod(template, f"{name}-{i}", namespace, owner, {POD_NAME: f"{name}-{i}"})
            out.objects += _claims(spec, pod, name, i)
            out.pods.append(pod)
    elif kind == JOB:
        owner = _owner(workload, JOB, "batch/v1")
        uid = workload["metadata"]["uid"]
        n = min(_count(spec, "parallelism", "spec"), _count(spec, "completions", "spec"))
        for i in range(n):
            labels = {JOB_NAME: name, CONTROLLER_UID: uid}
            out.pods.append(_pod(template, f"{name}-{i}", namespace, owner, labels))
    else:
        raise WorkloadError("kind", f"{kind!r}: not a workload simulate expands")
    return out


def _deployment(
    obj: Mapping[str, Any], spec: Mapping[str, Any], template: Mapping[str, Any]
) -> Expanded:
    deployment = _with_uid(obj)
    name, namespace = deployment["metadata"]["name"], deployment["metadata"]["namespace"]
    digest = template_hash(template)
    selector = copy.deepcopy(spec.get("selector") or {})
    match = selector.setdefault("matchLabels", {})
    match[TEMPLATE_HASH] = digest
    rs_template = copy.deepcopy(dict(template))
    rs_meta = rs_template["metadata"] = dict(rs_template.get("metadata") or {})
    rs_meta["labels"] = {**(rs_meta.get("labels") or {}), TEMPLATE_HASH: digest}
    replicas = _count(spec, "replicas", "spec")
    rs = _with_uid(
        {
            "apiVersion": "apps/v1",
            "kind": REPLICA_SET,
            "metadata": {
                "name": f"{name}-{digest}",
                "namespace": namespace,
                "labels": dict(rs_meta["labels"]),
                "ownerReferences": [_owner(deployment, DEPLOYMENT, "apps/v1")],
            },
            "spec": {"replicas": replicas, "selector": selector, "template": rs_template},
        }
    )
    out = Expanded(DEPLOYMENT, name, objects=[rs])
    owner = _owner(rs, REPLICA_SET, "apps/v1")
    for i in range(replicas):
        out.pods.append(_pod(rs_template, f"{name}-{digest}-{i}", namespace, owner))
    return out


def _claims(
    spec: Mapping[str, Any], pod: dict[str, Any], name: str, ordinal: int
) -> list[dict[str, Any]]:
    """The StatefulSet controller's claims for one pod, mounted by the pod's volumes."""
    out = []
    volumes = pod["spec"].setdefault("volumes", [])
    for i, template in enumerate(spec.get("volumeClaimTemplates") or ()):
        t = _mapping(template, f"spec.volumeClaimTemplates[{i}]")
        tname = _mapping(t.get("metadata"), f"spec.volumeClaimTemplates[{i}].metadata").get("name")
        if not isinstance(tname, str) or not tname:
            raise WorkloadError(f"spec.volumeClaimTemplates[{i}].metadata.name", "required")
        claim = f"{tname}-{name}-{ordinal}"
        out.append(
            _with_uid(
                {
                    "apiVersion": "v1",
                    "kind": "PersistentVolumeClaim",
                    "metadata": {
                        "name": claim,
                        "namespace": pod["metadata"]["namespace"],
                        "labels": dict(pod["metadata"].get("labels") or {}),
                    },
                    "spec": copy.deepcopy(t.get("spec") or {}),
                }
            )
        )
        volumes[:] = [v for v in volumes if not (isinstance(v, Mapping) and v.get("name") == tname)]
        volumes.append({"name": tname, "persistentVolumeClaim": {"claimName": claim}})
    return out
