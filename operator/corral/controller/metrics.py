"""The operator's metrics, with ``prometheus_client`` (served by :mod:`.metrics_server`).

Every metric the operator exports, declared here:

- ``corral_reconcile_total{result}``, ``corral_reconcile_duration_seconds{result}``: profile
  reconciles by result ``ok``/``retry``/``error`` and their durations (a histogram);
- ``corral_profiles{ready}``: profiles by Ready status; ``corral_profile_condition{profile,
  type}``: 1 while the profile's ``Ready``/``Reconciling``/``Stalled`` condition is True, else
  0 (the alerts' input, as kube-state-metrics exposes conditions);
- ``corral_pending_pods{scheduler_name,reason}``: the pending-pod detector's findings (pods
  no Ready profile serves), by reason;
- ``corral_operator_active``: 1 on the replica doing the work (kopf peering), 0 on a standby;
- ``corral_workqueue_depth``: profiles waiting for a reconcile;
- ``rest_client_requests_total{code,method,host}``, ``rest_client_request_duration_seconds
  {verb,host}``: the operator's own API requests, as client-go names them;
- ``process_*``: the process (CPU, memory, file descriptors, start time).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Final

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, ProcessCollector

from corral.k8s.observer import code_label

RECONCILE_BUCKETS: Final = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)
# client-go's rest_client_request_duration_seconds buckets.
REST_BUCKETS: Final = (0.005, 0.025, 0.1, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 15.0, 30.0, 60.0)
CONDITIONS: Final = ("Ready", "Reconciling", "Stalled")


class Metrics:
    def __init__(self) -> None:
        self.registry = r = CollectorRegistry(auto_describe=True)
        ProcessCollector(registry=r)
        self.reconciles = Counter(
            "corral_reconcile_total", "Profile reconciles by result.", ["result"], registry=r
        )
        self.reconcile_seconds = Histogram(
            "corral_reconcile_duration_seconds",
            "Time to reconcile one profile, by result.",
            ["result"],
            buckets=RECONCILE_BUCKETS,
            registry=r,
        )
        self.profiles = Gauge(
            "corral_profiles", "SchedulerProfiles by Ready status.", ["ready"], registry=r
        )
        self.conditions = Gauge(
            "corral_profile_condition",
            "1 while the profile's condition of this type is True, else 0.",
            ["profile", "type"],
            registry=r,
        )
        self.pending = Gauge(
            "corral_pending_pods",
            "Pods waiting for a scheduler that will not take them, by reason.",
            ["scheduler_name", "reason"],
            registry=r,
        )
        self.active = Gauge(
            "corral_operator_active",
            "1 on the operator replica that reconciles (kopf peering), 0 on a standby.",
            registry=r,
        )
        self.queue_depth = Gauge(
            "corral_workqueue_depth", "Profiles waiting for a reconcile.", registry=r
        )
        self.requests = Counter(
            "rest_client_requests_total",
            "Number of HTTP requests, partitioned by status code, method, and host.",
            ["code", "method", "host"],
            registry=r,
        )
        self.request_seconds = Histogram(
            "rest_client_request_duration_seconds",
            "Request latency in seconds. Broken down by verb, and host.",
            ["verb", "host"],
            buckets=REST_BUCKETS,
            registry=r,
        )
        self._known: set[tuple[str, str]] = set()  # label pairs set last time (to clear)
        self._profiles_known: set[str] = set()

    # --- recording ------------------------------------------------------------------------

    def reconciled(self, result: str, seconds: float) -> None:
        self.reconciles.labels(result=result).inc()
        self.reconcile_seconds.labels(result=result).observe(seconds)

    def requested(self, method: str, host: str, code: int, seconds: float) -> None:
        """The API client's observer (:mod:`corral.k8s.observer`)."""
        self.requests.labels(code=code_label(code), method=method, host=host).inc()
        self.request_seconds.labels(verb=method, host=host).observe(seconds)

    def set_pending(self, counts: Mapping[tuple[str, str], int]) -> None:
        """The detector's latest findings, by (scheduler name, reason); pairs that found
        nothing this time go back to 0 rather than vanish (an alert sees them resolve)."""
        for key in self._known - set(counts):
            self.pending.labels(*key).set(0)
        for (scheduler, reason), n in counts.items():
            self.pending.labels(scheduler, reason).set(n)
        self._known |= set(counts)

    def set_profiles(self, conditions: Mapping[str, Mapping[str, bool]]) -> None:
        """Each profile's conditions (type -> True?); profiles gone since are removed."""
        ready = sum(1 for c in conditions.values() if c.get("Ready"))
        self.profiles.labels(ready="true").set(ready)
        self.profiles.labels(ready="false").set(len(conditions) - ready)
        for gone in self._profiles_known - set(conditions):
            for kind in CONDITIONS:
                self.conditions.remove(gone, kind)
        for name, of_profile in conditions.items():
            for kind in CONDITIONS:
                self.conditions.labels(name, kind).set(1 if of_profile.get(kind) else 0)
        self._profiles_known = set(conditions)

    def watch(self, active: Callable[[], bool], depth: Callable[[], int]) -> None:
        """Read the peering state and the queue's depth whenever scraped."""
        self.active.set_function(lambda: 1.0 if active() else 0.0)
        self.queue_depth.set_function(lambda: float(depth()))


def profile_conditions(body: Mapping[str, object]) -> dict[str, bool]:
    """A profile's kstatus conditions from its status (type -> status is "True")."""
    status = body.get("status")
    raw = status.get("conditions") if isinstance(status, Mapping) else None
    conditions: Iterable[object] = raw if isinstance(raw, list) else ()
    out: dict[str, bool] = {}
    for c in conditions:
        if isinstance(c, Mapping) and c.get("type") in CONDITIONS:
            out[str(c["type"])] = c.get("status") == "True"
    return out
