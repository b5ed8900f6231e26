"""Raw API JSON → compact records (``PodInfo``, ``NodeRecord``).

Pod requests follow upstream ``resource.PodRequests`` (component-helpers): regular containers
plus restartable (sidecar) init containers are summed; a normal init container needs its own
request plus the sidecars started before it; the pod needs the max of the sum and every init
container's need, plus ``spec.overhead``. Amounts are summed exactly and rounded once at the end
(cpu to millis), as Quantity arithmetic does. Pod-level requests (``spec.resources.requests``,
feature PodLevelResources, on since 1.34) replace that sum for the resources they name that
upstream supports at pod level (cpu, memory, hugepages-*); overhead is added after.

The non-zero variants, used only for scoring, give containers without a cpu/memory *key* 100m /
200Mi (an explicit 0 stays 0). Upstream has two of them, which differ only for a pod with
pod-level requests: the node's accounting (``PodInfo.CalculateResource``) applies pod-level
requests and defaults a resource only where neither level requests it; NodeResourcesFit's view
of the incoming pod (``calculatePodResourceRequest``) defaults per container and ignores
pod-level requests, because 1.36's ``NewFit`` never sets ``enablePodLevelResources`` on its
scorer (BalancedAllocation's scorer does, and reads the plain requests).

Objects from the API server have the shapes its schema gives them; objects from a file (``corral
simulate``) or from a skewed server may not. A field of the wrong shape raises
:class:`MalformedObjectError` naming the object, never a bare ``TypeError``.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from datetime import datetime
from fractions import Fraction
from typing import Any, Final, NamedTuple

from corral.scheduler.backend import shapes
from corral.scheduler.config import quantity
from corral.scheduler.framework import nodeselector, podaffinity, taints, types
from corral.scheduler.framework.api_types import Node, Pod

# The DisruptionTarget condition reason of a pod the scheduler preempts (core/v1).
REASON_PREEMPTION_BY_SCHEDULER: Final = "PreemptionByScheduler"
_NON_ZERO_DEFAULTS: Final[dict[str, Fraction]] = {
    types.CPU: Fraction(types.DEFAULT_MILLI_CPU_REQUEST, 1000),
    types.MEMORY: Fraction(types.DEFAULT_MEMORY_REQUEST),
}

Amounts = dict[str, Fraction]


def _amount(q: Any) -> Fraction:
    """A request, limit or overhead: never negative (the API server refuses one; a negative
    request would let a pod fit a full node)."""
    amount = quantity.parse(q)
    if amount < 0:
        raise ValueError("a resource amount must be greater than or equal to 0")
    return amount


def _requests(container: Mapping[str, Any], defaults: Mapping[str, Fraction]) -> Amounts:
    raw = (container.get("resources") or {}).get("requests") or {}
    out = {name: _amount(q) for name, q in raw.items()}
    for name, default in defaults.items():
        out.setdefault(name, default)
    return out


def _limits_or_requests(container: Mapping[str, Any], _defaults: Mapping[str, Fraction]) -> Amounts:
    """Per resource the container's limit, or its request where it sets no limit."""
    resources = container.get("resources") or {}
    out = {name: _amount(q) for name, q in (resources.get("requests") or {}).items()}
    out.update({name: _amount(q) for name, q in (resources.get("limits") or {}).items()})
    return out


def _add(into: Amounts, more: Mapping[str, Fraction]) -> None:
    for name, amount in more.items():
        into[name] = into.get(name, Fraction(0)) + amount


def _max(into: Amounts, other: Mapping[str, Fraction]) -> None:
    for name, amount in other.items():
        if name not in into or amount > into[name]:
            into[name] = amount


def _is_pod_level_resource(name: str) -> bool:
    """Upstream ``IsSupportedPodLevelResource``."""
    return name in (types.CPU, types.MEMORY) or name.startswith("hugepages-")


def _pod_level_raw(spec: Mapping[str, Any]) -> Mapping[str, Any]:
    """``spec.resources.requests`` as given; raises ValueError naming the field."""
    resources = spec.get("resources") or {}
    if not isinstance(resources, Mapping):
        raise ValueError("spec.resources: must be an object")
    raw = resources.get("requests") or {}
    if not isinstance(raw, Mapping):
        raise ValueError("spec.resources.requests: must be an object")
    return raw


