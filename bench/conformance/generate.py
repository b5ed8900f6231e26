"""Random cluster states and pods from a seed (same seed, same scenario, on any machine).

A scenario is plain JSON (nodes, namespaces, PriorityClasses, running pods with ``nodeName``,
pods to schedule), so a disagreement can be replayed exactly from the saved file.

What varies, chosen to reach every plugin of upstream's default profile:
- nodes: capacity (cpu, memory, pods), zone (three, some nodes without one), labels used by
  selectors (``disk``, ``tier`` as a number for Gt/Lt, ``gpu``), taints of every effect,
  a few cordoned (``spec.unschedulable``);
- running pods: labels, priorities, requests, host ports, and affinity / anti-affinity terms
  (existing pods' terms matter to incoming pods); placed where they fit and tolerate
  NoSchedule/NoExecute taints, so the state is one a scheduler could have produced and the
  taint manager evicts nothing;
- pods to schedule: requests (init containers and some too large for any node), nodeSelector,
  required / preferred node affinity with every operator, tolerations, required / preferred
  pod affinity and anti-affinity (hostname and zone, namespaces and namespaceSelector),
  topology spread constraints (both ``whenUnsatisfiable``, ``minDomains``, node policies),
  host ports, priorities.

The other kinds (``bench.conformance.kinds``) start from ``build`` and adapt its scenario.
Every pod to schedule here has ``preemptionPolicy: Never`` (from its PriorityClass): preemption
would delete running pods and change the state between the two schedulers' decisions
(the ``preemption`` kind judges it with its victims restored).
"""

from __future__ import annotations

import random
from dataclasses import asdict, dataclass, field
from typing import Any, Final

JSON = dict[str, Any]

ZONE: Final = "topology.kubernetes.io/zone"
REGION: Final = "topology.kubernetes.io/region"
HOSTNAME: Final = "kubernetes.io/hostname"
ZONES: Final = ("zone-a", "zone-b", "zone-c")
NAMESPACES: Final = {"team-a": {"team": "a", "env": "prod"}, "team-b": {"team": "b", "env": "prod"},
                     "team-c": {"team": "c", "env": "dev"}}  # fmt: skip
# Running pods use the first three; pods to schedule the "-never" ones: the Priority admission
# plugin refuses a literal preemptionPolicy, it must come from the class.
PRIORITY_CLASSES: Final = {
    "conf-low": (10, "PreemptLowerPriority"),
    "conf-mid": (100, "PreemptLowerPriority"),
    "conf-high": (1000, "PreemptLowerPriority"),
    "conf-low-never": (10, "Never"),
    "conf-mid-never": (100, "Never"),
    "conf-high-never": (1000, "Never"),
}
APPS: Final = ("web", "db", "cache", "batch")
COLORS: Final = ("red", "blue", "green")
TAINTS: Final = (
    {"key": "dedicated", "value": "infra", "effect": "NoSchedule"},
    {"key": "dedicated", "value": "batch", "effect": "PreferNoSchedule"},
    {"key": "maintenance", "effect": "NoExecute"},
    {"key": "gpu", "value": "true", "effect": "NoSchedule"},
)
HOST_PORT: Final = 8080
CPU_MILLIS: Final = (50, 100, 250, 500, 1000, 2000)
MEMORY_MI: Final = (64, 128, 256, 512, 1024, 2048)


