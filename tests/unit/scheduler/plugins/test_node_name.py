"""NodeName: PreFilter and Filter, after upstream 1.37's tables."""

from __future__ import annotations

import pytest

from corral.scheduler.framework.cycle_state import CycleState
from corral.scheduler.framework.interface import PreFilterResult
from corral.scheduler.framework.status import Code, Status
from corral.scheduler.plugins import (
    node_name,
)
from corral.testing.builders import node, pod_info, snapshot_of
from corral.testing.framework import FakeHandle

UUR = Code.UNSCHEDULABLE_AND_UNRESOLVABLE


@pytest.mark.parametrize(
    ("wanted", "want"),
    [
        pytest.param(None, None, id="no nodeName"),
        pytest.param("n", None, id="same node"),
        pytest.param(
            "other", Status.of(UUR, "node(s) didn't match the requested node name"), id="other node"
        ),
    ],
)
def test_node_name(wanted: str | None, want: Status | None) -> None:
    snapshot = snapshot_of([node("n")])
    got = node_name.new(None, None).filter(
        CycleState(), pod_info("p", node_name=wanted), snapshot.node_info(0)
    )  # type: ignore[arg-type]
    assert got == want


# Upstream 1.37's TestNodeName_PreFilter.
@pytest.mark.parametrize(
    ("wanted", "want"),
    [
        pytest.param(
            "node1",
            PreFilterResult(frozenset({"node1"})),
            id="assigned pod with nodeName set, prefilter restricts to assigned node",
        ),
        pytest.param(None, None, id="unassigned pod without nodeName set, prefilter returns nil"),
    ],
)
def test_node_name_pre_filter(wanted: str | None, want: PreFilterResult | None) -> None:
    snapshot = snapshot_of([node("node1"), node("node2")])
    plugin = node_name.new(None, FakeHandle())
    got = plugin.pre_filter(CycleState(), pod_info("p", node_name=wanted), snapshot)
    assert got == (want, None)
