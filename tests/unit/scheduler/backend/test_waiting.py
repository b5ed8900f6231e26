"""unschedulablePods' index (``backend/waiting.py``): which waiting pods an event's keys reach,
and the queue with the index against the same queue asking every waiting pod (the outcome of
every event, pod by pod, must be the same)."""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Hashable

import pytest

from corral.scheduler.backend import requeue
from corral.scheduler.backend.queue import SchedulingQueue
from corral.scheduler.backend.waiting import WaitingPods, narrowing_key, rejector_key
from corral.scheduler.framework.cluster_events import (
    ASSIGNED_POD,
    NODE_ADD,
    UNSCHEDULABLE_TIMEOUT,
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    Narrowing,
    QueueingHint,
)
from corral.scheduler.framework.status import Code, Status
from corral.scheduler.framework.types import PodInfo, QueuedPodInfo
from corral.scheduler.plugins.priority_sort import PrioritySort
from corral.testing.builders import pod_info

ASSIGNED_POD_ADD = ClusterEvent(ASSIGNED_POD, ActionType.ADD)


def _label_keys(pod: PodInfo) -> frozenset[Hashable]:
    if pod.labels.get("k") == "unreadable":
        raise ValueError("unreadable keys")
    return frozenset({pod.labels.get("k")})


BY_LABEL = Narrowing(_label_keys, lambda _old, new: None if new == "any" else frozenset({new}))


def _by_label(pod: PodInfo, _old: object, new: object) -> QueueingHint:
    return QueueingHint.QUEUE if pod.labels.get("k") == new else QueueingHint.QUEUE_SKIP


def _by_colour(pod: PodInfo, _old: object, new: object) -> QueueingHint:
    colour = new.labels.get("colour") if isinstance(new, PodInfo) else None
    return QueueingHint.QUEUE if pod.labels.get("colour") == colour else QueueingHint.QUEUE_SKIP


# A: node additions, narrowed by the pod's label k; B: assigned pods of the pod's colour;
# G: gates pods labelled gate=yes, lifted by a node addition.
REGISTRATIONS = {
    "A": (ClusterEventWithHint(NODE_ADD, _by_label, BY_LABEL),),
    "B": (ClusterEventWithHint(ASSIGNED_POD_ADD, _by_colour),),
    "G": (ClusterEventWithHint(NODE_ADD),),
}


def _qpi(name: str, rejectors: tuple[str, ...] = (), **labels: str) -> QueuedPodInfo:
    pod = dataclasses.replace(pod_info(name), labels=labels)
    return QueuedPodInfo(pod=pod, timestamp=0, unschedulable_plugins=frozenset(rejectors))


def _names(pods: list[QueuedPodInfo]) -> list[str]:
    return [q.pod.name for q in pods]


@pytest.mark.parametrize(
    ("keys", "narrowed", "want"),
    [
        pytest.param([rejector_key(REGISTRATIONS, "A")], False, ["error", "a1", "a2", "ab"],
                     id="a rejector's key: the pods it rejected, and the open one"),
        pytest.param([rejector_key(REGISTRATIONS, "B")], False, ["error", "ab"],
                     id="the other rejector"),
        pytest.param([rejector_key({}, "A")], False, ["error"],
                     id="another profile's rejector: only the open pod"),
        pytest.param([narrowing_key(BY_LABEL, "k1")], True, ["error", "a1", "ab", "unreadable"],
                     id="a narrowed key: the pods with it, the open and the unkeyed ones"),
        pytest.param([narrowing_key(BY_LABEL, "k2"), narrowing_key(BY_LABEL, "k1")], True,
                     ["error", "a1", "a2", "ab", "unreadable"],
                     id="several keys: in the order the pods entered"),
        pytest.param([], False, ["error"], id="no key: only the open pod"),
    ],
)  # fmt: skip
def test_candidates(keys: list[Hashable], narrowed: bool, want: list[str]) -> None:
    waiting = WaitingPods([REGISTRATIONS])
    for qpi in (
        _qpi("error", k="k1"),
        _qpi("a1", ("A",), k="k1"),
        _qpi("a2", ("A",), k="k2"),
        _qpi("ab", ("A", "B"), k="k1"),
        _qpi("unreadable", ("C",), k="unreadable"),
    ):
        waiting.put(qpi, REGISTRATIONS)
    assert _names(waiting.candidates(keys, narrowed=narrowed)) == want


