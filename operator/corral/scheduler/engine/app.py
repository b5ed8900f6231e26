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
import contextlib
import logging
import threading
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from corral.k8s import Client
from corral.k8s.aio import AsyncClient
from corral.k8s.informer import EventType, Informer
from corral.k8s.ratelimit import TokenBucket
from corral.k8s.secure_serving import DelegatedAuth, server_context
from corral.scheduler import metrics as m
from corral.scheduler.backend.cache import Cache
from corral.scheduler.backend.objects import (
    OPTIONAL_KINDS,
    QUEUEING_KINDS,
    WATCHED_KINDS,
    ObjectStore,
    kinds_for,
    unwatched_reads,
)
from corral.scheduler.backend.pod_labels import PodLabelIndex
from corral.scheduler.backend.queue import SchedulingQueue
from corral.scheduler.config import FieldError, ValidationError
from corral.scheduler.engine import gc_tuning, thread_cpu
from corral.scheduler.engine.binding import ApiBinder, ApiNominatedNodeWriter
from corral.scheduler.engine.event_recorder import EventRecorder, PodRef
from corral.scheduler.engine.frameworks import (
    EngineConfig,
    build_frameworks,
    defaulted,
    engine_declarations,
    engine_registry,
    load_extenders,
)
from corral.scheduler.engine.handlers import ClusterState
from corral.scheduler.engine.leaderelection import LeaderElector, WriteFence
from corral.scheduler.engine.logfields import fields
from corral.scheduler.engine.loop import Failure, SchedulingLoop, Success
from corral.scheduler.engine.metrics import (
    RESULT_ERROR,
    RESULT_SCHEDULED,
    RESULT_UNSCHEDULABLE,
    EngineMetrics,
)
from corral.scheduler.engine.nominator import Nominator
from corral.scheduler.engine.object_updater import ApiObjectUpdater
from corral.scheduler.engine.podgroups import (
    POD_GROUPS_PATH,
    PodGroupEvents,
    PodGroupReports,
)
from corral.scheduler.engine.podstatus import REASON_UNSCHEDULABLE, record_failure
from corral.scheduler.engine.preemption import ApiPreemptionExecutor
from corral.scheduler.engine.preflight import leader_election_config
from corral.scheduler.engine.resource_claims import ApiClaimWriter
from corral.scheduler.engine.server import HealthServer
from corral.scheduler.engine.shadow import ShadowEngine
from corral.scheduler.engine.sizes import StructureSizes
from corral.scheduler.engine.timing import EngineTiming
from corral.scheduler.framework.cluster_events import WILDCARD, ActionType, ClusterEvent
from corral.scheduler.framework.extender import EXTENDER_NAME
from corral.scheduler.framework.listers import DEVICE_TAINT_RULE, RESOURCE_SLICE
from corral.scheduler.framework.runtime.framework import Framework
from corral.scheduler.framework.runtime.schedule_pod import PodScheduler
from corral.scheduler.framework.status import Status
from corral.scheduler.framework.types import PodInfo
from corral.scheduler.plugins.dynamic_resources import taint_rules

log = logging.getLogger("corral.scheduler")

