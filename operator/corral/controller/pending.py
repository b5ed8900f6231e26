"""The pending-pod detector: pods that wait for a scheduler that will never take them.

Upstream gives such pods no event at all (kubernetes #116982). A pod is reported when it has
been Pending and unbound longer than the threshold and its ``spec.schedulerName``
- matches no SchedulerProfile (and is not a scheduler reserved for others, such as
  ``default-scheduler``): ``NoSchedulerProfile``;
- matches a profile that is not Ready: ``SchedulerNotReady``;
- matches a Ready profile whose tenancy does not include the pod's namespace:
  ``NamespaceNotServed``.

Contract: the detector only reads and reports (an Event on the pod, once per pod and reason;
a count per profile in status; a metric). It never binds or changes pods. Classification is a
pure function of the pods, the profiles and the namespaces' labels.
"""

from __future__ import annotations

import calendar
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from corral.controller.status import READY

# Server-side filter of the pod watch: unbound Pending pods not for the default scheduler.
POD_FIELD_SELECTOR: Final = (
    "status.phase=Pending,spec.nodeName=,spec.schedulerName!=default-scheduler"
)


@dataclass(frozen=True, slots=True)
class PendingPod:
    namespace: str
    name: str
    uid: str
    scheduler_name: str
    created: float  # seconds since the epoch


@dataclass(frozen=True, slots=True)
class Served:
    """What a profile serves, as the detector needs it."""

    profile: str
    ready: bool
    ready_message: str
    namespaces: tuple[str, ...] = ()
    namespace_selector: Mapping[str, Any] | None = None

    @property
    def cluster_wide(self) -> bool:
        return not self.namespaces and self.namespace_selector is None


@dataclass(frozen=True, slots=True)
class Finding:
    pod: PendingPod
    reason: str
    message: str
    profile: str | None


def _epoch(stamp: str) -> float:
    try:
        return float(calendar.timegm(time.strptime(stamp, "%Y-%m-%dT%H:%M:%SZ")))
    except ValueError:
        return time.time()


def pending_pod(body: Mapping[str, Any]) -> PendingPod | None:
    meta = body.get("metadata") or {}
    spec = body.get("spec") or {}
    if (body.get("status") or {}).get("phase") != "Pending" or spec.get("nodeName"):
        return None
    return PendingPod(
        namespace=str(meta.get("namespace", "")),
        name=str(meta.get("name", "")),
        uid=str(meta.get("uid", "")),
        scheduler_name=str(spec.get("schedulerName") or "default-scheduler"),
        created=_epoch(str(meta.get("creationTimestamp", ""))),
    )


def served_by(body: Mapping[str, Any]) -> tuple[str, Served]:
    """``(schedulerName, Served)`` of a raw profile body."""
    meta = body.get("metadata") or {}
    spec = body.get("spec") or {}
    tenancy = spec.get("tenancy") or {}
    conds = {c.get("type"): c for c in (body.get("status") or {}).get("conditions", [])}
    ready = conds.get(READY, {})
    name = str(meta.get("name", ""))
    return str(spec.get("schedulerName") or name), Served(
        profile=name,
        ready=ready.get("status") == "True",
        ready_message=str(ready.get("message") or "no status yet"),
        namespaces=tuple(tenancy.get("namespaces") or ()),
        namespace_selector=tenancy.get("namespaceSelector"),
    )


def selector_matches(selector: Mapping[str, Any], labels: Mapping[str, str]) -> bool:
    """A metav1.LabelSelector against labels (an empty selector matches everything)."""
    for key, value in (selector.get("matchLabels") or {}).items():
        if labels.get(key) != value:
            return False
    for req in selector.get("matchExpressions") or []:
        key, op, values = req.get("key"), req.get("operator"), req.get("values") or []
        present = key in labels
        if op == "In" and (not present or labels[key] not in values):
            return False
        if op == "NotIn" and present and labels[key] in values:
            return False
        if op == "Exists" and not present:
            return False
        if op == "DoesNotExist" and present:
            return False
    return True


def classify(
    pods: Iterable[PendingPod],
    profiles: Mapping[str, Served],
    *,
    now: float,
    threshold: float,
    reserved: Sequence[str],
    namespace_labels: Callable[[str], Mapping[str, str]],
) -> list[Finding]:
    out: list[Finding] = []
    for pod in pods:
        waited = now - pod.created
        if waited < threshold or pod.scheduler_name in reserved:
            continue
        served = profiles.get(pod.scheduler_name)
        for_how_long = f"Pending for {int(waited)}s"
        if served is None:
            out.append(
                Finding(
                    pod,
                    "NoSchedulerProfile",
                    f"{for_how_long}: no SchedulerProfile has schedulerName "
                    f"{pod.scheduler_name!r}, so no Corral scheduler will take this pod",
                    None,
                )
            )
            continue
        if not served.ready:
            out.append(
                Finding(
                    pod,
                    "SchedulerNotReady",
                    f"{for_how_long}: SchedulerProfile {served.profile!r} (schedulerName "
                    f"{pod.scheduler_name!r}) is not Ready: {served.ready_message}",
                    served.profile,
                )
            )
            continue
        if served.cluster_wide or pod.namespace in served.namespaces:
            continue
        if served.namespace_selector is not None and selector_matches(
            served.namespace_selector, namespace_labels(pod.namespace)
        ):
            continue
        scope = ", ".join(served.namespaces) if served.namespaces else "a namespace selector"
        out.append(
            Finding(
                pod,
                "NamespaceNotServed",
                f"{for_how_long}: SchedulerProfile {served.profile!r} (schedulerName "
                f"{pod.scheduler_name!r}) serves only {scope}, not namespace "
                f"{pod.namespace!r}; this pod will not be scheduled",
                served.profile,
            )
        )
    return out


class Detector:
    """The pending pods seen by the watch, and what the last evaluation found."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._pods: dict[str, PendingPod] = {}
        self._counts: dict[str, int] = {}
        self._reported: set[tuple[str, str]] = set()

    def put(self, body: Mapping[str, Any]) -> None:
        pod = pending_pod(body)
        uid = str((body.get("metadata") or {}).get("uid", ""))
        with self._lock:
            if pod is None:
                self._pods.pop(uid, None)
            else:
                self._pods[uid] = pod

    def drop(self, body: Mapping[str, Any]) -> None:
        uid = str((body.get("metadata") or {}).get("uid", ""))
        with self._lock:
            self._pods.pop(uid, None)
            self._reported = {r for r in self._reported if r[0] != uid}

    def pods(self) -> list[PendingPod]:
        with self._lock:
            return list(self._pods.values())

    def count(self, profile: str) -> int:
        with self._lock:
            return self._counts.get(profile, 0)

    def record(self, findings: Sequence[Finding]) -> tuple[list[Finding], set[str]]:
        """Remember the findings; return those not reported yet and the profiles whose count
        changed."""
        counts: dict[str, int] = {}
        for f in findings:
            if f.profile is not None:
                counts[f.profile] = counts.get(f.profile, 0) + 1
        with self._lock:
            changed = {
                p for p in set(counts) | set(self._counts) if counts.get(p) != self._counts.get(p)
            }
            self._counts = counts
            fresh = [f for f in findings if (f.pod.uid, f.reason) not in self._reported]
            self._reported |= {(f.pod.uid, f.reason) for f in fresh}
        return fresh, changed