def _images(spec: Mapping[str, Any]) -> tuple[str, ...]:
    """The images ImageLocality weighs (upstream 1.37 ``sumImageScores``): init containers',
    containers', then image volumes' references."""
    containers = (*(spec.get("initContainers") or ()), *(spec.get("containers") or ()))
    out = [str(c.get("image", "")) for c in containers]
    for volume in spec.get("volumes") or ():
        image = volume.get("image")
        if image is not None:
            out.append(str(image.get("reference", "")))
    return tuple(out)


def pod_level_requests(spec: Mapping[str, Any]) -> Amounts:
    """The pod-level requests upstream honours; empty when ``IsPodLevelRequestsSet`` is false."""
    out = {}
    for name, q in _pod_level_raw(spec).items():
        if _is_pod_level_resource(name):
            try:
                out[name] = _amount(q)
            except ValueError as exc:
                raise ValueError(f"spec.resources.requests.{name}: {exc}") from None
    return out


def pod_requests(
    spec: Mapping[str, Any],
    *,
    defaults: Mapping[str, Fraction] | None = None,
    of: Any = _requests,
    pod_level: bool = True,
) -> Amounts:
    """Exact per-resource requests of a pod spec (upstream ``PodRequests``); ``defaults`` are
    upstream's ``NonMissingContainerRequests``, ``pod_level=False`` its ``SkipPodLevelResources``.
    ``of`` picks what each container contributes: requests (then pod-level requests override),
    or limits falling back to requests (container level only)."""
    defaults = defaults or {}
    reqs: Amounts = {}
    for container in spec.get("containers") or ():
        _add(reqs, of(container, defaults))
    sidecars: Amounts = {}
    init_max: Amounts = {}
    for container in spec.get("initContainers") or ():
        own = of(container, defaults)
        if container.get("restartPolicy") == "Always":
            _add(reqs, own)
            _add(sidecars, own)
            need = dict(sidecars)
        else:
            need = dict(own)
            _add(need, sidecars)
        _max(init_max, need)
    _max(reqs, init_max)
    if pod_level and of is _requests:
        reqs.update(pod_level_requests(spec))
    overhead = spec.get("overhead")
    if overhead:
        _add(reqs, {name: _amount(q) for name, q in overhead.items()})
    return reqs


def to_resources(amounts: Mapping[str, Fraction], *, with_pods: bool = False) -> types.Resources:
    """Upstream ``Resource.Add``: cpu in millis, scalar resources kept even when zero."""
    scalar = {
        name: quantity.value(a) for name, a in amounts.items() if types.is_scalar_resource(name)
    }
    return types.Resources(
        milli_cpu=quantity.milli_value(amounts.get(types.CPU, Fraction(0))),
        memory=quantity.value(amounts.get(types.MEMORY, Fraction(0))),
        ephemeral_storage=quantity.value(amounts.get(types.EPHEMERAL_STORAGE, Fraction(0))),
        allowed_pods=quantity.value(amounts.get(types.PODS, Fraction(0))) if with_pods else 0,
        scalar=scalar,
    )


def _host_ports(spec: Mapping[str, Any]) -> tuple[types.HostPort, ...]:
    """Ports with hostPort > 0 of containers and restartable init containers (1.34+)."""
    containers = list(spec.get("containers") or ())
    containers += [
        c for c in spec.get("initContainers") or () if c.get("restartPolicy") == "Always"
    ]
    out = []
    for container in containers:
        for port in container.get("ports") or ():
            host_port = int(port.get("hostPort") or 0)
            if host_port > 0:
                ip = port.get("hostIP") or "0.0.0.0"
                out.append(types.HostPort(ip, port.get("protocol") or "TCP", host_port))
    return tuple(out)


def _pvc_names(name: str, spec: Mapping[str, Any]) -> tuple[str, ...]:
    out = []
    for volume in spec.get("volumes") or ():
        claim = volume.get("persistentVolumeClaim")
        if claim is not None:
            out.append(str(claim.get("claimName", "")))
        elif volume.get("ephemeral") is not None:
            out.append(f"{name}-{volume.get('name', '')}")  # upstream ephemeral.VolumeClaimName
    return tuple(out)


def _timestamp(value: str | None) -> float | None:
    if not value:
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def _terminating_by_preemption(meta: Mapping[str, Any], status: Mapping[str, Any]) -> bool:
    if meta.get("deletionTimestamp") is None:
        return False
    for cond in status.get("conditions") or ():
        if cond.get("type") == "DisruptionTarget":
            return bool(
                cond.get("status") == "True"
                and cond.get("reason") == REASON_PREEMPTION_BY_SCHEDULER
            )
    return False


