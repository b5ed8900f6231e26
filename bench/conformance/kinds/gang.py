"""Gang scheduling (GenericWorkload): PodGroups decided whole, beside plain pods and preemption.

The API server and every scheduler run with ``GenericWorkload=true`` and
``scheduling.k8s.io/v1beta1`` served. Units are scheduled in order: a PodGroup with its member
pods (the harness's group lockstep, ``bench.conformance.groups``) or a plain pod (the usual
per-pod round). Groups vary in what the pod-group cycle decides:

- gangs whose ``minCount`` is every member, or fewer (placed in part), and basic groups;
- groups too large for the free room (``minCount (M) cannot be satisfied``, or preemption),
  members with host ports (one per node), node selectors, tolerations;
- a gang that can never gather ``minCount`` members (it waits in the queue: no decision);
- a group whose members disagree on priority with their PodGroup (a SchedulerError);
- the state holds running groups (``disruptionMode: all``, a single victim across nodes).

Determinism. Every member prefers the nodes in a random order (one preferred node-affinity
term per node, distinct weights) and NodeAffinity's score weight outweighs every other plugin,
so a member's best node is unique: the members placed after one another in one cycle cannot
diverge at a tie. Priorities come in bands that keep upstream's victim choices unique
(reference: kinds/preemption.py): plain pods (running and incoming) below every group, each
with its own value; preempting groups (``disruptionMode: all``) above them, each its own
value; ``disruptionMode: single`` groups at the top with ``preemptionPolicy: Never`` (their
members, of one priority, would otherwise be equally important victims).
"""

from __future__ import annotations

import random
from typing import Final

from bench.conformance.compare import Decision, Trace, Verdict, compare
from bench.conformance.generate import HOSTNAME, JSON, Scenario, _quantity_cpu
from bench.conformance.kinds import Kind, Sizes, register

GATES: Final = {"GenericWorkload": True}
NAMESPACE: Final = "gang"
GROUP_API: Final = "scheduling.k8s.io/v1beta1"
# Annotation on a PodGroup template: the group never gathers minCount members; the harness
# waits a fixed time instead of for decisions.
EXPECT_WAITING: Final = "conformance.corral.dev/expect-waiting"
# NodeAffinity's score weight: a normalized step (1) times this exceeds every other default
# scorer's range together (Fit 100, Balanced 100, TaintToleration 3 x 100, ImageLocality 100,
# InterPodAffinity and PodTopologySpread 2 x 100 each).
AFFINITY_WEIGHT: Final = 1000
HOST_PORT: Final = 9090

PLAIN_BAND: Final = (1, 20_000)
GROUP_BAND: Final = (30_000, 60_000)
SINGLE_BAND: Final = (70_000, 90_000)


def _class(value: int, never: bool) -> str:
    return f"gang-prio-{value}{'-never' if never else ''}"


def _node(rng: random.Random, index: int) -> JSON:
    name = f"conf-node-{index}"
    cpu, memory_gi = rng.choice(((4, 16), (8, 32), (8, 16), (16, 64)))
    resources = {"cpu": str(cpu), "memory": f"{memory_gi}Gi", "pods": "110"}
    labels = {"type": "kwok", HOSTNAME: name, "kubernetes.io/os": "linux",
              "disk": rng.choice(("ssd", "hdd"))}  # fmt: skip
    spec: JSON = {}
    if rng.random() < 0.15:
        spec["taints"] = [{"key": "dedicated", "value": "batch", "effect": "NoSchedule"}]
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": labels,
                     "annotations": {"kwok.x-k8s.io/node": "fake",
                                     "node.alpha.kubernetes.io/ttl": "0"}},
        "spec": spec,
        "status": {"capacity": dict(resources), "allocatable": dict(resources)},
    }  # fmt: skip


def _preferences(rng: random.Random, nodes: list[JSON]) -> list[JSON]:
    weights = rng.sample(range(1, 101), len(nodes))
    return [
        {"weight": w, "preference": {"matchExpressions": [
            {"key": HOSTNAME, "operator": "In", "values": [n["metadata"]["name"]]}]}}
        for n, w in zip(nodes, weights, strict=True)
    ]  # fmt: skip


def _pod(name: str, cpu: int, memory_mi: int, priority_class: str) -> JSON:
    container: JSON = {
        "name": "app",
        "image": "registry.k8s.io/pause:3.10",
        "resources": {"requests": {"cpu": _quantity_cpu(cpu), "memory": f"{memory_mi}Mi"}},
    }
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": NAMESPACE, "labels": {"app": "gang"}},
        "spec": {"containers": [container], "terminationGracePeriodSeconds": 0,
                 "priorityClassName": priority_class},
    }  # fmt: skip


