"""The status of scheduler-plugins' ElasticQuotas (``scheduling.x-k8s.io/v1alpha1``), as SP's
controller keeps it (``pkg/controllers/elasticquota_controller.go``), run by the operator while
some SchedulerProfile enables CapacityScheduling.

:func:`used` is one reconcile of one namespace's quota: ``status.used`` is what the namespace's
**Running** pods request (:func:`pod_request`), with a 0 for each resource named in ``min`` or
``max`` that no running pod requests. Every resource a running pod requests is listed, named in
the quota or not, as SP's ``quota.Add`` does. The status is written only when an amount changed
(compared by value: ``1`` and ``1000m`` are equal).

Where Corral differs from SP's controller:

- a pod's overhead counts (SP computes the sum with it and drops the result);
- where a namespace holds several quotas, the one written is the one CapacityScheduling reads
  (the oldest, then the first by name); SP writes its list's first;
- no ``Synced`` Event is posted for each write.

What the scheduler counts is another sum (bound pods not yet Running count there, and sidecars
as the node's accounting counts them): ``status.used`` is for people, CapacityScheduling does not
read it (docs/plugins/CapacityScheduling.md).

:class:`ElasticQuotaStatusController` watches ElasticQuotas (optional: without the CRD it lists
none) and the Running pods (a field selector: a pod that stops running leaves the watch), keeps
each pod's request only, and patches a quota's ``status`` subresource whenever :func:`used`
changes it.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterable, Mapping
from fractions import Fraction
from typing import Any, Final

from corral.controller.state import explicitly_enabled
from corral.k8s import CONTENT_MERGE_PATCH, ApiError
from corral.k8s.aio import AsyncClient
from corral.k8s.informer import EventType, Informer
from corral.scheduler.config import quantity
from corral.scheduler.config.object_fields import object_field

log = logging.getLogger(__name__)

CAPACITY_SCHEDULING: Final = "CapacityScheduling"
API: Final = "/apis/scheduling.x-k8s.io/v1alpha1"
ELASTIC_QUOTAS_PATH: Final = f"{API}/elasticquotas"
RUNNING_PODS: Final = "status.phase=Running"

JSON = Mapping[str, Any]
Amounts = dict[str, Fraction]

# Written with binary suffixes (1Gi); every other resource with decimal ones (1500m, 2k).
_BINARY_PREFIXES: Final = ("memory", "ephemeral-storage", "storage", "hugepages-")
_BINARY: Final = ("", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei")
_DECIMAL: Final = {0: "", 3: "k", 6: "M", 9: "G", 12: "T", 15: "P", 18: "E"}


def _amounts(raw: object) -> Amounts:
    """A ResourceList's amounts; entries that do not parse are left out (the CRD's schema
    refuses them at admission)."""
    out: Amounts = {}
    if isinstance(raw, Mapping):
        for name, text in raw.items():
            try:
                out[str(name)] = quantity.parse(text)
            except (quantity.QuantityError, TypeError):
                continue
    return out


def _add(into: Amounts, more: Mapping[str, Fraction]) -> None:
    for name, amount in more.items():
        into[name] = into.get(name, Fraction(0)) + amount


def pod_request(pod: JSON) -> Amounts:
    """SP ``computePodResourceRequest``: the containers' requests summed, each init container's
    taken where it is larger (they run one at a time), and the pod's overhead added."""
    spec = pod.get("spec") or {}
    total: Amounts = {}
    for container in spec.get("containers") or ():
        _add(total, _amounts(((container or {}).get("resources") or {}).get("requests")))
    _add(total, _amounts(spec.get("overhead")))
    for container in spec.get("initContainers") or ():
        for name, amount in _amounts(
            ((container or {}).get("resources") or {}).get("requests")
        ).items():
            if amount > total.get(name, Fraction(0)):
                total[name] = amount
    return total


class MalformedQuotaError(ValueError):
    """``spec`` or ``status`` is not an object (the CRD's schema refuses it)."""


def used(quota: JSON, requests: Iterable[Mapping[str, Fraction]]) -> Amounts:
    """``status.used`` of ``quota`` given the requests of its namespace's running pods.
    Raises :class:`MalformedQuotaError` when its ``spec`` is not an object."""
    spec = object_field(quota, "spec", MalformedQuotaError)
    out: Amounts = {}
    for bound in ("min", "max"):
        raw = spec.get(bound)
        if isinstance(raw, Mapping):
            out.update((str(name), Fraction(0)) for name in raw)
    for request in requests:
        _add(out, request)
    return out


def canonical(name: str, amount: Fraction) -> str:
    """``amount`` as a quantity string: whole amounts of memory-like resources with the largest
    exact binary suffix, other whole amounts with the largest exact decimal one, fractions in
    millis (or nanos, rounded up, below a milli's precision)."""
    if amount.denominator != 1:
        milli = amount * 1000
        if milli.denominator == 1:
            return f"{milli.numerator}m"
        return f"{quantity.value(amount * 10**9)}n"
    whole = amount.numerator
    if whole == 0:
        return "0"
    sign, rest = ("-" if whole < 0 else ""), abs(whole)
    if name.startswith(_BINARY_PREFIXES):
        power = 0
        while rest % 1024 == 0 and power < len(_BINARY) - 1:
            rest //= 1024
            power += 1
        return f"{sign}{rest}{_BINARY[power]}"
    exponent = 0
    while rest % 1000 == 0 and exponent < 18:
        rest //= 1000
        exponent += 3
    return f"{sign}{rest}{_DECIMAL[exponent]}"


