"""The single-numa-node Filter (SP ``filter.go``): a simplified TopologyManager admit handler.

- Pod scope: the pod's effective request must fit in one NUMA zone.
- Container scope: each init container must fit in some zone (they run one after the other,
  so nothing is subtracted); then each app container in order takes the lowest-id zone it fits
  in (the kubelet's choice), and its request is subtracted from that zone.

A request fits a set of zones per resource: a zero request is ignored; a resource the node does
not report at all fails at once; a zone counts when it reports the resource and has enough
(``Guaranteed`` pods only: for other QoS classes cpu, memory and hugepages are not exclusive, so
any zone reporting them will do); a host-level resource no zone reports (ephemeral storage,
devices without NUMA affinity) is fine at node level. The zones fitting every resource must not
be empty.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from fractions import Fraction
from typing import Final

from corral.scheduler.framework import types
from corral.scheduler.framework.status import Code, Status
from corral.scheduler.framework.types import NodeInfo, PodInfo
from corral.scheduler.plugins.node_resource_topology import requests as rq
from corral.scheduler.plugins.node_resource_topology.topology import MAX_NUMA_ID, NUMANode

ERR_CANNOT_ALIGN_POD: Final = "cannot align pod"
ERR_CANNOT_ALIGN_CONTAINER: Final = "cannot align container"
ERR_INCONSISTENT_ACCOUNTING: Final = "inconsistent resource accounting"

_ALL_ZONES: Final = frozenset(range(MAX_NUMA_ID))  # SP's bitmask.Fill()


def cannot_align(kind: str) -> str:
    """The init-container message: ``cannot align init container`` (``sidecar`` for an init
    container with restartPolicy Always)."""
    return f"cannot align {kind} container"


def is_suitable(qos: str, resource: str, wanted: Fraction, available: Fraction) -> bool:
    """SP ``isResourceSetSuitable``."""
    if qos != rq.GUARANTEED and rq.is_numa_affine(resource):
        return True
    return available >= wanted


def on_node(node: NodeInfo, resource: str) -> bool:
    """The node reports ``resource`` (SP ``util.ResourceList(allocatable)``: cpu, memory, pods,
    ephemeral-storage always, and every scalar resource the node has)."""
    if resource in (types.CPU, types.MEMORY, types.PODS, types.EPHEMERAL_STORAGE):
        return True
    return resource in node.allocatable.scalar


def fitting_zone(
    node: NodeInfo, zones: Sequence[NUMANode], qos: str, request: Mapping[str, Fraction]
) -> int | None:
    """The lowest NUMA id where ``request`` fits (SP ``resourcesAvailableInAnyNUMANodes``),
    or None."""
    fits = set(_ALL_ZONES)
    for resource, wanted in request.items():
        if wanted == 0:
            continue
        if not on_node(node, resource):
            return None
        reported = False
        here: set[int] = set()
        for zone in zones:
            available = zone.resources.get(resource)
            if available is None:
                continue
            reported = True
            if is_suitable(qos, resource, wanted, available):
                here.add(zone.numa_id)
        if not reported and rq.is_host_level(resource):
            continue
        fits &= here
        if not fits:
            return None
    return min(fits)


def subtract(
    zones: Sequence[NUMANode], numa_id: int, qos: str, request: Mapping[str, Fraction]
) -> bool:
    """Take ``request`` off zone ``numa_id`` (SP ``subtractResourcesFromNUMANodeList``);
    False when that would go negative (an accounting error, never expected)."""
    for zone in zones:
        if zone.numa_id != numa_id:
            continue
        for resource, wanted in request.items():
            if qos != rq.GUARANTEED and rq.is_numa_affine(resource):
                continue
            if wanted == 0 or resource not in zone.resources:
                continue
            left = zone.resources[resource] - wanted
            if left < 0:
                return False
            zone.resources[resource] = left
    return True


def pod_scope(node: NodeInfo, zones: Sequence[NUMANode], qos: str, pod: PodInfo) -> Status | None:
    if fitting_zone(node, zones, qos, rq.effective_request(pod)) is None:
        return Status.of(Code.UNSCHEDULABLE, ERR_CANNOT_ALIGN_POD)
    return None


def container_scope(
    node: NodeInfo, zones: Sequence[NUMANode], qos: str, pod: PodInfo
) -> Status | None:
    inits, apps = rq.containers(pod)
    for c in inits:
        if fitting_zone(node, zones, qos, c.requests) is None:
            return Status.of(Code.UNSCHEDULABLE, cannot_align(c.kind))
    for c in apps:
        chosen = fitting_zone(node, zones, qos, c.requests)
        if chosen is None:
            return Status.of(Code.UNSCHEDULABLE, ERR_CANNOT_ALIGN_CONTAINER)
        if not subtract(zones, chosen, qos, c.requests):
            return Status.of(Code.ERROR, ERR_INCONSISTENT_ACCOUNTING)
    return None
