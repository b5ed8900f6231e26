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
- a pod a Permit plugin makes wait (Coscheduling's gang members) is parked with its node
  assumed, as its binding thread would wait: bound once a plugin allows it, failed (Unreserve,
  requeue) once one rejects it; when nothing else can happen, the first timeout passes on the
  virtual clock. Plugins listing pods by label (Coscheduling's siblings) see every bound pod and
  the pending pods of their own engine, as the engine's handlers keep them;
- scheduler-plugins' PodGroups, ElasticQuotas and NodeResourceTopology objects go into the
  store as their informers bring them (:func:`sp_kind`);
- preemption evicts its victims from the cache (the executor of a real engine deletes them),
  which requeues the preemptor as their deletion events would;
- VolumeBinding's and DynamicResources' writes are stored as the API server, the PV controller
  and a provisioner would leave them (:mod:`.simulated_storage`);
- with ``GenericWorkload`` on, an engine's queue holds a PodGroup's members as one entity and
  runs the engine's own pod-group cycle (:mod:`.podgroup_cycle`) on it; the members it places
  are bound once the cycle is over (in the engine, binding threads wait in Permit meanwhile),
  and the ``PodGroupInitiallyScheduled`` condition it writes is stored as the PodGroup watch
  would show it (a ``PodGroup/Update`` event).

The simulation ends when every queue is empty or waits for events only, or when a whole round
of retries (every backoff waited out) changed nothing: the engine would go on retrying, with
the same result each time (a group that does not fit is retried on backoff, not on events).

:meth:`Simulator.run` places a list of pending pods until nothing more can happen;
:meth:`Simulator.schedule` is one pod alone (the conformance harness's step). Ties are broken by
a seeded RNG, so a simulation is repeatable. An explained attempt (``explain``) records, through
the runtime's own points, what its cycle evaluated (:mod:`~corral.scheduler.framework.explanation`).
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Final

from corral.scheduler.backend.cache import Cache, CacheError
from corral.scheduler.backend.objects import ADDED, QUEUEING_KINDS, WATCHED_KINDS, ObjectStore
from corral.scheduler.backend.pod_labels import PodLabelIndex
from corral.scheduler.backend.queue import SchedulingQueue
from corral.scheduler.backend.records import MalformedObjectError, node_from_json, pod_from_json
from corral.scheduler.config import FieldError, ValidationError
from corral.scheduler.engine.assume import NominationDroppingAssumer
from corral.scheduler.engine.frameworks import (
    EngineConfig,
    build_frameworks,
    defaulted,
    engine_declarations,
    engine_registry,
    load_extenders,
)
from corral.scheduler.engine.nominator import Nominator
from corral.scheduler.engine.podgroup_cycle import PodGroupCycle
from corral.scheduler.engine.simulated_admission import (
    NOTE_EXTENDER_BIND,
    NOTE_TERMINAL,
    TEMPLATE,
    Admission,
    Notes,
    terminal,
)
from corral.scheduler.engine.simulated_storage import SimulatedClaims, SimulatedStorage
from corral.scheduler.extender import sends_node_objects
from corral.scheduler.framework import cluster_events as events
from corral.scheduler.framework import explanation as x
from corral.scheduler.framework import labels, listers
from corral.scheduler.framework.cluster_events import ActionType, ClusterEvent
from corral.scheduler.framework.cycle_state import CycleState
from corral.scheduler.framework.extender import EXTENDER_NAME
from corral.scheduler.framework.podgroup import (
    CONDITION_INITIALLY_SCHEDULED,
    MalformedPodGroupError,
    PodGroupRecord,
    QueuedPodGroupInfo,
    pod_group_from_json,
    with_condition,
)
from corral.scheduler.framework.runtime.recording import CycleRecording
from corral.scheduler.framework.runtime.schedule_one import (
    CycleOutcome,
    binding_cycle,
    scheduling_cycle,
)
from corral.scheduler.framework.runtime.schedule_pod import PodScheduler, ScheduleResult
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
POD_GROUP: Final = "PodGroup"  # scheduling.k8s.io's (GenericWorkload)
SP_GROUP_API: Final = "scheduling.x-k8s.io/"  # scheduler-plugins' PodGroup of the same kind name
SP_ELASTIC_QUOTA: Final = "ElasticQuota"  # scheduler-plugins' (CapacityScheduling reads it)
NRT: Final = "NodeResourceTopology"  # NodeResourceTopologyMatch reads it (cluster-scoped)
NRT_API: Final = "topology.node.k8s.io/"
# scheduler-plugins' kinds: (kind, apiVersion prefix) -> the ObjectStore's kind.
SP_KINDS: Final = {
    (POD_GROUP, SP_GROUP_API): listers.SP_POD_GROUP,
    (SP_ELASTIC_QUOTA, SP_GROUP_API): listers.SP_ELASTIC_QUOTA,
    (NRT, NRT_API): listers.NODE_RESOURCE_TOPOLOGY,
}
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
    pod_group: str = ""  # its PodGroup's key (namespace/name) when the pod-group cycle took it
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
    # GenericWorkload: the engine's pod-group cycle (one per engine, as its loop's).
    cycle: PodGroupCycle | None = None
    # The pods its plugins list by label (Handle.pod_lister): every bound pod, and the pending
    # pods of its engine's profiles, as the engine's handlers keep them.
    labels: PodLabelIndex | None = None


@dataclass
class _Parked:
    """A pod waiting at Permit (its binding cycle waits, in the engine, on a thread of its
    own): bound once a plugin allows it, failed once one rejects it or its timeout passes."""

    profile: _Profile
    state: CycleState
    attempt: _Attempt
    host: str
    evaluated: int
    feasible: int


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
        # One cache for every engine; it tracks PodGroups when any engine has GenericWorkload.
        self.cache = Cache(generic_workload=any(e.config.gates.generic_workload for e in engines))
        self.nominator = Nominator()
        self._assumes = NominationDroppingAssumer(self.cache, self.nominator)
        self.clock = _Clock()
        self.binder = _Binder()
        self.storage = SimulatedStorage(self.objects, self._object_changed)
        self.claims = SimulatedClaims(self.objects, self._object_changed)
        self.rng = random.Random(seed)
        self.profiles: dict[str, _Profile] = {}
        self.placements: dict[str, Placement] = {}
        self._waiting: dict[str, PodInfo] = {}  # uid -> pending pod, while queued
        self._parked: dict[str, _Parked] = {}  # uid -> pod waiting at Permit, in that order
        self._labels: list[PodLabelIndex] = []  # each engine's pod lister
        self._explain = False
        self._recordings: dict[str, CycleRecording] = {}  # uid -> this group cycle's, explained
        self._unadmitted_groups: list[Mapping[str, Any]] = []  # PodGroups given, not yet in
        self.pod_groups: dict[str, Mapping[str, Any]] = {}  # key -> the PodGroup, its status
        # Cluster changes so far (events, nominations): a round of retries that makes none
        # ends the simulation (see the module doc).
        self._changes = 0
        # Node records keep their JSON when an engine's extender is sent whole Nodes.
        self._keep_node_objects = False
        errors: list[FieldError] = []
        for engine in engines:
            errors += self._add_engine(engine)
        if errors:
            raise ValidationError(errors)

    def _add_engine(self, engine: SimulatedEngine) -> list[FieldError]:
        cfg = engine.config.config
        generic_workload = engine.config.gates.generic_workload
        extenders = load_extenders(engine.config)
        for extender in extenders:
            if extender.is_binder():
                # Offline, a binder extender's bind would bind a real pod (or fail on one that
                # does not exist): the simulated binder binds its pods, and the output says so.
                extender.bind_verb = ""
                self.notes.add(NOTE_EXTENDER_BIND)
        self._keep_node_objects = self._keep_node_objects or sends_node_objects(extenders)
        enabled = {n for p in engine.config.profiles for n in p.plugin_names()}
        pod_labels = PodLabelIndex.for_plugins(engine_declarations(), enabled)
        self._labels.append(pod_labels)
        frameworks = build_frameworks(
            engine.config, engine_registry(), self.binder, objects=self.objects,
            pod_lister=pod_labels,
            nominator=self.nominator, preemption_executor=_Preemption(self, engine.tenancy),
            claim_writer=self.claims, object_updater=self.storage, extenders=extenders,
            pod_groups=self.cache if generic_workload else None, activator=self._activate,
        )  # fmt: skip
        pct = defaulted(cfg.percentage_of_nodes_to_score, "percentageOfNodesToScore")
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
            generic_workload=generic_workload,
        )
        loop = _GroupLoop(self, queue) if generic_workload else None
        cycle = PodGroupCycle(loop, _GroupReports(self)) if loop is not None else None
        if cycle is not None:
            cycle.new_state = self._member_state
        errors = []
        for name, fwk in frameworks.items():
            if name in self.profiles:
                other = self.profiles[name].engine.source
                errors.append(FieldError(
                    engine.source, f"schedulerName {name!r} is also given by {other}"
                ))  # fmt: skip
                continue
            scheduler = PodScheduler(fwk, percentage_of_nodes_to_score=pct, rng=self.rng)
            self.profiles[name] = _Profile(scheduler, engine, queue, cycle, pod_labels)
            if loop is not None:
                loop.schedulers[name] = scheduler
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
        stored = sp_kind(raw)
        if stored is not None:
            # scheduler-plugins' CRDs (a PodGroup of theirs is Coscheduling's, not upstream's)
            self.objects.apply(stored, ADDED, self.admission.object(stored, raw))
            return True
        if kind == POD_GROUP:  # admitted once every PriorityClass is in (see run)
            self._unadmitted_groups.append(raw)
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
        node = self.admission.node(raw)
        self.cache.add_node(node_from_json(node, keep_raw=self._keep_node_objects))

    def add_running_pod(self, raw: Mapping[str, Any]) -> bool:
        """A pod bound to a node; False (left out) for a finished one, as the informer."""
        if terminal(raw):
            self.notes.add(NOTE_TERMINAL)
            return False
        pod = pod_from_json(self.admission.pod(raw))
        self.cache.add_pod(pod)
        for index in self._labels:
            index.put(pod)
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
        if waiting is None or waiting.nominated_node_name != node:
            self._changes += 1  # room others' Filters count (or no longer count) on a node
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
        for index in self._labels:
            index.remove(victim.uid)
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
        self._changes += 1
        for queue in self.queues:
            queue.move_all_to_active_or_backoff(event, old, new)

    def _activate(self, uids: Sequence[str]) -> None:
        for uid in uids:
            pod = self._waiting.get(uid)
            if pod is not None:
                self._queue_of(pod).activate(uid)

    def _pre_enqueue(self, pod: PodInfo, gating_plugin: str = "") -> Status | None:
        profile = self.profiles.get(pod.scheduler_name)
        if profile is None:
            return None
        return profile.scheduler.fwk.run_pre_enqueue(pod, gating_plugin)

    def _queue_of(self, pod: PodInfo) -> SchedulingQueue:
        return self.profiles[pod.scheduler_name].queue

    # --- pod groups (GenericWorkload) ---------------------------------------------------------

    def _admit_pod_groups(self) -> None:
        """The PodGroups given since the last run, as the PodGroup watch brings them: into the
        cache, then every queue (whose engine has the gate) takes in their waiting members."""
        given, self._unadmitted_groups = self._unadmitted_groups, []
        for raw in given:
            admitted = self.admission.pod_group(raw)
            try:
                group = pod_group_from_json(admitted)
            except MalformedPodGroupError as exc:
                raise MalformedObjectError(str(exc)) from None
            self.pod_groups[group.key] = admitted
            self.cache.set_pod_group(group)
            for queue in self.queues:
                queue.add_pod_group(group)
            self._broadcast(events.POD_GROUP_ADD, None, admitted)

    def set_pod_group_condition(self, group: PodGroupRecord, condition: dict[str, object]) -> None:
        """The cycle's status write, as the watch then shows it (a no-op write is none)."""
        stamped = {**condition, "lastTransitionTime": _timestamp(self.clock.now)}
        status, changed = with_condition(group.raw, stamped)
        if not changed:
            return
        old = self.pod_groups.get(group.key, group.raw)
        meta = dict(old.get("metadata") or {})
        meta["resourceVersion"] = str(int(str(meta.get("resourceVersion") or 0) or 0) + 1)
        new = {**old, "metadata": meta, "status": status}
        self.pod_groups[group.key] = new
        record = pod_group_from_json(new)
        self.cache.set_pod_group(record)
        for queue in self.queues:
            queue.update_pod_group(record)
        self._broadcast(events.POD_GROUP_UPDATE, old, new)

    def pod_group_condition(self, key: str) -> Mapping[str, Any] | None:
        """The group's ``PodGroupInitiallyScheduled`` condition now (None: none written)."""
        raw = self.pod_groups.get(key)
        if raw is None:
            return None
        return pod_group_from_json(raw).condition(CONDITION_INITIALLY_SCHEDULED)

    def _group(self, profile: _Profile, entity: QueuedPodGroupInfo) -> None:
        """One pod-group cycle (the engine's), then the binding cycles of what it placed."""
        assert profile.cycle is not None
        loop = profile.cycle.loop
        assert isinstance(loop, _GroupLoop)
        self._recordings.clear()
        profile.cycle.run(entity)
        binds, loop.binds = loop.binds, []
        for bind in binds:
            attempt = self._attempt(profile.queue, bind.qpi, bind.cycle)
            pod, host = bind.qpi.pod, bind.result.suggested_host
            failed = binding_cycle(bind.scheduler, bind.state, pod, host, self.cache)
            if failed is None:
                self._bound(attempt, host, bind.result.evaluated_nodes,
                            bind.result.feasible_nodes)  # fmt: skip
            else:
                self._failed(attempt, failed, None, "")

    def _member_state(self, member: QueuedPodInfo) -> CycleState:
        """A member's state in its group's cycle; explained, the first of the cycle records
        (a rerun for preemption evaluates what would be, not what was)."""
        state = CycleState()
        pod = member.pod
        if self._explain and pod.uid not in self._recordings:
            rec = CycleRecording(pod.key, pod.scheduler_name, member.attempts)
            state.recorder = self._recordings[pod.uid] = rec
        return state

    def _attempt(self, queue: SchedulingQueue, qpi: QueuedPodInfo, cycle: int) -> _Attempt:
        """A member's attempt in the group cycle that just ran."""
        qpi.pod = self._waiting.get(qpi.pod.uid, qpi.pod)
        placement = self.placements[qpi.pod.uid]
        placement.attempts = qpi.attempts
        return _Attempt(queue, qpi, cycle, placement, self._recordings.get(qpi.pod.uid))

    # --- placing pods -----------------------------------------------------------------------

    def run(
        self, pending: Sequence[Mapping[str, Any]], *, explain: bool = False
    ) -> list[Placement]:
        """Place ``pending`` pods (in the order given, for equal priorities) until nothing more
        can happen; one :class:`Placement` per pod, in that order. Raises
        :class:`MalformedObjectError` for a pod plugins cannot read."""
        self._explain = explain
        self._admit_pod_groups()
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
        if profile.labels is not None:
            profile.labels.put(pod)
        self.nominator.observe(pod)
        # As the engine's pod handler: a member counts in its group's state before it queues.
        self.cache.add_pod_group_member(pod)
        profile.queue.add(pod)
        if profile.cycle is None:
            return Placement(pod.key, pod.scheduler_name, GATED, message="not attempted")
        self._broadcast(events.UNSCHEDULED_POD_ADD, None, pod)
        return Placement(pod.key, pod.scheduler_name, GATED, message="not attempted",
                         pod_group=pod.pod_group_key)  # fmt: skip

    def _drain(self, index: Mapping[str, int]) -> None:
        """Pop from every queue in turn until all are empty or wait for events only; backoff
        is waited out by moving the clock, until a round of retries changes nothing."""
        round_started: int | None = None
        while True:
            progressed = False
            for queue in self.queues:
                qpi = queue.pop(timeout=0)
                if qpi is None:
                    continue
                progressed = True
                try:
                    if isinstance(qpi, QueuedPodGroupInfo):
                        self._group(self.profiles[qpi.members[0].pod.scheduler_name], qpi)
                    else:
                        self._one(queue, qpi)
                except (TypeError, ValueError, AttributeError, KeyError, IndexError) as exc:
                    what = " ".join(f"{type(exc).__name__}: {exc}".split())
                    raise MalformedPodError(
                        f"Pod {qpi.pod.key}: a field plugins read has the wrong shape ({what})",
                        index.get(qpi.pod.uid, 0),
                    ) from None
            if self._release_parked():
                progressed = True
            if progressed:
                continue
            if self._time_out_parked():
                continue
            if round_started == self._changes:
                return  # the last round of retries changed nothing: the next would not either
            round_started = self._changes
            # Past every backoff: a group's is capped at max * sqrt(its queued members).
            longest = max(q.backoff_duration(_LONGEST) for q in self.queues)
            self.clock.now += longest * math.sqrt(max(1, len(self._waiting))) + 1.0
            if not any(q.flush_backoff_completed() for q in self.queues):
                return

    def _release_parked(self) -> bool:
        """The binding cycles of the parked pods whose wait is over (allowed, or rejected by
        a plugin); whether there were any."""
        done = []
        for uid, parked in self._parked.items():
            fwk = parked.profile.scheduler.fwk
            waiting = fwk.get_waiting_pod(uid)
            if waiting is None or waiting.decided():
                done.append(uid)
        for uid in done:
            self._bind_parked(self._parked.pop(uid))
        return bool(done)

    def _time_out_parked(self) -> bool:
        """Nothing else can happen: the first parked pod's timeout passes (the virtual clock
        moves by what is left of it), and what its Unreserve decided is bound or failed."""
        first: tuple[float, str] | None = None
        for uid, parked in self._parked.items():
            waiting = parked.profile.scheduler.fwk.get_waiting_pod(uid)
            left = waiting.remaining() if waiting is not None else 0.0
            if first is None or left < first[0]:
                first = (left, uid)
        if first is None:
            return False
        left, uid = first
        self.clock.now += left
        parked = self._parked.pop(uid)
        waiting = parked.profile.scheduler.fwk.get_waiting_pod(uid)
        if waiting is not None:
            waiting.time_out()
        self._bind_parked(parked)
        self._release_parked()
        return True

    def _bind_parked(self, parked: _Parked) -> None:
        attempt = parked.attempt
        pod = self._waiting.get(attempt.qpi.pod.uid, attempt.qpi.pod)
        attempt.qpi.pod = pod
        failed = binding_cycle(parked.profile.scheduler, parked.state, pod, parked.host,
                               self.cache)  # fmt: skip
        if failed is None:
            self._bound(attempt, parked.host, parked.evaluated, parked.feasible)
        else:
            self._failed(attempt, failed, None, "")

    def _one(self, queue: SchedulingQueue, qpi: QueuedPodInfo) -> None:
        pod = self._waiting.get(qpi.pod.uid, qpi.pod)
        qpi.pod = pod
        profile = self.profiles[pod.scheduler_name]
        state = CycleState()
        rec = CycleRecording(pod.key, pod.scheduler_name, qpi.attempts) if self._explain else None
        state.recorder = rec
        attempt = _Attempt(queue, qpi, queue.scheduling_cycle, self.placements[pod.uid], rec)
        attempt.placement.attempts = qpi.attempts
        snapshot = self.cache.snapshot()
        outcome = scheduling_cycle(profile.scheduler, state, pod, snapshot, self._assumes)
        if outcome.ok and outcome.result is not None:
            result = outcome.result
            if outcome.waiting:  # Permit: wait, off the loop, for the plugin's verdict
                attempt.placement.message = "waiting at Permit"
                self._parked[pod.uid] = _Parked(
                    profile,
                    state,
                    attempt,
                    result.suggested_host,
                    result.evaluated_nodes,
                    result.feasible_nodes,
                )
                return
            failed = binding_cycle(profile.scheduler, state, pod, result.suggested_host, self.cache)
            if failed is None:
                self._bound(attempt, result.suggested_host, result.evaluated_nodes,
                            result.feasible_nodes)  # fmt: skip
            else:
                self._failed(attempt, failed, None, "")
            return
        self.cycle_failed(attempt, outcome)

    def cycle_failed(self, attempt: _Attempt, outcome: CycleOutcome) -> None:
        """A failed scheduling cycle (a pod's, or a group member's), as the loop's ``fail``:
        the nomination it made or cleared, the rejectors, the requeue."""
        assert outcome.status is not None
        qpi = attempt.qpi
        pod = qpi.pod
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
        for index in self._labels:
            index.put(bound)
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


@dataclass(frozen=True)
class _Bind:
    """A member the pod-group cycle placed, assumed and permitted: bound after the cycle."""

    scheduler: PodScheduler
    state: CycleState
    qpi: QueuedPodInfo
    result: ScheduleResult
    cycle: int


class _GroupLoop:
    """Implements :class:`~.podgroup_cycle.CycleLoop` for one engine: failures go through the
    simulator's requeue; bindings wait until the cycle is over (the engine's binding threads
    wait in Permit until the gang is assumed; here they run after it, one by one)."""

    def __init__(self, simulator: Simulator, queue: SchedulingQueue) -> None:
        self.simulator = simulator
        self.queue = queue
        self.cache = simulator.cache
        self.nominator: Nominator | None = simulator.nominator
        self.schedulers: dict[str, PodScheduler] = {}  # the engine's profiles
        self.binds: list[_Bind] = []

    def fail(self, qpi: QueuedPodInfo, outcome: CycleOutcome, started: float, cycle: int) -> None:
        sim = self.simulator
        sim.cycle_failed(sim._attempt(self.queue, qpi, cycle), outcome)

    def bind(
        self,
        scheduler: PodScheduler,
        state: CycleState,
        qpi: QueuedPodInfo,
        result: ScheduleResult,
        *,
        started: float,
        cycle: int,
    ) -> None:
        self.binds.append(_Bind(scheduler, state, qpi, result, cycle))


class _GroupReports:
    """Implements :class:`~.podgroup_cycle.PodGroupReporter`: the condition is stored (the
    watch's event follows); metrics and the deleting-pod Event have no counterpart offline."""

    def __init__(self, simulator: Simulator) -> None:
        self.simulator = simulator

    def condition(self, group: PodGroupRecord, condition: dict[str, object]) -> None:
        self.simulator.set_pod_group_condition(group, condition)

    def attempt(self, profile: str, result: str, duration: float) -> None:
        pass

    def algorithm(self, duration: float) -> None:
        pass

    def skipped(self, pod: PodInfo) -> None:
        pass


def _timestamp(seconds: float) -> str:
    """A virtual time as an RFC 3339 timestamp (the simulation starts at the epoch)."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(int(seconds)))


def sp_kind(raw: Mapping[str, Any]) -> str | None:
    """The ObjectStore kind of a scheduler-plugins CRD object (PodGroup, ElasticQuota,
    NodeResourceTopology), or None for any other object."""
    kind, api = str(raw.get("kind") or ""), str(raw.get("apiVersion") or "")
    for (name, prefix), stored in SP_KINDS.items():
        if kind == name and api.startswith(prefix):
            return stored
    return None