_Resources = tuple[tuple[tuple[str, Any], ...], tuple[tuple[str, Any], ...]]
_ResourcesKey = tuple[
    tuple[_Resources, ...],
    tuple[tuple[_Resources, Any], ...],
    tuple[tuple[str, Any], ...],
    tuple[tuple[str, Any], ...],
]


def _container_resources(container: Mapping[str, Any]) -> _Resources:
    res = container.get("resources") or {}
    return (
        tuple(sorted((res.get("requests") or {}).items())),
        tuple(sorted((res.get("limits") or {}).items())),
    )


def _resources_key(spec: Mapping[str, Any]) -> _ResourcesKey:
    """Everything the resource sums read from a pod spec, as a hashable value."""
    return (
        tuple(_container_resources(c) for c in spec.get("containers") or ()),
        tuple(
            (_container_resources(c), c.get("restartPolicy"))
            for c in spec.get("initContainers") or ()
        ),
        tuple(sorted((spec.get("overhead") or {}).items())),
        tuple(sorted(_pod_level_raw(spec).items())),
    )


class _Summary(NamedTuple):
    requests: types.Resources
    non_zero_milli_cpu: int
    non_zero_memory: int
    scored_milli_cpu: int
    scored_memory: int
    limits: types.Resources


def _cpu_memory(amounts: Mapping[str, Fraction]) -> tuple[int, int]:
    return (
        quantity.milli_value(amounts.get(types.CPU, Fraction(0))),
        quantity.value(amounts.get(types.MEMORY, Fraction(0))),
    )


@functools.lru_cache(maxsize=4096)
def _resource_summary(key: _ResourcesKey) -> _Summary:
    """Requests, the two non-zero views and limits of a spec with these resources.

    Exact arithmetic is costly and the replicas of a workload share their resources, so the sums
    are computed once per distinct resources signature (pods are parsed on every watch event)."""

    def container(res: _Resources) -> dict[str, Any]:
        return {"resources": {"requests": dict(res[0]), "limits": dict(res[1])}}

    spec = {
        "containers": [container(r) for r in key[0]],
        "initContainers": [{**container(r), "restartPolicy": policy} for r, policy in key[1]],
        "overhead": dict(key[2]),
        "resources": {"requests": dict(key[3])},
    }
    requests = pod_requests(spec)
    if pod_level_requests(spec):
        missing = {n: d for n, d in _NON_ZERO_DEFAULTS.items() if n not in requests}
        accounted = pod_requests(spec, defaults=missing) if missing else requests
        scored = pod_requests(spec, defaults=_NON_ZERO_DEFAULTS, pod_level=False)
    else:
        accounted = scored = pod_requests(spec, defaults=_NON_ZERO_DEFAULTS)
    return _Summary(
        to_resources(requests),
        *_cpu_memory(accounted),
        *_cpu_memory(scored),
        to_resources(pod_requests(spec, of=_limits_or_requests)),
    )


class MalformedObjectError(ValueError):
    """An API object whose fields do not have the shapes Kubernetes gives them."""


