"""The engine's metrics endpoint: the declared metrics (:mod:`corral.scheduler.metrics`) on
the engine's own registry, beside the ``process_*`` family and Corral's timing collectors.

Each engine owns one registry (not the process-global default), so several engines can live in
one process in tests without colliding. :class:`EngineMetrics` is also the API client's
request observer (``rest_client_*``, :mod:`corral.k8s.observer`) and, bound to the API
server's host, its rate limiter's (:meth:`EngineMetrics.observe`).
"""

from __future__ import annotations

from prometheus_client import CollectorRegistry, ProcessCollector

from corral.k8s import Client
from corral.k8s.observer import code_label
from corral.k8s.ratelimit import TokenBucket
from corral.scheduler import metrics as m

RESULT_SCHEDULED = "scheduled"
RESULT_UNSCHEDULABLE = "unschedulable"
RESULT_ERROR = "error"


class EngineMetrics:
    def __init__(self, *, generic_workload: bool = False) -> None:
        self.recorder = m.new_recorder(generic_workload=generic_workload)
        self.registry = CollectorRegistry(auto_describe=True)
        self.registry.register(self.recorder)
        # process_cpu_seconds_total, process_resident_memory_bytes, process_open_fds, ...
        ProcessCollector(registry=self.registry)

    def requested(self, method: str, host: str, code: int, seconds: float) -> None:
        rec = self.recorder
        rec.inc(m.REST_CLIENT_REQUESTS, (code_label(code), method, host))
        rec.observe(m.REST_CLIENT_REQUEST_DURATION, (method, host), seconds)

    def observe(self, client: Client, bucket: TokenBucket) -> None:
        """Observe every request of ``client`` and every wait of its rate limiter."""
        client.observer = self
        rec, host = self.recorder, client.host

        def waited(verb: str, seconds: float) -> None:
            rec.observe(m.REST_CLIENT_RATE_LIMITER_DURATION, (verb, host), seconds)

        bucket.observer = waited
