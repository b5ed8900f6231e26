"""The engine over an in-memory cluster: no API server, the same parts, the same decisions.

One :class:`Simulator` stands for every scheduler given (each :class:`SimulatedEngine` is one
engine process: a KubeSchedulerConfiguration, and the tenancy its flags would set) over one
cluster. As the engine:

- the cache admits nodes and the pods with ``spec.nodeName`` that are not finished
  (:mod:`.simulated_admission` completes what hand-written objects lack, and says so);
- the other kinds plugins read (:data:`WATCHED_KINDS`) go into the same :class:`ObjectStore`
  the informers fill;
- a pending pod goes to the profile its ``schedulerName`` names, and only when that engine
  serves its namespace (tenancy); others are reported, with the operator's words;
- each engine's :class:`SchedulingQueue` orders its pods (QueueSort: priority, then the order
  given), retries them on the cluster events their rejectors registered, with backoff on a
  virtual clock; a cycle is the engine's ``scheduling_cycle`` and ``binding_cycle``; Bind
  records the node, and the pod is then confirmed in the cache as the informer would;
- preemption evicts its victims from the cache (the executor of a real engine deletes them),
  which requeues the preemptor as their deletion events would;
- VolumeBinding's and DynamicResources' writes are stored as the API server, the PV controller
  and a provisioner would leave them (:mod:`.simulated_storage`).

:meth:`Simulator.run` places a list of pending pods until nothing more can happen;
:meth:`Simulator.schedule` is one pod alone (the conformance harness's step). Ties are broken by
a seeded RNG, so a simulation is repeatable. An explained attempt (``explain``) records, through
the runtime's own points, what its cycle evaluated (:mod:`~corral.scheduler.framework.explanation`).
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Final

from corral.scheduler.backend.cache import Cache, CacheError
from corral.scheduler.backend.objects import ADDED, QUEUEING_KINDS, WATCHED_KINDS, ObjectStore
from corral.scheduler.backend.queue import SchedulingQueue
from corral.scheduler.backend.records import MalformedObjectError, node_from_json, pod_from_json
from corral.scheduler.config import FieldError, ValidationError
from corral.scheduler.engine.frameworks import (
    EngineConfig,
    build_frameworks,
    defaulted,
    engine_registry,
    load_extenders,
)
from corral.scheduler.engine.nominator import Nominator
from corral.scheduler.engine.simulated_admission import (
    NOTE_TERMINAL,
    TEMPLATE,
    Admission,
    Notes,
    terminal,
)
from corral.scheduler.engine.simulated_storage import SimulatedClaims, SimulatedStorage
from corral.scheduler.framework import cluster_events as events
from corral.scheduler.framework import explanation as x
from corral.scheduler.framework import labels, listers
from corral.scheduler.framework.cluster_events import ActionType, ClusterEvent
from corral.scheduler.framework.cycle_state import CycleState
from corral.scheduler.framework.extender import EXTENDER_NAME
from corral.scheduler.framework.runtime.recording import CycleRecording
from corral.scheduler.framework.runtime.schedule_one import binding_cycle, scheduling_cycle
from corral.scheduler.framework.runtime.schedule_pod import PodScheduler
from corral.scheduler.framework.status import Code, Status
from corral.scheduler.framework.types import PodInfo, QueuedPodInfo

# Verdicts of a pending pod.
SCHEDULED: Final = "Scheduled"
UNSCHEDULABLE: Final = "Unschedulable"
ERROR: Final = "SchedulerError"
NOT_SERVED: Final = "NamespaceNotServed"  # the operator's Event reason
NO_PROFILE: Final = "NoSchedulerProfile"  # the operator's Event reason
PREEMPTED: Final = "Preempted"  # placed, then evicted by a later pod's preemption
GATED: Final = "Gated"  # never attempted: a PreEnqueue plugin holds it (scheduling gates, DRA)
# A pod retried this often is given up (the real engine would keep retrying on every event).
MAX_ATTEMPTS: Final = 50
_ACTIONS: Final = {"ADDED": ActionType.ADD, "MODIFIED": ActionType.UPDATE,
                   "DELETED": ActionType.DELETE}  # fmt: skip


class MalformedPodError(MalformedObjectError):
    """A pending pod plugins cannot read: the ``index``-th of those given to :meth:`run` (the
    API server would have refused it)."""

    def __init__(self, message: str, index: int) -> None:
        super().__init__(message)
        self.index = index


@dataclass(frozen=True)
class Tenancy:
    """The namespaces an engine serves (``--namespaces``, ``--namespace-selector``)."""

    namespaces: frozenset[str] = frozenset()
    selector: labels.Selector | None = None
    description: str = ""  # "team-a", "namespaces matching team=a", ...

    def serves(self, namespace: str, namespace_labels: Mapping[str, str]) -> bool:
        if namespace in self.namespaces:
            return True
        return self.selector is not None and self.selector.matches(namespace_labels)


@dataclass(frozen=True)
class SimulatedEngine:
    source: str  # where it came from, as the output names it
    config: EngineConfig
    tenancy: Tenancy | None = None
    # The SchedulerProfile it renders (the operator's verdicts name it), if any.
    profile: str = ""


@dataclass
class Placement:
    pod: str
    profile: str
    verdict: str  # SCHEDULED, UNSCHEDULABLE, ERROR, NOT_SERVED, NO_PROFILE, PREEMPTED, GATED
    node: str | None = None
    message: str = ""
    evaluated: int = 0
    feasible: int = 0
    attempts: int = 0
    nominated_node: str | None = None
    # Pods this one's preemptions evicted, in order.
    victims: list[str] = field(default_factory=list)
    preempted_by: str | None = None
    # The first failed attempt's message (the pod's first FailedScheduling Event).
    first_failure: str = ""
    given_up: bool = False  # retried MAX_ATTEMPTS times: the simulation stopped trying
    # Each explained attempt's cycle, in order (the last decided the verdict).
    explanations: list[x.Explanation] = field(default_factory=list)

    @property
    def placed(self) -> bool:
        return self.verdict == SCHEDULED

    @property
    def explanation(self) -> x.Explanation | None:
        return self.explanations[-1] if self.explanations else None


@dataclass
class _Profile:
    scheduler: PodScheduler
    engine: SimulatedEngine
    queue: SchedulingQueue


class _Clock:
    """The simulation's time: it moves only when every queue waits on backoff."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


