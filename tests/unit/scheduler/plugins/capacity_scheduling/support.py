"""Builders shared by CapacityScheduling's tests: SP's ``makePod``/``makeEQ`` and amounts."""

from __future__ import annotations

from typing import Any

from corral.scheduler.framework.types import Resources
from corral.testing.builders import JSON, pod

GPU = "nvidia.com/gpu"  # SP's ResourceGPU
LOW, MID, HIGH = 0, 100, 1000  # SP's lowPriority, midPriority, highPriority


def res(cpu: int = 0, mem: int = 0, eph: int = 0, **scalar: int) -> Resources:
    """A framework.Resource: cpu in millis; ``gpu=`` for nvidia.com/gpu."""
    scalars = {GPU if k == "gpu" else k: v for k, v in scalar.items()}
    return Resources(milli_cpu=cpu, memory=mem, ephemeral_storage=eph, scalar=scalars)


def sp_pod(
    name: str,
    namespace: str,
    mem: int,
    cpu: int = 0,
    gpu: int | None = None,
    priority: int = 0,
    node_name: str = "",
    **kw: Any,
) -> JSON:
    """SP ``makePod(name, ns, memReq, cpuReq, gpuReq, priority, uid, node)``: memory in bytes,
    cpu in millis; the uid is the name, as SP's tests give it."""
    requests: dict[str, str] = {"memory": str(mem), "cpu": f"{cpu}m"}
    if gpu is not None:
        requests[GPU] = str(gpu)
    containers = [{"name": "pause", "resources": {"requests": requests}}]
    raw = pod(name, namespace=namespace, priority=priority, node_name=node_name,
              containers=containers, **kw)  # fmt: skip
    raw["metadata"]["uid"] = name
    return raw


def sp_eq(
    namespace: str,
    name: str,
    max_: dict[str, Any] | None = None,
    min_: dict[str, Any] | None = None,
    created: str = "2026-01-01T00:00:00Z",
) -> JSON:
    """SP ``makeEQ(namespace, name, max, min)``."""
    spec: JSON = {}
    if max_ is not None:
        spec["max"] = max_
    if min_ is not None:
        spec["min"] = min_
    return {"apiVersion": "scheduling.x-k8s.io/v1alpha1", "kind": "ElasticQuota",
            "metadata": {"name": name, "namespace": namespace, "creationTimestamp": created},
            "spec": spec}  # fmt: skip


def rl(cpu: int, mem: int) -> dict[str, str]:
    """SP ``makeResourceList(cpu, mem)``: cpu in millis, memory in bytes."""
    return {"cpu": f"{cpu}m", "memory": str(mem)}
