"""Random pods with labels, pod (anti-)affinity, spread constraints, ports and images, for the
batch-vs-per-node equivalence of the pod-counting plugins."""

from __future__ import annotations

import random
from typing import Any

from corral.testing.builders import JSON, node, pod
from support.builders import ZONES

APPS = ("web", "db", "cache")
TEAMS = ("a", "b")
NAMESPACES = ("default", "other")


def labeled_nodes(rng: random.Random, count: int) -> list[JSON]:
    out = []
    for i in range(count):
        labels = {"topology.kubernetes.io/zone": rng.choice(ZONES), "zone": rng.choice(ZONES)}
        if rng.random() < 0.15:
            del labels["topology.kubernetes.io/zone"]
        if rng.random() < 0.5:
            labels["rack"] = f"r{rng.randint(0, 3)}"
        raw = node(
            f"n{i}",
            labels=labels,
            taints=[{"key": "dedicated", "value": "x", "effect": "NoSchedule"}]
            if rng.random() < 0.2
            else [],
        )
        if rng.random() < 0.6:
            raw["status"]["images"] = [
                {"names": [f"img{j}:latest", f"alias{j}"], "sizeBytes": rng.randint(1, 900) * 2**20}
                for j in rng.sample(range(5), rng.randint(1, 3))
            ]
        out.append(raw)
    return out


def _selector(rng: random.Random) -> JSON | None:
    choice = rng.random()
    if choice < 0.1:
        return None
    if choice < 0.15:
        return {}
    if choice < 0.6:
        return {"matchLabels": {"app": rng.choice(APPS)}}
    op = rng.choice(("In", "NotIn", "Exists", "DoesNotExist"))
    expr: JSON = {"key": rng.choice(("app", "team")), "operator": op}
    if op in ("In", "NotIn"):
        expr["values"] = rng.sample(APPS + TEAMS, 2)
    return {"matchExpressions": [expr]}


def _term(rng: random.Random) -> JSON:
    term: JSON = {
        "topologyKey": rng.choice(("kubernetes.io/hostname", "zone", "rack", "missing")),
    }
    selector = _selector(rng)
    if selector is not None:
        term["labelSelector"] = selector
    r = rng.random()
    if r < 0.2:
        term["namespaces"] = [rng.choice(NAMESPACES)]
    elif r < 0.3:
        term["namespaceSelector"] = {}
    elif r < 0.4:
        term["namespaceSelector"] = {"matchLabels": {"env": "prod"}}
    return term


def affinity(rng: random.Random) -> JSON | None:
    out: JSON = {}
    for kind in ("podAffinity", "podAntiAffinity"):
        if rng.random() < 0.5:
            continue
        spec: JSON = {}
        if rng.random() < 0.5:
            spec["requiredDuringSchedulingIgnoredDuringExecution"] = [
                _term(rng) for _ in range(rng.randint(1, 2))
            ]
        if rng.random() < 0.6:
            spec["preferredDuringSchedulingIgnoredDuringExecution"] = [
                {"weight": rng.randint(1, 100), "podAffinityTerm": _term(rng)}
                for _ in range(rng.randint(1, 2))
            ]
        out[kind] = spec
    return out or None


def spread(rng: random.Random) -> list[JSON]:
    out: list[JSON] = []
    for key in rng.sample(("zone", "kubernetes.io/hostname", "rack"), rng.randint(0, 2)):
        c: JSON = {
            "maxSkew": rng.randint(1, 3),
            "topologyKey": key,
            "whenUnsatisfiable": rng.choice(("DoNotSchedule", "ScheduleAnyway")),
        }
        selector = _selector(rng)
        if selector is not None:
            c["labelSelector"] = selector
        if rng.random() < 0.3:
            c["minDomains"] = rng.randint(1, 5)
        if rng.random() < 0.3:
            c["nodeAffinityPolicy"] = rng.choice(("Honor", "Ignore"))
        if rng.random() < 0.3:
            c["nodeTaintsPolicy"] = rng.choice(("Honor", "Ignore"))
        if rng.random() < 0.2:
            c["matchLabelKeys"] = ["team"]
        out.append(c)
    return out


def random_labeled_pod(
    rng: random.Random, i: int, *, node_name: str | None = None, prefix: str = "p"
) -> JSON:
    labels = {"app": rng.choice(APPS)}
    if rng.random() < 0.5:
        labels["team"] = rng.choice(TEAMS)
    raw = pod(
        f"{prefix}{i}",
        namespace=rng.choice(NAMESPACES),
        cpu=rng.choice((None, "100m", "500m")),
        memory=rng.choice((None, "200Mi", "1Gi")),
        labels=labels,
        affinity=affinity(rng),
        node_name=node_name,
        node_selector={"zone": rng.choice(ZONES)} if rng.random() < 0.15 else None,
        tolerations=[{"key": "dedicated", "operator": "Exists"}] if rng.random() < 0.3 else (),
        priority=rng.randint(0, 3),
    )
    spec: dict[str, Any] = raw["spec"]
    constraints = spread(rng)
    if constraints:
        spec["topologySpreadConstraints"] = constraints
    if rng.random() < 0.3:
        spec["containers"][0]["ports"] = [
            {
                "containerPort": 80,
                "hostPort": rng.choice((80, 8080)),
                "hostIP": rng.choice(("", "10.0.0.1", "10.0.0.2")),
                "protocol": rng.choice(("TCP", "UDP", "")),
            }
        ]
    spec["containers"][0]["image"] = rng.choice(("img0", "img1:latest", "img2", "alias3", "other"))
    if rng.random() < 0.2:
        raw["metadata"]["deletionTimestamp"] = "2024-01-01T00:00:00Z"
    return raw
