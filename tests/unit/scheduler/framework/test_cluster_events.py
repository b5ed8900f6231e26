"""The events one pod or node update makes (upstream PodSchedulingPropertiesChange,
NodeSchedulingPropertiesChange)."""

from __future__ import annotations

from typing import Any

import pytest

from corral.scheduler.engine.handlers import node_changes
from corral.scheduler.framework.cluster_events import (
    ASSIGNED_POD,
    NODE,
    TARGET_POD,
    UNSCHEDULED_POD,
    ActionType,
    ClusterEvent,
    pod_changes,
)
from corral.testing.builders import node_record, pod_info

A = ActionType


@pytest.mark.parametrize(
    ("old", "new", "target", "want"),
    [
        pytest.param(
            {}, {"labels": {"a": "b"}}, True, [(TARGET_POD, A.UPDATE_POD_LABEL)], id="label"
        ),
        pytest.param(
            {"cpu": "2"},
            {"cpu": "1"},
            False,
            [(UNSCHEDULED_POD, A.UPDATE_POD_SCALE_DOWN)],
            id="scale down",
        ),
        pytest.param(
            {"cpu": "1"},
            {"cpu": "2"},
            True,
            [(TARGET_POD, A.UPDATE)],
            id="scale up: general update",
        ),
        pytest.param(
            {"gates": ["g"]},
            {},
            True,
            [(TARGET_POD, A.UPDATE_POD_SCHEDULING_GATES_ELIMINATED)],
            id="last gate removed",
        ),
        pytest.param(
            {"gates": ["g", "h"]},
            {"gates": ["g"]},
            True,
            [(TARGET_POD, A.UPDATE)],
            id="one gate of two removed",
        ),
        pytest.param(
            {},
            {"tolerations": [{"key": "k", "operator": "Exists"}]},
            True,
            [(TARGET_POD, A.UPDATE_POD_TOLERATION)],
            id="toleration added",
        ),
        pytest.param(
            {"node_name": "n"},
            {"node_name": "n", "labels": {"a": "b"}},
            False,
            [(ASSIGNED_POD, A.UPDATE_POD_LABEL)],
            id="bound pod",
        ),
        pytest.param(
            {},
            {"labels": {"a": "b"}, "tolerations": [{"key": "k", "operator": "Exists"}]},
            True,
            [(TARGET_POD, A.UPDATE_POD_LABEL), (TARGET_POD, A.UPDATE_POD_TOLERATION)],
            id="two changes: two events",
        ),
    ],
)
def test_pod_changes(
    old: dict[str, Any], new: dict[str, Any], target: bool, want: list[tuple[str, ActionType]]
) -> None:
    got = pod_changes(pod_info("p", **old), pod_info("p", **new), target=target)
    assert [(e.resource, e.action) for e in got] == want


_NO_EXTRAS: tuple[dict[str, str], dict[str, str]] = ({}, {})


@pytest.mark.parametrize(
    ("old", "new", "want"),
    [
        pytest.param({}, {"cpu": "8"}, [A.UPDATE_NODE_ALLOCATABLE], id="allocatable"),
        pytest.param({}, {"labels": {"a": "b"}}, [A.UPDATE_NODE_LABEL], id="label"),
        pytest.param(
            {},
            {"unschedulable": True, "taints": [{"key": "k", "effect": "NoSchedule"}]},
            [A.UPDATE_NODE_TAINT, A.UPDATE_NODE_TAINT],
            id="unschedulable and a taint: two taint events",
        ),
        pytest.param({}, {}, [], id="nothing"),
    ],
)
def test_node_changes(old: dict[str, Any], new: dict[str, Any], want: list[ActionType]) -> None:
    got = node_changes(node_record("n", **old), node_record("n", **new), _NO_EXTRAS, _NO_EXTRAS)
    assert got == [ClusterEvent(NODE, a, "NodeUpdate") for a in want]
