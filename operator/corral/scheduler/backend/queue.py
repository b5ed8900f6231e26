"""The scheduling queue: activeQ, backoffQ and unschedulablePods (upstream ``PriorityQueue``).

- activeQ is a heap ordered by the profile's QueueSort ``less``.
- A failed pod waits in backoffQ when no plugin rejected it (an error) or when an event that
  arrived during its cycle is worth it (``requeue``); otherwise in unschedulablePods until an
  event one of its rejectors' queueing hints accepts moves it (to activeQ at once when a
  Pending plugin accepted it; else to backoffQ while it still backs off, else activeQ), or
  until it has waited ``max_in_unschedulable`` (5 minutes) and the periodic flush moves it.
- An update of a waiting pod is judged like any event, as the pod's own (TargetPod) events.
- Backoff: ``initial * 2^(attempts-1)`` capped at ``max_backoff``, counted from the pod's last
  failure (``attempts`` = number of pops).
- Pop from backoffQ (upstream ``SchedulerPopFromBackoffQ``, on by default since 1.33): when
  activeQ is empty, a pod still backing off after an *unschedulable* failure is popped at once,
  earliest expiry first, then in QueueSort order; pods backing off after an *error* wait out
  their backoff. PreEnqueue therefore runs when a pod enters backoffQ (a gated pod waits in
  unschedulablePods instead), not again when it leaves.
- PreEnqueue runs whenever a pod would enter activeQ or backoffQ; a rejected pod is *gated*
  and its gating plugin joins its rejectors: it waits in unschedulablePods until its own
  update, or an event its gating plugin registered for (and that one of its rejectors' hints
  accepts, as for any unschedulable pod), runs PreEnqueue again. SchedulingGates registers
  only the pod's own update; DefaultPreemption registers assigned pods' deletion (a preemptor
  waits for its victims to go).
- Pods deleted, or bound by someone else (the informer calls :meth:`delete`), leave the queue;
  a pod deleted while in flight is not requeued.

This is upstream's 1.37 queue with QueueingHints, without PreQueueingHints (an optimisation
that narrows which pods are asked, not what they answer) and with backoff expiries not aligned
to whole-second windows. ``queueing_hints=False`` is upstream's old queue with the
``SchedulerQueueingHints`` gate off (every event a rejector registered moves the pod; any event
during a pod's cycle sends it to backoffQ), kept to measure what hints save. Registrations are
per profile (``events_by_profile``: each profile's plugins with their own args), or one map for
every pod (``events_by_plugin``). All times come from
the injectable ``clock``; the owner calls :meth:`flush_backoff_completed` every second and
:meth:`flush_unschedulable_leftover` every 30 seconds. One module because the three sub-queues
move pods between each other under one lock; unschedulablePods keeps its own index of which
waiting pods an event can concern (``waiting``), so an event asks only about those.
"""

from __future__ import annotations

import heapq
import itertools
import math
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Final

from corral.scheduler import metrics as m
from corral.scheduler.backend import requeue, waiting
from corral.scheduler.backend.queue_groups import GroupMembers
from corral.scheduler.backend.requeue import Registrations, Strategy
from corral.scheduler.framework import cluster_events as events
from corral.scheduler.framework.cluster_events import ClusterEvent, ClusterEventWithHint
from corral.scheduler.framework.podgroup import (
    PodGroupRecord,
    QueuedPodGroupInfo,
    new_group_entity,
)
from corral.scheduler.framework.status import Status
from corral.scheduler.framework.types import PodInfo, QueuedPodInfo

DEFAULT_POD_MAX_IN_UNSCHEDULABLE_PODS_DURATION: Final = 300.0
# Upstream's event labels of scheduler_queue_incoming_pods_total for the queue's own moves.
POD_ADD: Final = events.label(events.UNSCHEDULED_POD_ADD)
POD_UPDATE: Final = events.label(events.UNSCHEDULED_POD_UPDATE)
SCHEDULE_ATTEMPT_FAILURE: Final = "ScheduleAttemptFailure"
BACKOFF_COMPLETE: Final = "BackoffComplete"
POP_FROM_BACKOFF_Q: Final = "PopFromBackoffQ"
FORCE_ACTIVATE: Final = events.label(events.FORCE_ACTIVATE)
UNSCHEDULABLE_TIMEOUT: Final = events.label(events.UNSCHEDULABLE_TIMEOUT)

Less = Callable[[QueuedPodInfo, QueuedPodInfo], bool]
# PreEnqueue for a pod, given the plugin that gated it last ("" for none): that plugin runs
# first (upstream runPreEnqueuePluginsForPod).
PreEnqueue = Callable[[PodInfo, str], Status | None]


class _ActiveEntry:
    __slots__ = ("less", "live", "qpi")

    def __init__(self, qpi: QueuedPodInfo, less: Less) -> None:
        self.qpi = qpi
        self.less = less
        self.live = True

    def __lt__(self, other: _ActiveEntry) -> bool:
        return self.less(self.qpi, other.qpi)


