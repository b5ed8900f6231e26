"""The engine loop's ``schedule_one`` (engine/loop.py) with the real default profile, queue and
cache, a fake binder and a fake clock, after upstream's ``schedule_one_test.go``: a pod that fits
is bound and reported once; one that fits nowhere is reported with the FitError message, parked
unschedulable, and retried only when a cluster event its rejecting plugin registered for (and
whose hint accepts) arrives — with ``queueing_hints`` off, by any event it registered — as the
informer's node events reach the queue through ClusterState; a failed Bind forgets the assumed
pod and requeues it, and the room it held is an AssignedPodDelete event for the pods waiting
for it (the rejected pod itself not moved by it); a pod of another scheduler is dropped."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

import pytest
from tests.support.scheduler_fakes import FakePermit

from corral.k8s.informer import EventType
from corral.scheduler.backend.cache import Cache
from corral.scheduler.backend.queue import SchedulingQueue
from corral.scheduler.backend.records import pod_from_json
from corral.scheduler.engine.handlers import ClusterState
from corral.scheduler.engine.loop import Failure, SchedulingLoop, Success
from corral.scheduler.engine.podstatus import REASON_SCHEDULER_ERROR, REASON_UNSCHEDULABLE
from corral.scheduler.framework.cluster_events import NODE, ActionType, ClusterEvent
from corral.scheduler.framework.runtime.framework import Framework
from corral.scheduler.framework.runtime.schedule_pod import PodScheduler
from corral.scheduler.framework.status import Code, Status
from corral.scheduler.framework.types import PodInfo
from corral.scheduler.plugins.registry import default_profile, in_tree_registry
from corral.testing.builders import expr, node, node_record, pod, pod_info, required
from support.engine_rig import Deferred

PROFILE = "default-scheduler"


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@dataclass
class Reported:
    """The loop's Reporter: what it was told, in order."""

    outcomes: list[Success | Failure] = field(default_factory=list)

    def scheduled(self, outcome: Success) -> None:
        self.outcomes.append(outcome)

    def failed(self, outcome: Failure) -> None:
        self.outcomes.append(outcome)


class Binder:
    """Records bindings; ``refuse`` makes Bind fail with that message."""

    def __init__(self, refuse: str = "") -> None:
        self.bound: list[tuple[str, str]] = []
        self.refuse = refuse

    def __call__(self, pod: PodInfo, node_name: str) -> None:
        if self.refuse:
            raise RuntimeError(self.refuse)
        self.bound.append((pod.name, node_name))


class InlinePool:
    """Runs each binding cycle at once on the calling thread (the loop's pool, made
    deterministic)."""

    def submit(self, fn: Callable[..., Any], *args: Any) -> None:
        fn(*args)


@dataclass
class Harness:
    loop: SchedulingLoop
    queue: SchedulingQueue
    cache: Cache
    binder: Binder
    reported: Reported
    clock: Clock

    def cycle(self) -> None:
        """Pop the next pod (the clock past any backoff) and run schedule_one on it."""
        self.clock.now += 60
        self.queue.flush_backoff_completed()
        qpi = self.queue.pop(timeout=0)
        assert qpi is not None, "nothing to schedule"
        self.loop.schedule_one(qpi)


def harness(
    *nodes: dict[str, str], refuse: str = "", hints: bool = True, permit: FakePermit | None = None
) -> Harness:
    binder, reported, clock = Binder(refuse), Reported(), Clock()
    profile, registry = default_profile(), in_tree_registry()
    if permit is not None:
        profile = replace(profile, permit=(permit.name,))
        registry = {**registry, permit.name: lambda _args, _handle: permit}
    fwk = Framework(profile, registry, pod_binder=binder)
    queue = SchedulingQueue(
        less=fwk.less,
        pre_enqueue=fwk.run_pre_enqueue,
        events_by_profile={PROFILE: dict(fwk.events_by_plugin())},
        clock=clock,
        queueing_hints=hints,
    )
    cache = Cache()
    for spec in nodes:
        cache.add_node(node_record(spec.pop("name"), **spec))
    loop = SchedulingLoop(queue, cache, {PROFILE: PodScheduler(fwk)}, reported)
    loop._pool = InlinePool()  # type: ignore[assignment]
    return Harness(loop, queue, cache, binder, reported, clock)


