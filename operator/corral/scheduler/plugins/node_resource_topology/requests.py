"""A pod's requests as NodeResourceTopologyMatch reads them: per container, the pod's effective
request, its QoS class, and which resources are native, host-level or NUMA-affine.

Quantities are exact (``Fraction``, cpu in cores). Containers come from the pod's JSON: the
requests the API server stored, a resource with a limit and no request requesting its limit (the
server's defaulting, so a pod built without it reads the same).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Final

from corral.scheduler.config import quantity
from corral.scheduler.framework.types import PodInfo

CPU: Final = "cpu"
MEMORY: Final = "memory"
EPHEMERAL_STORAGE: Final = "ephemeral-storage"
STORAGE: Final = "storage"

GUARANTEED: Final = "Guaranteed"
BURSTABLE: Final = "Burstable"
BEST_EFFORT: Final = "BestEffort"

ResourceList = dict[str, Fraction]


@dataclass(frozen=True, slots=True)
class Container:
    name: str
    requests: Mapping[str, Fraction]
    limits: Mapping[str, Fraction]
    init: bool = False
    sidecar: bool = False  # an init container with restartPolicy Always

    @property
    def kind(self) -> str:
        """SP's container kinds (logging.GetInitContainerKind)."""
        return "sidecar" if self.sidecar else "init" if self.init else "app"


def is_native(name: str) -> bool:
    """Upstream ``IsNativeResource``: unprefixed, or in the kubernetes.io domain."""
    return "/" not in name or "kubernetes.io/" in name


def is_hugepages(name: str) -> bool:
    return name.startswith("hugepages-")


def is_host_level(name: str) -> bool:
    """A resource that *may* have no NUMA affinity (SP ``isHostLevelResource``)."""
    return name in (EPHEMERAL_STORAGE, STORAGE) or not is_native(name)


def is_numa_affine(name: str) -> bool:
    """A resource that must be bound to NUMA nodes (SP ``isNUMAAffineResource``); devices are
    not counted: they may expose affinity, but need not."""
    return name in (CPU, MEMORY) or is_hugepages(name)


def _amounts(raw: object) -> dict[str, Fraction]:
    out: dict[str, Fraction] = {}
    if not isinstance(raw, Mapping):
        return out
    for name, text in raw.items():
        try:
            out[str(name)] = quantity.parse(text)
        except (quantity.QuantityError, ValueError):
            continue  # the API server refuses such a pod; nothing to count
    return out


def _container(raw: object, init: bool) -> Container:
    spec: Mapping[str, Any] = raw if isinstance(raw, Mapping) else {}
    resources = spec.get("resources") or {}
    limits = _amounts(resources.get("limits"))
    requests = {**limits, **_amounts(resources.get("requests"))}
    sidecar = init and spec.get("restartPolicy") == "Always"
    return Container(str(spec.get("name") or ""), requests, limits, init, sidecar)


def containers(pod: PodInfo) -> tuple[Sequence[Container], Sequence[Container]]:
    """(init containers, app containers) in spec order."""
    spec = pod.raw.get("spec") or {}
    inits = [_container(c, True) for c in spec.get("initContainers") or ()]
    apps = [_container(c, False) for c in spec.get("containers") or ()]
    return inits, apps


def overhead(pod: PodInfo) -> dict[str, Fraction]:
    return _amounts((pod.raw.get("spec") or {}).get("overhead"))


def effective_request(pod: PodInfo) -> ResourceList:
    """SP ``GetPodEffectiveRequest``: per resource the larger of the app containers' sum and
    the largest init container request, plus the pod overhead."""
    inits, apps = containers(pod)
    init_max: ResourceList = {}
    for c in inits:
        for name, amount in c.requests.items():
            if name not in init_max or amount > init_max[name]:
                init_max[name] = amount
    total: ResourceList = {}
    for c in apps:
        for name, amount in c.requests.items():
            total[name] = total.get(name, Fraction(0)) + amount
    for name, amount in init_max.items():
        if name not in total or amount > total[name]:
            total[name] = amount
    for name, amount in overhead(pod).items():
        total[name] = total.get(name, Fraction(0)) + amount
    return total


def qos_class(pod: PodInfo) -> str:
    """Upstream ``GetPodQOS`` over cpu and memory (pod-level ``spec.resources`` when set)."""
    spec = pod.raw.get("spec") or {}
    pod_level = spec.get("resources")
    if isinstance(pod_level, Mapping) and (pod_level.get("requests") or pod_level.get("limits")):
        limits = _amounts(pod_level.get("limits"))
        requests = {**limits, **_amounts(pod_level.get("requests"))}
        return _classify([Container("", requests, limits)])
    inits, apps = containers(pod)
    return _classify([*inits, *apps])


def _classify(all_containers: Sequence[Container]) -> str:
    requests: ResourceList = {}
    limits: ResourceList = {}
    guaranteed = True
    for c in all_containers:
        for name in (CPU, MEMORY):
            req, lim = c.requests.get(name), c.limits.get(name)
            if req is not None and req != 0:
                requests[name] = requests.get(name, Fraction(0)) + req
            if lim is not None and lim != 0:
                limits[name] = limits.get(name, Fraction(0)) + lim
            else:
                guaranteed = False
    if not requests and not limits:
        return BEST_EFFORT
    if guaranteed and set(limits) == {CPU, MEMORY} and requests == limits:
        return GUARANTEED
    return BURSTABLE


def includes_non_native(pod: PodInfo) -> bool:
    """SP ``IncludeNonNative``: some container requests a non-native (device) resource."""
    inits, apps = containers(pod)
    return any(not is_native(n) for c in (*inits, *apps) for n in c.requests)
