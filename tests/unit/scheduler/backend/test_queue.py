"""Scheduling queue: order, backoff, requeue by event, flush, gates, deletion (fake clock)."""

from __future__ import annotations

import threading

import pytest

from corral.scheduler.backend.queue import SchedulingQueue
from corral.scheduler.framework.cluster_events import NODE, POD, ActionType, ClusterEvent
from corral.scheduler.framework.runtime.framework import Framework
from corral.scheduler.framework.status import Code, Status
from corral.scheduler.framework.types import PodInfo, QueuedPodInfo
from corral.scheduler.plugins.priority_sort import PrioritySort
from corral.scheduler.plugins.registry import default_profile, in_tree_registry
from corral.scheduler.plugins.scheduling_gates import SchedulingGates
from corral.testing.builders import pod_info

NODE_ADD = ClusterEvent(NODE, ActionType.ADD)
POD_DELETE = ClusterEvent(POD, ActionType.DELETE)
EVENTS = {
    "NodeResourcesFit": (
        ClusterEvent(POD, ActionType.DELETE),
        ClusterEvent(NODE, ActionType.ADD | ActionType.UPDATE),
    ),
    "NodeAffinity": (ClusterEvent(NODE, ActionType.ADD | ActionType.UPDATE_NODE_LABEL),),
    "SchedulingGates": SchedulingGates().events_to_register(),
}


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _queue(clock: Clock, **kwargs: float) -> SchedulingQueue:
    return SchedulingQueue(
        less=PrioritySort().less,
        pre_enqueue=lambda pod, _gating_plugin: SchedulingGates().pre_enqueue(pod),
        events_by_plugin=EVENTS,
        clock=clock,
        **kwargs,
    )


def _fail(q: SchedulingQueue, qpi: QueuedPodInfo, *plugins: str) -> None:
    qpi.unschedulable_plugins = frozenset(plugins)
    q.add_unschedulable_if_not_present(qpi, q.scheduling_cycle)


def test_pops_by_priority_then_arrival() -> None:
    clock = Clock()
    q = _queue(clock)
    for name, prio in [("low", 1), ("high", 10), ("low2", 1)]:
        q.add(pod_info(name, priority=prio))
        clock.now += 1
    assert [q.pop(timeout=0).pod.name for _ in range(3)] == ["high", "low", "low2"]  # type: ignore[union-attr]
    assert q.pop(timeout=0) is None


@pytest.mark.parametrize(
    ("attempts", "want"),
    [
        pytest.param(1, 1.0, id="first failure"),
        pytest.param(2, 2.0, id="doubles"),
        pytest.param(4, 8.0, id="doubles again"),
        pytest.param(5, 10.0, id="capped"),
        pytest.param(60, 10.0, id="capped for good"),
    ],
)
def test_backoff_duration(attempts: int, want: float) -> None:
    q = _queue(Clock())
    assert q.backoff_duration(QueuedPodInfo(pod=pod_info(), timestamp=0, attempts=attempts)) == want


def test_error_goes_to_backoff_then_active_after_expiry() -> None:
    clock = Clock()
    q = _queue(clock)
    q.add(pod_info("p"))
    qpi = q.pop(timeout=0)
    assert qpi is not None
    _fail(q, qpi)  # no rejector plugin: an error
    assert q.where(qpi.pod.uid) == "backoff"
    clock.now += 0.9
    assert q.flush_backoff_completed() == 0
    clock.now += 0.2
    assert q.flush_backoff_completed() == 1
    assert q.where(qpi.pod.uid) == "active"


def test_only_a_registered_event_moves_an_unschedulable_pod() -> None:
    clock = Clock()
    q = _queue(clock)
    q.add(pod_info("p"))
    qpi = q.pop(timeout=0)
    assert qpi is not None
    _fail(q, qpi, "NodeAffinity")
    assert q.where(qpi.pod.uid) == "unschedulable"
    assert q.move_all_to_active_or_backoff(POD_DELETE) == 0
    assert q.where(qpi.pod.uid) == "unschedulable"
    clock.now += 5  # backoff (1s) is over: straight to activeQ
    assert q.move_all_to_active_or_backoff(NODE_ADD) == 1
    assert q.where(qpi.pod.uid) == "active"


def test_moved_while_backing_off_goes_to_backoff() -> None:
    clock = Clock()
    q = _queue(clock)
    q.add(pod_info("p"))
    qpi = q.pop(timeout=0)
    assert qpi is not None
    _fail(q, qpi, "NodeResourcesFit")
    q.move_all_to_active_or_backoff(POD_DELETE)
    assert q.where(qpi.pod.uid) == "backoff"


