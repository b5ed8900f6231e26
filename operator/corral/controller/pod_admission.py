"""The pod webhook: tenants' pods get their scheduler, and may not name another tenant's.

A profile opts in with ``tenancy.assignPods: true``; it then *assigns* the namespaces it serves
(``tenancy.namespaces``, or those ``tenancy.namespaceSelector`` matches, as the engine serves
them). For a pod created in a namespace that an assigning profile serves, :func:`decide`:

- A pod that names no scheduler gets the profile's ``schedulerName``. The API server defaults
  ``spec.schedulerName`` to ``default-scheduler`` before admission, so that value counts as
  none too: a pod there that wants the cluster's scheduler cannot have it.
- A pod that names the scheduler of another profile with tenancy, one that does not serve this
  namespace, is refused with both names: that scheduler would never take it.
- Anything else passes unchanged (its own scheduler, a cluster-wide profile's, a scheduler
  outside Corral).
- Pods of DaemonSets and static pods' mirrors pass unchanged: each is for one given node, which
  the cluster's scheduler places them on.
- A namespace that two assigning profiles serve: a pod naming no scheduler there is refused
  (which one it gets would be arbitrary); the overlap of listed namespaces is refused at the
  profiles' admission already (:mod:`corral.controller.guards`).

Contract of the webhook (wired in :mod:`corral.controller.handlers`, served with the profile
webhook by ``--webhook-listen``): pod CREATE only, failure policy ``Ignore``. A pod webhook that
failed closed would stop every pod in the cluster, the operator's own too, while no operator
answers; so then pods are admitted as sent, and one naming no scheduler goes to the cluster's
scheduler (docs/operator.md). Every replica answers, a kopf standby included (its watches are
paused), so the profiles come from the API server (:class:`TenantIndex`), listed at most every
``ttl`` seconds: a profile change takes up to that long to reach admission.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Final

from corral.controller.pending import selector_matches

DEFAULT_SCHEDULER: Final = "default-scheduler"
HANDLER_ID: Final = "pods"
INDEX_TTL_SECONDS: Final = 5.0


@dataclass(frozen=True, slots=True)
class Tenant:
    """What the pod webhook needs of one profile with tenancy."""

    profile: str
    scheduler_name: str
    assigns: bool
    namespaces: tuple[str, ...] = ()
    namespace_selector: Mapping[str, Any] | None = None

    def serves(self, namespace: str, labels: Callable[[str], Mapping[str, str]]) -> bool:
        if namespace in self.namespaces:
            return True
        return self.namespace_selector is not None and selector_matches(
            self.namespace_selector, labels(namespace)
        )


def tenant_of(body: Mapping[str, Any]) -> Tenant | None:
    """The tenant a raw profile body declares; None without namespace tenancy or while deleted."""
    meta = body.get("metadata") or {}
    spec = body.get("spec") or {}
    tenancy = spec.get("tenancy") if isinstance(spec, Mapping) else None
    if not isinstance(tenancy, Mapping) or meta.get("deletionTimestamp"):
        return None
    namespaces = tenancy.get("namespaces") or ()
    selector = tenancy.get("namespaceSelector")
    if not namespaces and not isinstance(selector, Mapping):
        return None
    name = str(meta.get("name", ""))
    return Tenant(
        profile=name,
        scheduler_name=str(spec.get("schedulerName") or name),
        assigns=tenancy.get("assignPods") is True,
        namespaces=tuple(str(n) for n in namespaces),
        namespace_selector=selector if isinstance(selector, Mapping) else None,
    )


@dataclass(frozen=True, slots=True)
class Decision:
    scheduler_name: str | None = None  # set spec.schedulerName to this
    refusal: str | None = None  # refuse the pod with this message


ADMIT: Final = Decision()


def _exempt(meta: Mapping[str, Any]) -> bool:
    annotations = meta.get("annotations")
    if isinstance(annotations, Mapping) and "kubernetes.io/config.mirror" in annotations:
        return True
    refs = meta.get("ownerReferences")
    return isinstance(refs, list) and any(
        isinstance(ref, Mapping) and ref.get("kind") == "DaemonSet" for ref in refs
    )


def _malformed(pod: Mapping[str, Any]) -> str | None:
    """The API server sends only decoded pods; anything else posted to the webhook is refused
    with the field that is wrong, never a crash."""
    for field in ("metadata", "spec"):
        if not isinstance(pod.get(field) or {}, Mapping):
            return f"{field}: must be an object"
    return None


def _quoted(names: Iterable[str]) -> str:
    return " and ".join(repr(n) for n in sorted(names))


def decide(
    pod: Mapping[str, Any],
    namespace: str,
    tenants: Iterable[Tenant],
    labels: Callable[[str], Mapping[str, str]],
) -> Decision:
    """What the webhook does with ``pod`` created in ``namespace`` (pure; ``labels`` gives a
    namespace's labels, asked only when a selector needs them)."""
    known = list(tenants)
    assigning = [t for t in known if t.assigns and t.serves(namespace, labels)]
    if not assigning:
        return ADMIT
    if (wrong := _malformed(pod)) is not None:
        return Decision(refusal=wrong)
    if _exempt(pod.get("metadata") or {}):
        return ADMIT
    wanted = str((pod.get("spec") or {}).get("schedulerName") or DEFAULT_SCHEDULER)
    if wanted == DEFAULT_SCHEDULER:
        if len(assigning) > 1:
            return Decision(
                refusal=f"namespace {namespace!r} is served by SchedulerProfiles "
                f"{_quoted(t.profile for t in assigning)}, which both assign pods "
                "(tenancy.assignPods): set spec.schedulerName to the scheduler this pod is for"
            )
        return Decision(scheduler_name=assigning[0].scheduler_name)
    owner = next((t for t in known if t.scheduler_name == wanted), None)
    if owner is None or owner.serves(namespace, labels):
        return ADMIT
    ours = _quoted(t.scheduler_name for t in assigning)
    return Decision(
        refusal=f"spec.schedulerName: {wanted!r} is the scheduler of SchedulerProfile "
        f"{owner.profile!r}, which does not serve namespace {namespace!r}: it would never "
        f"schedule this pod; namespace {namespace!r} is served by {ours} (leave "
        "spec.schedulerName unset to get it)"
    )


class TenantIndex:
    """The tenants and namespace labels as the API server has them, each kept ``ttl`` seconds.

    ``list_profiles`` and ``namespace_labels`` call the API server; a failure raises, and the
    webhook's failure policy (Ignore) admits the pod as sent."""

    def __init__(
        self,
        list_profiles: Callable[[], list[dict[str, Any]]],
        namespace_labels: Callable[[str], Mapping[str, str]],
        *,
        ttl: float = INDEX_TTL_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._list = list_profiles
        self._labels = namespace_labels
        self._ttl = ttl
        self._clock = clock
        self._lock = threading.Lock()
        self._tenants: tuple[float, list[Tenant]] | None = None
        self._namespaces: dict[str, tuple[float, Mapping[str, str]]] = {}

    def tenants(self) -> list[Tenant]:
        now = self._clock()
        with self._lock:
            if self._tenants is not None and now - self._tenants[0] < self._ttl:
                return self._tenants[1]
        fresh = [t for body in self._list() if (t := tenant_of(body)) is not None]
        with self._lock:
            self._tenants = (now, fresh)
        return fresh

    def labels(self, namespace: str) -> Mapping[str, str]:
        now = self._clock()
        with self._lock:
            cached = self._namespaces.get(namespace)
            if cached is not None and now - cached[0] < self._ttl:
                return cached[1]
        fresh = self._labels(namespace)
        with self._lock:
            self._namespaces[namespace] = (now, fresh)
        return fresh

    def decide(self, pod: Mapping[str, Any], namespace: str) -> Decision:
        return decide(pod, namespace, self.tenants(), self.labels)