class _Binder:
    """The simulated PodBinder: Bind succeeds and remembers where the pod went."""

    def __init__(self) -> None:
        self.bound: dict[str, str] = {}

    def __call__(self, pod: PodInfo, node_name: str) -> None:
        self.bound[pod.uid] = node_name


class _Preemption:
    """Implements :class:`~corral.scheduler.framework.listers.PreemptionExecutor` for one
    engine: victims leave the cache at once (their deletion is an event for every queue)."""

    def __init__(self, simulator: Simulator, tenancy: Tenancy | None) -> None:
        self.simulator = simulator
        self.tenancy = tenancy

    def preempt(
        self,
        preemptor: PodInfo,
        node_name: str,
        victims: Sequence[PodInfo],
        lower_priority_nominated: Sequence[PodInfo],
    ) -> Status | None:
        for pod in lower_priority_nominated:
            self.simulator.nominate(pod, "")
        for victim in victims:
            self.simulator.evict(victim, preemptor.uid, preemptor.key)
        return None

    def preempt_group(
        self,
        group_uid: str,
        group_key: str,
        members: Sequence[PodInfo],
        victims: Sequence[PodInfo],
    ) -> Status | None:
        # The victims are counted on the group's first member (a placement is per pod).
        first = members[0].uid if members else group_uid
        for victim in victims:
            self.simulator.evict(victim, first, f"podgroup {group_key}")
        return None

    def clear_nominated_node_name(self, pods: Sequence[PodInfo]) -> None:
        for pod in pods:
            self.simulator.nominate(pod, "")

    def is_running_preemption(self, uid: str) -> bool:
        return False  # done at once

    def may_evict(self, pod: PodInfo) -> bool:
        return self.tenancy is None or self.simulator.serves(self.tenancy, pod.namespace)