def _pod_group(name: str, priority_class: str, policy: JSON, *, disruption_all: bool) -> JSON:
    spec: JSON = {"schedulingPolicy": policy, "priorityClassName": priority_class}
    if disruption_all:
        spec["disruptionMode"] = {"all": {}}
    return {
        "apiVersion": GROUP_API,
        "kind": "PodGroup",
        "metadata": {"name": name, "namespace": NAMESPACE},
        "spec": spec,
    }


class _Priorities:
    """Distinct values per band, drawn without repetition."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.used: set[int] = set()
        self.classes: dict[str, tuple[int, str]] = {}

    def draw(self, band: tuple[int, int], *, never: bool) -> str:
        while True:
            value = self.rng.randrange(*band)
            if value not in self.used:
                break
        self.used.add(value)
        name = _class(value, never)
        self.classes[name] = (value, "Never" if never else "PreemptLowerPriority")
        return name


def _fits(node: JSON, used: dict[str, list[int]], cpu: int, memory: int) -> bool:
    free = used[node["metadata"]["name"]]
    capacity = node["status"]["allocatable"]
    return (free[0] + cpu <= int(capacity["cpu"]) * 1000
            and free[1] + memory <= int(capacity["memory"][:-2]) * 1024)  # fmt: skip


def _make(rng: random.Random, seed: int, sizes: Sizes) -> Scenario:
    nodes = [_node(rng, i) for i in range(sizes.nodes)]
    prio = _Priorities(rng)
    # cpu (millis) and memory (Mi) used per node; room held back for the canaries.
    used = {n["metadata"]["name"]: [100, 64] for n in nodes}
    untainted = [n for n in nodes if not n["spec"].get("taints")]
    running: list[JSON] = []
    objects: list[JSON] = []
    for i in range(sizes.running):
        cpu, memory = rng.choice((500, 1000, 2000, 3000)), rng.choice((256, 512, 1024, 4096))
        pod = _pod(f"run-{i}", cpu, memory, prio.draw(PLAIN_BAND, never=False))
        choices = [n for n in untainted if _fits(n, used, cpu, memory)]
        if choices:
            node = rng.choice(choices)
            pod["spec"]["nodeName"] = node["metadata"]["name"]
            used[node["metadata"]["name"]][0] += cpu
            used[node["metadata"]["name"]][1] += memory
            running.append(pod)
    # Running groups: one victim each across the nodes they span.
    for g in range(max(1, sizes.running // 15)):
        name = f"run-group-{g}"
        klass = prio.draw(GROUP_BAND, never=False)
        members = []
        for m in range(rng.randint(2, 4)):
            cpu = rng.choice((500, 1000, 2000))
            choices = [n for n in untainted if _fits(n, used, cpu, 256)]
            if not choices:
                break
            node = rng.choice(choices)
            pod = _pod(f"{name}-{m}", cpu, 256, klass)
            pod["spec"]["nodeName"] = node["metadata"]["name"]
            pod["spec"]["schedulingGroup"] = {"podGroupName": name}
            used[node["metadata"]["name"]][0] += cpu
            used[node["metadata"]["name"]][1] += 256
            members.append(pod)
        if members:
            objects.append(_pod_group(name, klass, {"gang": {"minCount": len(members)}},
                                      disruption_all=True))  # fmt: skip
            running.extend(members)
    pods: list[JSON] = []
    groups: list[JSON] = []
    # Every seed reaches each policy case; the rest are drawn.
    must = rng.sample(["basic", "partial", "full", "waiting"], 4)
    unit = 0
    while len(pods) < sizes.pods:
        unit += 1
        if rng.random() < 0.35:
            pods.append(_plain(rng, f"pod-{unit}", nodes, prio))
            continue
        group, members = _group(rng, f"group-{unit}", nodes, prio, must.pop() if must else "")
        groups.append(group)
        pods.extend(members)
    return Scenario(
        seed=seed,
        namespaces={NAMESPACE: {"team": "gang"}},
        priority_classes=prio.classes,
        nodes=nodes,
        running=running,
        pods=pods,
        stats={
            "nodes": sizes.nodes,
            "running": len(running),
            "pods": len(pods),
            "groups": len(groups),
        },
        profile={
            "plugins": {"score": {"enabled": [{"name": "NodeAffinity", "weight": AFFINITY_WEIGHT}]}}
        },
        objects=objects,
        pod_groups=groups,
    )


def _plain(rng: random.Random, name: str, nodes: list[JSON], prio: _Priorities) -> JSON:
    cpu = rng.choice((500, 1000, 2000, 4000, 8000))
    pod = _pod(name, cpu, rng.choice((256, 1024)), prio.draw(PLAIN_BAND, never=rng.random() < 0.3))
    if rng.random() < 0.7:
        pod["spec"]["affinity"] = {
            "nodeAffinity": {
                "preferredDuringSchedulingIgnoredDuringExecution": _preferences(rng, nodes)
            }
        }
    return pod  # fmt: skip


def _case(rng: random.Random) -> str:
    roll = rng.random()
    if roll < 0.2:
        return "basic"
    if roll < 0.45:
        return "partial"
    if roll < 0.5:
        return "waiting"
    return "full"


def _group(
    rng: random.Random, name: str, nodes: list[JSON], prio: _Priorities, case: str
) -> tuple[JSON, list[JSON]]:
    size = rng.randint(2, 8)
    single = rng.random() < 0.25
    klass = (prio.draw(SINGLE_BAND, never=True) if single
             else prio.draw(GROUP_BAND, never=False))  # fmt: skip
    case = case or _case(rng)
    waiting = case == "waiting"
    if case == "basic":
        policy: JSON = {"basic": {}}
    elif case == "partial":
        policy = {"gang": {"minCount": rng.randint(1, size - 1)}}
    elif waiting:
        policy = {"gang": {"minCount": size + rng.randint(1, 3)}}
    else:
        policy = {"gang": {"minCount": size}}
    group = _pod_group(name, klass, policy, disruption_all=not single)
    if waiting:
        group["metadata"]["annotations"] = {EXPECT_WAITING: "true"}
    big = rng.random() < 0.4  # members that together outgrow the free room
    cpu = rng.choice((2000, 3000, 4000)) if big else rng.choice((250, 500, 1000, 1500))
    shared = _preferences(rng, nodes) if rng.random() < 0.6 else None
    ports = rng.random() < 0.2
    selector = {"disk": rng.choice(("ssd", "hdd"))} if rng.random() < 0.15 else None
    tolerate = rng.random() < 0.3
    odd = rng.randrange(size) if rng.random() < 0.04 else None  # a member of another priority
    members = []
    for m in range(size):
        own = klass if m != odd else prio.draw(GROUP_BAND, never=False)
        pod = _pod(f"{name}-{m}", cpu, rng.choice((256, 512)), own)
        spec = pod["spec"]
        spec["schedulingGroup"] = {"podGroupName": name}
        spec["affinity"] = {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution":
                                             shared or _preferences(rng, nodes)}}  # fmt: skip
        if ports:
            spec["containers"][0]["ports"] = [{"containerPort": HOST_PORT, "hostPort": HOST_PORT}]
        if selector:
            spec["nodeSelector"] = dict(selector)
        if tolerate:
            spec["tolerations"] = [{"key": "dedicated", "operator": "Exists"}]
        members.append(pod)
    return group, members


def compare_gang(reference: Decision, trace: Trace, candidate: Decision) -> Verdict:
    """Placement (tie-aware) or the identical message; the same victims; a preempting
    attempt's FailedScheduling message. The nominated node is not compared: a pod whose
    victims are one group spanning nodes may be nominated to any of them (upstream picks among
    equal candidates at random)."""
    if not (candidate.timed_out or reference.timed_out):
        if sorted(candidate.victims) != sorted(reference.victims):
            return Verdict(False, "victims-differ",
                           f"upstream preempted {sorted(reference.victims)}, "
                           f"candidate {sorted(candidate.victims)}")  # fmt: skip
        if reference.victims and candidate.message != reference.message:
            return Verdict(False, "message-differs",
                           f"preempting attempt: upstream {reference.message!r}\n"
                           f"candidate {candidate.message!r}")  # fmt: skip
        if reference.reason == "Waiting" or candidate.reason == "Waiting":
            if reference.reason == candidate.reason and not (reference.node or candidate.node):
                return Verdict(True, "waiting", "its group never reached minCount")
            return Verdict(False, "waiting-differs",
                           f"upstream: {reference.describe()}; candidate: "
                           f"{candidate.describe()}")  # fmt: skip
    verdict = compare(reference, trace, candidate)
    if verdict.agree and reference.victims:
        verdict.kind = "preempted"
        verdict.detail = f"{sorted(reference.victims)}"
    return verdict


register(
    Kind(
        "gang",
        "PodGroups (gang, basic) and plain pods with GenericWorkload; group preemption",
        _make,
        Sizes(nodes=12, running=40, pods=100),
        compare=compare_gang,
        preemption=True,
        replayable=False,
        feature_gates=GATES,
        grouped=True,
    )
)
