"""Queueing hints in the queue: which rejectors are asked, Queue vs QueueSkip, Pending plugins
(at once) vs unschedulable ones (after backoff), broken hints, and the in-flight events replay
(after upstream's TestPriorityQueue_isPodWorthRequeuing and
TestPriorityQueue_AddUnschedulableIfNotPresent_Backoff tables)."""

from __future__ import annotations

import dataclasses
from collections.abc import Hashable

import pytest

from corral.scheduler.backend import requeue
from corral.scheduler.backend.queue import SchedulingQueue
from corral.scheduler.backend.requeue import MatchMemo, Strategy, worth_requeuing
from corral.scheduler.framework.cluster_events import (
    ASSIGNED_POD,
    NODE,
    NODE_ADD,
    POD,
    UNSCHEDULABLE_TIMEOUT,
    WILDCARD,
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    Narrowing,
    QueueingHint,
    QueueingHintFn,
)
from corral.scheduler.framework.types import PodInfo, QueuedPodInfo
from corral.scheduler.plugins.priority_sort import PrioritySort
from corral.testing.builders import pod_info


def _queue_hint(_pod: PodInfo, _old: object, _new: object) -> QueueingHint:
    return QueueingHint.QUEUE


def _skip_hint(_pod: PodInfo, _old: object, _new: object) -> QueueingHint:
    return QueueingHint.QUEUE_SKIP


def _broken_hint(_pod: PodInfo, _old: object, _new: object) -> QueueingHint:
    raise ValueError("boom")


def _regs(**hints: QueueingHintFn | None) -> dict[str, tuple[ClusterEventWithHint, ...]]:
    """Each plugin registers Node/Add with the given hint."""
    return {name: (ClusterEventWithHint(NODE_ADD, fn),) for name, fn in hints.items()}


def _qpi(unschedulable: tuple[str, ...] = (), pending: tuple[str, ...] = ()) -> QueuedPodInfo:
    return QueuedPodInfo(
        pod=pod_info("p"),
        timestamp=0,
        unschedulable_plugins=frozenset(unschedulable),
        pending_plugins=frozenset(pending),
    )


@pytest.mark.parametrize(
    ("qpi", "event", "regs", "want"),
    [
        pytest.param(
            _qpi(), NODE_ADD, _regs(A=_skip_hint), Strategy.AFTER_BACKOFF, id="no rejector"
        ),
        pytest.param(
            _qpi(("A",)), NODE_ADD, _regs(A=_queue_hint), Strategy.AFTER_BACKOFF, id="Queue"
        ),
        pytest.param(_qpi(("A",)), NODE_ADD, _regs(A=_skip_hint), Strategy.SKIP, id="QueueSkip"),
        pytest.param(
            _qpi(("A",)), NODE_ADD, _regs(A=None), Strategy.AFTER_BACKOFF, id="no hint: Queue"
        ),
        pytest.param(
            _qpi(("A",)),
            NODE_ADD,
            _regs(A=_broken_hint),
            Strategy.AFTER_BACKOFF,
            id="hint error: Queue",
        ),
        pytest.param(
            _qpi(("A",)),
            NODE_ADD,
            _regs(A=_skip_hint, B=_queue_hint),
            Strategy.SKIP,
            id="only the pod's rejectors are asked",
        ),
        pytest.param(
            _qpi(("A",)),
            ClusterEvent(ASSIGNED_POD, ActionType.DELETE),
            _regs(A=_queue_hint),
            Strategy.SKIP,
            id="event the rejector did not register",
        ),
        pytest.param(
            _qpi(("A",), ("B",)),
            NODE_ADD,
            _regs(A=_queue_hint, B=_queue_hint),
            Strategy.IMMEDIATELY,
            id="Queue from a Pending plugin: at once",
        ),
        pytest.param(
            _qpi(("A",), ("B",)),
            NODE_ADD,
            _regs(A=_queue_hint, B=_skip_hint),
            Strategy.AFTER_BACKOFF,
            id="Queue from an unschedulable plugin only",
        ),
        pytest.param(
            _qpi(("A",)),
            UNSCHEDULABLE_TIMEOUT,
            _regs(A=_skip_hint),
            Strategy.AFTER_BACKOFF,
            id="wildcard",
        ),
    ],
)
@pytest.mark.parametrize("memo", [False, True], ids=["asked anew", "remembered"])
def test_worth_requeuing(
    qpi: QueuedPodInfo,
    event: ClusterEvent,
    regs: dict[str, tuple[ClusterEventWithHint, ...]],
    want: Strategy,
    memo: bool,
) -> None:
    kept: MatchMemo | None = {} if memo else None
    # Twice: the second answer comes from the memo (the queue's), and must be the same; the
    # hints still run every time (they judge the event's objects).
    for _ in range(2):
        assert worth_requeuing(qpi, event, None, None, regs, memo=kept) is want
    if kept is not None:
        assert len(kept) == (
            0 if not qpi.unschedulable_plugins or event.resource == WILDCARD else 1
        )


