"""The ``simulate`` candidate: ``corral simulate``'s engine deciding from a snapshot of the live
cluster, beside the real schedulers.

At its turn in the lockstep the harness lists the cluster as ``kubectl get -A -o yaml`` would
(every kind the engine reads, with the status the controllers wrote), and the offline
:class:`~corral.scheduler.engine.simulate.Simulator` decides the pod's copy with the same
KubeSchedulerConfiguration the engine candidate runs (its extenders are the harness's live
services). The decision is judged like any candidate's: tie-aware against upstream, identical
messages, identical nominated node and victims. Nothing is written to the cluster: the victims it
chose are only reported.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Final

from bench.conformance.compare import Decision
from corral.k8s import ApiError, Client
from corral.scheduler.backend.objects import WATCHED_KINDS
from corral.scheduler.engine.frameworks import load_engine_config
from corral.scheduler.engine.simulate import (
    ERROR,
    GATED,
    PREEMPTED,
    SCHEDULED,
    SimulatedEngine,
    Simulator,
)

SIMULATE: Final = "simulate"
JSON = dict[str, Any]


def snapshot(client: Client) -> list[JSON]:
    """Every Node, Pod and object of a kind the engine reads, each with its ``kind``."""
    out: list[JSON] = []
    # The templates are the resourceclaim controller's: it makes the copy's claims from them.
    templates = ("ResourceClaimTemplate", "/apis/resource.k8s.io/v1/resourceclaimtemplates")
    lists = (("Node", "/api/v1/nodes"), ("Pod", "/api/v1/pods"), templates, *WATCHED_KINDS.items())
    for kind, path in lists:
        try:
            listing = client.request("GET", path)
        except ApiError as exc:
            if exc.not_found:  # an API group this control plane does not serve
                continue
            raise
        out += [{**item, "kind": kind} for item in listing.get("items") or []]
    return out


def decide(client: Client, config: Path, pod: JSON, *, seed: int = 0) -> Decision:
    """The simulator's decision for ``pod`` (not created) from the cluster as it is now."""
    simulator = Simulator([SimulatedEngine(SIMULATE, load_engine_config(config))], seed=seed)
    docs = snapshot(client)
    for doc in docs:
        if doc["kind"] not in ("Node", "Pod"):
            simulator.add_object(doc)
    simulator.settle_volumes()
    for doc in docs:
        if doc["kind"] == "Node":
            simulator.add_node(doc)
        elif doc["kind"] == "Pod" and (doc.get("spec") or {}).get("nodeName"):
            simulator.add_running_pod(doc)  # terminating ones too: they hold their room
    placement = simulator.schedule(pod)
    decision = Decision(nominated=placement.nominated_node, victims=sorted(placement.victims))
    if placement.verdict == SCHEDULED:
        decision.node = placement.node
        decision.message = placement.first_failure or None
        return decision
    if placement.verdict == GATED:  # the engine leaves such a pod Pending without a condition
        return Decision(timed_out=True)
    decision.reason = "SchedulerError" if placement.verdict == ERROR else "Unschedulable"
    decision.message = placement.message
    if placement.verdict == PREEMPTED:  # cannot happen to a pod placed alone
        raise AssertionError(f"{placement.pod} was preempted by {placement.preempted_by}")
    return decision
