"""Node objects for extenders that are not nodeCacheCapable (they receive full Nodes).

The record's raw JSON is sent, the Node as the API server sent it: the engine and simulate keep
it on every record once such an extender is configured (``sends_node_objects``). A record built
without it (in-process tests, a caller of ``node_from_json`` without ``keep_raw``) gets a Node
rebuilt from its scheduling fields (name, labels, annotations, taints, unschedulable,
allocatable): no conditions, addresses, capacity or images.
"""

from __future__ import annotations

from typing import Any

from corral.scheduler.framework import types
from corral.scheduler.framework.types import NodeRecord


def node_json(record: NodeRecord) -> dict[str, Any]:
    if record.raw:
        return dict(record.raw)
    alloc = record.allocatable
    allocatable = {
        types.CPU: f"{alloc.milli_cpu}m",
        types.MEMORY: str(alloc.memory),
        types.EPHEMERAL_STORAGE: str(alloc.ephemeral_storage),
        types.PODS: str(alloc.allowed_pods),
        **{name: str(value) for name, value in alloc.scalar.items()},
    }
    spec: dict[str, Any] = {}
    if record.taints:
        spec["taints"] = [
            {"key": t.key, "value": t.value, "effect": t.effect}
            if t.value
            else {"key": t.key, "effect": t.effect}
            for t in record.taints
        ]
    if record.unschedulable:
        spec["unschedulable"] = True
    meta: dict[str, Any] = {"name": record.name, "labels": dict(record.labels)}
    if record.annotations:
        meta["annotations"] = dict(record.annotations)
    if record.resource_version:
        meta["resourceVersion"] = record.resource_version
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": meta,
        "spec": spec,
        "status": {"allocatable": allocatable},
    }
