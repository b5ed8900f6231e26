"""Random clusters for the batch-vs-per-node equivalence tests (the builders they use are
:mod:`corral.testing.builders`)."""

from __future__ import annotations

import random
from collections.abc import Sequence

from corral.scheduler.backend.records import pod_from_json
from corral.scheduler.framework.types import PodInfo
from corral.testing.builders import JSON, expr, node, pod, required

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
