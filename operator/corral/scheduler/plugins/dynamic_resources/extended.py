"""The special ResourceClaim for a pod's extended resources backed by DRA (upstream
``extendeddynamicresources.go``, DRAExtendedResource).

- :func:`special_claim` (PreFilter): the claim a prior cycle created for the pod (annotated
  ``resource.kubernetes.io/extended-resource-claim: "true"``, controlled by the pod), else an
  in-memory one named ``<extended-resources>`` with no requests, a temporary uid and
  ``generateName: <pod>-extended-resources-``; PreBind creates it for real.
- :func:`node_claim` (Filter): per node, the requests for the resources that node leaves to
  DRA (its allocatable lacks them), one per container and resource: ``container-<i>-request-<j>``
  (``i`` over init containers then containers, ``j`` the resource's index in the container's
  sorted requests), ``ExactCount`` with the requested quantity. Init containers that are not
  sidecars first reuse the requests of later long-lived containers, and only the largest of
  their own requests is kept, as upstream. It returns the claim and the pod's request mappings.
"""

from __future__ import annotations

import copy
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Final, cast

from corral.scheduler.config import quantity
from corral.scheduler.framework.api_types import (
    ContainerExtendedResourceRequest,
    DeviceRequest,
    Pod,
    RawObject,
    ResourceClaim,
)
from corral.scheduler.framework.types import NodeInfo, PodInfo
from corral.scheduler.plugins.helper.dra_extended_resources import (
    DeviceClassResolver,
    is_dra_extended_resource_name,
)

SPECIAL_CLAIM_NAME: Final = "<extended-resources>"  # not a valid name: never an API object's
ANNOTATION: Final = "resource.kubernetes.io/extended-resource-claim"
ERR_STALE_CLAIM: Final = "cannot schedule extended resource claim"
ERR_CANNOT_FIT: Final = "cannot fit resource"


class NodeRejectedError(Exception):
    """The pod cannot use this node for its extended resources; the message is upstream's."""


@dataclass(frozen=True, slots=True)
class NodeClaim:
    claim: ResourceClaim
    mappings: tuple[ContainerExtendedResourceRequest, ...]


def is_special(claim: ResourceClaim) -> bool:
    return (claim.get("metadata") or {}).get("name") == SPECIAL_CLAIM_NAME


def find_claim(pod: PodInfo, claims: Sequence[ResourceClaim]) -> ResourceClaim | None:
    """Upstream ``findExtendedResourceClaim``: the annotated claim the pod controls."""
    for claim in claims:
        meta = claim.get("metadata") or {}
        if (meta.get("annotations") or {}).get(ANNOTATION) != "true":
            continue
        for ref in meta.get("ownerReferences") or ():
            if ref.get("name") == pod.name and ref.get("controller") and ref.get("uid") == pod.uid:
                return claim
    return None


def special_claim(pod: PodInfo, claims: Sequence[ResourceClaim]) -> ResourceClaim:
    """The pod's claim from a prior cycle, else a new in-memory one (no requests yet)."""
    found = find_claim(pod, claims)
    if found is not None:
        return found
    return {
        "metadata": {
            "namespace": pod.namespace,
            "name": SPECIAL_CLAIM_NAME,
            "uid": str(uuid.uuid4()),  # temporary, for the in-flight bookkeeping
            "generateName": f"{pod.name}-extended-resources-",
            "ownerReferences": [
                {
                    "apiVersion": "v1",
                    "kind": "Pod",
                    "name": pod.name,
                    "uid": pod.uid,
                    "controller": True,
                }
            ],
            "annotations": {ANNOTATION: "true"},
        },
        "spec": {"devices": {}},
    }