def test_event_during_the_cycle_sends_the_pod_to_backoff() -> None:
    clock = Clock()
    q = _queue(clock)
    q.add(pod_info("p"))
    qpi = q.pop(timeout=0)
    assert qpi is not None
    q.move_all_to_active_or_backoff(NODE_ADD)  # arrives while the pod is in flight
    _fail(q, qpi, "NodeAffinity")
    assert q.where(qpi.pod.uid) == "backoff"


def test_unschedulable_pods_are_flushed_after_five_minutes() -> None:
    clock = Clock()
    q = _queue(clock)
    q.add(pod_info("p"))
    qpi = q.pop(timeout=0)
    assert qpi is not None
    _fail(q, qpi, "NodeAffinity")
    clock.now += 299
    assert q.flush_unschedulable_leftover() == 0
    clock.now += 2
    assert q.flush_unschedulable_leftover() == 1
    assert q.where(qpi.pod.uid) == "active"


def test_gated_pod_waits_until_its_gates_are_removed() -> None:
    clock = Clock()
    q = _queue(clock)
    gated = pod_info("p", gates=["wait"])
    q.add(gated)
    assert q.where(gated.uid) == "gated"
    assert q.pending().gated == 1
    assert q.move_all_to_active_or_backoff(ClusterEvent("*", ActionType.ALL)) == 0
    clock.now += 1000
    assert q.flush_unschedulable_leftover() == 0
    still = pod_info("p", gates=["wait"], labels={"x": "y"})
    q.update(gated, still)
    assert q.where(gated.uid) == "gated"
    q.update(still, pod_info("p"))
    assert q.where(gated.uid) == "active"


@pytest.mark.parametrize(
    ("hints", "where"),
    [
        pytest.param(True, "unschedulable", id="hints: NodeAffinity has no TargetPod hint"),
        pytest.param(False, "active", id="no hints: any spec change retries it"),
    ],
)
def test_update_of_unschedulable_pod(hints: bool, where: str) -> None:
    clock = Clock()
    q = SchedulingQueue(
        less=PrioritySort().less, events_by_plugin=EVENTS, clock=clock, queueing_hints=hints
    )
    old = pod_info("p")
    q.add(old)
    qpi = q.pop(timeout=0)
    assert qpi is not None
    _fail(q, qpi, "NodeAffinity")
    q.update(old, old)  # no real change
    assert q.where(old.uid) == "unschedulable"
    clock.now += 5
    q.update(old, pod_info("p", node_selector={"zone": "a"}))
    assert q.where(old.uid) == where


def test_deleted_or_bound_elsewhere_leaves_the_queue() -> None:
    clock = Clock()
    q = _queue(clock)
    q.add(pod_info("a"))
    q.add(pod_info("b"))
    q.delete(pod_info("a").uid)
    popped = q.pop(timeout=0)
    assert popped is not None
    assert popped.pod.name == "b"
    q.delete(popped.pod.uid)  # deleted while in flight: not requeued
    _fail(q, popped, "NodeAffinity")
    assert q.where(popped.pod.uid) == ""
    assert q.pending().active == q.pending().unschedulable == 0


def test_wired_to_a_framework_the_plugins_events_decide() -> None:
    fwk = Framework(default_profile(), in_tree_registry())
    clock = Clock()
    q = SchedulingQueue(
        less=fwk.less,
        pre_enqueue=fwk.run_pre_enqueue,
        events_by_plugin=fwk.events_by_plugin(),
        clock=clock,
    )
    q.add(pod_info("gated", gates=["g"]))
    assert q.where(pod_info("gated").uid) == "gated"
    q.add(pod_info("p"))
    qpi = q.pop(timeout=0)
    assert qpi is not None
    _fail(q, qpi, "NodeResourcesFit")
    clock.now += 5
    assert (
        q.move_all_to_active_or_backoff(ClusterEvent(NODE, ActionType.UPDATE_NODE_ALLOCATABLE)) == 1
    )
    qpi = q.pop(timeout=0)
    assert qpi is not None
    _fail(q, qpi, "NodeName")
    assert q.move_all_to_active_or_backoff(POD_DELETE) == 0  # NodeName ignores pod deletions


def test_close_wakes_a_blocked_pop() -> None:
    q = _queue(Clock())
    popped: list[object] = []
    worker = threading.Thread(target=lambda: popped.append(q.pop()))
    worker.start()
    q.close()
    worker.join(timeout=30)
    assert popped == [None]


class PreemptionGate:
    """A PreEnqueue plugin that, like async DefaultPreemption, gates pods in ``running``."""

    name = "DefaultPreemption"

    def __init__(self) -> None:
        self.running: set[str] = set()
        self.asked: list[str] = []  # the gating plugin named on each call

    def __call__(self, p: PodInfo, gating_plugin: str = "") -> Status | None:
        self.asked.append(gating_plugin)
        if p.uid in self.running:
            return Status.of(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "waiting").with_plugin(self.name)
        return SchedulingGates().pre_enqueue(p)