_EVERY: Final = shapes.EVERY
# What plugins read of a container in ``PodInfo.raw`` that the record does not (the record reads
# ``resources``, ``image`` and ``ports`` itself, and refuses them when they are not well formed).
_CONTAINER_READS: Final = (
    "name",  # NodeResourceTopologyMatch, DynamicResources' extended resources
    "restartPolicy",  # sidecars, in the same readers
    "restartPolicyRules",  # NodeDeclaredFeatures
    "volumeMounts",  # NodeDeclaredFeatures
)
# The fields read from ``PodInfo.raw`` beyond the record itself (``spec.overhead``,
# ``spec.resources`` and the containers' resources NodeResourceTopologyMatch reads are the
# record's own too), shape-checked by the Go types (:func:`shapes.problems_at`) every time a
# record is built: a pod with one of the wrong type is
# refused as malformed, and no plugin meets it (``spec.resourceClaims: 5`` reached
# DynamicResources' PreEnqueue as a TypeError, since the shapes were looked at only when the
# record failed). A reader of another raw field adds it here
# (tests/unit/scheduler/backend/test_raw_reads.py has a row per path).
POD_RAW_READS: Final[tuple[shapes.Path, ...]] = (
    ("metadata", "ownerReferences"),  # PodTopologySpread's default constraints
    ("metadata", "finalizers"),  # preemption: is a victim's removal imminent
    ("metadata", "deletionGracePeriodSeconds"),
    *(("spec", "containers", _EVERY, f) for f in _CONTAINER_READS),
    *(("spec", "initContainers", _EVERY, f) for f in _CONTAINER_READS),
    ("spec", "ephemeralContainers", _EVERY, "volumeMounts"),  # NodeDeclaredFeatures
    ("spec", "volumes"),  # VolumeBinding, VolumeRestrictions, NodeVolumeLimits, VolumeZone
    ("spec", "resourceClaims"),  # DynamicResources
    ("spec", "topologySpreadConstraints"),  # PodTopologySpread
    ("spec", "priorityClassName"),  # PreemptionToleration
    ("spec", "hostNetwork"),  # NodeDeclaredFeatures
    ("spec", "hostUsers"),
    ("status", "conditions"),  # PreemptionToleration
    ("status", "resourceClaimStatuses"),  # DynamicResources, its queueing hints
    ("status", "extendedResourceClaimStatus"),
)
# A NodeRecord's raw JSON is only sent on to extenders: nothing reads it.
_RAW_READS: Final[Mapping[str, tuple[shapes.Path, ...]]] = {"Pod": POD_RAW_READS}


def _name(raw: Mapping[str, Any]) -> str:
    meta = raw.get("metadata")
    meta = meta if isinstance(meta, Mapping) else {}
    return "/".join(str(meta.get(k)) for k in ("namespace", "name") if meta.get(k)) or "<unnamed>"


def _decoding(kind: str, raw: object, decode: Any) -> Any:
    if not isinstance(raw, Mapping):
        raise MalformedObjectError(f"{kind}: must be an object, got {type(raw).__name__}")
    try:
        record = decode(raw)
    except (TypeError, ValueError, AttributeError, KeyError, IndexError) as exc:
        name = _name(raw)
        found = shapes.problems(raw, kind=kind)  # where, by the Go types (only on failure)
        beyond = shapes.quantity_problem(raw, kind=kind) if not found else None
        if found:
            what = found[0]
        elif beyond is not None:  # an amount past int64: say which field
            what = beyond
        elif isinstance(exc, ValueError | _FieldTypeError):
            what = str(exc)
        else:
            what = f"a field has the wrong type ({exc})"
        what = " ".join(what.split())
        raise MalformedObjectError(f"{kind} {name}: {what}") from None
    read = shapes.problems_at(raw, _RAW_READS.get(kind, ()), kind=kind)
    if read:
        raise MalformedObjectError(f"{kind} {_name(raw)}: {' '.join(read[0].split())}")
    return record


class _FieldTypeError(TypeError):
    """A field of the wrong type; the message is ``path: what it must be``."""


def _text(obj: Mapping[str, Any], parent: str, key: str) -> str:
    """A string field; missing or null is empty."""
    value = obj.get(key)
    if value is None:
        return ""
    if not isinstance(value, str):
        raise _FieldTypeError(f"{parent}.{key}: must be a string, got {type(value).__name__}")
    return value


def _int32(value: Any, where: str) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or not -(2**31) <= value < 2**31:
        raise _FieldTypeError(f"{where}: must be a 32-bit integer, got {value!r:.40}")
    return value


def _labels(obj: Mapping[str, Any], parent: str, key: str) -> dict[str, str]:
    value = obj.get(key) or {}
    if not isinstance(value, Mapping) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in value.items()
    ):
        raise _FieldTypeError(f"{parent}.{key}: must map strings to strings")
    return dict(value)


def pod_from_json(raw: Mapping[str, Any]) -> types.PodInfo:
    """Raises :class:`MalformedObjectError`."""
    pod: types.PodInfo = _decoding("Pod", raw, _pod_from_json)
    return pod


def node_from_json(raw: Mapping[str, Any], *, keep_raw: bool = False) -> types.NodeRecord:
    """Raises :class:`MalformedObjectError`. ``keep_raw``: the record holds ``raw`` itself
    (``NodeRecord.raw``), for extenders that are sent whole Nodes (``sends_node_objects``);
    otherwise the JSON is dropped once parsed."""
    decode = functools.partial(_node_from_json, keep_raw=keep_raw)
    node: types.NodeRecord = _decoding("Node", raw, decode)
    return node


