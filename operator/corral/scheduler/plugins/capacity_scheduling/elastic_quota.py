"""ElasticQuota bookkeeping (SP ``pkg/capacityscheduling/elasticquota.go``): one
:class:`QuotaInfo` per namespace, its ``min``/``max`` bounds and what the namespace uses.

Amounts are upstream ``framework.Resource``s (:class:`~corral.scheduler.framework.types.Resources`:
cpu in millis, memory and storage in bytes, ``pods`` as ``allowed_pods``, scalar resources by
name). SP's comparison rules, kept exactly:

- a missing ``min`` is 0 for cpu, memory and ephemeral-storage; a missing ``max`` is MaxInt64
  for those three (and 0 for ``pods``, which no pod requests);
- a resource absent from a present ``min`` or ``max`` map is 0 there: a pod requesting memory in
  a namespace whose ``max`` names only cpu is over its max;
- a scalar resource (GPUs, hugepages) absent from the bound uses the bound itself (``cmp2``):
  0 for ``min``, MaxInt64 for ``max``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Final

from corral.scheduler.config import quantity
from corral.scheduler.config.object_fields import object_field
from corral.scheduler.framework import types
from corral.scheduler.framework.types import PodInfo, Resources

UPPER_BOUND_OF_MAX: Final = 2**63 - 1  # SP UpperBoundOfMax (math.MaxInt64)
LOWER_BOUND_OF_MIN: Final = 0  # SP LowerBoundOfMin
ZERO: Final = Resources()


def bound(value: int) -> Resources:
    """SP ``makeResourceListForBound``: cpu (in millis), memory and ephemeral-storage."""
    return Resources(milli_cpu=value, memory=value, ephemeral_storage=value)


def resources_of(raw: Mapping[str, Any]) -> Resources:
    """Upstream ``framework.NewResource`` of a ResourceList: names that are neither native nor
    scalar are dropped. Raises ValueError on an amount that does not parse."""
    amounts: dict[str, Fraction] = {str(k): quantity.parse(v) for k, v in raw.items()}

    def whole(name: str) -> int:
        return quantity.value(amounts.get(name, Fraction(0)))

    return Resources(
        milli_cpu=quantity.milli_value(amounts.get(types.CPU, Fraction(0))),
        memory=whole(types.MEMORY),
        ephemeral_storage=whole(types.EPHEMERAL_STORAGE),
        allowed_pods=whole(types.PODS),
        scalar={n: quantity.value(a) for n, a in amounts.items() if types.is_scalar_resource(n)},
    )


def plus(a: Resources, b: Resources, sign: int = 1) -> Resources:
    """``a + sign * b`` field by field (scalar entries of either side kept, as upstream's
    ``Add``/``SetScalar``)."""
    scalar = dict(a.scalar)
    for name, value in b.scalar.items():
        scalar[name] = scalar.get(name, 0) + sign * value
    return Resources(
        milli_cpu=a.milli_cpu + sign * b.milli_cpu,
        memory=a.memory + sign * b.memory,
        ephemeral_storage=a.ephemeral_storage + sign * b.ephemeral_storage,
        allowed_pods=a.allowed_pods + sign * b.allowed_pods,
        scalar=scalar,
    )


def total(items: Iterable[Resources]) -> Resources:
    out = ZERO
    for item in items:
        out = plus(out, item)
    return out


def over(x1: Resources, x2: Resources, y: Resources, scalar_bound: int) -> bool:
    """SP ``cmp2``: whether ``x1 + x2`` exceeds ``y`` in any dimension; the scalar resources
    looked at are ``x1``'s, and one ``y`` lacks is compared with ``scalar_bound``."""
    if x1.milli_cpu + x2.milli_cpu > y.milli_cpu:
        return True
    if x1.memory + x2.memory > y.memory:
        return True
    if x1.ephemeral_storage + x2.ephemeral_storage > y.ephemeral_storage:
        return True
    if x1.allowed_pods + x2.allowed_pods > y.allowed_pods:
        return True
    return any(
        value + x2.scalar.get(name, 0) > y.scalar.get(name, scalar_bound)
        for name, value in x1.scalar.items()
    )