def _gated_preemptor(clock: Clock) -> tuple[SchedulingQueue, PreemptionGate, QueuedPodInfo]:
    gate = PreemptionGate()
    events = {**EVENTS, "DefaultPreemption": (POD_DELETE,)}
    q = SchedulingQueue(
        less=PrioritySort().less, pre_enqueue=gate, events_by_plugin=events, clock=clock
    )
    q.add(pod_info("preemptor"))
    qpi = q.pop(timeout=0)
    assert qpi is not None
    gate.running.add(qpi.pod.uid)
    _fail(q, qpi, "NodeResourcesFit")  # PostFilter nominated a node; victims are going
    clock.now += 5  # backoff over
    # A first victim went: worth a retry, but the preemption is still running.
    assert q.move_all_to_active_or_backoff(POD_DELETE) == 0
    assert q.where(qpi.pod.uid) == "gated"
    return q, gate, qpi


@pytest.mark.parametrize(
    ("event", "running", "where"),
    [
        pytest.param(POD_DELETE, False, "active", id="last victim gone: ungated"),
        pytest.param(POD_DELETE, True, "gated", id="still preempting: gated again"),
        pytest.param(NODE_ADD, False, "gated", id="event the gate did not register"),
        # Upstream 1.37: a wildcard re-runs every gated pod's PreEnqueue (none stays stuck).
        pytest.param(ClusterEvent("*", ActionType.ALL), False, "active", id="wildcard: ungated"),
        pytest.param(ClusterEvent("*", ActionType.ALL), True, "gated", id="wildcard: still"),
    ],
)
def test_a_preemption_gate_is_rerun_on_the_events_its_plugin_registered(
    event: ClusterEvent, running: bool, where: str
) -> None:
    clock = Clock()
    q, gate, qpi = _gated_preemptor(clock)
    if not running:
        gate.running.clear()
    q.move_all_to_active_or_backoff(event)
    assert q.where(qpi.pod.uid) == where


def test_a_gated_pod_names_its_gating_plugin_to_pre_enqueue() -> None:
    # Upstream runPreEnqueuePluginsForPod runs the plugin that gated the pod first.
    clock = Clock()
    q, gate, qpi = _gated_preemptor(clock)
    assert gate.asked == ["", ""]  # added; moved by the first victim's deletion
    q.move_all_to_active_or_backoff(POD_DELETE)
    gate.running.clear()
    q.move_all_to_active_or_backoff(POD_DELETE)
    assert gate.asked == ["", "", "DefaultPreemption", "DefaultPreemption"]
    assert q.where(qpi.pod.uid) == "active"
    assert qpi.gating_plugin == ""


def test_scheduling_gates_are_not_lifted_by_pod_deletions() -> None:
    clock = Clock()
    q, _gate, _qpi = _gated_preemptor(clock)
    q.add(pod_info("with-gates", gates=["g"]))
    q.move_all_to_active_or_backoff(POD_DELETE)
    assert q.where(pod_info("with-gates").uid) == "gated"


@pytest.mark.parametrize(
    ("setup", "activated", "where"),
    [
        pytest.param("unschedulable", True, "active", id="from unschedulablePods"),
        pytest.param("backoff", True, "active", id="from backoffQ"),
        pytest.param("gated", False, "gated", id="PreEnqueue still gates"),
        pytest.param("in-flight", False, "in-flight", id="in flight: untouched"),
        pytest.param("active", False, "active", id="already active"),
    ],
)
def test_activate(setup: str, activated: bool, where: str) -> None:
    clock = Clock()
    q = _queue(clock)
    p = pod_info("p", gates=["g"]) if setup == "gated" else pod_info("p")
    q.add(p)
    if setup in ("unschedulable", "backoff", "in-flight"):
        qpi = q.pop(timeout=0)
        assert qpi is not None
        if setup != "in-flight":
            _fail(q, qpi, *(("NodeAffinity",) if setup == "unschedulable" else ()))
    assert q.where(p.uid) == setup
    assert q.activate(p.uid) is activated
    assert q.where(p.uid) == where


def _in_backoff(q: SchedulingQueue, clock: Clock, name: str, *plugins: str, prio: int = 0) -> str:
    """Schedule ``name`` once and fail it so that it lands in backoffQ: with ``plugins`` as
    rejectors (an event arrived during its cycle), or none (an error)."""
    p = pod_info(name, priority=prio)
    q.add(p)
    qpi = q.pop(timeout=0)
    assert qpi is not None
    q.move_all_to_active_or_backoff(NODE_ADD)  # during the cycle: back off, do not park
    _fail(q, qpi, *plugins)
    assert q.where(p.uid) == "backoff"
    clock.now += 0.1
    return p.uid