def test_a_pod_put_again_is_filed_by_what_changed_and_keeps_its_place() -> None:
    waiting = WaitingPods([REGISTRATIONS])
    first, second = _qpi("first", ("A",), k="k1"), _qpi("second", ("A",), k="k1")
    waiting.put(first, REGISTRATIONS)
    waiting.put(second, REGISTRATIONS)
    first.pod = dataclasses.replace(first.pod, labels={"k": "k2"})
    waiting.put(first, REGISTRATIONS)
    assert _names(waiting.candidates([narrowing_key(BY_LABEL, "k1")], narrowed=True)) == ["second"]
    assert _names(waiting.candidates([narrowing_key(BY_LABEL, "k2")], narrowed=True)) == ["first"]
    first.unschedulable_plugins = frozenset({"B"})
    waiting.put(first, REGISTRATIONS)
    assert _names(waiting.candidates([rejector_key(REGISTRATIONS, "B")], narrowed=False)) == [
        "first"
    ]
    assert _names(list(waiting.values())) == ["first", "second"]
    uid = first.pod.uid
    assert waiting.pop(uid) is first
    assert waiting.candidates([rejector_key(REGISTRATIONS, "B")], narrowed=False) == []
    assert uid not in waiting
    assert len(waiting) == 1
    assert waiting.pop(uid) is None


class _AskEveryone(SchedulingQueue):
    """The queue before the index: every waiting pod is a candidate for every event."""

    def _candidates(
        self, event: ClusterEvent, narrowed: requeue.Narrowed | None
    ) -> list[QueuedPodInfo]:
        return list(self._unschedulable.values())


class _Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _gate(pod: PodInfo, _gating_plugin: str = "") -> Status | None:
    if pod.labels.get("gate") == "yes":
        return Status.of(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "gated").with_plugin("G")
    return None


def _random_pod(rng: random.Random, index: int) -> PodInfo:
    labels = {"k": rng.choice(["k1", "k2", "k3", "unreadable"]), "colour": rng.choice("rgb")}
    if rng.random() < 0.15:
        labels["gate"] = "yes"
    return dataclasses.replace(pod_info(f"p{index}"), labels=labels)


def _step(
    rng: random.Random, queues: list[SchedulingQueue], pods: list[PodInfo], clock: _Clock
) -> list[object]:
    """One random thing happening to every queue alike; what each queue answered."""
    roll = rng.random()
    clock.now += rng.choice([0.0, 0.3, 2.0])
    if roll < 0.2:
        pod = _random_pod(rng, len(pods))
        pods.append(pod)
        for q in queues:
            q.add(pod)
        return [q.where(pod.uid) for q in queues]
    if roll < 0.5:  # a pop that fails: its rejectors, or none (an error)
        rejectors = frozenset(rng.sample(["A", "B"], rng.randint(0, 2)))
        answers: list[object] = []
        for q in queues:
            qpi = q.pop(timeout=0)
            if qpi is not None:
                qpi.unschedulable_plugins = rejectors
                q.add_unschedulable_if_not_present(qpi, q.scheduling_cycle)
            answers.append(None if qpi is None else qpi.pod.name)
        return answers
    if roll < 0.6 and pods:  # a waiting pod updated: new keys, maybe lifted gate
        index = rng.randrange(len(pods))
        old = pods[index]
        labels = {**old.labels, "k": rng.choice(["k1", "k2"])}
        if rng.random() < 0.5:
            labels.pop("gate", None)
        new = dataclasses.replace(old, labels=labels)
        pods[index] = new
        for q in queues:
            q.update(old, new)
        return [q.where(new.uid) for q in queues]
    event: ClusterEvent
    new_obj: object
    if roll < 0.8:
        event, new_obj = NODE_ADD, rng.choice(["k1", "k2", "k3", "any"])
    elif roll < 0.95:
        event, new_obj = ASSIGNED_POD_ADD, _random_pod(rng, -1)
    else:
        event, new_obj = UNSCHEDULABLE_TIMEOUT, None
    return [q.move_all_to_active_or_backoff(event, None, new_obj) for q in queues]


@pytest.mark.parametrize("hints", [True, False], ids=["hints", "hints off"])
@pytest.mark.parametrize("seed", range(8), ids=lambda s: f"seed {s}")
def test_the_index_changes_no_outcome(seed: int, hints: bool) -> None:
    rng = random.Random(seed)
    clock = _Clock()
    queues: list[SchedulingQueue] = [
        cls(
            less=PrioritySort().less,
            pre_enqueue=_gate,
            events_by_plugin=REGISTRATIONS,
            clock=clock,
            queueing_hints=hints,
        )
        for cls in (SchedulingQueue, _AskEveryone)
    ]
    pods: list[PodInfo] = []
    waited = moved = 0
    for _ in range(400):
        indexed, asked = _step(rng, queues, pods, clock)
        assert indexed == asked
        assert [queues[0].where(p.uid) for p in pods] == [queues[1].where(p.uid) for p in pods]
        assert queues[0].pending() == queues[1].pending()
        waited = max(waited, queues[0].pending().unschedulable)
        moved += indexed if isinstance(indexed, int) else 0
    assert waited >= 3  # the walk reached waiting pods
    assert moved >= 5  # and events moved some