@dataclass
class Scenario:
    seed: int
    namespaces: dict[str, dict[str, str]]
    priority_classes: dict[str, tuple[int, str]]  # name -> (value, preemptionPolicy)
    nodes: list[JSON]
    running: list[JSON]  # with spec.nodeName: created bound, never scheduled
    pods: list[JSON]  # to schedule, in order; schedulerName is set by the harness
    stats: dict[str, int] = field(default_factory=dict)
    # The scenario kind (bench.conformance.kinds) that generated it: it decides the services,
    # the comparison and whether an offline replay can judge it.
    kind: str = "basic"
    # Merged into both schedulers' profile (plugins, pluginConfig); empty: upstream's default.
    profile: JSON = field(default_factory=dict)
    # Any other API objects, created after the nodes and before the running pods (e.g.
    # StorageClasses, PersistentVolumes, DeviceClasses, ResourceSlices).
    objects: list[JSON] = field(default_factory=list)
    # PodGroups (GenericWorkload) whose members are among ``pods``: the harness creates a copy
    # per scheduler with the members' copies (bench.conformance.groups).
    pod_groups: list[JSON] = field(default_factory=list)

    def to_json(self) -> JSON:
        return asdict(self)

    def cluster_objects(self) -> list[JSON]:
        """The Namespaces and PriorityClasses the scenario's pods refer to."""
        out: list[JSON] = [
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, "labels": labels}}
            for name, labels in self.namespaces.items()
        ]
        for name, (value, policy) in self.priority_classes.items():
            out.append({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
                        "metadata": {"name": name}, "value": value,
                        "preemptionPolicy": policy})  # fmt: skip
        return out

    @classmethod
    def from_json(cls, data: JSON) -> Scenario:
        # Recordings made before ``kind``/``profile``/``objects`` existed read as "basic".
        return cls(**data)


def _quantity_cpu(millis: int) -> str:
    return f"{millis // 1000}" if millis % 1000 == 0 else f"{millis}m"


def make_node(rng: random.Random, index: int) -> JSON:
    name = f"conf-node-{index}"
    # A few shapes rather than free combinations, so identical nodes (and score ties, which
    # upstream breaks at random) are common and the tie-aware comparison is exercised.
    cpu, memory_gi, pods = rng.choice(((4, 16, 110), (8, 32, 110), (2, 4, 8), (16, 32, 16)))
    labels = {
        "type": "kwok",
        HOSTNAME: name,
        "kubernetes.io/os": "linux",
        "disk": rng.choice(("ssd", "hdd")),
        "tier": str(rng.randint(1, 3)),
    }
    if rng.random() > 0.1:  # a few nodes lack the zone key (spread and affinity skip them)
        labels[ZONE] = rng.choice(ZONES)
        labels[REGION] = "region-1"
    if rng.random() < 0.2:
        labels["gpu"] = "true"
    spec: JSON = {}
    if rng.random() < 0.3:
        spec["taints"] = [dict(rng.choice(TAINTS))]
    if rng.random() < 0.05:
        spec["unschedulable"] = True
        # What the node lifecycle controller adds to a cordoned node; created with it, the
        # state is the same from the first pod on (PodTopologySpread's nodeTaintsPolicy).
        spec.setdefault("taints", []).append(
            {"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}
        )
    resources = {"cpu": str(cpu), "memory": f"{memory_gi}Gi", "pods": str(pods)}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "labels": labels,
            # kwok plays the kubelet of nodes carrying this annotation (corral.testing.nodes).
            "annotations": {"kwok.x-k8s.io/node": "fake", "node.alpha.kubernetes.io/ttl": "0"},
        },
        "spec": spec,
        "status": {"capacity": dict(resources), "allocatable": dict(resources)},
    }


def _selector(rng: random.Random) -> JSON:
    if rng.random() < 0.7:
        return {"matchLabels": {"app": rng.choice(APPS)}}
    return {
        "matchExpressions": [
            {"key": "color", "operator": rng.choice(("In", "NotIn")),
             "values": rng.sample(COLORS, rng.randint(1, 2))}
        ]
    }  # fmt: skip


def _pod_term(rng: random.Random) -> JSON:
    term: JSON = {"labelSelector": _selector(rng), "topologyKey": rng.choice((HOSTNAME, ZONE))}
    roll = rng.random()
    if roll < 0.2:
        term["namespaces"] = rng.sample(sorted(NAMESPACES), rng.randint(1, 2))
    elif roll < 0.35:
        term["namespaceSelector"] = rng.choice(
            ({}, {"matchLabels": {"env": "prod"}}, {"matchLabels": {"team": "c"}})
        )
    return term


def _node_requirement(rng: random.Random) -> JSON:
    kind = rng.randrange(6)
    if kind == 0:
        return {"key": "disk", "operator": "In", "values": [rng.choice(("ssd", "hdd"))]}
    if kind == 1:
        return {"key": ZONE, "operator": "NotIn", "values": rng.sample(ZONES, rng.randint(1, 2))}
    if kind == 2:
        return {"key": "gpu", "operator": rng.choice(("Exists", "DoesNotExist"))}
    if kind == 3:
        return {"key": "tier", "operator": "Gt", "values": [str(rng.randint(0, 4))]}
    if kind == 4:
        return {"key": "tier", "operator": "Lt", "values": [str(rng.randint(2, 6))]}
    return {"key": ZONE, "operator": "In", "values": rng.sample(ZONES, rng.randint(1, 2))}