@pytest.mark.parametrize(
    ("setup", "want"),
    [
        pytest.param(["unschedulable"], "unschedulable", id="unschedulable: popped early"),
        pytest.param(["error"], None, id="error: waits out its backoff"),
        pytest.param(["unschedulable", "active"], "active", id="activeQ first"),
        pytest.param(["error", "unschedulable"], "unschedulable", id="skips the error"),
    ],
)
def test_pop_from_backoff_when_active_is_empty(setup: list[str], want: str | None) -> None:
    clock = Clock()
    q = _queue(clock)
    for what in setup:
        if what == "active":
            q.add(pod_info("active"))
        else:
            _in_backoff(q, clock, what, *(["NodeAffinity"] if what == "unschedulable" else []))
    popped = q.pop(timeout=0)
    assert (popped.pod.name if popped else None) == want


def test_backoff_pops_by_expiry_then_priority() -> None:
    clock = Clock()
    q = _queue(clock)
    first = _in_backoff(q, clock, "first", "NodeAffinity", prio=1)  # fails at 1000.0
    clock.now += 0.4
    _in_backoff(q, clock, "low", "NodeAffinity", prio=1)  # both fail at 1000.5: same expiry
    clock.now -= 0.1
    _in_backoff(q, clock, "high", "NodeAffinity", prio=10)
    assert q.where(first) == "backoff"
    names = [q.pop(timeout=0) for _ in range(3)]
    assert [n.pod.name for n in names if n] == ["first", "high", "low"]


def test_a_blocked_pop_takes_a_pod_entering_backoff() -> None:
    clock = Clock()
    q = _queue(clock)
    q.add(pod_info("p"))
    qpi = q.pop(timeout=0)
    assert qpi is not None
    popped: list[str] = []
    waiter = threading.Thread(target=lambda: popped.append(q.pop(timeout=5).pod.name))  # type: ignore[union-attr]
    waiter.start()
    q.move_all_to_active_or_backoff(NODE_ADD)
    _fail(q, qpi, "NodeAffinity")
    waiter.join(5)
    assert popped == ["p"]


def test_pre_enqueue_runs_when_entering_backoff_not_when_leaving() -> None:
    clock = Clock()
    calls: list[str] = []

    def gate(p: PodInfo, _gating_plugin: str) -> Status | None:
        calls.append(p.name)
        return None

    q = SchedulingQueue(
        less=PrioritySort().less, pre_enqueue=gate, events_by_plugin=EVENTS, clock=clock
    )
    uid = _in_backoff(q, clock, "p", "NodeAffinity")
    assert calls == ["p", "p"]  # added, then entering backoffQ
    clock.now += 5
    assert q.flush_backoff_completed() == 1
    assert q.where(uid) == "active"
    assert calls == ["p", "p"]


def _framework_queue(clock: Clock) -> SchedulingQueue:
    fwk = Framework(default_profile(), in_tree_registry())
    return SchedulingQueue(
        less=fwk.less,
        pre_enqueue=fwk.run_pre_enqueue,
        events_by_plugin=fwk.events_by_plugin(),
        clock=clock,
    )


@pytest.mark.parametrize(
    ("action", "moved"),
    [
        pytest.param(ActionType.ADD, True, id="node added"),
        pytest.param(ActionType.UPDATE_NODE_ALLOCATABLE, True, id="allocatable"),
        pytest.param(ActionType.UPDATE_NODE_TAINT, False, id="taint"),
        pytest.param(ActionType.UPDATE_NODE_LABEL, False, id="label (os/arch reconciled)"),
        pytest.param(ActionType.UPDATE_NODE_CONDITION, False, id="condition (heartbeat)"),
        pytest.param(ActionType.UPDATE_NODE_ANNOTATION, False, id="annotation"),
    ],
)
def test_node_updates_that_move_a_pod_node_resources_fit_rejected(
    action: ActionType, moved: bool
) -> None:
    clock = Clock()
    q = _framework_queue(clock)
    q.add(pod_info("p"))
    qpi = q.pop(timeout=0)
    assert qpi is not None
    _fail(q, qpi, "NodeResourcesFit")
    clock.now += 5
    assert q.move_all_to_active_or_backoff(ClusterEvent(NODE, action)) == int(moved)


def test_an_event_nobody_registered_is_not_a_move_request() -> None:
    """Upstream isEventOfInterest: a pod failing while such an event arrives is parked in
    unschedulablePods, not sent to backoffQ (from where it would be popped again at once)."""
    clock = Clock()
    q = _framework_queue(clock)
    q.add(pod_info("p"))
    qpi = q.pop(timeout=0)
    assert qpi is not None
    q.move_all_to_active_or_backoff(ClusterEvent(NODE, ActionType.UPDATE_NODE_ANNOTATION))
    _fail(q, qpi, "NodeResourcesFit")
    assert q.where(qpi.pod.uid) == "unschedulable"
    assert q.pop(timeout=0) is None