@dataclass(slots=True)
class QuotaInfo:
    """SP ``ElasticQuotaInfo``: ``min``/``max`` None only as SP's tests build them (a parsed
    ElasticQuota always has both, defaulted by :func:`new_quota_info`).

    Which pods ``used`` counts (SP keeps their keys in ``pods``): with ``bound_counted``, every
    bound pod of the namespace that is not Succeeded or Failed (the snapshot's, summed in
    columns), except the UIDs in ``removed``; and the UIDs in ``pods``, added one by one."""

    namespace: str
    min: Resources | None = None
    max: Resources | None = None
    used: Resources = ZERO
    pods: set[str] = field(default_factory=set)
    removed: set[str] = field(default_factory=set)
    bound_counted: bool = False

    def clone(self) -> QuotaInfo:
        return QuotaInfo(self.namespace, self.min, self.max, self.used, set(self.pods),
                         set(self.removed), self.bound_counted)  # fmt: skip

    def counts(self, pod: PodInfo) -> bool:
        if pod.uid in self.pods:
            return True
        bound = self.bound_counted and bool(pod.node_name) and not pod.terminal
        return bound and pod.uid not in self.removed

    def reserve(self, request: Resources) -> None:
        self.used = plus(self.used, request)

    def unreserve(self, request: Resources) -> None:
        self.used = plus(self.used, request, -1)

    def add_pod_if_absent(self, pod: PodInfo) -> None:
        if not self.counts(pod):
            self.pods.add(pod.uid)
            self.removed.discard(pod.uid)
            self.reserve(pod.requests)

    def delete_pod_if_present(self, pod: PodInfo) -> None:
        if self.counts(pod):
            self.pods.discard(pod.uid)
            self.removed.add(pod.uid)
            self.unreserve(pod.requests)

    def used_over_min_with(self, request: Resources) -> bool:
        # No min means the used amount is over min (0) already.
        return self.min is None or over(request, self.used, self.min, LOWER_BOUND_OF_MIN)

    def used_over_max_with(self, request: Resources) -> bool:
        # No max means no limit.
        return self.max is not None and over(request, self.used, self.max, UPPER_BOUND_OF_MAX)

    def used_over_min(self) -> bool:
        return self.min is None or over(self.used, ZERO, self.min, LOWER_BOUND_OF_MIN)


def new_quota_info(
    namespace: str,
    min_: Resources | None,
    max_: Resources | None,
    used: Resources | None = None,
) -> QuotaInfo:
    """SP ``newElasticQuotaInfo``: a missing min is the lower bound, a missing max the upper."""
    return QuotaInfo(
        namespace,
        bound(LOWER_BOUND_OF_MIN) if min_ is None else min_,
        bound(UPPER_BOUND_OF_MAX) if max_ is None else max_,
        ZERO if used is None else used,
    )


QuotaInfos = dict[str, QuotaInfo]


def clone_all(infos: Mapping[str, QuotaInfo]) -> QuotaInfos:
    return {ns: info.clone() for ns, info in infos.items()}


def aggregated_used_over_min_with(infos: Mapping[str, QuotaInfo], request: Resources) -> bool:
    """SP ``aggregatedUsedOverMinWith``: Σ used + ``request`` > Σ min, in any dimension."""
    used = plus(total(i.used for i in infos.values()), request)
    mins = total(i.min for i in infos.values() if i.min is not None)
    return over(used, ZERO, mins, LOWER_BOUND_OF_MIN)


# --- ElasticQuota objects -----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ElasticQuota:
    """What CapacityScheduling reads of a ``scheduling.x-k8s.io/v1alpha1`` ElasticQuota."""

    namespace: str
    name: str
    min: Resources | None
    max: Resources | None
    created: str  # creationTimestamp as sent (RFC 3339 sorts as text)


def elastic_quota_from_json(obj: Mapping[str, Any]) -> ElasticQuota:
    """Raises ValueError (or TypeError) on a field the CRD's schema would have refused (the
    engine's informer refuses such objects first; others may reach here)."""
    meta, spec = object_field(obj, "metadata"), object_field(obj, "spec")

    def bounds(key: str) -> Resources | None:
        raw = spec.get(key)
        if raw is None:
            return None
        if not isinstance(raw, Mapping):
            raise TypeError(f"spec.{key}: not a map")
        return resources_of(raw)

    return ElasticQuota(
        namespace=str(meta.get("namespace") or ""),
        name=str(meta.get("name") or ""),
        min=bounds("min"),
        max=bounds("max"),
        created=str(meta.get("creationTimestamp") or ""),
    )
