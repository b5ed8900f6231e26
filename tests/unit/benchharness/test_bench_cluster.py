"""bench.cluster: which node taints setup waits to see lifted."""

from __future__ import annotations

from typing import Any

import pytest
from bench.cluster import _lifecycle_tainted


def node(taints: list[str], *, cordoned: bool = False) -> dict[str, Any]:
    spec: dict[str, Any] = {"taints": [{"key": k, "effect": "NoSchedule"} for k in taints]}
    if cordoned:
        spec["unschedulable"] = True
    return {"spec": spec}


@pytest.mark.parametrize(
    ("raw", "waits"),
    [
        pytest.param(node([]), False, id="no taints"),
        pytest.param(node(["node.kubernetes.io/not-ready"]), True, id="not-ready"),
        pytest.param(node(["dedicated"]), False, id="a workload taint"),
        pytest.param(node(["node.kubernetes.io/unschedulable"], cordoned=True), False,
                     id="a cordoned node's own taint (the controller re-adds it)"),
        pytest.param(node(["node.kubernetes.io/unschedulable"]), True,
                     id="the unschedulable taint on a node no longer cordoned"),
    ],
)  # fmt: skip
def test_lifecycle_tainted(raw: dict[str, Any], waits: bool) -> None:
    assert _lifecycle_tainted(raw) is waits