ACTIVE_PODS_PATH: Final = "/api/v1/pods"
NON_TERMINAL: Final = "status.phase!=Succeeded,status.phase!=Failed"
FLUSH_BACKOFF_SECONDS: Final = 1.0
# Idle binding threads kept for reuse: a binding cycle takes one, or starts one when none is
# idle (upstream runs one goroutine each); the API calls are paced by the token bucket.
BINDING_WORKERS: Final = 64
FLUSH_UNSCHEDULABLE_SECONDS: Final = 30.0
# Object kinds whose changes move unschedulable pods (plugins register for them); the others
# only feed the lister.
_OBJECT_ACTIONS: Final = {
    "ADDED": ActionType.ADD,
    "MODIFIED": ActionType.UPDATE,
    "DELETED": ActionType.DELETE,
}


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
    def __init__(self, engine: EngineConfig, client: Client, options: EngineOptions) -> None:
        self.engine = engine
        self.options = options
        cfg = engine.config
        conn = cfg.client_connection
        self.bucket = TokenBucket(defaulted(conn.qps, "qps"), defaulted(conn.burst, "burst"))
        # The hot path's writes (Bindings, Events) go as protobuf by default, as upstream's do.
        content_type = defaulted(conn.content_type, "contentType")
        self.client = client
        generic_workload = engine.gates.generic_workload
        self.metrics = EngineMetrics(generic_workload=generic_workload)
        self.recorder = self.metrics.recorder
        self.metrics.observe(client, self.bucket)  # rest_client_*, every request of this engine
        self.aio = AsyncClient(client, bucket=self.bucket)
        self.timing = EngineTiming()
        self.metrics.registry.register(self.timing)
        self.gc_clock = gc_tuning.GcClock()
        self.metrics.registry.register(self.gc_clock)
        self.metrics.registry.register(thread_cpu.ThreadCpu())
        self.objects = ObjectStore()
        self.nominator = Nominator()
        self.cache = Cache(generic_workload=generic_workload)
        # Bindings and evictions are sent only while this is open (leaderelection.WriteFence).
        self.fence = WriteFence()
        shadow = options.shadow_of is not None
        # A shadow gets no writer at all: no binder, no preemption, no claim or volume writes.
        frameworks = self._frameworks(
            engine, client, content_type, shadow=shadow, generic_workload=generic_workload
        )
        pct = defaulted(cfg.percentage_of_nodes_to_score, "percentageOfNodesToScore")
        extenders = load_extenders(engine)
        self.schedulers = {
            name: PodScheduler(fwk, percentage_of_nodes_to_score=pct, extenders=extenders)
            for name, fwk in frameworks.items()
        }
        first = next(iter(frameworks.values()))
        events_by_profile: dict[str, dict[str, Any]] = {}
        for name, fwk in frameworks.items():
            events_by_profile[name] = dict(fwk.events_by_plugin())
            # Upstream retries pods an extender rejected on any cluster event: it cannot know
            # what an extender's verdict depends on.
            if extenders:
                events_by_profile[name][EXTENDER_NAME] = (ClusterEvent(WILDCARD, ActionType.ALL),)
        self.queue = SchedulingQueue(
            less=first.less,  # validation makes every profile use the same QueueSort
            pre_enqueue=self._pre_enqueue,
            events_by_profile=events_by_profile,
            queueing_hints=options.queueing_hints,
            initial_backoff=float(defaulted(cfg.pod_initial_backoff_seconds, "backoff")),
            max_backoff=float(defaulted(cfg.pod_max_backoff_seconds, "backoff")),
            metrics=self.recorder,
            generic_workload=generic_workload,
        )
        for metric, source in (
            (m.PENDING_PODS, self.queue.pending_by_queue),
            (m.QUEUED_ENTITIES, self.queue.entities_by_queue),
            (m.UNSCHEDULABLE_PODS, self.queue.unschedulable_by_plugin),
        ):
            self.recorder.gauge_source(metric, source)
        self._selected_namespaces: set[str] = set()
        # A shadow's queue stays empty: no pod is its to schedule.
        self.state = ClusterState(
            self.cache,
            self.queue,
            set() if shadow else set(self.schedulers),
            self._serves_namespace,
            self.nominator,
            generic_workload=generic_workload,
            labels=self.pod_labels,
        )
        self.shadow = self._shadow(options) if shadow else None
        self.recorders = (
            {}
            if shadow
            else {
                name: EventRecorder(self.aio, name, content_type=content_type)
                for name in self.schedulers
            }
        )
        self.recorder.gauge_source(
            m.EVENTS_DROPPED, lambda: {(): sum(r.dropped for r in self.recorders.values())}
        )
        self.reporter = _Reporter(self)
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
        self.informers = self._informers()
        self.metrics.registry.register(StructureSizes(self._size_sources()))
        secure = None
        if options.secure_serving:
            context = server_context(options.tls_cert_file, options.tls_private_key_file)
            secure = (context, DelegatedAuth(self.aio).middleware)
        self.server = HealthServer(
            options.bind_host, options.bind_port, self.metrics.registry, self._not_ready, secure
        )
        self.election = (
            leader_election_config(engine, options.identity)
            if cfg.leader_election.leader_elect
            else None
        )
        self._tasks: set[asyncio.Task[Any]] = set()

    # --- wiring -----------------------------------------------------------------------------

    def _activate(self, uids: Sequence[str]) -> None:
        for uid in uids:
            self.queue.activate(uid)

    def _skipped_deleting(self, pod: PodInfo) -> None:
        """Upstream skipPodSchedule's Event for a pod being deleted."""
        ref = PodRef(pod.namespace, pod.name, pod.uid, pod.resource_version)
        recorder = self.recorders[pod.scheduler_name]
        note = f"skip schedule deleting pod: {pod.namespace}/{pod.name}"
        self.reporter.on_loop(recorder.failed_scheduling, ref, note)

    def _preemption(self, client: Client) -> ApiPreemptionExecutor:
        return ApiPreemptionExecutor(
            client,
            self.bucket,
            self.nominator,
            self._event_from_thread,
            lookup=self.cache.get_pod,
            activate=lambda pod: self.queue.activate(pod.uid),
            on_preempt=self._count_preemption,
            may_evict=lambda pod: self._serves_namespace(pod.namespace),
            fence=self.fence,
        )

    def _frameworks(
        self,
        engine: EngineConfig,
        client: Client,
        content_type: str,
        *,
        shadow: bool,
        generic_workload: bool,
    ) -> dict[str, Framework]:
        self.preemption = None if shadow else self._preemption(client)
        self.declarations = engine_declarations()
        self.pod_labels = PodLabelIndex.for_plugins(
            self.declarations, {n for p in engine.profiles for n in p.plugin_names()}
        )
        return build_frameworks(
            engine,
            engine_registry(self.declarations),
            None
            if shadow
            else ApiBinder(
                client,
                self.bucket,
                self.timing.tallies["api_bind"],
                content_type=content_type,
                fence=self.fence,
                node_exists=self.cache.has_node,
            ),
            objects=self.objects,
            pod_lister=self.pod_labels,
            nominator=self.nominator,
            preemption_executor=self.preemption,
            claim_writer=None if shadow else ApiClaimWriter(client, self.bucket),
            object_updater=None if shadow else ApiObjectUpdater(client, self.bucket),
            metrics=self.recorder,
            pod_groups=self.cache if generic_workload else None,
            activator=self._activate,
        )

    def _shadow(self, options: EngineOptions) -> ShadowEngine:
        if len(self.schedulers) != 1:
            raise ValidationError([FieldError(
                "profiles", f"a shadow runs one profile; this configuration has "
                f"{len(self.schedulers)}"
            )])  # fmt: skip
        assert options.shadow_of is not None
        return ShadowEngine(
            next(iter(self.schedulers.values())),
            live_scheduler=options.shadow_of,
            profile=options.shadow_profile,
            config_hash=options.config_hash,
            aio=self.aio,
            cache=self.cache,
            nominator=self.nominator,
            serves_namespace=self._serves_namespace,
            recorder=self.recorder,
        )

    def _on_pod(self, kind: EventType, raw: dict[str, Any]) -> None:
        if self.shadow is not None:  # first: it decides on the cache before this event
            self.shadow.observer.on_pod(kind, raw)
        self.state.on_pod(kind, raw)

    def _pre_enqueue(self, pod: PodInfo, gating_plugin: str) -> Status | None:
        scheduler = self.schedulers.get(pod.scheduler_name)
        return None if scheduler is None else scheduler.fwk.run_pre_enqueue(pod, gating_plugin)

    def _serves_namespace(self, namespace: str) -> bool:
        if self.options.namespaces is not None and namespace in self.options.namespaces:
            return True
        if self.options.namespace_selector is not None:
            return namespace in self._selected_namespaces
        return self.options.namespaces is None

    def _on_namespace(self, kind: EventType, raw: dict[str, Any]) -> None:
        name = raw["metadata"]["name"]
        if kind == "DELETED":
            self._selected_namespaces.discard(name)
        else:
            self._selected_namespaces.add(name)

    def _informers(self) -> list[Informer]:
        self.node_informer = Informer(self.aio, "/api/v1/nodes", self.state.on_node)
        informers = [
            self.node_informer,
            Informer(
                self.aio,
                ACTIVE_PODS_PATH,
                self._on_pod,
                field_selector=NON_TERMINAL,
                protobuf_objects=self.options.pod_watch_protobuf,
            ),
        ]
        # Only what the profiles' plugins declare they read (Services for spreading, PDBs for
        # preemption...): the reads their RBAC is rendered from.
        plugins = {name for p in self.engine.profiles for name in p.plugin_names()}
        reading = [d for d in self.declarations if d.name in plugins]
        for plugin, (group, resource) in unwatched_reads(reading):
            log.warning(
                "plugin %s declares a read of %s, which Corral has no informer for; "
                "its lister lists none", plugin, f"{group}/{resource}" if group else resource,
            )  # fmt: skip
        for kind in kinds_for(reading):
            handler = self._object_handler(kind)
            optional = kind in OPTIONAL_KINDS
            informers.append(Informer(self.aio, WATCHED_KINDS[kind], handler, optional=optional))
        if self.pod_group_events is not None:
            informers.append(
                Informer(self.aio, POD_GROUPS_PATH, self.pod_group_events.on_pod_group)
            )
        if self.options.namespace_selector is not None:
            informers.insert(
                0,
                Informer(
                    self.aio,
                    "/api/v1/namespaces",
                    self._on_namespace,
                    label_selector=self.options.namespace_selector,
                ),
            )
        return informers

    def _object_handler(self, kind: str) -> Callable[[EventType, dict[str, Any]], None]:
        def handle(event: EventType, obj: dict[str, Any]) -> None:
            # Queueing hints get the object as it was and as it is (raw JSON); a deletion's
            # old object is the deleted one, as upstream's.
            meta = obj.get("metadata") or {}
            key = str(meta.get("namespace") or ""), str(meta.get("name") or "")
            old = obj if event == "DELETED" else self.objects.get(kind, *key)
            rules = self.objects.list(DEVICE_TAINT_RULE) if kind == DEVICE_TAINT_RULE else ()
            self.objects.apply(kind, event, obj)
            action = _OBJECT_ACTIONS.get(event)
            new = None if event == "DELETED" else obj
            if kind in QUEUEING_KINDS and action is not None:
                self.queue.move_all_to_active_or_backoff(ClusterEvent(kind, action), old, new)
            if kind == DEVICE_TAINT_RULE and action is not None:
                self._retainted_slices(rules, old, new)

        return handle

    def _retainted_slices(
        self,
        rules_before: Sequence[Mapping[str, Any]],
        old: Mapping[str, Any] | None,
        new: Mapping[str, Any] | None,
    ) -> None:
        """A DeviceTaintRule's change, as upstream's ResourceSlice tracker reports it: an update
        of every slice whose devices' taints it changed (DynamicResources registers those)."""
        event = ClusterEvent(RESOURCE_SLICE, ActionType.UPDATE)
        slices = self.objects.list(RESOURCE_SLICE)
        rules_after = self.objects.list(DEVICE_TAINT_RULE)
        for before, after in taint_rules.slice_updates(
            slices, rules_before, rules_after, (old, new)
        ):
            self.queue.move_all_to_active_or_backoff(event, before, after)

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
            self.aio, self.recorder, self.reporter.on_loop, self._spawn, self._skipped_deleting
        )
        return PodGroupEvents(self.cache, self.queue), reports

    def _event_from_thread(
        self, pod: PodInfo, event_type: str, reason: str, action: str, note: str
    ) -> None:
        """An Event about any pod (e.g. a preemption victim), from any thread."""
        recorder = next(iter(self.recorders.values()))
        ref = PodRef(pod.namespace, pod.name, pod.uid, pod.resource_version)
        self.reporter.on_loop(recorder.event, ref, event_type, reason, action, note)

    def _count_preemption(self, victims: int) -> None:
        self.recorder.inc(m.PREEMPTION_ATTEMPTS)
        self.recorder.observe(m.PREEMPTION_VICTIMS, (), victims)

    def _not_ready(self) -> str | None:
        waiting = [i.path for i in self.informers if not i.synced.is_set()]
        return f"caches not synced: {', '.join(waiting)}" if waiting else None

    # --- running ----------------------------------------------------------------------------

    def _spawn(self, coro: Any) -> asyncio.Task[Any]:
        task = asyncio.create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    async def run(self) -> int:
        """Run until cancelled (returns 0 after a graceful stop) or leadership is lost (1)."""
        self.reporter.loop = asyncio.get_running_loop()
        self.gc_clock.install()
        await self.server.start()
        log.info("serving health and metrics on %s:%d", self.options.bind_host, self.server.port)
        for informer in self.informers:
            self._spawn(informer.run())
        for recorder in self.recorders.values():
            self._spawn(recorder.run())
            self._spawn(recorder.maintain())
        self._spawn(self._housekeeping())
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
            elector = LeaderElector(self.aio, self.election)
            self.fence.guard(elector.holds_lease)
            log.info("attempting to acquire leader lease %s", elector.path)
            await elector.run(self._lead, self._stop_leading)
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
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
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