class _BackoffEntry:
    """A pod in backoffQ. Heap items of a pod that left are skipped (``live`` False)."""

    __slots__ = ("expiry", "less", "live", "qpi")

    def __init__(self, qpi: QueuedPodInfo, expiry: float, less: Less) -> None:
        self.qpi = qpi
        self.expiry = expiry
        self.less = less
        self.live = True

    def __lt__(self, other: _BackoffEntry) -> bool:
        """podBackoffQ order: earliest expiry, then QueueSort."""
        if self.expiry != other.expiry:
            return self.expiry < other.expiry
        return self.less(self.qpi, other.qpi)


@dataclass(frozen=True, slots=True)
class PendingPods:
    """Pods by where they wait (upstream ``scheduler_pending_pods{queue}``): a group's members
    count where its entity is; ``incomplete`` and ``pending`` are members waiting for their
    PodGroup object and for their group's cycle to end. ``entities`` counts what the queues hold
    per (queue, ``pod`` | ``podgroup``) (``scheduler_queued_entities``)."""

    active: int
    backoff: int
    unschedulable: int
    gated: int
    incomplete: int = 0
    pending: int = 0
    entities: tuple[tuple[str, str, int], ...] = ()


class SchedulingQueue:
    def __init__(
        self,
        *,
        less: Less,
        pre_enqueue: PreEnqueue = lambda _pod, _gating_plugin: None,
        events_by_plugin: Mapping[str, Sequence[ClusterEvent | ClusterEventWithHint]] | None = None,
        events_by_profile: Mapping[str, Mapping[str, Sequence[ClusterEvent | ClusterEventWithHint]]]
        | None = None,
        queueing_hints: bool = True,
        initial_backoff: float = 1.0,
        max_backoff: float = 10.0,
        max_in_unschedulable: float = DEFAULT_POD_MAX_IN_UNSCHEDULABLE_PODS_DURATION,
        clock: Callable[[], float] = time.monotonic,
        metrics: m.Recorder | None = None,
        generic_workload: bool = False,
    ) -> None:
        self._less = less
        self._metrics = metrics if metrics is not None else m.new_recorder()
        self._pre_enqueue = pre_enqueue
        self._events = _full(events_by_plugin or {})
        self._by_profile = {n: _full(regs) for n, regs in (events_by_profile or {}).items()}
        self._match_memo: requeue.MatchMemo = {}  # the registrations above never change
        self._narrowing_memo: requeue.NarrowingMemo = {}  # as the match memo
        # (registrations' id, event) → the plugins that registered it; as the match memo
        self._registered_memo: dict[tuple[int, ClusterEvent], frozenset[str]] = {}
        self._interest_memo: dict[ClusterEvent, bool] = {}  # as the match memo
        self.queueing_hints = queueing_hints
        self._seen = requeue.InFlightEvents()
        self._initial_backoff = initial_backoff
        self._max_backoff = max_backoff
        self._max_in_unschedulable = max_in_unschedulable
        self._clock = clock
        self._cond = threading.Condition()
        self._active: list[_ActiveEntry] = []
        self._active_index: dict[str, _ActiveEntry] = {}
        self._backoff: list[tuple[float, int, _BackoffEntry]] = []  # by expiry: the flush
        self._backoff_poppable: list[_BackoffEntry] = []  # podBackoffQ order: early pops
        self._backoff_index: dict[str, _BackoffEntry] = {}
        self._unschedulable = waiting.WaitingPods([self._events, *self._by_profile.values()])
        self._in_flight: dict[str, QueuedPodInfo] = {}
        self._deleted_in_flight: set[str] = set()
        self._seq = itertools.count()
        # GenericWorkload: members of scheduling groups are queued in their group's entity.
        self._groups = GroupMembers() if generic_workload else None
        self.scheduling_cycle = 0
        self._move_request_cycle = -1
        self._closed = False

    # --- backoff ----------------------------------------------------------------------------

    def backoff_duration(self, qpi: QueuedPodInfo) -> float:
        duration = self._initial_backoff
        for _ in range(1, qpi.attempts):
            if duration > self._max_backoff - duration:
                return self._max_backoff
            duration += duration
        return duration

    def group_backoff_duration(self, entity: QueuedPodGroupInfo) -> float:
        """Upstream ``calculateBackoffDuration`` for an entity: by its unschedulable (or, after
        an error, consecutive error) count, capped at max * sqrt(queued members)."""
        count = entity.consecutive_errors or entity.unschedulable_count
        if count == 0 or self._max_backoff == 0:
            return 0.0
        cap = self._max_backoff
        if len(entity.members) > 1:
            cap *= math.sqrt(len(entity.members))
        duration = self._initial_backoff
        for _ in range(1, count):
            if duration > cap - duration:
                return cap
            duration += duration
        return min(duration, cap)

    def backoff_expiry(self, qpi: QueuedPodInfo) -> float:
        if isinstance(qpi, QueuedPodGroupInfo):
            return qpi.timestamp + self.group_backoff_duration(qpi)
        return qpi.timestamp + self.backoff_duration(qpi)

    def _backing_off(self, qpi: QueuedPodInfo, now: float) -> bool:
        return not qpi.gated and self.backoff_expiry(qpi) > now

    # --- placement (lock held) --------------------------------------------------------------

    def _contains(self, uid: str) -> bool:
        return uid in self._active_index or uid in self._backoff_index or uid in self._unschedulable

    def _incoming(self, queue: str, event: str, qpi: QueuedPodInfo) -> None:
        """An entity entered ``queue``: its pods (scheduler_queue_incoming_pods_total, a
        group's members each) and itself (scheduler_queue_incoming_entities_total)."""
        self._metrics.inc(m.QUEUE_INCOMING_PODS, (queue, event), _size(qpi))
        if qpi.queue != queue:
            self._metrics.inc(m.QUEUE_INCOMING_ENTITIES, (queue, event, _kind(qpi)))
            qpi.queue = queue

    def _to_unschedulable(self, qpi: QueuedPodInfo, event: str, *, requeued: bool = False) -> None:
        """File the pod in unschedulablePods (again, under its current keys); only a pod that
        was not there counts as incoming, as upstream's ``addOrUpdate``, or one ``requeued``
        (upstream took it out before asking PreEnqueue again)."""
        if requeued or qpi.pod.uid not in self._unschedulable:
            self._incoming("unschedulable", event, qpi)
        self._unschedulable.put(qpi, self._registrations(qpi))

    def _gate(self, qpi: QueuedPodInfo, event: str, *, requeued: bool = False) -> bool:
        """Run PreEnqueue; a rejected pod is kept gated in unschedulablePods (returns True)."""
        if isinstance(qpi, QueuedPodGroupInfo):
            return self._gate_group(qpi, event, requeued=requeued)
        s = self._pre_enqueue(qpi.pod, qpi.gating_plugin)
        if s is not None and not s.is_success:
            qpi.gated = True
            qpi.gating_plugin = s.plugin
            if s.plugin:
                qpi.unschedulable_plugins |= {s.plugin}
            self._to_unschedulable(qpi, event, requeued=requeued)
            return True
        qpi.gated = False
        qpi.gating_plugin = ""
        return False

    def _gate_group(
        self, entity: QueuedPodGroupInfo, event: str, *, requeued: bool = False
    ) -> bool:
        """Upstream runPreEnqueuePlugins for an entity: every member's PreEnqueue (each member
        keeps its own gating plugin and rejectors); the entity is gated when any member is, by
        the last gated member's plugin."""
        gating = ""
        for member in entity.members:
            s = self._pre_enqueue(member.pod, member.gating_plugin)
            if s is not None and not s.is_success:
                member.gated, member.gating_plugin = True, s.plugin
                if s.plugin:
                    member.unschedulable_plugins |= {s.plugin}
                gating = s.plugin or gating or "PreEnqueue"
            else:
                member.gated, member.gating_plugin = False, ""
        entity.gated, entity.gating_plugin = bool(gating), gating
        if gating:
            self._to_unschedulable(entity, event, requeued=requeued)
            return True
        return False

    def _to_active(
        self, qpi: QueuedPodInfo, event: str, *, pre_enqueue: bool = True, requeued: bool = False
    ) -> bool:
        """Push to activeQ through PreEnqueue (already run for a pod leaving backoffQ), or
        keep the pod gated in unschedulablePods. ``event``: what moved it (the metric's label)."""
        if pre_enqueue and self._gate(qpi, event, requeued=requeued):
            return False
        self._unschedulable.pop(qpi.pod.uid)
        entry = _ActiveEntry(qpi, self._less)
        heapq.heappush(self._active, entry)
        self._active_index[qpi.pod.uid] = entry
        self._incoming("active", event, qpi)
        self._cond.notify()
        return True

    def _to_backoff(self, qpi: QueuedPodInfo, event: str) -> bool:
        """Push to backoffQ through PreEnqueue, or keep the pod gated in unschedulablePods."""
        if self._gate(qpi, event):
            return False
        self._unschedulable.pop(qpi.pod.uid)
        self._incoming("backoff", event, qpi)
        entry = _BackoffEntry(qpi, self.backoff_expiry(qpi), self._less)
        self._backoff_index[qpi.pod.uid] = entry
        heapq.heappush(self._backoff, (entry.expiry, next(self._seq), entry))
        if qpi.unschedulable_plugins or qpi.pending_plugins:  # not an error: may pop early
            heapq.heappush(self._backoff_poppable, entry)
            self._cond.notify()  # a blocked pop may take it
        return True

    def _remove(self, uid: str) -> QueuedPodInfo | None:
        entry = self._active_index.pop(uid, None)
        if entry is not None:
            entry.live = False
            return entry.qpi
        backoff = self._backoff_index.pop(uid, None)
        if backoff is not None:
            backoff.live = False  # its heap items are skipped when reached
            return backoff.qpi
        return self._unschedulable.pop(uid)

    def _move(self, qpi: QueuedPodInfo, now: float, event: str) -> None:
        self._requeue(qpi, Strategy.AFTER_BACKOFF, now, event)

    def _requeue(self, qpi: QueuedPodInfo, strategy: Strategy, now: float, event: str) -> bool:
        """Upstream ``requeueEntityWithQueueingStrategy``: True when the pod left
        unschedulablePods (a skipped or re-gated pod waits there)."""
        if strategy is Strategy.SKIP:
            self._to_unschedulable(qpi, event)
            return False
        if strategy is Strategy.AFTER_BACKOFF and self._backing_off(qpi, now):
            return self._to_backoff(qpi, event)
        # Not taken out first: a pod PreEnqueue gates again stays filed where it was instead of
        # being unfiled and filed again (on every victim's deletion each gated preemptor is
        # asked again). It still counts as entering unschedulablePods, as upstream's does.
        return self._to_active(qpi, event, requeued=True)

    def _registrations(self, qpi: QueuedPodInfo) -> Registrations:
        return self._by_profile.get(qpi.pod.scheduler_name, self._events)

    def _worth(self, qpi: QueuedPodInfo, event: ClusterEvent, old: object, new: object) -> Strategy:
        if isinstance(qpi, QueuedPodGroupInfo):  # upstream isEntityWorthRequeuing: the best
            best = Strategy.SKIP
            for member in qpi.members:
                best = max(best, self._worth(member, event, old, new))
                if best is Strategy.IMMEDIATELY:
                    break
            return best
        regs = self._registrations(qpi)
        return requeue.worth_requeuing(
            qpi, event, old, new, regs, hints=self.queueing_hints, memo=self._match_memo
        )

    # --- informer side ----------------------------------------------------------------------

    def _is_member(self, pod: PodInfo) -> bool:
        return self._groups is not None and bool(pod.scheduling_group)

    def add(self, pod: PodInfo) -> None:
        """A new pending pod."""
        with self._cond:
            if self._contains(pod.uid) or pod.uid in self._in_flight:
                return
            now = self._clock()
            qpi = QueuedPodInfo(pod=pod, timestamp=now, initial_attempt_timestamp=None)
            if self._is_member(pod):
                if self._groups is not None and pod.uid not in self._groups.where:
                    self._add_member(qpi, now, POD_ADD)
                return
            self._to_active(qpi, POD_ADD)

    # --- pod groups (upstream addPodGroupMember and friends) ----------------------------------

    def _entity_uid(self, key: str) -> str:
        return f"podgroup:{key}"

    def _take_entity(self, key: str) -> tuple[QueuedPodGroupInfo, Strategy] | None:
        """Remove the group's entity from whichever queue holds it, with the strategy that
        puts it back there (upstream deleteFromAnyQueue)."""
        uid = self._entity_uid(key)
        strategy = (
            Strategy.IMMEDIATELY if uid in self._active_index
            else Strategy.AFTER_BACKOFF if uid in self._backoff_index
            else Strategy.SKIP
        )  # fmt: skip
        entity = self._remove(uid)
        if not isinstance(entity, QueuedPodGroupInfo):
            return None
        return entity, strategy

    def _add_member(self, qpi: QueuedPodInfo, now: float, event: str) -> None:
        groups = self._groups
        assert groups is not None
        key = qpi.pod.pod_group_key
        record = groups.groups.get(key)
        if record is None:  # its PodGroup is not observed yet
            groups.put_incomplete(qpi)
            return
        groups.where[qpi.pod.uid] = key
        taken = self._take_entity(key)
        if taken is not None:
            entity, strategy = taken
            entity.add_member(qpi)
            self._requeue(entity, strategy, now, event)
            return
        if groups.last_popped == key:  # its group's cycle runs: it joins when that ends
            groups.put_pending(qpi)
            return
        self._to_active(new_group_entity(record, qpi), event)

    def add_pod_group(self, group: PodGroupRecord) -> None:
        """A PodGroup was observed: its incomplete members enter the queue."""
        groups = self._groups
        if groups is None:
            return
        with self._cond:
            groups.groups[group.key] = group
            entity = self._entity(group.key)
            if entity is not None:
                entity.group = group
            now = self._clock()
            for qpi in groups.take_incomplete(group.key):  # each as it is added (upstream)
                self._add_member(qpi, now, POD_ADD)

    def update_pod_group(self, group: PodGroupRecord) -> None:
        groups = self._groups
        if groups is None:
            return
        with self._cond:
            groups.groups[group.key] = group
            entity = self._entity(group.key)
            if entity is not None:  # its place in activeQ stays (upstream does not re-sort)
                entity.group = group

    def delete_pod_group(self, key: str) -> None:
        """Its members go back to incomplete (upstream DeletePodGroup)."""
        groups = self._groups
        if groups is None:
            return
        with self._cond:
            if groups.groups.pop(key, None) is None:
                return
            taken = self._take_entity(key)
            if taken is not None:
                for member in taken[0].members:
                    groups.put_incomplete(member)
                return
            if groups.last_popped == key:
                for member in groups.take_pending(key):
                    groups.put_incomplete(member)

    def _entity(self, key: str) -> QueuedPodGroupInfo | None:
        uid = self._entity_uid(key)
        entry = self._active_index.get(uid)
        found: QueuedPodInfo | None = entry.qpi if entry is not None else None
        if found is None and uid in self._backoff_index:
            found = self._backoff_index[uid].qpi
        if found is None:
            found = self._unschedulable.get(uid)
        return found if isinstance(found, QueuedPodGroupInfo) else None

    def add_attempted_pod_group(self, entity: QueuedPodGroupInfo, result: str) -> None:
        """The group's cycle is over (upstream AddAttemptedPodGroupIfNeeded): the members that
        came back (failed, or arrived meanwhile) are queued again as one entity. ``result`` is
        the cycle's: "success", "unschedulable" or "error"."""
        groups = self._groups
        assert groups is not None
        with self._cond:
            key = entity.key
            groups.last_popped = ""
            back = groups.take_pending(key)
            if not back:
                return
            record = groups.groups.get(key)
            if record is None:  # deleted meanwhile (DeletePodGroup moves them first)
                for member in back:
                    groups.put_incomplete(member)
                return
            tried = {m.pod.uid for m in entity.members}
            again = QueuedPodGroupInfo(
                pod=replace(entity.pod, priority=record.priority),
                timestamp=entity.timestamp,
                initial_attempt_timestamp=entity.initial_attempt_timestamp,
                attempts=entity.attempts,
                group=record,
                unschedulable_count=entity.unschedulable_count,
                consecutive_errors=entity.consecutive_errors,
            )
            for member in back:
                again.add_member(member)
            now = self._clock()
            without_backoff = result == "success"
            if without_backoff:
                again.unschedulable_count = again.consecutive_errors = 0
                preserve = any(m.pod.uid in tried for m in back)
            else:
                if result == "unschedulable":
                    again.unschedulable_count += 1
                    again.consecutive_errors = 0
                else:
                    again.consecutive_errors += 1
                preserve = False
            if not preserve:
                again.timestamp = now
            if not without_backoff and self._backing_off(again, now):
                self._to_backoff(again, SCHEDULE_ATTEMPT_FAILURE)
            else:
                self._to_active(again, SCHEDULE_ATTEMPT_FAILURE)

    def update(self, old: PodInfo, new: PodInfo) -> None:
        """A pending pod changed. Gated pods re-run PreEnqueue; an unschedulable pod whose spec
        or labels changed is retried (its own change may make it schedulable)."""
        with self._cond:
            uid = new.uid
            if uid in self._in_flight:
                self._in_flight[uid].pod = new
                for event in events.pod_changes(old, new, target=True):
                    self._seen.record(event, old, new)  # may make it schedulable if rejected
                return
            if self._is_member(new):
                self._update_member(old, new)
                return
            entry = self._active_index.get(uid)
            if entry is not None:  # re-push: the update may change its place in the order
                self._remove(uid)
                entry.qpi.pod = new
                fresh = _ActiveEntry(entry.qpi, self._less)
                heapq.heappush(self._active, fresh)
                self._active_index[uid] = fresh
                return
            if uid in self._backoff_index:
                self._backoff_index[uid].qpi.pod = new
                return
            qpi = self._unschedulable.get(uid)
            if qpi is None:
                self._to_active(QueuedPodInfo(pod=new, timestamp=self._clock()), POD_ADD)
                return
            qpi.pod = new
            self._unschedulable.put(qpi, self._registrations(qpi))  # filed by its new keys
            now = self._clock()
            if not self.queueing_hints:
                if qpi.gated or _spec_changed(old, new):
                    self._move(qpi, now, POD_UPDATE)
                return
            for event in events.pod_changes(old, new, target=True):
                if self._requeue(qpi, self._worth(qpi, event, old, new), now, events.label(event)):
                    return

    def _update_member(self, old: PodInfo, new: PodInfo) -> None:
        groups = self._groups
        assert groups is not None
        uid, key = new.uid, new.pod_group_key
        found = groups.find(key, uid)
        if found is not None:
            found.pod = new
            return
        entity = self._entity(key)
        member = entity.member(uid) if entity is not None else None
        if entity is None or member is None:
            now = self._clock()
            self._add_member(QueuedPodInfo(pod=new, timestamp=now), now, POD_ADD)
            return
        member.pod = new
        if entity.pod.uid not in self._unschedulable:
            return
        self._unschedulable.put(entity, self._registrations(entity))
        now = self._clock()
        if not self.queueing_hints:
            if entity.gated or _spec_changed(old, new):
                self._move(entity, now, POD_UPDATE)
            return
        for event in events.pod_changes(old, new, target=True):
            strategy = self._worth(entity, event, old, new)
            if self._requeue(entity, strategy, now, events.label(event)):
                return

    def delete(self, uid: str) -> None:
        """The pod was deleted or bound by someone else."""
        with self._cond:
            if uid in self._in_flight:
                self._deleted_in_flight.add(uid)
            key = self._groups.where.pop(uid, None) if self._groups is not None else None
            if key is None:
                self._remove(uid)
                return
            assert self._groups is not None
            if self._groups.drop(key, uid) is not None:
                return
            taken = self._take_entity(key)
            if taken is None:
                return
            entity, strategy = taken
            entity.remove_member(uid)
            if entity.members:
                self._requeue(entity, strategy, self._clock(), POD_UPDATE)

    def move_all_to_active_or_backoff(
        self,
        event: ClusterEvent,
        old: object = None,
        new: object = None,
        *,
        pre_check: Callable[[PodInfo], bool] | None = None,
    ) -> int:
        """A cluster event with its objects (``None`` for the side an add or delete lacks):
        move every unschedulable pod it is worth requeuing. Returns how many pods moved.
        ``pre_check`` (upstream ``PreEnqueueCheck``): only the pods it returns True for move."""
        if not self._of_interest(event):
            return 0  # upstream isEventOfInterest: not even recorded for in-flight pods
        with self._cond:
            now = self._clock()
            moved = 0
            narrowed = (
                requeue.narrowed(
                    event, old, new, [self._events, *self._by_profile.values()],
                    self._narrowing_memo,
                )
                if self.queueing_hints
                else None
            )  # fmt: skip
            for qpi in self._candidates(event, narrowed):
                if pre_check is not None and not pre_check(qpi.pod):
                    continue
                if qpi.gated and not self._ungates(qpi, event):
                    continue
                if narrowed is not None and narrowed.skips(qpi):
                    continue  # every hint asked would skip it
                if self._none_registered(qpi, event):
                    continue  # as worth_requeuing's answer then: no hint to ask, Skip
                strategy = self._worth(qpi, event, old, new)
                if strategy is not Strategy.SKIP:
                    moved += self._requeue(qpi, strategy, now, events.label(event))
            self._seen.record(event, old, new)
            self._move_request_cycle = self.scheduling_cycle
            return moved

    def _candidates(
        self, event: ClusterEvent, narrowed: requeue.Narrowed | None
    ) -> list[QueuedPodInfo]:
        """The waiting pods the per-pod checks may not skip (``waiting``'s contract): those
        the narrowed event names, else those a plugin registered for it rejected."""
        if event.resource == events.WILDCARD:
            return list(self._unschedulable.values())
        if narrowed is not None:
            keys = [
                waiting.narrowing_key(narrowing, key)
                for narrowing, event_keys in narrowed.checks
                for key in event_keys
            ]
        else:
            keys = [
                waiting.rejector_key(registrations, plugin)
                for registrations in (self._events, *self._by_profile.values())
                for plugin in self._registered(registrations, event)
            ]
        return self._unschedulable.candidates(keys, narrowed=narrowed is not None)

    def _registered(self, registrations: Registrations, event: ClusterEvent) -> frozenset[str]:
        """The plugins of ``registrations`` that registered ``event`` (found once per profile
        and event: registrations never change)."""
        key = (id(registrations), event)
        plugins = self._registered_memo.get(key)
        if plugins is None:
            plugins = self._registered_memo[key] = frozenset(
                plugin
                for plugin, regs in registrations.items()
                if any(event.matches(r.event) for r in regs)
            )
        return plugins

    def _none_registered(self, qpi: QueuedPodInfo, event: ClusterEvent) -> bool:
        """Whether ``qpi`` has rejectors and none of them registered ``event``."""
        if not (qpi.unschedulable_plugins or qpi.pending_plugins):
            return False
        if event.resource == events.WILDCARD:
            return False
        plugins = self._registered(self._registrations(qpi), event)
        return qpi.unschedulable_plugins.isdisjoint(plugins) and qpi.pending_plugins.isdisjoint(
            plugins
        )

    def _of_interest(self, event: ClusterEvent) -> bool:
        """Whether any plugin registered for ``event`` (a wildcard event always is)."""
        if event.resource == events.WILDCARD:
            return True
        found = self._interest_memo.get(event)
        if found is None:
            maps = [self._events, *self._by_profile.values()]
            found = any(event.matches(r.event) for m in maps for rs in m.values() for r in rs)
            self._interest_memo[event] = found
        return found

    def _ungates(self, qpi: QueuedPodInfo, event: ClusterEvent) -> bool:
        """A gated pod is reconsidered only for events its gating plugin registered for."""
        if event.resource == events.WILDCARD:
            return self.queueing_hints  # PreEnqueue runs again (upstream 1.37)
        return qpi.gating_plugin in self._registered(self._registrations(qpi), event)

    def activate(self, uid: str) -> bool:
        """Move a waiting pod (backoffQ or unschedulablePods) to activeQ at once, through
        PreEnqueue (upstream ``Activate``). False if it is not waiting there; a pod in flight
        is retried after its backoff if it comes back unschedulable (ForceActivate)."""
        with self._cond:
            if uid in self._in_flight:
                self._seen.record(events.FORCE_ACTIVATE, None, self._in_flight[uid].pod)
                self._move_request_cycle = self.scheduling_cycle
                return False
            key = self._groups.where.get(uid) if self._groups is not None else None
            if key is not None:  # a member activates its whole group
                uid = self._entity_uid(key)
            if uid not in self._backoff_index and uid not in self._unschedulable:
                return False
            qpi = self._remove(uid)
            return qpi is not None and self._to_active(qpi, FORCE_ACTIVATE)

    # --- scheduler side ---------------------------------------------------------------------

    def pop(self, timeout: float | None = None) -> QueuedPodInfo | None:
        """The next pod by QueueSort order, else the first poppable pod of backoffQ; blocks up
        to ``timeout`` (None: forever)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._cond:
            while True:
                while self._active and not self._active[0].live:
                    heapq.heappop(self._active)
                while self._backoff_poppable and not self._backoff_poppable[0].live:
                    heapq.heappop(self._backoff_poppable)
                if self._active or self._backoff_poppable or self._closed:
                    break
                remaining = None if deadline is None else deadline - time.monotonic()
                if remaining is not None and remaining <= 0:
                    return None
                self._cond.wait(timeout=remaining)
            if self._active:
                qpi = heapq.heappop(self._active).qpi
                del self._active_index[qpi.pod.uid]
            elif self._backoff_poppable:
                qpi = heapq.heappop(self._backoff_poppable).qpi
                self._remove(qpi.pod.uid)
                self._incoming("active", POP_FROM_BACKOFF_Q, qpi)
            else:
                return None  # closed
            qpi.attempts += 1
            qpi.queue = ""
            if qpi.initial_attempt_timestamp is None:
                qpi.initial_attempt_timestamp = self._clock()
            self.scheduling_cycle += 1
            if isinstance(qpi, QueuedPodGroupInfo):
                self._pop_group(qpi)
                return qpi
            self._in_flight[qpi.pod.uid] = qpi
            self._seen.popped(qpi.pod.uid)
            return qpi

    def _pop_group(self, entity: QueuedPodGroupInfo) -> None:
        """Every member goes in flight (one already in flight elsewhere is dropped from the
        group, as upstream's unlockedMoveEntityToInFlight); the group is the last popped."""
        assert self._groups is not None
        now = self._clock()
        for member in list(entity.members):
            uid = member.pod.uid
            if uid in self._in_flight:
                entity.remove_member(uid)
                continue
            member.attempts += 1
            if member.initial_attempt_timestamp is None:
                member.initial_attempt_timestamp = now
            self._in_flight[uid] = member
            self._seen.popped(uid)
            self._groups.where.pop(uid, None)
        self._groups.last_popped = entity.key

    def done(self, uid: str) -> None:
        """The pod's cycle is over (bound, or requeued through ``add_unschedulable``)."""
        with self._cond:
            self._in_flight.pop(uid, None)
            self._seen.done(uid)
            self._deleted_in_flight.discard(uid)

    def add_unschedulable_if_not_present(self, qpi: QueuedPodInfo, pod_cycle: int) -> None:
        """Requeue a pod after a failed attempt; ``qpi.unschedulable_plugins`` names the
        rejectors (empty for an error). A group's member goes back to its group (pending while
        the group's cycle runs)."""
        with self._cond:
            uid = qpi.pod.uid
            self._in_flight.pop(uid, None)
            seen = self._seen.since_popped(uid)
            self._seen.done(uid)
            if uid in self._deleted_in_flight:
                self._deleted_in_flight.discard(uid)
                return
            if self._contains(uid):
                return
            now = qpi.timestamp = self._clock()
            if self._is_member(qpi.pod):
                assert self._groups is not None
                if uid not in self._groups.where:
                    self._add_member(qpi, now, SCHEDULE_ATTEMPT_FAILURE)
                return
            if self.queueing_hints:
                regs = self._registrations(qpi)
                strategy = requeue.in_flight_strategy(qpi, seen, regs)
                self._requeue(qpi, strategy, now, SCHEDULE_ATTEMPT_FAILURE)
            elif self._move_request_cycle >= pod_cycle or not (
                qpi.unschedulable_plugins or qpi.pending_plugins
            ):
                self._to_backoff(qpi, SCHEDULE_ATTEMPT_FAILURE)
            else:
                self._to_unschedulable(qpi, SCHEDULE_ATTEMPT_FAILURE)

    def flush_backoff_completed(self) -> int:
        with self._cond:
            now = self._clock()
            moved = 0
            while self._backoff and self._backoff[0][0] <= now:
                _expiry, _seq, entry = heapq.heappop(self._backoff)
                if not entry.live:
                    continue  # removed or popped since
                self._remove(entry.qpi.pod.uid)
                self._to_active(entry.qpi, BACKOFF_COMPLETE, pre_enqueue=False)
                moved += 1
            return moved

    def flush_unschedulable_leftover(self) -> int:
        with self._cond:
            now = self._clock()
            stale = [
                qpi
                for qpi in self._unschedulable.values()
                if not qpi.gated and now - qpi.timestamp > self._max_in_unschedulable
            ]
            for qpi in stale:
                self._move(qpi, now, UNSCHEDULABLE_TIMEOUT)
            if stale:
                self._move_request_cycle = self.scheduling_cycle
            return len(stale)

    def close(self) -> None:
        with self._cond:
            self._closed = True
            self._cond.notify_all()

    def pending(self) -> PendingPods:
        with self._cond:
            waiting = list(self._unschedulable.values())
            queues = (
                ("active", [e.qpi for e in self._active_index.values()]),
                ("backoff", [e.qpi for e in self._backoff_index.values()]),
                ("unschedulable", [q for q in waiting if not q.gated]),
                ("gated", [q for q in waiting if q.gated]),
            )
            pods = {name: sum(_size(q) for q in held) for name, held in queues}
            groups = self._groups
            kinds = ("pod", "podgroup") if groups is not None else ("pod",)
            entities = tuple(
                (name, kind, sum(1 for q in held if _kind(q) == kind))
                for name, held in queues
                for kind in kinds
            )
            return PendingPods(
                active=pods["active"],
                backoff=pods["backoff"],
                unschedulable=pods["unschedulable"],
                gated=pods["gated"],
                incomplete=groups.count(groups.incomplete) if groups is not None else 0,
                pending=groups.count(groups.pending) if groups is not None else 0,
                entities=entities,
            )

    def unschedulable_by_plugin(self) -> dict[tuple[str, ...], float]:
        """scheduler_unschedulable_pods: the waiting pods (not in flight) per (rejector plugin,
        profile), as upstream's gauge counts them (it adds at a failure or gating, subtracts
        at a pop or deletion); counted when scraped, so the hot path pays nothing. A group's
        members count one by one."""
        counts: dict[tuple[str, ...], float] = {}
        with self._cond:
            waiting_pods = [
                *(e.qpi for e in self._active_index.values()),
                *(e.qpi for e in self._backoff_index.values()),
                *self._unschedulable.values(),
            ]
            for entity in waiting_pods:
                members = entity.members if isinstance(entity, QueuedPodGroupInfo) else (entity,)
                for qpi in members:
                    rejectors = qpi.unschedulable_plugins | qpi.pending_plugins
                    for plugin in rejectors:
                        key = (plugin, qpi.pod.scheduler_name)
                        counts[key] = counts.get(key, 0.0) + 1
        return counts

    def pending_by_queue(self) -> dict[tuple[str, ...], float]:
        """scheduler_pending_pods, by queue (with GenericWorkload also a group's members not
        queued yet, ``incomplete``, and back from its cycle, ``pending``)."""
        pending = self.pending()
        out: dict[tuple[str, ...], float] = {
            ("active",): float(pending.active),
            ("backoff",): float(pending.backoff),
            ("unschedulable",): float(pending.unschedulable),
            ("gated",): float(pending.gated),
        }
        if self._groups is not None:
            out[("incomplete",)] = float(pending.incomplete)
            out[("pending",)] = float(pending.pending)
        return out

    def sizes(self) -> dict[str, int]:
        """Entries of every internal structure, lazily deleted heap entries included (for the
        soak's leak watch)."""
        with self._cond:
            return {
                "active_heap": len(self._active),
                "active": len(self._active_index),
                "backoff_heap": len(self._backoff),
                "backoff_poppable": len(self._backoff_poppable),
                "backoff": len(self._backoff_index),
                "unschedulable": len(self._unschedulable),
                "in_flight": len(self._in_flight),
                "deleted_in_flight": len(self._deleted_in_flight),
                "in_flight_events": len(self._seen),
                "memo": len(self._match_memo)
                + len(self._narrowing_memo)
                + len(self._registered_memo),
            }

    def entities_by_queue(self) -> dict[tuple[str, ...], float]:
        """scheduler_queued_entities, by (queue, ``pod`` | ``podgroup``)."""
        return {(queue, kind): float(n) for queue, kind, n in self.pending().entities}

    def where(self, uid: str) -> str:
        """Which queue holds the pod: active, backoff, unschedulable, gated, in-flight,
        incomplete, pending or "" (a group's member: where its group's entity is)."""
        with self._cond:
            key = self._groups.where.get(uid) if self._groups is not None else None
            if key is not None:
                assert self._groups is not None
                if key in self._groups.incomplete and uid in self._groups.incomplete[key]:
                    return "incomplete"
                if key in self._groups.pending and uid in self._groups.pending[key]:
                    return "pending"
                uid = self._entity_uid(key)
            if uid in self._active_index:
                return "active"
            if uid in self._backoff_index:
                return "backoff"
            waiting_pod = self._unschedulable.get(uid)
            if waiting_pod is not None:
                return "gated" if waiting_pod.gated else "unschedulable"
            return "in-flight" if uid in self._in_flight else ""


def _size(qpi: QueuedPodInfo) -> int:
    return len(qpi.members) if isinstance(qpi, QueuedPodGroupInfo) else 1


def _kind(qpi: QueuedPodInfo) -> str:
    return "podgroup" if isinstance(qpi, QueuedPodGroupInfo) else "pod"


def _full(
    regs: Mapping[str, Sequence[ClusterEvent | ClusterEventWithHint]],
) -> dict[str, tuple[ClusterEventWithHint, ...]]:
    return {plugin: tuple(events.with_hint(r) for r in rs) for plugin, rs in regs.items()}


def _strip(raw: Mapping[str, Any]) -> dict[str, Any]:
    meta = {k: v for k, v in (raw.get("metadata") or {}).items() if k not in _VOLATILE_META}
    return {**{k: v for k, v in raw.items() if k != "status"}, "metadata": meta}


_VOLATILE_META: Final = frozenset({"resourceVersion", "generation", "managedFields"})


def _spec_changed(old: PodInfo, new: PodInfo) -> bool:
    """Upstream ``isPodUpdated``: ignores status, resourceVersion and generation."""
    if not old.raw and not new.raw:
        return old is not new
    return _strip(old.raw) != _strip(new.raw)
