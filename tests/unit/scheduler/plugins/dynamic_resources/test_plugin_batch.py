"""DynamicResources' batch Filter (pods whose claims are all allocated) against its per-node
form: the same verdicts node by node, the same claim deallocated by PostFilter; pods with claims
to allocate decline the batch form."""

from __future__ import annotations

from typing import Any, cast

import numpy as np
import pytest

from corral.scheduler.framework import listers
from corral.scheduler.framework.cycle_state import CycleState
from corral.scheduler.framework.diagnosis import NodeToStatus
from corral.scheduler.framework.interface import Handle
from corral.scheduler.framework.status import Code, Status
from corral.scheduler.plugins.dynamic_resources import plugin as dra
from corral.testing.builders import node, snapshot_of

from .dra_builders import Json
from .test_plugin import GPU_CLASS, SLICE_A, claim, claiming_pod, store

NODES = [node(f"node-{i}", labels={"zone": "ab"[i % 2]}) for i in range(6)]


def _allocated(name: str, selector: Json | None, **meta: Any) -> Json:
    allocation: dict[str, Any] = {
        "devices": {"results": [{"request": "gpu", "driver": "gpu.example.com",
                                 "pool": "node-0", "device": "gpu-0"}]},
    }  # fmt: skip
    if selector is not None:
        allocation["nodeSelector"] = {"nodeSelectorTerms": [selector]}
    return claim(name, allocation=allocation, **meta)


def _names(*names: str) -> Json:
    return {"matchFields": [{"key": "metadata.name", "operator": "In", "values": list(names)}]}


def _zone(zone: str) -> Json:
    return {"matchExpressions": [{"key": "zone", "operator": "In", "values": [zone]}]}


class _Writer:
    def __init__(self) -> None:
        self.deallocated: list[str] = []

    def update_status(self, claim: Json) -> Json:
        self.deallocated.append(claim["metadata"]["name"])
        return claim


SCENES = [
    pytest.param([_allocated("c", _names("node-2"))], id="on one node by name"),
    pytest.param([_allocated("c", _zone("b"))], id="on a zone by label"),
    pytest.param([_allocated("c", None)], id="anywhere"),
    pytest.param(
        [_allocated("c", _zone("a")), _allocated("d", _names("node-1", "node-2"))],
        id="two claims: where both are",
    ),
    pytest.param([_allocated("c", _names("node-9")), _allocated("d", _zone("a"))], id="nowhere"),
]


def _cycle(claims: list[Json]) -> tuple[dra.DynamicResources, CycleState, _Writer, Any]:
    handle = store(GPU_CLASS, SLICE_A, *((listers.RESOURCE_CLAIM, c) for c in claims))
    writer = _Writer()
    handle.claim_writer = cast(listers.ResourceClaimWriter, writer)
    plugin = dra.DynamicResources(cast(Handle, handle))
    p = claiming_pod("p", *(c["metadata"]["name"] for c in claims))
    state, snap = CycleState(), snapshot_of(NODES)
    assert plugin.pre_filter(state, p, snap)[1] is None
    return plugin, state, writer, (p, snap)


@pytest.mark.parametrize("claims", SCENES)
def test_batch_verdicts_and_post_filter_match_the_per_node_form(claims: list[Json]) -> None:
    plugin, state, writer, (p, snap) = _cycle(claims)
    verdict = plugin.filter_batch(state, p, snap)
    assert verdict is not None
    statuses = NodeToStatus()
    failed = np.array([s for s in snap.order.tolist() if not verdict.passed[s]], dtype=np.intp)
    statuses.add_batch(failed, verdict, dra.NAME)
    _, batch_post = plugin.post_filter(state, p, statuses)

    per_node, per_node_state, per_node_writer, _ = _cycle(claims)
    for slot in snap.order.tolist():
        single = per_node.filter(per_node_state, p, snap.node_info(slot))
        if verdict.passed[slot]:
            assert single is None
        else:
            assert single == verdict.describe(0)
            assert single == Status.of(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, dra.ERR_NOT_AVAILABLE)
    _, per_node_post = per_node.post_filter(per_node_state, p, NodeToStatus())
    assert (batch_post, writer.deallocated) == (per_node_post, per_node_writer.deallocated)
    # Some node rejected the pod: PostFilter frees the first claim unavailable there.
    assert len(writer.deallocated) == (1 if len(failed) else 0)


def test_post_filter_counts_only_the_nodes_the_cycle_evaluated() -> None:
    # The claim is unavailable on node-1, but node-1 failed an earlier filter: nothing to free.
    plugin, state, writer, (p, snap) = _cycle([_allocated("c", _names("node-0"))])
    assert plugin.filter_batch(state, p, snap) is not None
    statuses = NodeToStatus()
    statuses.set(1, Status.of(Code.UNSCHEDULABLE, "too busy").with_plugin("NodeResourcesFit"))
    assert plugin.post_filter(state, p, statuses)[1] == Status(Code.UNSCHEDULABLE)
    assert writer.deallocated == []


def test_claims_to_allocate_decline_the_batch_form() -> None:
    plugin, state, _, (p, snap) = _cycle([claim("c")])
    assert plugin.filter_batch(state, p, snap) is None