def test_a_pod_that_fits_is_bound_and_reported_once() -> None:
    h = harness({"name": "small", "cpu": "1"}, {"name": "big", "cpu": "8"})
    h.queue.add(pod_info("p", cpu="2"))
    h.cycle()
    assert h.binder.bound == [("p", "big")]
    (success,) = h.reported.outcomes
    assert isinstance(success, Success)
    assert (success.node, success.evaluated_nodes, success.feasible_nodes) == ("big", 2, 1)
    assert h.queue.where(pod_info("p").uid) == ""
    assert h.cache.get_pod(pod_info("p").uid) is not None


def test_an_unschedulable_pod_is_reported_parked_and_retried_when_a_node_fits() -> None:
    h = harness({"name": "small", "cpu": "1"})
    p = pod_info("p", cpu="2")
    h.queue.add(p)
    h.cycle()
    (failure,) = h.reported.outcomes
    assert isinstance(failure, Failure)
    assert failure.reason == REASON_UNSCHEDULABLE
    assert failure.message == (
        "0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available: "
        "1 Preemption is not helpful for scheduling."
    )
    assert h.queue.where(p.uid) == "unschedulable"
    # A node update that frees no cpu: NodeResourcesFit's hint skips it, the pod stays parked.
    small = node_record("small", cpu="1", labels={"relabelled": "yes"})
    h.queue.move_all_to_active_or_backoff(
        ClusterEvent(NODE, ActionType.UPDATE_NODE_LABEL), node_record("small", cpu="1"), small
    )
    assert h.queue.where(p.uid) == "unschedulable"
    # A node that fits arrives: the hint queues the pod, and the next cycle binds it there.
    big = node_record("big", cpu="8")
    h.cache.add_node(big)
    assert h.queue.move_all_to_active_or_backoff(ClusterEvent(NODE, ActionType.ADD), None, big)
    h.cycle()
    assert h.binder.bound == [("p", "big")]
    assert isinstance(h.reported.outcomes[-1], Success)
    assert h.reported.outcomes[-1].attempts == 2


def test_a_failed_bind_forgets_the_pod_and_requeues_it() -> None:
    h = harness({"name": "n", "cpu": "4"}, refuse="connection refused")
    p = pod_info("p", cpu="1")
    h.queue.add(p)
    h.cycle()
    (failure,) = h.reported.outcomes
    assert isinstance(failure, Failure)
    assert failure.reason == REASON_SCHEDULER_ERROR
    assert "connection refused" in failure.message
    assert failure.nominated_node == ""  # a failed binding cycle clears the nomination
    assert h.cache.get_pod(p.uid) is None  # forgotten: the node's cpu is free again
    assert h.queue.where(p.uid) in ("backoff", "unschedulable", "active")
    h.binder.refuse = ""
    h.queue.move_all_to_active_or_backoff(ClusterEvent(NODE, ActionType.ADD), None, None)
    h.cycle()
    assert h.binder.bound == [("p", "n")]


FORGOTTEN = [
    # id, Bind refuses, the Permit plugin rejects the waiting pod, where the failed pod goes
    pytest.param("connection refused", False, "backoff", id="Bind failed (an error)"),
    pytest.param("", True, "unschedulable", id="rejected while waiting at Permit"),
]


