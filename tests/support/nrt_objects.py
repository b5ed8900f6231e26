"""NodeResourceTopology objects (topology.node.k8s.io/v1alpha2) and the pods NUMA tests place,
for the NodeResourceTopologyMatch tables and e2e tests (SP ``objects.go`` / test helpers)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from corral.scheduler.config import quantity

JSON = dict[str, Any]
API_VERSION = "topology.node.k8s.io/v1alpha2"
Res = Mapping[str, str]


def zone(
    numa_id: int | str,
    resources: Mapping[str, tuple[str, str] | str],
    costs: Mapping[int, int] | None = None,
    *,
    kind: str = "Node",
) -> JSON:
    """A zone ``node-<id>`` (or the name given); resources name -> (capacity, available), or one
    amount for both (SP MakeTopologyResInfo)."""
    infos = []
    for name, amounts in resources.items():
        capacity, available = (amounts, amounts) if isinstance(amounts, str) else amounts
        infos.append({"name": name, "capacity": capacity, "allocatable": capacity,
                      "available": available})  # fmt: skip
    out: JSON = {
        "name": numa_id if isinstance(numa_id, str) else f"node-{numa_id}",
        "type": kind,
        "resources": infos,
    }
    if costs:
        out["costs"] = [{"name": f"node-{k}", "value": v} for k, v in costs.items()]
    return out


def nrt(
    name: str,
    zones: Sequence[JSON],
    *,
    policies: Sequence[str] = (),
    attributes: Mapping[str, str] | None = None,
) -> JSON:
    obj: JSON = {"apiVersion": API_VERSION, "kind": "NodeResourceTopology",
                 "metadata": {"name": name}, "zones": list(zones)}  # fmt: skip
    if policies:
        obj["topologyPolicies"] = list(policies)
    if attributes:
        obj["attributes"] = [{"name": k, "value": v} for k, v in attributes.items()]
    return obj


def node_for(topology: JSON, extra: Mapping[str, str] | None = None) -> JSON:
    """The Node whose allocatable is the sum of the zones' available amounts (SP
    makeResourceListFromZones), plus ``extra``."""
    total: dict[str, Any] = {}
    for z in topology["zones"]:
        for info in z["resources"]:
            total[info["name"]] = total.get(info["name"], 0) + quantity.parse(info["available"])
    allocatable = {k: _text(v) for k, v in total.items()}
    allocatable.update(extra or {})
    allocatable.setdefault("pods", "110")
    name = topology["metadata"]["name"]
    return {
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
        "spec": {},
        "status": {"allocatable": allocatable, "capacity": allocatable},
    }


def _text(amount: Any) -> str:
    if amount.denominator == 1:
        return str(amount.numerator)
    return f"{quantity.milli_value(amount)}m"


def container(
    name: str, requests: Res | None = None, limits: Res | None = None, **spec: Any
) -> JSON:
    resources: JSON = {}
    if requests is not None:
        resources["requests"] = dict(requests)
    if limits is not None:
        resources["limits"] = dict(limits)
    return {"name": name, "image": "registry.k8s.io/pause:3.10", "resources": resources, **spec}


def numa_pod(
    name: str = "p",
    containers: Sequence[JSON] = (),
    init_containers: Sequence[JSON] = (),
    namespace: str = "default",
    **spec: Any,
) -> JSON:
    body: JSON = {"containers": list(containers) or [container("c")], **spec}
    if init_containers:
        body["initContainers"] = list(init_containers)
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": namespace, "uid": f"uid-{name}"},
            "spec": body}  # fmt: skip


def guaranteed(*per_container: Res, inits: Sequence[Res] = (), name: str = "p") -> JSON:
    """Containers requesting their limits (SP makePodByResourceLists, withMultiContainers)."""
    return numa_pod(
        name,
        [container(f"cnt-{i + 1}", r, r) for i, r in enumerate(per_container)],
        [container(f"init-{i + 1}", r, r) for i, r in enumerate(inits)],
    )


def requests_and_limits(requests: Res, limits: Res) -> JSON:
    """SP makePodWithReqAndLimitByResourceList."""
    return numa_pod("p", [container("container1", requests, limits)])


def requests_only(requests: Res) -> JSON:
    """SP makePodWithReqByResourceList."""
    return numa_pod("p", [container("container1", requests)])