@pytest.mark.parametrize(
    ("new", "want"),
    [
        pytest.param(pod_info("p"), Strategy.AFTER_BACKOFF, id="for this pod"),
        pytest.param(pod_info("other"), Strategy.SKIP, id="for another pod"),
        pytest.param(object(), Strategy.SKIP, id="with an object that is not a pod"),
    ],
)
def test_a_wildcard_event_naming_a_pod_moves_only_that_pod(new: object, want: Strategy) -> None:
    event = ClusterEvent(WILDCARD, ActionType.ALL, "ForceActivate")
    assert worth_requeuing(_qpi(("A",)), event, None, new, _regs(A=_queue_hint)) is want


def test_hints_off_every_matching_registration_is_queue() -> None:
    regs = _regs(A=_skip_hint)
    assert worth_requeuing(_qpi(("A",)), NODE_ADD, None, None, regs, hints=False) is (
        Strategy.AFTER_BACKOFF
    )


@pytest.mark.parametrize(
    ("registered", "occurring", "matches"),
    [
        pytest.param(
            ClusterEvent(POD, ActionType.DELETE),
            ClusterEvent(ASSIGNED_POD, ActionType.DELETE),
            True,
            id="Pod covers AssignedPod",
        ),
        pytest.param(
            ClusterEvent(ASSIGNED_POD, ActionType.DELETE),
            ClusterEvent(POD, ActionType.DELETE),
            False,
            id="AssignedPod does not cover Pod",
        ),
        pytest.param(
            ClusterEvent(ASSIGNED_POD, ActionType.UPDATE_POD_LABEL),
            ClusterEvent(ASSIGNED_POD, ActionType.UPDATE),
            False,
            id="a general update reaches only general registrations",
        ),
        pytest.param(
            ClusterEvent(ASSIGNED_POD, ActionType.UPDATE),
            ClusterEvent(ASSIGNED_POD, ActionType.UPDATE_POD_LABEL),
            True,
            id="a general registration covers a specific update",
        ),
        pytest.param(
            ClusterEvent(NODE, ActionType.ADD),
            ClusterEvent(ASSIGNED_POD, ActionType.ADD),
            False,
            id="another resource",
        ),
    ],
)
def test_event_matching(registered: ClusterEvent, occurring: ClusterEvent, matches: bool) -> None:
    assert occurring.matches(registered) is matches


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _in_flight(
    clock: Clock, hint: QueueingHintFn, *, hints: bool = True
) -> tuple[SchedulingQueue, QueuedPodInfo]:
    q = SchedulingQueue(
        less=PrioritySort().less,
        events_by_plugin=_regs(A=hint),
        clock=clock,
        queueing_hints=hints,
    )
    q.add(pod_info("p"))
    qpi = q.pop(timeout=0)
    assert qpi is not None
    return q, qpi


@pytest.mark.parametrize(
    ("hint", "pending", "hints", "where"),
    [
        pytest.param(_queue_hint, False, True, "backoff", id="accepted: after backoff"),
        pytest.param(_queue_hint, True, True, "active", id="accepted by a Pending plugin"),
        pytest.param(_skip_hint, False, True, "unschedulable", id="rejected by its hint"),
        pytest.param(_skip_hint, False, False, "backoff", id="hints off: any event counts"),
    ],
)
def test_events_during_the_cycle_are_replayed(
    hint: QueueingHintFn, pending: bool, hints: bool, where: str
) -> None:
    clock = Clock()
    q, qpi = _in_flight(clock, hint, hints=hints)
    q.move_all_to_active_or_backoff(NODE_ADD, None, object())  # while the pod is in flight
    if pending:
        qpi.pending_plugins = frozenset({"A"})
    else:
        qpi.unschedulable_plugins = frozenset({"A"})
    q.add_unschedulable_if_not_present(qpi, q.scheduling_cycle)
    assert q.where(qpi.pod.uid) == where