def node_claim(
    claim: ResourceClaim,
    pod: PodInfo,
    node: NodeInfo,
    classes: DeviceClassResolver,
    has_user_claims: bool,
) -> NodeClaim | None:
    """Upstream ``filterExtendedResources``: the claim to allocate on ``node``, or ``None`` when
    the node needs no devices for the pod; raises :class:`NodeRejectedError`."""
    if ((claim.get("spec") or {}).get("devices") or {}).get("requests") is not None:
        # Created by a prior cycle whose binding failed: PostFilter deletes it, then retry.
        raise NodeRejectedError(ERR_STALE_CLAIM)
    wanted: dict[str, int] = {}
    for name, amount in pod.requests.scalar.items():
        if not is_dra_extended_resource_name(name) or amount == 0:
            continue
        allocatable = node.allocatable.scalar.get(name)
        if classes.get(name) is not None and not allocatable:
            wanted[name] = amount
        elif allocatable is None:
            raise NodeRejectedError(ERR_CANNOT_FIT)
    if not wanted and not has_user_claims:
        return None
    if (claim.get("status") or {}).get("allocation") is not None:
        return None
    requests, mappings = requests_and_mappings(pod.raw, wanted, classes)
    out = copy.deepcopy(claim)
    out["spec"] = {"devices": {"requests": cast("list[DeviceRequest]", requests)}}
    return NodeClaim(out, tuple(cast("list[ContainerExtendedResourceRequest]", mappings)))


def requests_and_mappings(
    raw_pod: Pod, resources: Mapping[str, int], classes: DeviceClassResolver
) -> tuple[list[dict[str, Any]], list[dict[str, str]]]:
    """Upstream ``createRequestsAndMappings``: the device requests for ``resources`` and the
    container → request mappings, requests sorted by name."""
    spec = raw_pod.get("spec") or {}
    init = list(spec.get("initContainers") or ())
    containers = [*init, *(spec.get("containers") or ())]
    long_lived = [
        i
        for i, c in enumerate(containers)
        if i >= len(init) or c.get("restartPolicy") == "Always"  # regular, or a sidecar
    ]
    short_lived = [i for i in range(len(init)) if i not in long_lived]
    requests: list[dict[str, Any]] = []
    mappings: list[dict[str, str]] = []
    for resource in sorted(resources):
        cls = classes.get(resource)
        if cls is None:
            continue
        class_name = (cls.get("metadata") or {}).get("name") or ""
        long_requests: list[dict[str, Any] | None] = [None] * len(containers)
        long_mappings: list[dict[str, str]] = []
        for i in long_lived:
            req, found = _container_request(i, containers[i], resource, class_name, [])
            long_requests[i] = req
            long_mappings += found
        largest: dict[str, Any] | None = None
        short_names: set[str] = set()
        short_mappings: list[dict[str, str]] = []
        for i in short_lived:
            req, found = _container_request(
                i, containers[i], resource, class_name, long_requests[i:]
            )
            if req is not None:
                short_names.add(req["name"])
                if largest is None or _count(largest) < _count(req):
                    largest = req
            short_mappings += found
        if largest is not None and len(short_names) > 1:
            short_names.discard(largest["name"])
            for m in short_mappings:
                if m["requestName"] in short_names:
                    m["requestName"] = largest["name"]
        if largest is not None:
            requests.append(largest)
        requests += [r for r in long_requests if r is not None]
        mappings += long_mappings + short_mappings
    requests.sort(key=lambda r: str(r["name"]))
    return requests, mappings


def _count(request: RawObject) -> int:
    return int(request["exactly"]["count"])


def _container_request(
    index: int,
    container: RawObject,
    resource: str,
    class_name: str,
    reusable: Sequence[dict[str, Any] | None],
) -> tuple[dict[str, Any] | None, list[dict[str, str]]]:
    """Upstream ``createResourceRequestAndMappings`` for one container."""
    name = container.get("name") or ""
    creqs = (container.get("resources") or {}).get("requests") or {}
    if resource not in creqs:
        return None, []
    amount = _as_int64(creqs[resource])
    if not amount:
        return None, []
    mappings: list[dict[str, str]] = []
    total = 0
    for other in reusable:
        if other is None:
            continue
        total += _count(other)
        mappings.append(
            {"containerName": name, "resourceName": resource, "requestName": other["name"]}
        )
        if total >= amount:
            return None, mappings
    request_name = f"container-{index}-request-{sorted(creqs).index(resource)}"
    request = {
        "name": request_name,
        "exactly": {
            "deviceClassName": class_name,
            "allocationMode": "ExactCount",
            "count": amount - total,
        },
    }
    mappings.append({"containerName": name, "resourceName": resource, "requestName": request_name})
    return request, mappings


def _as_int64(text: object) -> int:
    """Quantity ``AsInt64``: the integer value, 0 when it is not a whole number."""
    if not isinstance(text, str | int | float):
        return 0
    try:
        amount = quantity.parse(text)
    except ValueError:
        return 0
    return int(amount) if amount == Fraction(int(amount)) else 0
