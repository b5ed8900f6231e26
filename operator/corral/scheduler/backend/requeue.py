"""Whether a cluster event may make a rejected pod schedulable (upstream ``isPodWorthRequeuing``)
and the events seen while pods were in flight (upstream ``inFlightEvents``).

- A pod with no rejector (it failed on an error) is retried after its backoff on any event.
- A wildcard event retries every pod after its backoff, unless it names another pod.
- Otherwise only the hints of the pod's rejectors (unschedulable and Pending plugins) that
  registered a matching event are asked. ``QUEUE`` from a Pending plugin means *at once*
  (skipping backoff: the plugin was waiting for exactly this), from an unschedulable plugin
  *after backoff*; ``QUEUE_SKIP`` from every one leaves the pod where it waits.
- With hints off (upstream's old ``SchedulerQueueingHints=false``), every matching
  registration of a rejector counts as ``QUEUE``.
- :func:`narrowed`: when every registration an event matches carries a
  :class:`~corral.scheduler.framework.cluster_events.Narrowing`, a waiting pod none of whose
  keys the event names is left where it waits without asking the hints: each would answer
  ``QUEUE_SKIP`` (the contract of ``Narrowing``). The same outcome, with the hints asked only
  about the few pods an event can concern (a claim's update reaches every pod waiting for one).

:class:`InFlightEvents` keeps, while any pod is in flight, the events the queue received in
order, so a pod that comes back unschedulable is judged against the events that happened during
its own cycle (upstream ``clusterEventsForPod``); events older than every in-flight pod are
dropped.
"""

from __future__ import annotations

import collections
import enum
import itertools
import logging
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass

from corral.scheduler.framework import cluster_events as events
from corral.scheduler.framework.cluster_events import (
    ClusterEvent,
    ClusterEventWithHint,
    Narrowing,
    QueueingHint,
)
from corral.scheduler.framework.types import PodInfo, QueuedPodInfo

log = logging.getLogger(__name__)

Registrations = Mapping[str, Sequence[ClusterEventWithHint]]
# (registrations' id, event, rejectors) → the rejectors' registrations the event matches, the
# plugins in name order. Registrations never change, so the answer is kept: the queue asks the
# same question for every waiting pod on every event (upstream's loop is cheap in Go).
MatchMemo = dict[
    tuple[int, ClusterEvent, frozenset[str]], tuple[tuple[str, ClusterEventWithHint], ...]
]
MEMO_MAX = 4096


class Strategy(enum.IntEnum):
    """Where a waiting pod goes (upstream ``queueingStrategy``), in increasing priority."""

    SKIP = 0
    AFTER_BACKOFF = 1
    IMMEDIATELY = 2


def worth_requeuing(
    qpi: QueuedPodInfo,
    event: ClusterEvent,
    old: object,
    new: object,
    registrations: Registrations,
    *,
    hints: bool = True,
    memo: MatchMemo | None = None,
) -> Strategy:
    rejectors = frozenset(qpi.unschedulable_plugins | qpi.pending_plugins)
    if not rejectors:
        return Strategy.AFTER_BACKOFF
    if event.resource == events.WILDCARD:
        if new is not None and not (isinstance(new, PodInfo) and new.uid == qpi.pod.uid):
            return Strategy.SKIP  # a wildcard meant for one other pod
        return Strategy.AFTER_BACKOFF
    key = (id(registrations), event, rejectors)
    pairs = None if memo is None else memo.get(key)
    if pairs is None:
        pairs = _matching(rejectors, event, registrations)
        if memo is not None:
            if len(memo) >= MEMO_MAX:
                memo.clear()
            memo[key] = pairs
    strategy = Strategy.SKIP
    for plugin, reg in pairs:
        if hints and _hint(plugin, reg, qpi.pod, old, new) is QueueingHint.QUEUE_SKIP:
            continue
        if plugin in qpi.pending_plugins:
            return Strategy.IMMEDIATELY
        if not qpi.pending_plugins:
            return Strategy.AFTER_BACKOFF
        strategy = Strategy.AFTER_BACKOFF  # a Pending plugin may still say IMMEDIATELY
    return strategy


# An event → the narrowings of every registration it matches (None: one has none).
NarrowingMemo = dict[ClusterEvent, tuple[Narrowing, ...] | None]


def narrowed(
    event: ClusterEvent,
    old: object,
    new: object,
    maps: Sequence[Registrations],
    memo: NarrowingMemo,
) -> Narrowed | None:
    """The narrowing of ``event`` over every registration in ``maps`` that it matches (all
    profiles': a pod of any of them may wait), or None when there is none to apply."""
    if event.resource == events.WILDCARD:
        return None
    if event not in memo:
        matched = [
            reg.narrowing
            for registrations in maps
            for regs in registrations.values()
            for reg in regs
            if event.matches(reg.event)
        ]
        if matched and all(n is not None for n in matched):
            memo[event] = tuple({id(n): n for n in matched if n is not None}.values())
        else:
            memo[event] = None
    narrowings = memo[event]
    if narrowings is None:
        return None
    checks = []
    for narrowing in narrowings:
        try:
            keys = narrowing.event_keys(old, new)
        except Exception:  # the hint decides then (an error there means QUEUE)
            return None
        if keys is None:
            return None
        checks.append((narrowing, keys))
    return Narrowed(tuple(checks))