def test_events_before_the_pop_are_not_replayed() -> None:
    clock = Clock()
    q = SchedulingQueue(
        less=PrioritySort().less, events_by_plugin=_regs(A=_queue_hint), clock=clock
    )
    q.add(pod_info("first"))
    q.add(pod_info("second"))
    first = q.pop(timeout=0)
    assert first is not None
    q.move_all_to_active_or_backoff(NODE_ADD)  # first is in flight, second is not yet
    second = q.pop(timeout=0)
    assert second is not None
    for qpi in (first, second):
        qpi.unschedulable_plugins = frozenset({"A"})
        q.add_unschedulable_if_not_present(qpi, q.scheduling_cycle)
    assert q.where(first.pod.uid) == "backoff"
    assert q.where(second.pod.uid) == "unschedulable"


def test_hints_see_the_events_objects() -> None:
    seen: list[tuple[object, object]] = []

    def recording(_pod: PodInfo, old: object, new: object) -> QueueingHint:
        seen.append((old, new))
        return QueueingHint.QUEUE_SKIP

    clock = Clock()
    q, qpi = _in_flight(clock, recording)
    qpi.unschedulable_plugins = frozenset({"A"})
    q.add_unschedulable_if_not_present(qpi, q.scheduling_cycle)
    old, new = object(), object()
    assert q.move_all_to_active_or_backoff(NODE_ADD, old, new) == 0
    assert seen == [(old, new)]


def test_registrations_are_per_profile() -> None:
    clock = Clock()
    q = SchedulingQueue(
        less=PrioritySort().less,
        events_by_profile={"a": _regs(A=_queue_hint), "b": _regs(A=_skip_hint)},
        clock=clock,
    )
    pods = [dataclasses.replace(pod_info(name), scheduler_name=name) for name in ("a", "b")]
    for p in pods:
        q.add(p)
        qpi = q.pop(timeout=0)
        assert qpi is not None
        qpi.unschedulable_plugins = frozenset({"A"})
        q.add_unschedulable_if_not_present(qpi, q.scheduling_cycle)
    clock.now += 5
    assert q.move_all_to_active_or_backoff(NODE_ADD) == 1
    assert [q.where(p.uid) for p in pods] == ["active", "unschedulable"]


@pytest.mark.parametrize(
    ("hints", "where"),
    [
        pytest.param(True, "backoff", id="hints: replayed ForceActivate for this pod"),
        pytest.param(False, "backoff", id="no hints: a move request during its cycle"),
    ],
)
def test_activating_a_pod_in_flight_retries_it_when_it_comes_back(hints: bool, where: str) -> None:
    clock = Clock()
    q, qpi = _in_flight(clock, _skip_hint, hints=hints)
    assert not q.activate(qpi.pod.uid)
    qpi.unschedulable_plugins = frozenset({"A"})
    q.add_unschedulable_if_not_present(qpi, q.scheduling_cycle)
    assert q.where(qpi.pod.uid) == where


def _by_key(asked: list[str]) -> QueueingHintFn:
    """Queues a pod whose label ``k`` is the event's new object, noting whom it was asked about."""

    def hint(pod: PodInfo, _old: object, new: object) -> QueueingHint:
        asked.append(pod.name)
        return QueueingHint.QUEUE if pod.labels.get("k") == new else QueueingHint.QUEUE_SKIP

    return hint


def _raising(_old: object, _new: object) -> frozenset[Hashable] | None:
    raise ValueError("boom")


BY_LABEL = Narrowing(
    lambda pod: frozenset({pod.labels.get("k")}),
    lambda _old, new: None if new == "any" else frozenset({new}),
)