@pytest.mark.parametrize(("refuse", "rejected", "failed_to"), FORGOTTEN)
def test_a_forgotten_pod_is_an_assigned_pod_delete(
    refuse: str, rejected: bool, failed_to: str
) -> None:
    """Upstream handleBindingCycleError: "Forget"ing an assumed pod moves the pods its room
    may let in; a rejected pod is not moved by its own event."""
    permit = FakePermit("W", Status(Code.WAIT), timeout=60.0) if rejected else None
    h = harness({"name": "n", "cpu": "4"}, refuse=refuse, permit=permit)
    pool = Deferred()
    h.loop._pool = pool  # type: ignore[assignment]
    a, b = pod_info("a", cpu="3"), pod_info("b", cpu="3")
    h.queue.add(a)
    h.cycle()  # a assumed on n, its binding cycle not run yet
    h.queue.add(b)
    h.cycle()  # b: Insufficient cpu while a holds it
    assert h.queue.where(b.uid) == "unschedulable"
    if rejected:
        waiting = h.loop.schedulers[PROFILE].fwk.get_waiting_pod(a.uid)
        assert waiting is not None
        waiting.reject("W", "not now")
    pool.run()
    assert h.cache.get_pod(a.uid) is None
    assert h.queue.where(b.uid) in ("backoff", "active")
    assert h.queue.where(a.uid) == failed_to


def test_a_pod_of_another_scheduler_is_dropped() -> None:
    h = harness({"name": "n", "cpu": "4"})
    other = pod_info("p", cpu="1")
    other_raw = dict(other.raw)
    other_raw["spec"] = {**other_raw["spec"], "schedulerName": "someone-else"}
    h.queue.add(pod_from_json(other_raw))
    h.cycle()
    assert (h.binder.bound, h.reported.outcomes) == ([], [])
    assert h.queue.where(other.uid) == ""


# A pod NodeAffinity alone rejects: pinned to node "home" by a matchFields term, it wants a
# label "pool=wanted" that node lacks. NodeAffinity registers Node Add and Node label updates.
Event = tuple[EventType, dict[str, Any]]
_LABEL_STILL_WRONG: Event = ("MODIFIED", node("home", labels={"pool": "elsewhere"}))
_OTHER_NODE_ADDED: Event = ("ADDED", node("other", labels={"pool": "wanted"}))
_TAINTED: Event = ("MODIFIED", node("home", taints=[{"key": "k", "effect": "PreferNoSchedule"}]))
_LABEL_WANTED: Event = ("MODIFIED", node("home", labels={"pool": "wanted"}))


@pytest.mark.parametrize(
    ("hints", "event", "where"),
    [
        pytest.param(True, _LABEL_STILL_WRONG, "unschedulable", id="hints: label still wrong"),
        pytest.param(True, _OTHER_NODE_ADDED, "unschedulable", id="hints: other node added"),
        pytest.param(True, _TAINTED, "unschedulable", id="hints: unregistered event"),
        pytest.param(True, _LABEL_WANTED, "backoff", id="hints: wanted label"),
        pytest.param(False, _LABEL_STILL_WRONG, "backoff", id="no hints: label update"),
        pytest.param(False, _OTHER_NODE_ADDED, "backoff", id="no hints: node added"),
        pytest.param(False, _TAINTED, "unschedulable", id="no hints: unregistered event"),
        pytest.param(False, _LABEL_WANTED, "backoff", id="no hints: wanted label"),
    ],
)  # fmt: skip
def test_a_rejected_pod_is_retried_only_by_an_event_its_rejector_accepts(
    hints: bool, event: Event, where: str
) -> None:
    h = harness(hints=hints)
    state = ClusterState(h.cache, h.queue, {PROFILE}, lambda _: True)
    state.on_node("ADDED", node("home"))
    pinned = expr("metadata.name", "In", "home")
    term = {"matchFields": [pinned], "matchExpressions": [expr("pool", "In", "wanted")]}
    state.on_pod("ADDED", pod("picky", cpu="1", affinity=required(term)))
    h.cycle()
    (failure,) = h.reported.outcomes
    assert isinstance(failure, Failure)
    assert failure.message.startswith("0/1 nodes are available: 1 node(s) didn't match Pod's")
    assert h.queue.where(pod_info("picky").uid) == "unschedulable"
    state.on_node(*event)
    assert h.queue.where(pod_info("picky").uid) == where
    if event is not _LABEL_WANTED:
        state.on_node(*_LABEL_WANTED)  # now it fits: queued (or left in backoff)
    h.cycle()
    assert h.binder.bound == [("picky", "home")], h.reported.outcomes[-1]