def _pod_from_json(raw: Pod) -> types.PodInfo:
    """``raw`` is a view of the JSON as sent (api_types' contract); the field readers check it."""
    meta = raw.get("metadata") or {}
    spec = raw.get("spec") or {}
    status = raw.get("status") or {}
    node_affinity = (spec.get("affinity") or {}).get("nodeAffinity") or {}
    required = node_affinity.get("requiredDuringSchedulingIgnoredDuringExecution")
    preferred = node_affinity.get("preferredDuringSchedulingIgnoredDuringExecution")
    summary = _resource_summary(_resources_key(spec))
    priority = spec.get("priority")
    return types.PodInfo(
        uid=_text(meta, "metadata", "uid")
        or f"{_text(meta, 'metadata', 'namespace')}/{_text(meta, 'metadata', 'name')}",
        namespace=_text(meta, "metadata", "namespace") or "default",
        name=_text(meta, "metadata", "name"),
        node_name=_text(spec, "spec", "nodeName"),
        scheduler_name=_text(spec, "spec", "schedulerName") or "default-scheduler",
        priority=_int32(priority, "spec.priority") if priority is not None else 0,
        labels=_labels(meta, "metadata", "labels"),
        node_selector=_labels(spec, "spec", "nodeSelector")
        if spec.get("nodeSelector") is not None
        else None,
        required_affinity=nodeselector.parse_node_selector(required)
        if required is not None
        else None,
        preferred_affinity=nodeselector.parse_preferred(preferred)
        if preferred is not None
        else None,
        tolerations=taints.parse_tolerations(spec.get("tolerations")),
        requests=summary.requests,
        non_zero_milli_cpu=summary.non_zero_milli_cpu,
        non_zero_memory=summary.non_zero_memory,
        scored_milli_cpu=summary.scored_milli_cpu,
        scored_memory=summary.scored_memory,
        scheduling_gates=tuple(
            _text(g, "spec.schedulingGates[]", "name") for g in spec.get("schedulingGates") or ()
        ),
        deleting=meta.get("deletionTimestamp") is not None,
        nominated_node_name=_text(status, "status", "nominatedNodeName"),
        resource_version=_text(meta, "metadata", "resourceVersion"),
        affinity=podaffinity.parse(meta.get("namespace") or "default", spec.get("affinity")),
        host_ports=_host_ports(spec),
        limits=summary.limits,
        images=_images(spec),
        pvc_names=_pvc_names(meta.get("name") or "", spec),
        has_resource_claims=bool(spec.get("resourceClaims")),
        phase=_text(status, "status", "phase"),
        start_time=_timestamp(status.get("startTime")),
        preemption_policy=_text(spec, "spec", "preemptionPolicy"),
        terminating_by_preemption=_terminating_by_preemption(meta, status),
        scheduling_group=_scheduling_group(spec),
        raw=raw,
    )


def _scheduling_group(spec: Mapping[str, Any]) -> str:
    group = spec.get("schedulingGroup")
    if not isinstance(group, Mapping):
        return ""
    name = group.get("podGroupName")
    return name if isinstance(name, str) else ""


def _node_from_json(raw: Node, *, keep_raw: bool = False) -> types.NodeRecord:
    """``raw`` is a view of the JSON as sent (api_types' contract); the field readers check it."""
    meta = raw.get("metadata") or {}
    spec = raw.get("spec") or {}
    status = raw.get("status") or {}
    allocatable = status.get("allocatable") or {}
    return types.NodeRecord(
        name=_text(meta, "metadata", "name"),
        labels=_labels(meta, "metadata", "labels"),
        taints=taints.parse_taints(spec.get("taints")),
        unschedulable=bool(spec.get("unschedulable")),
        declared_features=frozenset(str(f) for f in status.get("declaredFeatures") or ()),
        allocatable=to_resources(
            {name: quantity.parse(q) for name, q in allocatable.items()}, with_pods=True
        ),
        resource_version=meta.get("resourceVersion") or "",
        images=tuple(
            (tuple(str(n) for n in image.get("names") or ()), int(image.get("sizeBytes") or 0))
            for image in status.get("images") or ()
        ),
        annotations=_labels(meta, "metadata", "annotations"),
        raw=raw if keep_raw else Node(),
    )