@pytest.mark.parametrize(
    ("narrowing", "also", "hints", "new", "want_asked", "want_moved"),
    [
        pytest.param(BY_LABEL, False, True, "k1", ["p1"], ["p1"],
                     id="only the pods with the event's key are asked"),
        pytest.param(None, False, True, "k1", ["p1", "p2"], ["p1"],
                     id="no narrowing: every pod is asked, with the same outcome"),
        pytest.param(BY_LABEL, False, True, "any", ["p1", "p2"], [],
                     id="the event may concern any pod: every pod is asked"),
        pytest.param(BY_LABEL, True, True, "k1", ["p1", "p2"], ["p1"],
                     id="another registration the event matches is not narrowed"),
        pytest.param(Narrowing(BY_LABEL.pod_keys, _raising), False, True, "k1", ["p1", "p2"],
                     ["p1"], id="the event's keys fail: every pod is asked"),
        pytest.param(BY_LABEL, False, False, "k1", [], ["p1", "p2"],
                     id="hints off: every pod moves"),
    ],
)  # fmt: skip
def test_a_narrowed_event_asks_only_about_the_pods_it_names(
    narrowing: Narrowing | None,
    also: bool,
    hints: bool,
    new: str,
    want_asked: list[str],
    want_moved: list[str],
) -> None:
    asked: list[str] = []
    regs = {"A": (ClusterEventWithHint(NODE_ADD, _by_key(asked), narrowing),)}
    if also:
        regs["B"] = (ClusterEventWithHint(NODE_ADD, _skip_hint),)
    clock = Clock()
    q = SchedulingQueue(
        less=PrioritySort().less, events_by_plugin=regs, clock=clock, queueing_hints=hints
    )
    pods = {
        "p1": dataclasses.replace(pod_info("p1"), labels={"k": "k1"}),
        "p2": dataclasses.replace(pod_info("p2"), labels={"k": "k2"}),
    }
    for p in pods.values():
        q.add(p)
        qpi = q.pop(timeout=0)
        assert qpi is not None
        qpi.unschedulable_plugins = frozenset({"A"})
        q.add_unschedulable_if_not_present(qpi, q.scheduling_cycle)
    asked.clear()
    q.move_all_to_active_or_backoff(NODE_ADD, None, new)
    assert asked == want_asked
    moved = [name for name, p in pods.items() if q.where(p.uid) != "unschedulable"]
    assert moved == want_moved


def test_a_narrowing_reads_each_pod_object_once_and_spares_pods_without_rejectors() -> None:
    regs = {"A": (ClusterEventWithHint(NODE_ADD, _skip_hint, BY_LABEL),)}
    narrowed = requeue.narrowed(NODE_ADD, None, "k1", [regs], {})
    assert narrowed is not None
    assert not narrowed.skips(_qpi())  # failed on an error: retried on any event
    qpi = _qpi(("A",))
    qpi.pod = dataclasses.replace(qpi.pod, labels={"k": "k2"})
    assert narrowed.skips(qpi)
    qpi.pod = dataclasses.replace(qpi.pod, labels={"k": "k1"})  # updated while it waits
    assert not narrowed.skips(qpi)
    assert requeue.narrowed(ClusterEvent(WILDCARD, ActionType.ALL), None, "k1", [regs], {}) is None


def test_an_event_none_of_a_pods_rejectors_registered_leaves_it_without_asking() -> None:
    asked: list[str] = []
    regs = {
        "A": (ClusterEventWithHint(NODE_ADD, _by_key(asked)),),
        "B": (ClusterEventWithHint(ClusterEvent(ASSIGNED_POD, ActionType.ADD), _queue_hint),),
    }
    q = SchedulingQueue(less=PrioritySort().less, events_by_plugin=regs, clock=Clock())
    pods = {
        name: dataclasses.replace(pod_info(name), labels={"k": "k1"}) for name in ("by-a", "by-b")
    }
    for name, p in pods.items():
        q.add(p)
        qpi = q.pop(timeout=0)
        assert qpi is not None
        qpi.unschedulable_plugins = frozenset({name[-1].upper()})
        q.add_unschedulable_if_not_present(qpi, q.scheduling_cycle)
    assert q.move_all_to_active_or_backoff(NODE_ADD, None, "k1") == 1
    assert asked == ["by-a"]
    assert [q.where(p.uid) for p in pods.values()] == ["backoff", "unschedulable"]