def status_patch(quota: JSON, amounts: Amounts) -> dict[str, Any] | None:
    """The merge patch's ``status`` writing ``amounts``; None when the quota's status already
    says them (by value). A resource no longer used nor named is removed (null)."""
    current = _amounts(object_field(quota, "status", MalformedQuotaError).get("used"))
    if current == amounts:
        return None
    text: dict[str, str | None] = {n: canonical(n, a) for n, a in sorted(amounts.items())}
    text.update((name, None) for name in current if name not in amounts)
    return {"used": text}


def enables_capacity_scheduling(profile: JSON) -> bool:
    """Whether a SchedulerProfile enables CapacityScheduling at any extension point (it is in no
    default set, so only an explicit ``enabled`` entry turns it on)."""
    return CAPACITY_SCHEDULING in explicitly_enabled(profile)


def _meta(obj: JSON) -> Mapping[str, Any]:
    meta = obj.get("metadata")
    return meta if isinstance(meta, Mapping) else {}


class ElasticQuotas:
    """The ElasticQuotas and the requests of the running pods, by namespace, as the watches
    deliver them; ``on_change(namespace)`` is told of every namespace whose quota or running
    pods changed."""

    def __init__(self, on_change: Callable[[str], None] = lambda _: None) -> None:
        self.on_change = on_change
        self.quotas: dict[str, dict[str, JSON]] = {}  # namespace -> name -> quota
        self.requests: dict[str, dict[str, Amounts]] = {}  # namespace -> pod uid -> request
        self._namespace_of: dict[str, str] = {}  # pod uid -> namespace

    def on_quota(self, kind: EventType, obj: dict[str, Any]) -> None:
        meta = _meta(obj)
        namespace, name = str(meta.get("namespace") or ""), str(meta.get("name") or "")
        if kind == "DELETED":
            self.quotas.get(namespace, {}).pop(name, None)
            if not self.quotas.get(namespace):
                self.quotas.pop(namespace, None)
        else:
            self.quotas.setdefault(namespace, {})[name] = obj
        self.on_change(namespace)  # another quota of the namespace may be the one now

    def on_pod(self, kind: EventType, obj: dict[str, Any]) -> None:
        meta = _meta(obj)
        uid = str(meta.get("uid") or "")
        old = self._namespace_of.pop(uid, None)
        if old is not None:
            self.requests.get(old, {}).pop(uid, None)
            if not self.requests.get(old):
                self.requests.pop(old, None)
            self.on_change(old)
        phase = (obj.get("status") or {}).get("phase")
        if kind == "DELETED" or phase != "Running":
            return
        namespace = str(meta.get("namespace") or "")
        self.requests.setdefault(namespace, {})[uid] = pod_request(obj)
        self._namespace_of[uid] = namespace
        self.on_change(namespace)

    def quota_of(self, namespace: str) -> JSON | None:
        """The namespace's quota as CapacityScheduling picks it: the oldest, then by name."""
        quotas = self.quotas.get(namespace)
        if not quotas:
            return None
        return min(
            quotas.values(),
            key=lambda q: (str(_meta(q).get("creationTimestamp") or ""), str(_meta(q)["name"])),
        )

    def patch(self, namespace: str) -> tuple[str, dict[str, Any]] | None:
        """(the quota's name, its status patch) when the namespace's quota is out of date."""
        quota = self.quota_of(namespace)
        if quota is None:
            return None
        try:
            status = status_patch(quota, used(quota, self.requests.get(namespace, {}).values()))
        except MalformedQuotaError as exc:  # left alone, as the engine's informer leaves it
            log.warning("ignoring a malformed ElasticQuota %s/%s: %s", namespace,
                        _meta(quota).get("name"), exc)  # fmt: skip
            return None
        return None if status is None else (str(_meta(quota)["name"]), status)


class ElasticQuotaStatusController:
    """Keeps every ElasticQuota's ``status.used``; :meth:`run` until cancelled.
    ``active()`` says whether this replica may write (a standby does not)."""

    def __init__(self, aio: AsyncClient, *, active: Callable[[], bool] = lambda: True) -> None:
        self.aio = aio
        self.active = active
        self.state = ElasticQuotas(self._mark)
        self._dirty: set[str] = set()
        self._wake = asyncio.Event()
        self.informers = [
            Informer(aio, ELASTIC_QUOTAS_PATH, self.state.on_quota, optional=True),
            Informer(aio, "/api/v1/pods", self.state.on_pod, field_selector=RUNNING_PODS),
        ]

    def _mark(self, namespace: str) -> None:
        if namespace in self.state.quotas:
            self._dirty.add(namespace)
            self._wake.set()

    async def run(self) -> None:
        tasks = [asyncio.create_task(i.run()) for i in self.informers]
        try:
            await asyncio.gather(*tasks, self._work())
        finally:
            for task in tasks:
                task.cancel()

    async def _work(self) -> None:
        # Nothing is written before both lists are in: a quota listed before its pods would
        # be written as unused first.
        await asyncio.gather(*(i.synced.wait() for i in self.informers))
        while True:
            await self._wake.wait()
            self._wake.clear()
            if not self.active():
                await asyncio.sleep(1.0)
                self._wake.set()
                continue
            namespaces, self._dirty = sorted(self._dirty), set()
            for namespace in namespaces:
                await self.reconcile(namespace)

    async def reconcile(self, namespace: str) -> None:
        found = self.state.patch(namespace)
        if found is None:
            return
        name, status = found
        path = f"{API}/namespaces/{namespace}/elasticquotas/{name}/status"
        try:
            await self.aio.request(
                "PATCH", path, body={"status": status}, content_type=CONTENT_MERGE_PATCH
            )
        except ApiError as exc:
            if exc.status != 404:  # deleted meanwhile: nothing to keep
                log.warning("elasticquota %s/%s: status not written: %s", namespace, name, exc)
                self._mark(namespace)
                await asyncio.sleep(1.0)
