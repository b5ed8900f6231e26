"""Builders for raw API JSON (nodes, pods) and records, mirroring upstream's test wrappers."""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from typing import Any

from corral.scheduler.backend.cache import Cache
from corral.scheduler.backend.records import node_from_json, pod_from_json
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
    meta: JSON = {"name": name, "namespace": namespace, "uid": f"uid-{namespace}-{name}"}
    if labels:
        meta["labels"] = dict(labels)
    return {"metadata": meta, "spec": spec}


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


def expr(key: str, operator: str, *values: str) -> JSON:
    out: JSON = {"key": key, "operator": operator}
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


# --- random clusters for batch-vs-per-node equivalence -----------------------------------------

ZONES = ("a", "b", "c")
TAINTS = (
    {"key": "dedicated", "value": "gpu", "effect": "NoSchedule"},
    {"key": "dedicated", "value": "infra", "effect": "NoExecute"},
    {"key": "spot", "value": "", "effect": "PreferNoSchedule"},
    {"key": "flaky", "value": "yes", "effect": "PreferNoSchedule"},
    {"key": "node.kubernetes.io/unschedulable", "value": "", "effect": "NoSchedule"},
)


def random_nodes(rng: random.Random, count: int) -> list[JSON]:
    out = []
    for i in range(count):
        labels = {"zone": rng.choice(ZONES), "rank": str(rng.randint(-3, 12))}
        if rng.random() < 0.5:
            labels["disk"] = rng.choice(("ssd", "hdd"))
        if rng.random() < 0.2:
            labels["rank"] = rng.choice(("x1", "+4", "007", " 3"))
        extra = {"example.com/gpu": str(rng.randint(0, 2))} if rng.random() < 0.4 else {}
        out.append(
            node(
                f"n{i}",
                cpu=rng.choice(("1", "2", "4", "500m", "0")),
                memory=rng.choice(("1Gi", "4Gi", "512Mi", "0")),
                pods=rng.choice(("0", "1", "3", "110")),
                labels=labels,
                taints=rng.sample(TAINTS, rng.randint(0, 3)),
                unschedulable=rng.random() < 0.15,
                extra=extra,
            )
        )
    return out


def random_running_pods(rng: random.Random, nodes: Sequence[JSON], count: int) -> list[JSON]:
    out = []
    for i in range(count):
        target = rng.choice(nodes)["metadata"]["name"]
        out.append(
            pod(
                f"run{i}",
                cpu=rng.choice((None, "100m", "700m", "1")),
                memory=rng.choice((None, "100Mi", "1Gi")),
                node_name=target,
            )
        )
    return out


def random_pod(rng: random.Random, i: int) -> PodInfo:
    terms = []
    for _ in range(rng.randint(0, 2)):
        op = rng.choice(("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"))
        key = rng.choice(("zone", "rank", "disk", "missing"))
        if op in ("Exists", "DoesNotExist"):
            terms.append({"matchExpressions": [expr(key, op)]})
        elif op in ("Gt", "Lt"):
            key = rng.choice(("rank", "rank", "rank", "zone"))
            terms.append({"matchExpressions": [expr(key, op, str(rng.randint(-2, 10)))]})
        else:
            terms.append(
                {"matchExpressions": [expr(key, op, *rng.sample(("a", "b", "ssd", "3"), 2))]}
            )
    affinity: JSON = {}
    if terms:
        affinity = required(*terms)
    if rng.random() < 0.5:
        preferred = [
            {
                "weight": rng.randint(1, 50),
                "preference": {"matchExpressions": [expr("zone", "In", z)]},
            }
            for z in rng.sample(ZONES, rng.randint(1, 3))
        ]
        affinity.setdefault("nodeAffinity", {})[
            "preferredDuringSchedulingIgnoredDuringExecution"
        ] = preferred
    tolerations = rng.sample(
        (
            {"key": "dedicated", "operator": "Exists"},
            {"key": "dedicated", "value": "gpu", "effect": "NoSchedule"},
            {"key": "spot", "operator": "Exists", "effect": "PreferNoSchedule"},
            {"operator": "Exists", "effect": "PreferNoSchedule"},
            {"key": "node.kubernetes.io/unschedulable", "operator": "Exists"},
        ),
        rng.randint(0, 2),
    )
    gpu = {"example.com/gpu": "1"} if rng.random() < 0.3 else {}
    requests = {
        k: v
        for k, v in (
            ("cpu", rng.choice((None, "0", "200m", "1500m"))),
            ("memory", rng.choice((None, "300Mi", "2Gi"))),
        )
        if v is not None
    }
    return pod_from_json(
        pod(
            f"p{i}",
            containers=[{"name": "c", "resources": {"requests": {**requests, **gpu}}}],
            node_selector={"zone": rng.choice(ZONES)} if rng.random() < 0.3 else None,
            affinity=affinity or None,
            tolerations=tolerations,
            node_name=f"n{rng.randint(0, 5)}" if rng.random() < 0.1 else None,
        )
    )
