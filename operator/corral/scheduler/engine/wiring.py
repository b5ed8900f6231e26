"""The engine's parts, each built by a function from the parts it needs (:class:`~.app.Engine`
calls them in order; a part is an argument before it is used, never an attribute read later).

The one cycle, as upstream's: the queue is built from the frameworks (their QueueSort, PreEnqueue
and queueing hints), while the frameworks and the preemption executor activate pods in the
queue. They get a :class:`PodActivator`, bound to the queue as soon as it exists (upstream's
``SetPodActivator``); a call before that raises instead of reaching a queue that is not there.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from prometheus_client import CollectorRegistry

from corral.k8s import Client
from corral.k8s.aio import AsyncClient
from corral.k8s.informer import Handler, Informer
from corral.k8s.ratelimit import TokenBucket
from corral.k8s.secure_serving import DelegatedAuth, server_context
from corral.scheduler import metrics as m
from corral.scheduler.backend.cache import Cache
from corral.scheduler.backend.objects import (
    OPTIONAL_KINDS,
    WATCHED_KINDS,
    ObjectStore,
    kinds_for,
    unwatched_reads,
)
from corral.scheduler.backend.queue import SchedulingQueue
from corral.scheduler.config import FieldError, PluginDeclaration, ValidationError
from corral.scheduler.engine.binding import ApiBinder
from corral.scheduler.engine.event_recorder import EventRecorder
from corral.scheduler.engine.frameworks import EngineConfig, build_frameworks, defaulted
from corral.scheduler.engine.handlers import ClusterState
from corral.scheduler.engine.leaderelection import WriteFence
from corral.scheduler.engine.namespaces import ServedNamespaces
from corral.scheduler.engine.nominator import Nominator
from corral.scheduler.engine.object_events import ObjectEvents
from corral.scheduler.engine.object_updater import ApiObjectUpdater
from corral.scheduler.engine.podgroups import POD_GROUPS_PATH, PodGroupEvents
from corral.scheduler.engine.preemption import ApiPreemptionExecutor
from corral.scheduler.engine.reporter import OutcomeReporter
from corral.scheduler.engine.resource_claims import ApiClaimWriter
from corral.scheduler.engine.server import HealthServer
from corral.scheduler.engine.shadow import ShadowEngine
from corral.scheduler.engine.timing import Tally
from corral.scheduler.framework.cluster_events import WILDCARD, ActionType, ClusterEvent
from corral.scheduler.framework.extender import EXTENDER_NAME, Extender
from corral.scheduler.framework.listers import PodLister
from corral.scheduler.framework.registry import Registry
from corral.scheduler.framework.runtime.schedule_pod import PodScheduler
from corral.scheduler.framework.status import Status
from corral.scheduler.framework.types import PodInfo

log = logging.getLogger("corral.scheduler")

ACTIVE_PODS_PATH: Final = "/api/v1/pods"
NODES_PATH: Final = "/api/v1/nodes"
NAMESPACES_PATH: Final = "/api/v1/namespaces"
NON_TERMINAL: Final = "status.phase!=Succeeded,status.phase!=Failed"


class PodActivator:
    """The queue's ``activate`` for the parts built before the queue."""

    def __init__(self) -> None:
        self._queue: SchedulingQueue | None = None

    def bind(self, queue: SchedulingQueue) -> None:
        if self._queue is not None:
            raise RuntimeError("the pod activator is bound to a queue already")
        self._queue = queue

    def _bound(self) -> SchedulingQueue:
        if self._queue is None:
            raise RuntimeError("a pod was activated before the scheduling queue was built")
        return self._queue

    def pods(self, uids: Sequence[str]) -> None:
        """Move the waiting pods ``uids`` to activeQ (a plugin's ``activate``)."""
        queue = self._bound()
        for uid in uids:
            queue.activate(uid)

    def pod(self, pod: PodInfo) -> None:
        """Move the waiting ``pod`` to activeQ (a preemptor whose victims are gone)."""
        self._bound().activate(pod.uid)


def build_event_recorders(
    engine: EngineConfig, aio: AsyncClient, content_type: str
) -> dict[str, EventRecorder]:
    """One Event recorder per profile, keyed and ordered as the profiles."""
    return {
        name: EventRecorder(aio, name, content_type=content_type) for name in engine.scheduler_names
    }


