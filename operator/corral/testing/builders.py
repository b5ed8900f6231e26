"""Builders for the raw API JSON (nodes, pods) and the records plugins get, after upstream's
``pkg/scheduler/testing/wrappers.go``: the smallest objects that say what a test needs.

- :func:`node` and :func:`pod` give raw JSON (what the informers receive); :func:`container`,
  :func:`required` and :func:`expr` build their parts;
- :func:`pod_info` and :func:`node_record` give what plugins see (``PodInfo``, ``NodeRecord``);
- :func:`build_cache` and :func:`snapshot_of` give a cycle's :class:`Snapshot` of those nodes
  with those pods assigned.

A pod's ``uid`` is ``uid-<namespace>-<name>``; a node carries ``kubernetes.io/hostname``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from corral.scheduler.backend.cache import Cache
from corral.scheduler.backend.records import node_from_json, pod_from_json
from corral.scheduler.framework.api_types import NodeSelectorRequirement
from corral.scheduler.framework.snapshot import Snapshot
from corral.scheduler.framework.types import NodeRecord, PodInfo

JSON = dict[str, Any]


def node(
    name: str,
    *,
    cpu: str = "4",
    memory: str = "32Gi",
    pods: str = "110",
    labels: Mapping[str, str] | None = None,
    taints: Sequence[Mapping[str, str]] = (),
    unschedulable: bool = False,
    extra: Mapping[str, str] | None = None,
) -> JSON:
    allocatable = {"cpu": cpu, "memory": memory, "pods": pods, **(extra or {})}
    spec: JSON = {"taints": [dict(t) for t in taints]}
    if unschedulable:
        spec["unschedulable"] = True
    return {
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, **(labels or {})}},
        "spec": spec,
        "status": {"allocatable": allocatable},
    }


def container(name: str = "c", **requests: str) -> JSON:
    reqs = {k.replace("_", "-"): v for k, v in requests.items()}
    return {"name": name, "resources": {"requests": reqs}} if reqs else {"name": name}


def pod(
    name: str,
    *,
    namespace: str = "default",
    cpu: str | None = None,
    memory: str | None = None,
    containers: Sequence[JSON] | None = None,
    init_containers: Sequence[JSON] = (),
    overhead: Mapping[str, str] | None = None,
    pod_requests: Mapping[str, str] | None = None,
    node_selector: Mapping[str, str] | None = None,
    affinity: JSON | None = None,
    tolerations: Sequence[Mapping[str, str]] = (),
    node_name: str | None = None,
    priority: int | None = None,
    gates: Sequence[str] = (),
    labels: Mapping[str, str] | None = None,
    group: str | None = None,
) -> JSON:
    if containers is None:
        reqs: JSON = {}
        if cpu is not None:
            reqs["cpu"] = cpu
        if memory is not None:
            reqs["memory"] = memory
        containers = [{"name": "c", "resources": {"requests": reqs}}]
    spec: JSON = {"containers": list(containers)}
    if init_containers:
        spec["initContainers"] = list(init_containers)
    if overhead:
        spec["overhead"] = dict(overhead)
    if pod_requests is not None:
        spec["resources"] = {"requests": dict(pod_requests)}
    if node_selector is not None:
        spec["nodeSelector"] = dict(node_selector)
    if affinity is not None:
        spec["affinity"] = affinity
    if tolerations:
        spec["tolerations"] = [dict(t) for t in tolerations]
    if node_name:
        spec["nodeName"] = node_name
    if priority is not None:
        spec["priority"] = priority
    if gates:
        spec["schedulingGates"] = [{"name": g} for g in gates]
    if group is not None:
        spec["schedulingGroup"] = {"podGroupName": group}
    meta: JSON = {"name": name, "namespace": namespace, "uid": f"uid-{namespace}-{name}"}
    if labels:
        meta["labels"] = dict(labels)
    return {"metadata": meta, "spec": spec}


def pod_group(
    name: str,
    *,
    namespace: str = "default",
    min_count: int | None = None,
    priority: int | None = None,
    disruption_all: bool = False,
    generation: int = 1,
    conditions: Sequence[JSON] = (),
) -> JSON:
    """A scheduling.k8s.io/v1beta1 PodGroup: a gang of ``min_count``, else the basic policy."""
    policy: JSON = {"gang": {"minCount": min_count}} if min_count is not None else {"basic": {}}
    spec: JSON = {"schedulingPolicy": policy}
    if priority is not None:
        spec["priority"] = priority
    if disruption_all:
        spec["disruptionMode"] = {"all": {}}
    out: JSON = {
        "apiVersion": "scheduling.k8s.io/v1beta1",
        "kind": "PodGroup",
        "metadata": {
            "name": name, "namespace": namespace, "uid": f"pg-{namespace}-{name}",
            "generation": generation, "resourceVersion": "1",
        },
        "spec": spec,
    }  # fmt: skip
    if conditions:
        out["status"] = {"conditions": [dict(c) for c in conditions]}
    return out


def pod_info(name: str = "p", **kwargs: Any) -> PodInfo:
    return pod_from_json(pod(name, **kwargs))


def node_record(name: str, **kwargs: Any) -> NodeRecord:
    return node_from_json(node(name, **kwargs))


def required(*terms: JSON) -> JSON:
    return {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": list(terms)}
        }
    }


def expr(key: str, operator: str, *values: str) -> NodeSelectorRequirement:
    out: NodeSelectorRequirement = {"key": key, "operator": operator}
    if values:
        out["values"] = list(values)
    return out


def build_cache(nodes: Sequence[JSON], pods: Sequence[JSON] = ()) -> Cache:
    cache = Cache()
    for raw in nodes:
        cache.add_node(node_from_json(raw))
    for raw in pods:
        cache.add_pod(pod_from_json(raw))
    return cache


def snapshot_of(nodes: Sequence[JSON], pods: Sequence[JSON] = ()) -> Snapshot:
    return build_cache(nodes, pods).snapshot()
