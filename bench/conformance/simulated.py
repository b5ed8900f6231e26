"""The ``simulate`` candidate: ``corral simulate``'s engine deciding from a snapshot of the live
cluster, beside the real schedulers.

At its turn in the lockstep the harness lists the cluster as ``kubectl get -A -o yaml`` would
(every kind the engine reads, with the status the controllers wrote), and the offline
:class:`~corral.scheduler.engine.simulate.Simulator` decides the pod's copy with the same
KubeSchedulerConfiguration the engine candidate runs (its extenders are the harness's live
services). The decision is judged like any candidate's: tie-aware against upstream, identical
messages, identical nominated node and victims. Nothing is written to the cluster: the victims it
chose are only reported.

Grouped kinds (GenericWorkload): :func:`decide_group` gives the simulator the round's PodGroup
copy and its members at once (ungated: the harness's gate only lines up the live schedulers'
watches), and reads each member's decision and the PodGroup's condition as
:mod:`bench.conformance.groups` reads the live ones.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

from bench.conformance import groups
from bench.conformance.compare import Decision
from corral.k8s import ApiError, Client
from corral.scheduler.backend.objects import WATCHED_KINDS
from corral.scheduler.config import FeatureGates
from corral.scheduler.engine.frameworks import load_engine_config
from corral.scheduler.engine.simulate import (
    ERROR,
    GATED,
    POD_GROUP,
    PREEMPTED,
    SCHEDULED,
    Placement,
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
    pod_groups = (POD_GROUP, f"/apis/{groups.GROUP_API}/podgroups")
    lists = (("Node", "/api/v1/nodes"), ("Pod", "/api/v1/pods"), templates, pod_groups,
             *WATCHED_KINDS.items())  # fmt: skip
    for kind, path in lists:
        try:
            listing = client.request("GET", path)
        except ApiError as exc:
            if exc.not_found:  # an API group this control plane does not serve
                continue
            raise
        out += [{**item, "kind": kind} for item in listing.get("items") or []]
    return out


def _simulator(client: Client, config: Path, gates: Mapping[str, bool], seed: int) -> Simulator:
    """The simulator over the cluster as it is now, running ``config`` with ``gates``."""
    engine = load_engine_config(config, FeatureGates(dict(gates)))
    simulator = Simulator([SimulatedEngine(SIMULATE, engine)], seed=seed)
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
    return simulator


def decide(
    client: Client,
    config: Path,
    pod: JSON,
    *,
    gates: Mapping[str, bool] | None = None,
    seed: int = 0,
) -> Decision:
    """The simulator's decision for ``pod`` (not created) from the cluster as it is now."""
    placement = _simulator(client, config, gates or {}, seed).schedule(pod)
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


def decide_group(
    client: Client,
    config: Path,
    group: JSON,
    pods: list[JSON],
    *,
    gates: Mapping[str, bool],
    seed: int = 0,
) -> list[Decision]:
    """The simulator's decisions for a PodGroup's members (``groups.copies``, not created),
    in their order, from the cluster as it is now."""
    simulator = _simulator(client, config, gates, seed)
    simulator.add_object({**group, "kind": POD_GROUP})
    ungated = [{**pod, "spec": {k: v for k, v in pod["spec"].items() if k != "schedulingGates"}}
               for pod in pods]  # fmt: skip
    placements = simulator.run(ungated)
    key = f"{group['metadata']['namespace']}/{group['metadata']['name']}"
    found = simulator.pod_group_condition(key)
    condition = groups.condition({"status": {"conditions": [found]}} if found else {})
    victims = sorted({v for p in placements for v in p.victims})
    return [_member(p, condition, victims) for p in placements]


def _member(placement: Placement, condition: str, victims: list[str]) -> Decision:
    """One member's decision as ``groups.observe`` reads a live one."""
    decision = Decision(nominated=placement.nominated_node, victims=victims, group=condition)
    if placement.verdict == SCHEDULED:
        decision.node = placement.node
    elif placement.verdict == GATED:  # held by PreEnqueue: the live member waits, no condition
        decision.reason = "Waiting"
    elif placement.verdict == PREEMPTED:  # cannot happen to a group placed alone
        raise AssertionError(f"{placement.pod} was preempted by {placement.preempted_by}")
    else:
        decision.reason = "SchedulerError" if placement.verdict == ERROR else "Unschedulable"
        decision.message = placement.message
    if victims:
        decision.message = placement.first_failure or None
    return decision