class _Reporter:
    """Outcomes from the scheduling/binding threads -> metrics and logs at once, Events and
    pod status through the event loop (the only thread that talks to the API asynchronously)."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.loop: asyncio.AbstractEventLoop | None = None
        # Calls waiting for the loop, in order. One call_soon_threadsafe per batch, not per
        # pod: each one writes to the loop's self-pipe, which cost 8% of the engine's CPU.
        self._pending: deque[tuple[Callable[..., Any], tuple[Any, ...]]] = deque()
        self._lock = threading.Lock()
        self._wakeup_sent = False

    def on_loop(self, fn: Callable[..., Any], *args: Any) -> None:
        loop = self.loop
        if loop is None or loop.is_closed():
            return
        with self._lock:
            self._pending.append((fn, args))
            if self._wakeup_sent:
                return
            self._wakeup_sent = True
        with contextlib.suppress(RuntimeError):  # closed meanwhile (shutdown): nothing to do
            loop.call_soon_threadsafe(self._drain)

    def _drain(self) -> None:
        """On the loop: run every pending call, including those added while draining."""
        while True:
            with self._lock:
                if not self._pending:
                    self._wakeup_sent = False
                    return
                batch = list(self._pending)
                self._pending.clear()
            for fn, args in batch:
                try:
                    fn(*args)
                except Exception:  # one failed report must not stall the ones after it
                    log.exception("reporting a scheduling outcome failed")

    def scheduled(self, outcome: Success) -> None:
        rec = self.engine.recorder
        labels = (RESULT_SCHEDULED, outcome.profile)
        rec.inc(m.SCHEDULE_ATTEMPTS, labels)
        rec.observe(m.SCHEDULING_ATTEMPT_DURATION, labels, outcome.duration)
        rec.observe(m.POD_SCHEDULING_ATTEMPTS, (), outcome.attempts)
        if outcome.since_first_attempt is not None:
            attempts = (m.attempts_label(outcome.attempts),)
            rec.observe(m.POD_SCHEDULING_SLI_DURATION, attempts, outcome.since_first_attempt)
        self.on_loop(self._scheduled_on_loop, outcome)

    def _scheduled_on_loop(self, outcome: Success) -> None:
        # Logged from the loop thread only: many binding threads contending for the log
        # handler's lock cost more than the logging itself.
        pod = outcome.pod
        log.info("Successfully bound pod to node", extra=fields(
            pod=pod.key, node=outcome.node, evaluatedNodes=outcome.evaluated_nodes,
            feasibleNodes=outcome.feasible_nodes,
        ))  # fmt: skip
        ref = PodRef(pod.namespace, pod.name, pod.uid, pod.resource_version)
        self.engine.recorders[outcome.profile].scheduled(ref, outcome.node)

    def failed(self, outcome: Failure) -> None:
        rec = self.engine.recorder
        result = RESULT_UNSCHEDULABLE if outcome.reason == REASON_UNSCHEDULABLE else RESULT_ERROR
        rec.inc(m.SCHEDULE_ATTEMPTS, (result, outcome.profile))
        rec.observe(m.SCHEDULING_ATTEMPT_DURATION, (result, outcome.profile), outcome.duration)
        self.on_loop(self._failed_on_loop, outcome)

    def _failed_on_loop(self, outcome: Failure) -> None:
        pod = outcome.pod
        log.info("Unable to schedule pod", extra=fields(
            pod=pod.key, reason=outcome.reason, err=outcome.message))  # fmt: skip
        ref = PodRef(pod.namespace, pod.name, pod.uid, pod.resource_version)
        self.engine.recorders[outcome.profile].failed_scheduling(ref, outcome.message)
        self.engine._spawn(self._patch_status(outcome))

    async def _patch_status(self, outcome: Failure) -> None:
        try:
            pod = outcome.pod.raw
            if outcome.announced:  # the binding cycle wrote it since the informer's copy
                pod = {**pod, "status": {**(pod.get("status") or {}),
                                         "nominatedNodeName": outcome.announced}}  # fmt: skip
            await record_failure(self.engine.aio, pod, outcome.reason, outcome.message,
                                 outcome.nominated_node)  # fmt: skip
        except Exception as exc:  # the pod may be gone; the next attempt writes it again
            log.debug("updating the status of %s: %s", outcome.pod.key, exc)
