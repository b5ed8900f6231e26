"""What the queueing-hint tables of several plugins share: the two verdicts, upstream's
``st.MakeNode()`` node, and pods with volumes (hints are tested beside each plugin, after
upstream 1.37's ``Test..._isSchedulableAfter...`` tables, whose case names they keep)."""

from __future__ import annotations

from typing import Any

from corral.scheduler.backend.records import node_from_json, pod_from_json
from corral.scheduler.framework.cluster_events import QueueingHint
from corral.scheduler.framework.types import NodeRecord, PodInfo
from corral.testing.builders import pod_info

Q, SKIP = QueueingHint.QUEUE, QueueingHint.QUEUE_SKIP
# A pod bound to a node (the hints' "assigned pod").
BOUND: dict[str, Any] = {"node_name": "fake-node"}
CLAIM = {"name": "c", "persistentVolumeClaim": {"claimName": "claim"}}


def hint_node(
    allocatable: dict[str, str] | None = None,
    *,
    labels: dict[str, str] | None = None,
    taints: list[dict[str, str]] | None = None,
    unschedulable: bool = False,
) -> NodeRecord:
    """A node as upstream's ``st.MakeNode()``: 32 pods, only the given allocatable."""
    spec: dict[str, Any] = {"taints": taints or []}
    if unschedulable:
        spec["unschedulable"] = True
    return node_from_json(
        {
            "metadata": {"name": "n", "labels": labels or {}},
            "spec": spec,
            "status": {"allocatable": {"pods": "32", **(allocatable or {})}},
        }
    )


def with_volumes(name: str, *vols: dict[str, Any], **kwargs: Any) -> PodInfo:
    """``pod_info(name, **kwargs)`` with these volumes."""
    raw = dict(pod_info(name, **kwargs).raw)
    raw["spec"] = {**raw["spec"], "volumes": list(vols)}
    return pod_from_json(raw)