def _affinity(rng: random.Random, *, incoming: bool) -> JSON:
    affinity: JSON = {}
    if incoming and rng.random() < 0.2:
        terms = [
            {"matchExpressions": [_node_requirement(rng) for _ in range(rng.randint(1, 2))]}
            for _ in range(rng.randint(1, 2))
        ]
        node = affinity.setdefault("nodeAffinity", {})
        node["requiredDuringSchedulingIgnoredDuringExecution"] = {"nodeSelectorTerms": terms}
    if incoming and rng.random() < 0.3:
        node = affinity.setdefault("nodeAffinity", {})
        node["preferredDuringSchedulingIgnoredDuringExecution"] = [
            {"weight": rng.randint(1, 100),
             "preference": {"matchExpressions": [_node_requirement(rng)]}}
            for _ in range(rng.randint(1, 2))
        ]  # fmt: skip
    for kind in ("podAffinity", "podAntiAffinity"):
        if rng.random() < (0.1 if incoming else 0.08):
            affinity.setdefault(kind, {})["requiredDuringSchedulingIgnoredDuringExecution"] = [
                _pod_term(rng)
            ]
        if rng.random() < (0.2 if incoming else 0.15):
            affinity.setdefault(kind, {})["preferredDuringSchedulingIgnoredDuringExecution"] = [
                {"weight": rng.randint(1, 100), "podAffinityTerm": _pod_term(rng)}
                for _ in range(rng.randint(1, 2))
            ]
    return affinity


def _spread(rng: random.Random, labels: dict[str, str]) -> list[JSON]:
    constraints = []
    for key in rng.sample((ZONE, HOSTNAME), rng.randint(1, 2)):
        hard = rng.random() < 0.5
        constraint: JSON = {
            "maxSkew": rng.randint(1, 3),
            "topologyKey": key,
            "whenUnsatisfiable": "DoNotSchedule" if hard else "ScheduleAnyway",
            "labelSelector": {"matchLabels": {"app": labels["app"]}},
        }
        if hard and rng.random() < 0.2:
            constraint["minDomains"] = rng.randint(2, 4)
        if rng.random() < 0.2:
            constraint["nodeAffinityPolicy"] = rng.choice(("Honor", "Ignore"))
        if rng.random() < 0.2:
            constraint["nodeTaintsPolicy"] = rng.choice(("Honor", "Ignore"))
        if rng.random() < 0.15:
            constraint["matchLabelKeys"] = ["color"]
        constraints.append(constraint)
    return constraints


def _tolerations(rng: random.Random) -> list[JSON]:
    choices = (
        {"key": "dedicated", "operator": "Equal", "value": "infra", "effect": "NoSchedule"},
        {"key": "dedicated", "operator": "Exists"},
        {"key": "gpu", "operator": "Exists", "effect": "NoSchedule"},
        {"key": "maintenance", "operator": "Exists", "effect": "NoExecute"},
        {"key": "dedicated", "operator": "Equal", "value": "batch", "effect": "PreferNoSchedule"},
    )
    return [dict(t) for t in rng.sample(choices, rng.randint(1, 2))]


