"""Preemption: full nodes, preemptors of every priority; the nominated node and victims judged.

Every pod (running or to schedule) has its own PriorityClass, all values distinct, no PDBs:
upstream's choice among candidate nodes (lowest highest-priority victim first) and its victim
set (reprieve by priority) are then unique, so "identical nominated node and victims" is the
right test; with ties upstream's pick would depend on its random dry-run offset. The harness
recreates each scheduler's victims before the next one decides, and keeps upstream's outcome.
"""

from __future__ import annotations

import random
from typing import Final

from bench.conformance.compare import Decision, Trace, Verdict, compare
from bench.conformance.generate import (
    JSON,
    NAMESPACES,
    Scenario,
    _place,
    _quantity_cpu,
    _tolerations,
    make_node,
)
from bench.conformance.kinds import Kind, Sizes, register

RUNNING_CPU: Final = (250, 500, 1000, 1000, 2000)
PREEMPTOR_CPU: Final = (500, 1000, 2000, 3000, 4000, 64000)  # 64 cpu: larger than any node


def _class(value: int) -> str:
    return f"conf-prio-{value}"


def _pod(rng: random.Random, name: str, cpu: int, priority: int) -> JSON:
    container = {
        "name": "app",
        "image": "registry.k8s.io/pause:3.10",
        "resources": {
            "requests": {"cpu": _quantity_cpu(cpu), "memory": f"{rng.choice((128, 256, 512))}Mi"}
        },
    }
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": rng.choice(sorted(NAMESPACES)),
            "labels": {"app": "preempt"},
        },
        "spec": {
            "containers": [container],
            "terminationGracePeriodSeconds": 0,
            "priorityClassName": _class(priority),
        },
    }


def _make(rng: random.Random, seed: int, sizes: Sizes) -> Scenario:
    nodes = [make_node(rng, i) for i in range(sizes.nodes)]
    values = rng.sample(range(1, 100_000), sizes.running + sizes.pods)
    # Room for the harness's canary pods (1m cpu) on every node: cpu and a pod slot held back.
    used = {n["metadata"]["name"]: [100, 0, 1, 0] for n in nodes}
    running = []
    for i in range(sizes.running):
        pod = _pod(rng, f"run-{i}", rng.choice(RUNNING_CPU), values[i])
        if _place(rng, pod, nodes, used):
            running.append(pod)
    pods = []
    for i in range(sizes.pods):
        pod = _pod(rng, f"pod-{i}", rng.choice(PREEMPTOR_CPU), values[sizes.running + i])
        spec = pod["spec"]
        if rng.random() < 0.3:
            spec["tolerations"] = _tolerations(rng)
        if rng.random() < 0.15:
            spec["nodeSelector"] = {"disk": rng.choice(("ssd", "hdd"))}
        pods.append(pod)
    classes = {_class(v): (v, "PreemptLowerPriority") for v in values}
    return Scenario(
        seed=seed,
        namespaces={k: dict(v) for k, v in NAMESPACES.items()},
        priority_classes=classes,
        nodes=nodes,
        running=running,
        pods=pods,
        stats={"nodes": sizes.nodes, "running": len(running), "pods": sizes.pods},
    )


def compare_preemption(reference: Decision, trace: Trace, candidate: Decision) -> Verdict:
    """Identical nominated node, victim set and preempting attempt's FailedScheduling message
    (1.37 adds what it preempts), then the usual placement/message verdict."""
    if not (candidate.timed_out or reference.timed_out):
        if candidate.nominated != reference.nominated:
            return Verdict(
                False,
                "nominated-differs",
                f"upstream nominated {reference.nominated}, candidate {candidate.nominated}",
            )
        if sorted(candidate.victims) != sorted(reference.victims):
            return Verdict(
                False,
                "victims-differ",
                f"upstream preempted {sorted(reference.victims)}, "
                f"candidate {sorted(candidate.victims)}",
            )
        if reference.victims and candidate.message != reference.message:
            return Verdict(
                False,
                "message-differs",
                f"preempting attempt: upstream {reference.message!r}\n"
                f"candidate {candidate.message!r}",
            )
    verdict = compare(reference, trace, candidate)
    if verdict.agree and reference.victims:
        verdict.kind = "preempted"
        verdict.detail = f"on {reference.nominated}: {sorted(reference.victims)}"
    return verdict


register(
    Kind(
        "preemption",
        "full nodes, preemptors; nominated node and victims compared",
        _make,
        Sizes(nodes=16, running=90, pods=60),
        compare=compare_preemption,
        preemption=True,
        replayable=False,
    )
)