@dataclass(frozen=True, slots=True)
class Narrowed:
    """One event's keys per narrowing."""

    checks: tuple[tuple[Narrowing, frozenset[Hashable]], ...]

    def skips(self, qpi: QueuedPodInfo) -> bool:
        """Whether every hint the event could ask about ``qpi`` answers QUEUE_SKIP: it has
        rejectors (a pod without is retried on any event) and no key the event names. A pod's
        keys are read once per pod object."""
        if not (qpi.unschedulable_plugins or qpi.pending_plugins):
            return False
        for narrowing, keys in self.checks:
            pod_keys = pod_keys_of(narrowing, qpi)
            if pod_keys is None or not keys.isdisjoint(pod_keys):
                return False
        return True


def pod_keys_of(narrowing: Narrowing, qpi: QueuedPodInfo) -> frozenset[Hashable] | None:
    """The waiting pod's keys for ``narrowing``, read once per pod object; None when they
    cannot be read (the pod may be concerned by any event then)."""
    pod = qpi.pod
    known = qpi.narrowing_keys.get(id(narrowing))
    if known is not None and known[0] is pod:
        return known[1]
    try:
        pod_keys = narrowing.pod_keys(pod)
    except Exception:
        return None
    qpi.narrowing_keys[id(narrowing)] = (pod, pod_keys)
    return pod_keys


def _matching(
    rejectors: frozenset[str], event: ClusterEvent, registrations: Registrations
) -> tuple[tuple[str, ClusterEventWithHint], ...]:
    # sorted: the same hints run in the same order each time
    return tuple(
        (plugin, reg)
        for plugin in sorted(rejectors)
        for reg in registrations.get(plugin, ())
        if event.matches(reg.event)
    )


def _hint(
    plugin: str, reg: ClusterEventWithHint, pod: PodInfo, old: object, new: object
) -> QueueingHint:
    if reg.hint is None:
        return QueueingHint.QUEUE
    try:
        return reg.hint(pod, old, new)
    except Exception:  # a broken hint must not strand the pod
        log.exception("queueing hint of %s failed for pod %s; treated as Queue", plugin, pod.key)
        return QueueingHint.QUEUE


@dataclass(frozen=True, slots=True)
class _Seen:
    seq: int
    event: ClusterEvent
    old: object
    new: object


class InFlightEvents:
    """Events received while pods were in flight. Not thread-safe: the queue's lock guards it."""

    def __init__(self) -> None:
        self._seq = itertools.count()
        self._pods: dict[str, int] = {}  # in-flight pod uid -> seq when it was popped
        self._events: collections.deque[_Seen] = collections.deque()

    def popped(self, uid: str) -> None:
        self._pods.setdefault(uid, next(self._seq))

    def __contains__(self, uid: str) -> bool:
        return uid in self._pods

    def record(self, event: ClusterEvent, old: object, new: object) -> None:
        """Keep ``event`` when some pod is in flight (upstream ``addEventIfAnyInFlight``)."""
        if self._pods:
            self._events.append(_Seen(next(self._seq), event, old, new))

    def since_popped(self, uid: str) -> list[tuple[ClusterEvent, object, object]] | None:
        """The events received since ``uid`` was popped; None when it is not in flight."""
        start = self._pods.get(uid)
        if start is None:
            return None
        return [(e.event, e.old, e.new) for e in self._events if e.seq > start]

    def done(self, uid: str) -> None:
        if self._pods.pop(uid, None) is None:
            return
        oldest = min(self._pods.values(), default=None)
        while self._events and (oldest is None or self._events[0].seq < oldest):
            self._events.popleft()

    def __len__(self) -> int:
        return len(self._events)


def in_flight_strategy(
    qpi: QueuedPodInfo,
    seen: Sequence[tuple[ClusterEvent, object, object]] | None,
    registrations: Registrations,
    *,
    hints: bool = True,
) -> Strategy:
    """Upstream ``determineSchedulingHintForInFlightPod``: the best strategy any event seen
    during the pod's cycle earns it; after backoff for a pod without rejectors or unknown
    events."""
    if not (qpi.unschedulable_plugins or qpi.pending_plugins) or seen is None:
        return Strategy.AFTER_BACKOFF
    best = Strategy.SKIP
    for event, old, new in seen:
        strategy = worth_requeuing(qpi, event, old, new, registrations, hints=hints)
        if strategy is Strategy.IMMEDIATELY:
            return strategy
        if strategy is Strategy.AFTER_BACKOFF:
            best = strategy
            if not qpi.pending_plugins:
                return best
    return best