def make_pod(rng: random.Random, name: str, *, incoming: bool) -> JSON:
    namespace = rng.choice(sorted(NAMESPACES))
    labels = {"app": rng.choice(APPS), "color": rng.choice(COLORS)}
    cpu = rng.choice(CPU_MILLIS)
    memory = rng.choice(MEMORY_MI)
    if incoming and rng.random() < 0.04:
        cpu = 64000  # larger than any node: Insufficient cpu everywhere
    container: JSON = {
        "name": "app",
        "image": "registry.k8s.io/pause:3.10",
        "resources": {"requests": {"cpu": _quantity_cpu(cpu), "memory": f"{memory}Mi"}},
    }
    if rng.random() < 0.06:
        container["ports"] = [{"containerPort": HOST_PORT, "hostPort": HOST_PORT}]
    spec: JSON = {"containers": [container], "terminationGracePeriodSeconds": 0}
    if not incoming:
        priority = rng.choice([None, *(c for c in PRIORITY_CLASSES if "never" not in c)])
        if priority:
            spec["priorityClassName"] = priority
    if incoming and rng.random() < 0.1:
        init_cpu = rng.choice(CPU_MILLIS)
        spec["initContainers"] = [
            {"name": "init", "image": "registry.k8s.io/pause:3.10",
             "resources": {"requests": {"cpu": _quantity_cpu(init_cpu), "memory": "64Mi"}}}
        ]  # fmt: skip
    if incoming:
        spec["priorityClassName"] = rng.choice([c for c in PRIORITY_CLASSES if "never" in c])
        if rng.random() < 0.15:
            spec["nodeSelector"] = {"disk": rng.choice(("ssd", "hdd"))}
        if rng.random() < 0.3:
            spec["tolerations"] = _tolerations(rng)
        if rng.random() < 0.25:
            spec["topologySpreadConstraints"] = _spread(rng, labels)
    affinity = _affinity(rng, incoming=incoming)
    if affinity:
        spec["affinity"] = affinity
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace, "labels": labels},
        "spec": spec,
    }


def _millis(cpu: str) -> int:
    return int(cpu[:-1]) if cpu.endswith("m") else int(float(cpu) * 1000)


def _mebis(memory: str) -> int:
    return int(memory[:-2]) * (1024 if memory.endswith("Gi") else 1)


def _place(rng: random.Random, pod: JSON, nodes: list[JSON], used: dict[str, list[int]]) -> bool:
    """Bind ``pod`` to a random node with room; add tolerations for the node's hard taints."""
    requests = pod["spec"]["containers"][0]["resources"]["requests"]
    cpu, memory = _millis(requests["cpu"]), _mebis(requests["memory"])
    wants_port = any("ports" in c for c in pod["spec"]["containers"])
    candidates = []
    for node in nodes:
        name = node["metadata"]["name"]
        alloc = node["status"]["allocatable"]
        u = used[name]
        if (
            u[0] + cpu <= _millis(alloc["cpu"])
            and u[1] + memory <= _mebis(alloc["memory"])
            and u[2] + 1 <= int(alloc["pods"])
            and not (wants_port and u[3])
        ):
            candidates.append(node)
    if not candidates:
        return False
    node = rng.choice(candidates)
    name = node["metadata"]["name"]
    u = used[name]
    used[name] = [u[0] + cpu, u[1] + memory, u[2] + 1, u[3] or int(wants_port)]
    pod["spec"]["nodeName"] = name
    hard = [t for t in node["spec"].get("taints", []) if t["effect"] != "PreferNoSchedule"]
    if hard:
        pod["spec"]["tolerations"] = [
            {"key": t["key"], "operator": "Exists", "effect": t["effect"]} for t in hard
        ]
    return True


def generate(seed: int, *, nodes: int = 20, running: int = 40, pods: int = 50) -> Scenario:
    """The "basic" kind's scenario (the one recorded runs were made with)."""
    return build(random.Random(seed), seed, nodes=nodes, running=running, pods=pods)


def build(rng: random.Random, seed: int, *, nodes: int, running: int, pods: int) -> Scenario:
    """A scenario drawn from ``rng``: what other kinds start from and then adapt."""
    node_list = [make_node(rng, i) for i in range(nodes)]
    used = {n["metadata"]["name"]: [0, 0, 0, 0] for n in node_list}
    running_pods = []
    for i in range(running):
        pod = make_pod(rng, f"run-{i}", incoming=False)
        if _place(rng, pod, node_list, used):
            running_pods.append(pod)
    incoming = [make_pod(rng, f"pod-{i}", incoming=True) for i in range(pods)]
    return Scenario(
        seed=seed,
        namespaces={k: dict(v) for k, v in NAMESPACES.items()},
        priority_classes=dict(PRIORITY_CLASSES),
        nodes=node_list,
        running=running_pods,
        pods=incoming,
        stats={"nodes": nodes, "running": len(running_pods), "pods": pods},
    )
