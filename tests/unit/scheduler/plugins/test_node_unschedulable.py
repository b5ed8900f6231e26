"""NodeUnschedulable: Filter (a pod tolerating the unschedulable taint passes) and its queueing
hints, after upstream 1.37's tables."""

from __future__ import annotations

from typing import Any

import pytest

from corral.scheduler.backend.records import pod_from_json
from corral.scheduler.framework.cluster_events import QueueingHint
from corral.scheduler.framework.cycle_state import CycleState
from corral.scheduler.framework.status import Code, Status
from corral.scheduler.framework.types import NodeRecord
from corral.scheduler.plugins import (
    node_unschedulable,
)
from corral.testing.builders import node, pod, pod_info, snapshot_of
from corral.testing.framework import FakeHandle
from support.hints import SKIP, Q, hint_node

_TOLERATE_UNSCHEDULABLE = {"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}


@pytest.mark.parametrize(
    ("old", "new", "want"),
    [
        pytest.param(None, hint_node(), Q, id="queue-on-schedulable-node-added"),
        pytest.param(
            None, hint_node(unschedulable=True), SKIP, id="skip-queue-on-unschedulable-node-added"
        ),
        pytest.param(
            hint_node(unschedulable=True), hint_node(), Q, id="queue-on-unschedulable-field-change"
        ),
        pytest.param(
            hint_node(),
            hint_node(unschedulable=True),
            SKIP,
            id="corral: skip-node-became-unschedulable",
        ),
        pytest.param(
            hint_node(unschedulable=True),
            hint_node(unschedulable=True, labels={"a": "b"}),
            SKIP,
            id="skip-unrelated-change-unschedulable-true",
        ),
    ],
)
def test_node_unschedulable_after_node_change(
    old: NodeRecord | None, new: NodeRecord, want: QueueingHint
) -> None:
    plugin = node_unschedulable.new(None, FakeHandle())
    assert plugin.hint_node_change(pod_info("p"), old, new) is want


@pytest.mark.parametrize(
    ("tolerations", "want"),
    [
        pytest.param([_TOLERATE_UNSCHEDULABLE], Q, id="queue-when-the-unsched-pod-gets-toleration"),
        pytest.param(
            [{"key": "other", "operator": "Exists"}],
            SKIP,
            id="skip-when-the-unsched-pod-gets-unrelated-toleration",
        ),
    ],
)
def test_node_unschedulable_after_pod_toleration_change(
    tolerations: list[dict[str, str]], want: QueueingHint
) -> None:
    plugin = node_unschedulable.new(None, FakeHandle())
    old, new = pod_info("p"), pod_info("p", tolerations=tolerations)
    assert plugin.hint_target_pod_toleration_change(old, old, new) is want


UUR = Code.UNSCHEDULABLE_AND_UNRESOLVABLE


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
