"""PrioritySort, SchedulingGates, NodeName, NodeUnschedulable, DefaultBinder."""

from __future__ import annotations

from typing import Any

import pytest

from corral.scheduler.framework.cycle_state import CycleState
from corral.scheduler.framework.interface import PreFilterResult
from corral.scheduler.framework.status import Code, Status
from corral.scheduler.framework.types import PodInfo, QueuedPodInfo
from corral.scheduler.plugins import (
    default_binder,
    node_name,
    node_unschedulable,
    priority_sort,
    scheduling_gates,
)
from corral.testing.builders import node, pod, pod_info, snapshot_of
from corral.testing.framework import FakeHandle
from support.builders import pod_from_json

UUR = Code.UNSCHEDULABLE_AND_UNRESOLVABLE


@pytest.mark.parametrize(
    ("a", "b", "want"),
    [
        pytest.param((10, 5.0), (1, 1.0), True, id="higher priority first"),
        pytest.param((1, 1.0), (10, 0.0), False, id="lower priority later"),
        pytest.param((None, 1.0), (None, 2.0), True, id="equal priority: earlier first"),
        pytest.param((0, 2.0), (None, 2.0), False, id="nil priority is 0; ties are not less"),
    ],
)
def test_priority_sort(
    a: tuple[int | None, float], b: tuple[int | None, float], want: bool
) -> None:
    def qpi(name: str, prio: int | None, ts: float) -> QueuedPodInfo:
        return QueuedPodInfo(pod=pod_info(name, priority=prio), timestamp=ts)

    assert priority_sort.PrioritySort().less(qpi("a", *a), qpi("b", *b)) is want


def test_scheduling_gates() -> None:
    plugin = scheduling_gates.new(None, FakeHandle())
    assert plugin.pre_enqueue(pod_info("p")) is None
    assert plugin.pre_enqueue(pod_info("p", gates=["a", "b"])) == Status.of(
        UUR, "waiting for scheduling gates: [a b]"
    )


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


@pytest.mark.parametrize(
    ("unschedulable", "tolerations", "want"),
    [
        pytest.param(False, (), None, id="schedulable node"),
        pytest.param(True, (), Status.of(UUR, "node(s) were unschedulable"), id="cordoned"),
        pytest.param(
            True,
            (
                {
                    "key": "node.kubernetes.io/unschedulable",
                    "operator": "Exists",
                    "effect": "NoSchedule",
                },
            ),
            None,
            id="tolerated",
        ),
    ],
)
def test_node_unschedulable(
    unschedulable: bool, tolerations: tuple[Any, ...], want: Status | None
) -> None:
    snapshot = snapshot_of([node("n", unschedulable=unschedulable)])
    plugin = node_unschedulable.new(None, FakeHandle())
    p = pod_from_json(pod("p", tolerations=tolerations))
    assert plugin.filter(CycleState(), p, snapshot.node_info(0)) == want
    assert bool(plugin.filter_batch(CycleState(), p, snapshot).passed[0]) is (want is None)


def test_default_binder_posts_through_the_binder() -> None:
    calls: list[tuple[str, str]] = []

    def binder(p: PodInfo, node_name: str) -> None:
        calls.append((p.name, node_name))

    plugin = default_binder.new(None, FakeHandle(pod_binder=binder))
    assert plugin.bind(CycleState(), pod_info("p"), "n1") is None
    assert calls == [("p", "n1")]


@pytest.mark.parametrize(
    ("binder", "message"),
    [
        pytest.param(None, "no pod binder is configured", id="no binder"),
        pytest.param(
            lambda p, n: (_ for _ in ()).throw(RuntimeError("409 Conflict")),
            "409 Conflict",
            id="api error",
        ),
    ],
)
def test_default_binder_errors(binder: Any, message: str) -> None:
    plugin = default_binder.new(None, FakeHandle(pod_binder=binder))
    assert plugin.bind(CycleState(), pod_info("p"), "n1") == Status.error(message)
