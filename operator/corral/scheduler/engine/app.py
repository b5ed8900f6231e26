"""The engine process: informers, queue, cache, the scheduling loop, leader election, Events,
pod conditions, metrics and health endpoints, wired from one KubeSchedulerConfiguration.

Threads: the asyncio event loop runs every API stream and side effect; the scheduling loop runs
on its own thread and binds on a pool (see :mod:`.loop`). One token bucket, sized by
``clientConnection.qps``/``burst``, paces every request the engine makes.

Leadership: with ``leaderElection.leaderElect`` (the default) only the holder of the Lease
schedules; informers run on standbys too, so a new leader starts with warm caches. A leader that
loses its Lease stops scheduling at once and ``run`` returns 1, as kube-scheduler exits: its
in-memory assumptions may no longer hold, and the restart policy brings it back as a candidate.
Bindings and evictions pass a :class:`~.leaderelection.WriteFence` right before they are sent,
open only while the Lease is held by the clock: binding threads of a leader whose event loop is
late to see the loss send nothing past ``renewDeadline``.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Final

from corral.k8s import JSON, Client
from corral.k8s.aio import AsyncClient
from corral.k8s.informer import EventType
from corral.k8s.ratelimit import TokenBucket
from corral.scheduler import metrics as m
from corral.scheduler.backend.cache import Cache
from corral.scheduler.backend.objects import ObjectStore
from corral.scheduler.backend.pod_labels import PodLabelIndex
from corral.scheduler.engine import gc_tuning, thread_cpu, wiring
from corral.scheduler.engine.binding import ApiNominatedNodeWriter
from corral.scheduler.engine.frameworks import (
    EngineConfig,
    defaulted,
    engine_declarations,
    engine_registry,
    load_extenders,
)
from corral.scheduler.engine.handlers import ClusterState
from corral.scheduler.engine.handoff import LoopHandoff, TaskSet
from corral.scheduler.engine.leaderelection import LeaderElector, WriteFence
from corral.scheduler.engine.loop import SchedulingLoop
from corral.scheduler.engine.metrics import EngineMetrics
from corral.scheduler.engine.namespaces import ServedNamespaces
from corral.scheduler.engine.nominator import Nominator
from corral.scheduler.engine.object_events import ObjectEvents
from corral.scheduler.engine.podgroups import PodGroupEvents, PodGroupReports
from corral.scheduler.engine.preemption import ApiPreemptionExecutor
from corral.scheduler.engine.preflight import leader_election_config
from corral.scheduler.engine.reporter import OutcomeReporter
from corral.scheduler.engine.shadow import ShadowEngine
from corral.scheduler.engine.sizes import StructureSizes
from corral.scheduler.engine.timing import EngineTiming
from corral.scheduler.extender import sends_node_objects
from corral.scheduler.framework.types import PodInfo

log = logging.getLogger("corral.scheduler")

FLUSH_BACKOFF_SECONDS: Final = 1.0
# Idle binding threads kept for reuse: a binding cycle takes one, or starts one when none is
# idle (upstream runs one goroutine each); the API calls are paced by the token bucket.
BINDING_WORKERS: Final = 64
FLUSH_UNSCHEDULABLE_SECONDS: Final = 30.0


@dataclass(frozen=True)
class EngineOptions:
    identity: str
    namespaces: frozenset[str] | None = None  # tenancy: serve only pods in these
    namespace_selector: str | None = None  # tenancy: ... or in namespaces matching this
    bind_host: str = "0.0.0.0"
    bind_port: int = 10259
    # HTTPS with delegated authn/authz for all but the probes (corral.k8s.secure_serving);
    # the rendered Deployment always sets it. Without it (a local dev run): plain HTTP.
    secure_serving: bool = False
    tls_cert_file: str | None = None
    tls_private_key_file: str | None = None
    # Upstream's SchedulerQueueingHints gate (gone in 1.37, always on there); off only to
    # measure what hints save.
    queueing_hints: bool = True
    # The process's garbage collector tuned for the engine (engine.gc_tuning): only the process
    # that owns it, ``corral scheduler``, sets this; the thresholds are set by the caller.
    freeze_gc_after_sync: bool = False
    # The pod watch as protobuf (corral.k8s.protobuf_objects): about half the API server's
    # encoding cost per event, at some of this process's CPU to decode it. Off until the
    # benchmark protocol has measured it (docs/benchmarks/findings.md).
    pod_watch_protobuf: bool = False
    # A shadow (engine/shadow): decide the pods of this live scheduler as the profile would and
    # compare, writing nothing about them; ``shadow_profile`` is the SchedulerProfile whose
    # status.shadow gets the counts (None: metrics and logs only). ``config_hash`` names the
    # configuration, so that a restarted shadow goes on counting only for the same one.
    shadow_of: str | None = None
    shadow_profile: str | None = None
    config_hash: str = ""


class Engine:
    """The engine's parts, built in order by :mod:`.wiring` (each from the parts it needs), and
    its run: informers, then leadership, then the scheduling loop."""

    def __init__(self, engine: EngineConfig, client: Client, options: EngineOptions) -> None:
        self.engine = engine
        self.options = options
        self.client = client
        cfg = engine.config
        conn = cfg.client_connection
        generic_workload = engine.gates.generic_workload
        # A shadow gets no writer at all: no binder, no preemption, no claim or volume writes,
        # no Events; its queue stays empty (no pod is its to schedule).
        shadow = options.shadow_of is not None
        # One token bucket paces every request; the hot path's writes (Bindings, Events) go as
        # protobuf by default, as upstream's do.
        self.bucket = TokenBucket(defaulted(conn.qps, "qps"), defaulted(conn.burst, "burst"))
        content_type = defaulted(conn.content_type, "contentType")

        # Metrics first: every later part records into them.
        self.metrics = EngineMetrics(generic_workload=generic_workload)
        self.recorder = self.metrics.recorder
        self.metrics.observe(client, self.bucket)  # rest_client_*, every request of this engine
        self.aio = AsyncClient(client, bucket=self.bucket)
        self.timing = EngineTiming()
        self.gc_clock = gc_tuning.GcClock()
        for collector in (self.timing, self.gc_clock, thread_cpu.ThreadCpu()):
            self.metrics.registry.register(collector)

        # What the cycles read and guard.
        self.objects = ObjectStore()
        self.nominator = Nominator()
        self.cache = Cache(generic_workload=generic_workload)
        # Bindings and evictions are sent only while this is open (leaderelection.WriteFence).
        self.fence = WriteFence()
        self.served = ServedNamespaces(options.namespaces, options.namespace_selector)

        # Outcomes, from the threads to the event loop.
        self.handoff = LoopHandoff()
        self.tasks = TaskSet()
        self.recorders = (
            {} if shadow else wiring.build_event_recorders(engine, self.aio, content_type)
        )
        self.recorder.gauge_source(
            m.EVENTS_DROPPED, lambda: {(): sum(r.dropped for r in self.recorders.values())}
        )
        self.reporter = OutcomeReporter(
            self.recorder, self.recorders, self.handoff, self.tasks.spawn, self.aio
        )

        # The profiles, then the queue built from them (bound to the activator at once).
        activator = wiring.PodActivator()
        self.preemption: ApiPreemptionExecutor | None = None
        writers: wiring.Writers | None = None
        if not shadow:
            self.preemption = wiring.build_preemption(
                client, self.bucket, nominator=self.nominator, cache=self.cache,
                reporter=self.reporter, activator=activator, served=self.served,
                fence=self.fence,
            )  # fmt: skip
            writers = wiring.build_writers(
                client, self.bucket, self.preemption, bind_tally=self.timing.tallies["api_bind"],
                content_type=content_type, fence=self.fence, cache=self.cache,
            )  # fmt: skip
        self.declarations = engine_declarations()
        # The pods plugins list by label (Handle.pod_lister), when an enabled plugin reads them.
        self.pod_labels = PodLabelIndex.for_plugins(
            self.declarations, {n for p in engine.profiles for n in p.plugin_names()}
        )
        extenders = load_extenders(engine)
        self.schedulers = wiring.build_schedulers(
            engine, engine_registry(self.declarations), writers, extenders,
            objects=self.objects, pod_lister=self.pod_labels, nominator=self.nominator,
            metrics=self.recorder,
            pod_groups=self.cache if generic_workload else None, activator=activator,
        )  # fmt: skip
        self.queue = wiring.build_queue(
            engine, self.schedulers, queueing_hints=options.queueing_hints, metrics=self.recorder
        )
        activator.bind(self.queue)

        # The cluster's events into cache and queue; the loop that schedules from them.
        self.state = ClusterState(
            self.cache, self.queue, set() if shadow else set(self.schedulers),
            self.served.serves, self.nominator, generic_workload=generic_workload,
            labels=self.pod_labels, reject_waiting=self._reject_waiting,
            keep_node_objects=sends_node_objects(extenders),
        )  # fmt: skip
        self.shadow: ShadowEngine | None = None
        if options.shadow_of is not None:
            self.shadow = wiring.build_shadow(
                options.shadow_of, options.shadow_profile, options.config_hash, self.schedulers,
                aio=self.aio, cache=self.cache, nominator=self.nominator, served=self.served,
                metrics=self.recorder, fence=self.fence,
            )  # fmt: skip
        self.pod_group_events, group_reports = self._pod_group_parts(generic_workload)
        self.loop = SchedulingLoop(
            self.queue,
            self.cache,
            self.schedulers,
            self.reporter,
            binding_workers=BINDING_WORKERS,
            nominator=self.nominator,
            timing=self.timing,
            announcer=ApiNominatedNodeWriter(client, self.bucket),
            pod_groups=group_reports,
        )
        watches = wiring.build_informers(
            self.aio,
            self.state,
            ObjectEvents(self.objects, self.queue),
            wiring.declared_reads(engine, self.declarations),
            on_pod=self._on_pod,
            served=self.served,
            pod_groups=self.pod_group_events,
            pod_watch_protobuf=options.pod_watch_protobuf,
        )
        self.node_informer, self.informers = watches.nodes, watches.all

        # What it serves, and whether it competes for the Lease.
        self.metrics.registry.register(StructureSizes(self._size_sources()))
        self.server = wiring.build_server(
            options.bind_host, options.bind_port, self.aio, self.metrics.registry,
            wiring.informers_not_synced(self.informers), secure_serving=options.secure_serving,
            tls_cert_file=options.tls_cert_file, tls_private_key_file=options.tls_private_key_file,
        )  # fmt: skip
        self.election = (
            leader_election_config(engine, options.identity)
            if cfg.leader_election.leader_elect
            else None
        )

    def _on_pod(self, kind: EventType, raw: JSON) -> None:
        if self.shadow is not None:  # first: it decides on the cache before this event
            self.shadow.observer.on_pod(kind, raw)
        self.state.on_pod(kind, raw)

    def _reject_waiting(self, pod: PodInfo) -> bool:
        scheduler = self.schedulers.get(pod.scheduler_name)
        return scheduler is not None and scheduler.fwk.reject_waiting_pod(pod.uid)

    def _size_sources(self) -> dict[str, Callable[[], Mapping[str, int]]]:
        def recorders() -> dict[str, int]:
            total: dict[str, int] = {}
            for recorder in self.recorders.values():
                for name, value in recorder.sizes().items():
                    total[name] = total.get(name, 0) + value
            return total

        return {
            "cache": self.cache.sizes,
            "queue": self.queue.sizes,
            "objects": self.objects.sizes,
            "informers": lambda: {i.path: len(i) for i in self.informers},
            "handlers": self.state.sizes,
            "nominator": lambda: {"pods": len(self.nominator)},
            "events": recorders,
        }

    def _pod_group_parts(
        self, generic_workload: bool
    ) -> tuple[PodGroupEvents | None, PodGroupReports | None]:
        """GenericWorkload: the PodGroup watch's handler and the pod-group cycle's reporter."""
        if not generic_workload:
            return None, None
        reports = PodGroupReports(
            self.aio,
            self.recorder,
            self.handoff.on_loop,
            self.tasks.spawn,
            self.reporter.skipped_deleting,
        )
        return PodGroupEvents(self.cache, self.queue), reports

    # --- running ----------------------------------------------------------------------------

    async def run(self) -> int:
        """Run until cancelled (returns 0 after a graceful stop) or leadership is lost (1)."""
        self.handoff.attach(asyncio.get_running_loop())
        self.gc_clock.install()
        await self.server.start()
        log.info("serving health and metrics on %s:%d", self.options.bind_host, self.server.port)
        for informer in self.informers:
            self.tasks.spawn(informer.run())
        for recorder in self.recorders.values():
            self.tasks.spawn(recorder.run())
            self.tasks.spawn(recorder.maintain())
        self.tasks.spawn(self._housekeeping())
        try:
            for informer in self.informers:
                await informer.synced.wait()
            log.info("caches synced: %d nodes, %d pending pods", len(self.node_informer),
                     self.state.pending_count)  # fmt: skip
            if self.options.freeze_gc_after_sync:
                gc_tuning.freeze()
            if self.election is None:
                await self._lead()
                return 0
            # The Lease gets a client of its own, as upstream's resource lock builds one from
            # the same kubeconfig: its renewals never wait in the engine's token bucket or
            # connection pool behind Bindings, status writes and Events. Shared, a burst of
            # those held a loaded leader's renewal past renewDeadline, and it exited.
            lease_client = AsyncClient(self.client, qps=self.bucket.qps, burst=self.bucket.burst)
            try:
                elector = LeaderElector(lease_client, self.election)
                self.fence.guard(elector.holds_lease)
                log.info("attempting to acquire leader lease %s", elector.path)
                await elector.run(self._lead, self._stop_leading)
            finally:
                await lease_client.close()
            log.error("leaderelection lost")
            return 1
        finally:
            await self._shutdown()

    async def _lead(self) -> None:
        self._set_leader(1)
        if self.shadow is not None:
            log.info("shadowing %s with profile %s", self.shadow.observer.live_scheduler,
                     ", ".join(self.schedulers))  # fmt: skip
            await self.shadow.lead()
            return
        log.info("starting to schedule for profiles %s", ", ".join(self.schedulers))
        self.loop.start()
        await asyncio.Event().wait()

    def _stop_leading(self) -> None:
        self.fence.close()  # first: binding threads still running send nothing more
        self._set_leader(0)
        if self.shadow is not None:
            self.shadow.observer.stop(wait=False)
        self._close_frameworks()
        self.loop.stop(wait_for_bindings=False)

    def _close_frameworks(self) -> None:
        for scheduler in self.schedulers.values():
            scheduler.fwk.close()

    def _set_leader(self, value: int) -> None:
        name = self.engine.config.leader_election.resource_name or ""
        self.recorder.set(m.LEADER, (name,), value)

    async def _shutdown(self) -> None:
        self.fence.close()
        self._close_frameworks()
        if self.loop.running:
            await asyncio.to_thread(self.loop.stop)
        if self.shadow is not None:
            await asyncio.to_thread(self.shadow.observer.stop)
        if self.preemption is not None:
            self.preemption.close()
        for recorder in self.recorders.values():
            await recorder.flush(timeout=2.0)
        await self.tasks.cancel_all()
        await self.server.stop()
        await self.aio.close()
        self.gc_clock.uninstall()

    async def _housekeeping(self) -> None:
        since_leftover = 0.0
        while True:
            await asyncio.sleep(FLUSH_BACKOFF_SECONDS)
            self.queue.flush_backoff_completed()
            self.cache.cleanup_assumed_pods()
            since_leftover += FLUSH_BACKOFF_SECONDS
            if since_leftover >= FLUSH_UNSCHEDULABLE_SECONDS:
                self.queue.flush_unschedulable_leftover()
                since_leftover = 0.0