def build_preemption(
    client: Client,
    bucket: TokenBucket,
    *,
    nominator: Nominator,
    cache: Cache,
    reporter: OutcomeReporter,
    activator: PodActivator,
    served: ServedNamespaces,
    fence: WriteFence,
) -> ApiPreemptionExecutor:
    """The evictions preemption sends: only pods of served namespaces, only through ``fence``."""
    return ApiPreemptionExecutor(
        client,
        bucket,
        nominator,
        reporter.event,
        lookup=cache.get_pod,
        activate=activator.pod,
        on_preempt=reporter.preempted,
        may_evict=lambda pod: served.serves(pod.namespace),
        fence=fence,
    )


@dataclass(frozen=True)
class Writers:
    """Everything the frameworks write to the API server through."""

    binder: ApiBinder
    preemption: ApiPreemptionExecutor
    claims: ApiClaimWriter
    objects: ApiObjectUpdater


def build_writers(
    client: Client,
    bucket: TokenBucket,
    preemption: ApiPreemptionExecutor,
    *,
    bind_tally: Tally,
    content_type: str,
    fence: WriteFence,
    cache: Cache,
) -> Writers:
    binder = ApiBinder(
        client, bucket, bind_tally, content_type=content_type, fence=fence,
        node_exists=cache.has_node,
    )  # fmt: skip
    claims = ApiClaimWriter(client, bucket)
    return Writers(binder, preemption, claims, ApiObjectUpdater(client, bucket))


def build_schedulers(
    engine: EngineConfig,
    registry: Registry,
    writers: Writers | None,
    extenders: Sequence[Extender],
    *,
    objects: ObjectStore,
    pod_lister: PodLister,
    nominator: Nominator,
    metrics: m.Recorder,
    pod_groups: Cache | None,
    activator: PodActivator,
) -> dict[str, PodScheduler]:
    """One PodScheduler per profile over its Framework, in the profiles' order; without
    ``writers`` (a shadow) the frameworks write nothing."""
    frameworks = build_frameworks(
        engine,
        registry,
        None if writers is None else writers.binder,
        objects=objects,
        pod_lister=pod_lister,
        nominator=nominator,
        preemption_executor=None if writers is None else writers.preemption,
        claim_writer=None if writers is None else writers.claims,
        object_updater=None if writers is None else writers.objects,
        metrics=metrics,
        pod_groups=pod_groups,
        activator=activator.pods,
        extenders=extenders,
    )
    pct = defaulted(engine.config.percentage_of_nodes_to_score, "percentageOfNodesToScore")
    return {
        name: PodScheduler(fwk, percentage_of_nodes_to_score=pct)
        for name, fwk in frameworks.items()
    }


def build_queue(
    engine: EngineConfig,
    schedulers: Mapping[str, PodScheduler],
    *,
    queueing_hints: bool,
    metrics: m.Recorder,
) -> SchedulingQueue:
    """The scheduling queue: the first profile's QueueSort (validation makes every profile use
    the same), each profile's PreEnqueue and queueing hints, and the backoff settings."""
    cfg = engine.config
    events_by_profile: dict[str, dict[str, Any]] = {}
    for name, scheduler in schedulers.items():
        events_by_profile[name] = dict(scheduler.fwk.events_by_plugin())
        # Upstream retries pods an extender rejected on any cluster event: it cannot know
        # what an extender's verdict depends on.
        if scheduler.fwk.extenders:
            events_by_profile[name][EXTENDER_NAME] = (ClusterEvent(WILDCARD, ActionType.ALL),)

    def pre_enqueue(pod: PodInfo, gating_plugin: str) -> Status | None:
        scheduler = schedulers.get(pod.scheduler_name)
        return None if scheduler is None else scheduler.fwk.run_pre_enqueue(pod, gating_plugin)

    first = next(iter(schedulers.values())).fwk
    queue = SchedulingQueue(
        less=first.less,
        pre_enqueue=pre_enqueue,
        events_by_profile=events_by_profile,
        queueing_hints=queueing_hints,
        initial_backoff=float(defaulted(cfg.pod_initial_backoff_seconds, "backoff")),
        max_backoff=float(defaulted(cfg.pod_max_backoff_seconds, "backoff")),
        metrics=metrics,
        generic_workload=engine.gates.generic_workload,
    )
    for metric, source in (
        (m.PENDING_PODS, queue.pending_by_queue),
        (m.QUEUED_ENTITIES, queue.entities_by_queue),
        (m.UNSCHEDULABLE_PODS, queue.unschedulable_by_plugin),
    ):
        metrics.gauge_source(metric, source)
    return queue