class Simulator:
    def __init__(self, engines: Sequence[SimulatedEngine], *, seed: int = 0) -> None:
        self.notes = Notes()
        self.objects = ObjectStore()
        self.admission = Admission(self.objects, self.notes)
        self.cache = Cache()
        self.nominator = Nominator()
        self.clock = _Clock()
        self.binder = _Binder()
        self.storage = SimulatedStorage(self.objects, self._object_changed)
        self.claims = SimulatedClaims(self.objects, self._object_changed)
        self.rng = random.Random(seed)
        self.profiles: dict[str, _Profile] = {}
        self.placements: dict[str, Placement] = {}
        self._waiting: dict[str, PodInfo] = {}  # uid -> pending pod, while queued
        self._explain = False
        errors: list[FieldError] = []
        for engine in engines:
            errors += self._add_engine(engine)
        if errors:
            raise ValidationError(errors)

    def _add_engine(self, engine: SimulatedEngine) -> list[FieldError]:
        cfg = engine.config.config
        frameworks = build_frameworks(
            engine.config, engine_registry(), self.binder, objects=self.objects,
            nominator=self.nominator, preemption_executor=_Preemption(self, engine.tenancy),
            claim_writer=self.claims, object_updater=self.storage,
        )  # fmt: skip
        pct = defaulted(cfg.percentage_of_nodes_to_score, "percentageOfNodesToScore")
        extenders = load_extenders(engine.config)
        first = next(iter(frameworks.values()))
        by_profile: dict[str, dict[str, Any]] = {}
        for name, fwk in frameworks.items():
            by_profile[name] = dict(fwk.events_by_plugin())
            if extenders:  # as the engine: an extender's rejection is retried on any event
                by_profile[name][EXTENDER_NAME] = (ClusterEvent(events.WILDCARD, ActionType.ALL),)
        queue = SchedulingQueue(
            less=first.less,
            pre_enqueue=self._pre_enqueue,
            events_by_profile=by_profile,
            initial_backoff=float(defaulted(cfg.pod_initial_backoff_seconds, "backoff")),
            max_backoff=float(defaulted(cfg.pod_max_backoff_seconds, "backoff")),
            clock=self.clock,
        )
        errors = []
        for name, fwk in frameworks.items():
            if name in self.profiles:
                other = self.profiles[name].engine.source
                errors.append(FieldError(
                    engine.source, f"schedulerName {name!r} is also given by {other}"
                ))  # fmt: skip
                continue
            scheduler = PodScheduler(fwk, percentage_of_nodes_to_score=pct, rng=self.rng,
                                     extenders=extenders)  # fmt: skip
            self.profiles[name] = _Profile(scheduler, engine, queue)
        return errors

    @property
    def queues(self) -> list[SchedulingQueue]:
        return list({id(p.queue): p.queue for p in self.profiles.values()}.values())

    # --- the cluster ------------------------------------------------------------------------

    def add_object(self, raw: Mapping[str, Any]) -> bool:
        """Keep an object of a kind plugins read (or a ResourceClaimTemplate, which the
        resourceclaim controller reads); False (ignored) for any other kind."""
        kind = str(raw.get("kind") or "")
        if kind == TEMPLATE:
            self.admission.template(raw)
            return True
        if kind not in WATCHED_KINDS:
            return False
        self.objects.apply(kind, ADDED, self.admission.object(kind, raw))
        return True

    def settle_volumes(self) -> None:
        """After every object is in: phase-less PVs (and the claims they bind) as the PV
        controller leaves them."""
        volumes = self.objects.list(listers.PERSISTENT_VOLUME)
        claims = self.objects.list(listers.PERSISTENT_VOLUME_CLAIM)
        classes = self.objects.list(listers.STORAGE_CLASS)
        for obj in self.admission.volumes(volumes, claims, classes):
            kind = listers.PERSISTENT_VOLUME if obj.get("kind") == "PersistentVolume" else (
                listers.PERSISTENT_VOLUME_CLAIM)  # fmt: skip
            self.objects.apply(kind, ADDED, obj)

    def add_node(self, raw: Mapping[str, Any]) -> None:
        self.cache.add_node(node_from_json(self.admission.node(raw)))

    def add_running_pod(self, raw: Mapping[str, Any]) -> bool:
        """A pod bound to a node; False (left out) for a finished one, as the informer."""
        if terminal(raw):
            self.notes.add(NOTE_TERMINAL)
            return False
        self.cache.add_pod(pod_from_json(self.admission.pod(raw)))
        return True

    def serves(self, tenancy: Tenancy, namespace: str) -> bool:
        ns = self.objects.get(listers.NAMESPACE, "", namespace)
        meta = ns.get("metadata") if ns is not None else None
        found = meta.get("labels") if isinstance(meta, Mapping) else None
        return tenancy.serves(namespace, found if isinstance(found, Mapping) else {})

    # --- hooks of the executor and the writers -----------------------------------------------

    def nominate(self, pod: PodInfo, node: str) -> None:
        self.nominator.nominate(pod, node)
        waiting = self._waiting.get(pod.uid)
        if waiting is not None and waiting.nominated_node_name != node:
            updated = replace(waiting, nominated_node_name=node)
            self._waiting[pod.uid] = updated
            self._queue_of(updated).update(waiting, updated)

    def evict(self, victim: PodInfo, by_uid: str, by_key: str) -> None:
        """``victim`` leaves the cache, preempted by the pod (or group) ``by_key``; its key is
        added to the victims of the placement of ``by_uid``."""
        try:
            self.cache.remove_pod(victim)
        except CacheError:
            return
        by = self.placements.get(by_uid)
        if by is not None:
            by.victims.append(victim.key)
        placed = self.placements.get(victim.uid)
        if placed is not None:
            placed.verdict, placed.preempted_by = PREEMPTED, by_key
        self._broadcast(events.ASSIGNED_POD_DELETE, victim, None)

    def _object_changed(self, kind: str, old: object, new: object) -> None:
        if kind in QUEUEING_KINDS:
            action = ActionType.ADD if old is None else (
                ActionType.DELETE if new is None else ActionType.UPDATE)  # fmt: skip
            self._broadcast(ClusterEvent(kind, action), old, new)

    def _broadcast(self, event: ClusterEvent, old: object, new: object) -> None:
        for queue in self.queues:
            queue.move_all_to_active_or_backoff(event, old, new)

    def _pre_enqueue(self, pod: PodInfo, gating_plugin: str = "") -> Status | None:
        profile = self.profiles.get(pod.scheduler_name)
        if profile is None:
            return None
        return profile.scheduler.fwk.run_pre_enqueue(pod, gating_plugin)

    def _queue_of(self, pod: PodInfo) -> SchedulingQueue:
        return self.profiles[pod.scheduler_name].queue

    # --- placing pods -----------------------------------------------------------------------

    def run(
        self, pending: Sequence[Mapping[str, Any]], *, explain: bool = False
    ) -> list[Placement]:
        """Place ``pending`` pods (in the order given, for equal priorities) until nothing more
        can happen; one :class:`Placement` per pod, in that order. Raises
        :class:`MalformedObjectError` for a pod plugins cannot read."""
        self._explain = explain
        order: list[str] = []
        pods = []
        for index, raw in enumerate(pending):
            try:
                pods.append(self._pod(raw))
            except MalformedObjectError as exc:
                raise MalformedPodError(str(exc), index) from None
        for pod in pods:
            order.append(pod.uid)
            self.clock.now += 1e-6  # arrival in the order given: PrioritySort's tiebreak
            self.placements[pod.uid] = self._admit_pending(pod)
        self._drain({uid: i for i, uid in enumerate(order)})
        for uid in order:  # never popped: a PreEnqueue plugin holds it, say which and why
            placement = self.placements[uid]
            held = self._waiting.get(uid)
            if placement.verdict == GATED and held is not None:
                status = self._pre_enqueue(held)
                if status is not None:
                    placement.message = f"{status.plugin or 'PreEnqueue'}: {status.message}"
        return [self.placements[uid] for uid in order]

    def schedule(self, raw: Mapping[str, Any], *, explain: bool = False) -> Placement:
        """One pod alone, from the current state, through preemption if it preempts."""
        return self.run([raw], explain=explain)[0]

    def _pod(self, raw: Mapping[str, Any]) -> PodInfo:
        return pod_from_json(self.admission.pending(raw))

    def _admit_pending(self, pod: PodInfo) -> Placement:
        profile = self.profiles.get(pod.scheduler_name)
        if profile is None:
            known = ", ".join(sorted(self.profiles))
            return Placement(pod.key, pod.scheduler_name, NO_PROFILE,
                             message=f"no profile has schedulerName {pod.scheduler_name!r} "
                             f"(given: {known}), so no scheduler will take this pod")  # fmt: skip
        engine = profile.engine
        if engine.tenancy is not None and not self.serves(engine.tenancy, pod.namespace):
            who = f"SchedulerProfile {engine.profile!r}" if engine.profile else engine.source
            return Placement(pod.key, pod.scheduler_name, NOT_SERVED, message=(
                f"{who} (schedulerName {pod.scheduler_name!r}) serves only "
                f"{engine.tenancy.description}, not namespace {pod.namespace!r}; this pod will "
                "not be scheduled"))  # fmt: skip
        self._waiting[pod.uid] = pod
        self.nominator.observe(pod)
        profile.queue.add(pod)
        return Placement(pod.key, pod.scheduler_name, GATED, message="not attempted")

    def _drain(self, index: Mapping[str, int]) -> None:
        """Pop from every queue in turn until all are empty or wait for events only; backoff
        is waited out by moving the clock."""
        while True:
            progressed = False
            for queue in self.queues:
                qpi = queue.pop(timeout=0)
                if qpi is None:
                    continue
                progressed = True
                try:
                    self._one(queue, qpi)
                except (TypeError, ValueError, AttributeError, KeyError, IndexError) as exc:
                    what = " ".join(f"{type(exc).__name__}: {exc}".split())
                    raise MalformedPodError(
                        f"Pod {qpi.pod.key}: a field plugins read has the wrong shape ({what})",
                        index.get(qpi.pod.uid, 0),
                    ) from None
            if progressed:
                continue
            self.clock.now += max(q.backoff_duration(_LONGEST) for q in self.queues) + 1.0
            if not any(q.flush_backoff_completed() for q in self.queues):
                return

    def _one(self, queue: SchedulingQueue, qpi: QueuedPodInfo) -> None:
        pod = self._waiting.get(qpi.pod.uid, qpi.pod)
        qpi.pod = pod
        profile = self.profiles[pod.scheduler_name]
        state = CycleState()
        rec = CycleRecording(pod.key, pod.scheduler_name, qpi.attempts) if self._explain else None
        state.recorder = rec
        attempt = _Attempt(queue, qpi, queue.scheduling_cycle, self.placements[pod.uid], rec)
        attempt.placement.attempts = qpi.attempts
        outcome = scheduling_cycle(profile.scheduler, state, pod, self.cache.snapshot(), self.cache)
        if outcome.ok and outcome.result is not None:
            result = outcome.result
            failed = binding_cycle(profile.scheduler, state, pod, result.suggested_host, self.cache)
            if failed is None:
                self._bound(attempt, result.suggested_host, result.evaluated_nodes,
                            result.feasible_nodes)  # fmt: skip
            else:
                self._failed(attempt, failed, None, "")
            return
        assert outcome.status is not None
        fit = outcome.fit_error
        message = fit.message() if fit is not None else outcome.status.message
        if outcome.nominated_node_name is not None:
            attempt.placement.nominated_node = outcome.nominated_node_name or None
            self.nominate(pod, outcome.nominated_node_name)
        qpi.pod = self._waiting.get(pod.uid, pod)
        plugins = frozenset(fit.diagnosis.unschedulable_plugins) if fit is not None else frozenset()
        qpi.pending_plugins = (
            frozenset(fit.diagnosis.pending_plugins) if fit is not None else frozenset()
        )
        rejected = fit is not None or outcome.status.is_rejected
        status = outcome.status if rejected else Status.error(message)
        self._failed(attempt, status, plugins, message)

    def _bound(self, attempt: _Attempt, host: str, evaluated: int, feasible: int) -> None:
        pod, placement, rec = attempt.qpi.pod, attempt.placement, attempt.rec
        attempt.queue.done(pod.uid)
        self._waiting.pop(pod.uid, None)
        self.nominator.forget(pod.uid)
        bound = replace(pod, node_name=host, nominated_node_name="")
        self.cache.add_pod(bound)  # confirms the assumed pod, as the informer's event would
        placement.verdict, placement.node, placement.message = SCHEDULED, host, ""
        placement.evaluated, placement.feasible = evaluated, feasible
        if rec is not None:
            rec.outcome(Code.SUCCESS.label, host, "")
            placement.explanations.append(rec.explanation)
        self._broadcast(events.ASSIGNED_POD_ADD, None, bound)

    def _failed(
        self, attempt: _Attempt, status: Status, plugins: frozenset[str] | None, message: str
    ) -> None:
        """Requeue as the engine's loop does (``plugins`` None: a binding cycle's failure,
        which clears the pod's nomination)."""
        qpi, placement, rec = attempt.qpi, attempt.placement, attempt.rec
        if plugins is None:
            self.nominate(qpi.pod, "")
            qpi.pod = self._waiting.get(qpi.pod.uid, qpi.pod)
            rejector = status.plugin if status.is_rejected else ""
            plugins = frozenset({rejector}) if rejector else frozenset()
            message = status.message
        placement.verdict = UNSCHEDULABLE if status.is_rejected else ERROR
        placement.message = message
        placement.first_failure = placement.first_failure or message
        if rec is not None:
            rec.outcome(status.code.label, None, message)
            placement.explanations.append(rec.explanation)
        if qpi.attempts >= MAX_ATTEMPTS:
            attempt.queue.done(qpi.pod.uid)
            placement.given_up = True  # the message stays the engine's FailedScheduling text
            return
        qpi.unschedulable_plugins = plugins
        attempt.queue.add_unschedulable_if_not_present(qpi, attempt.cycle)


@dataclass(frozen=True)
class _Attempt:
    """One scheduling attempt of a queued pod."""

    queue: SchedulingQueue
    qpi: QueuedPodInfo
    cycle: int
    placement: Placement
    rec: CycleRecording | None


# A queued pod's longest backoff, to know how far the clock must move to end every backoff.
_LONGEST: Final = QueuedPodInfo(pod=PodInfo(uid="", namespace="", name=""), timestamp=0.0,
                                attempts=1_000)  # fmt: skip