def declared_reads(
    engine: EngineConfig, declarations: Sequence[PluginDeclaration]
) -> list[PluginDeclaration]:
    """The declarations of the plugins the profiles enable; a read Corral has no informer for
    is logged (that plugin's lister lists none of it)."""
    plugins = {name for p in engine.profiles for name in p.plugin_names()}
    reading = [d for d in declarations if d.name in plugins]
    for plugin, (group, resource) in unwatched_reads(reading):
        log.warning(
            "plugin %s declares a read of %s, which Corral has no informer for; "
            "its lister lists none", plugin, f"{group}/{resource}" if group else resource,
        )  # fmt: skip
    return reading


@dataclass(frozen=True)
class Informers:
    nodes: Informer
    all: list[Informer]  # the order they start in; ``nodes`` among them


def build_informers(
    aio: AsyncClient,
    state: ClusterState,
    objects: ObjectEvents,
    reading: Sequence[PluginDeclaration],
    *,
    on_pod: Handler,
    served: ServedNamespaces,
    pod_groups: PodGroupEvents | None,
    pod_watch_protobuf: bool,
) -> Informers:
    """The watches: the served namespaces (with a selector), nodes, non-terminal pods (to
    ``on_pod``), what the ``reading`` plugins declare they read (the reads their RBAC is rendered
    from), PodGroups."""
    nodes = Informer(aio, NODES_PATH, state.on_node)
    informers = [
        nodes,
        Informer(
            aio,
            ACTIVE_PODS_PATH,
            on_pod,
            field_selector=NON_TERMINAL,
            protobuf_objects=pod_watch_protobuf,
        ),
    ]
    for kind in kinds_for(reading):
        informers.append(
            Informer(
                aio, WATCHED_KINDS[kind], objects.handler(kind), optional=kind in OPTIONAL_KINDS
            )
        )
    if pod_groups is not None:
        informers.append(Informer(aio, POD_GROUPS_PATH, pod_groups.on_pod_group))
    if served.selector is not None:
        informers.insert(
            0, Informer(aio, NAMESPACES_PATH, served.on_namespace, label_selector=served.selector)
        )
    return Informers(nodes, informers)


def build_shadow(
    live_scheduler: str,
    profile: str | None,
    config_hash: str,
    schedulers: Mapping[str, PodScheduler],
    *,
    aio: AsyncClient,
    cache: Cache,
    nominator: Nominator,
    served: ServedNamespaces,
    metrics: m.Recorder,
    fence: WriteFence,
) -> ShadowEngine:
    """A shadow of ``live_scheduler`` (``EngineOptions.shadow_of``): its one profile decides
    that scheduler's pods and compares; ``profile``'s status.shadow gets the counts."""
    if len(schedulers) != 1:
        raise ValidationError([FieldError(
            "profiles", f"a shadow runs one profile; this configuration has {len(schedulers)}"
        )])  # fmt: skip
    return ShadowEngine(
        next(iter(schedulers.values())),
        live_scheduler=live_scheduler,
        profile=profile,
        config_hash=config_hash,
        aio=aio,
        cache=cache,
        nominator=nominator,
        serves_namespace=served.serves,
        recorder=metrics,
        may_write=lambda: fence.open,
    )


def build_server(
    host: str,
    port: int,
    aio: AsyncClient,
    registry: CollectorRegistry,
    not_ready: Callable[[], str | None],
    *,
    secure_serving: bool,
    tls_cert_file: str | None,
    tls_private_key_file: str | None,
) -> HealthServer:
    """Health and metrics: HTTPS with delegated authn/authz for all but the probes when
    ``secure_serving``, plain HTTP otherwise (a local dev run)."""
    secure = None
    if secure_serving:
        context = server_context(tls_cert_file, tls_private_key_file)
        secure = (context, DelegatedAuth(aio).middleware)
    return HealthServer(host, port, registry, not_ready, secure)


def informers_not_synced(informers: Sequence[Informer]) -> Callable[[], str | None]:
    """The readiness check: which watches have not listed yet."""

    def not_ready() -> str | None:
        waiting = [i.path for i in informers if not i.synced.is_set()]
        return f"caches not synced: {', '.join(waiting)}" if waiting else None

    return not_ready
