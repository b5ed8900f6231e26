"""The queue's metrics as upstream's: scheduler_queue_incoming_pods_total counts each entry to
a queue by the event that moved the pod; scheduler_unschedulable_pods counts the waiting pods
(not those in flight) by each of their rejector plugins."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from corral.scheduler import metrics as m
from corral.scheduler.backend.queue import SchedulingQueue
from corral.scheduler.backend.records import pod_from_json
from corral.scheduler.framework.cluster_events import NODE, POD, ActionType, ClusterEvent
from corral.scheduler.framework.podgroup import pod_group_from_json
from corral.scheduler.framework.status import Code, Status
from corral.scheduler.framework.types import PodInfo
from corral.scheduler.plugins.priority_sort import PrioritySort
from corral.testing.builders import pod, pod_group, pod_info

EVENTS = {
    "NodeResourcesFit": (ClusterEvent(NODE, ActionType.ADD), ClusterEvent(POD, ActionType.DELETE)),
    "SchedulingGates": (ClusterEvent(POD, ActionType.UPDATE),),
}
PROFILE = "default-scheduler"


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def gates(pod: PodInfo, _gating_plugin: str = "") -> Status | None:
    """PreEnqueue as the framework answers it: SchedulingGates' rejection, with its name."""
    if pod.scheduling_gates:
        return Status.of(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "gated").with_plugin(
            "SchedulingGates"
        )
    return None


Scenario = Callable[[SchedulingQueue, Clock], None]


def fail(q: SchedulingQueue, *plugins: str) -> None:
    qpi = q.pop(timeout=0)
    assert qpi is not None
    qpi.unschedulable_plugins = frozenset(plugins)
    q.add_unschedulable_if_not_present(qpi, q.scheduling_cycle)


def added(q: SchedulingQueue, _: Clock) -> None:
    q.add(pod_info("a"))


def gated(q: SchedulingQueue, _: Clock) -> None:
    q.add(pod_info("g", gates=["wait"]))


def gated_then_asked_again(q: SchedulingQueue, _: Clock) -> None:
    gated(q, _)
    # A wildcard event asks every gated pod's PreEnqueue again; still gated, it enters
    # unschedulablePods again (upstream took it out first).
    q.move_all_to_active_or_backoff(ClusterEvent("*", ActionType.ALL, "Wild"), None, None)


def rejected(q: SchedulingQueue, _: Clock) -> None:
    q.add(pod_info("a"))
    fail(q, "NodeResourcesFit")


def rejected_then_a_node_came(q: SchedulingQueue, clock: Clock) -> None:
    rejected(q, clock)
    clock.now += 100  # past its backoff: straight to activeQ
    q.move_all_to_active_or_backoff(ClusterEvent(NODE, ActionType.ADD), None, None)


def rejected_moved_and_popped(q: SchedulingQueue, clock: Clock) -> None:
    rejected_then_a_node_came(q, clock)
    assert q.pop(timeout=0) is not None


def erred_then_backed_off(q: SchedulingQueue, clock: Clock) -> None:
    q.add(pod_info("a"))
    fail(q)  # no rejector: an error, backoffQ
    clock.now += 100
    q.flush_backoff_completed()


def rejected_and_deleted(q: SchedulingQueue, clock: Clock) -> None:
    rejected(q, clock)
    q.delete("uid-default-a")


def rejected_and_timed_out(q: SchedulingQueue, clock: Clock) -> None:
    rejected(q, clock)
    clock.now += 400
    q.flush_unschedulable_leftover()


@pytest.mark.parametrize(
    ("scenario", "incoming", "unschedulable"),
    [
        pytest.param(added, {("active", "UnscheduledPodAdd"): 1}, {}, id="a new pod"),
        pytest.param(
            gated,
            {("unschedulable", "UnscheduledPodAdd"): 1},
            {("SchedulingGates", PROFILE): 1},
            id="a gated pod waits, counted by its gate",
        ),
        pytest.param(
            gated_then_asked_again,
            {("unschedulable", "UnscheduledPodAdd"): 1, ("unschedulable", "Wild"): 1},
            {("SchedulingGates", PROFILE): 1},
            id="gated again: counted as entering again, still one pod",
        ),
        pytest.param(
            rejected,
            {("active", "UnscheduledPodAdd"): 1, ("unschedulable", "ScheduleAttemptFailure"): 1},
            {("NodeResourcesFit", PROFILE): 1},
            id="a rejected pod",
        ),
        pytest.param(
            rejected_then_a_node_came,
            {
                ("active", "UnscheduledPodAdd"): 1,
                ("unschedulable", "ScheduleAttemptFailure"): 1,
                ("active", "NodeAdd"): 1,
            },
            {("NodeResourcesFit", PROFILE): 1},
            id="moved by an event: still counted until popped",
        ),
        pytest.param(
            rejected_moved_and_popped,
            {
                ("active", "UnscheduledPodAdd"): 1,
                ("unschedulable", "ScheduleAttemptFailure"): 1,
                ("active", "NodeAdd"): 1,
            },
            {},
            id="popped: in flight, no longer counted",
        ),
        pytest.param(
            erred_then_backed_off,
            {
                ("active", "UnscheduledPodAdd"): 1,
                ("backoff", "ScheduleAttemptFailure"): 1,
                ("active", "BackoffComplete"): 1,
            },
            {},
            id="an error backs off, then completes",
        ),
        pytest.param(
            rejected_and_deleted,
            {("active", "UnscheduledPodAdd"): 1, ("unschedulable", "ScheduleAttemptFailure"): 1},
            {},
            id="deleted while waiting",
        ),
        pytest.param(
            rejected_and_timed_out,
            {
                ("active", "UnscheduledPodAdd"): 1,
                ("unschedulable", "ScheduleAttemptFailure"): 1,
                ("active", "UnschedulableTimeout"): 1,
            },
            {("NodeResourcesFit", PROFILE): 1},
            id="flushed after five minutes",
        ),
    ],
)
def test_queue_metrics(
    scenario: Scenario,
    incoming: dict[tuple[str, str], int],
    unschedulable: dict[tuple[str, str], int],
) -> None:
    clock = Clock()
    rec = m.new_recorder()
    q = SchedulingQueue(
        less=PrioritySort().less,
        pre_enqueue=gates,
        events_by_plugin=EVENTS,
        clock=clock,
        metrics=rec,
    )
    scenario(q, clock)
    assert rec.series(m.QUEUE_INCOMING_PODS) == incoming
    assert q.unschedulable_by_plugin() == unschedulable


def test_a_group_counts_its_members_as_pods_and_itself_as_one_entity() -> None:
    """GenericWorkload: each member joining its group's entity requeues the entity, which adds
    its members so far to scheduler_queue_incoming_pods_total (1 + 2 + 3, upstream's
    UnscheduledPodAdd for each) and the group once to scheduler_queue_incoming_entities_total
    (it stays in activeQ); scheduler_queued_entities counts it once."""
    rec = m.new_recorder(generic_workload=True)
    q = SchedulingQueue(less=PrioritySort().less, metrics=rec, generic_workload=True)
    q.add(pod_info("plain"))
    for i in range(3):  # members before their PodGroup: incomplete, not queued yet
        q.add(pod_from_json(pod(f"g-{i}", group="g")))
    q.add_pod_group(pod_group_from_json(pod_group("g", min_count=3)))
    assert rec.series(m.QUEUE_INCOMING_PODS) == {
        ("active", "UnscheduledPodAdd"): 1.0 + 6.0,
    }
    assert rec.series(m.QUEUE_INCOMING_ENTITIES) == {
        ("active", "UnscheduledPodAdd", "pod"): 1.0,
        ("active", "UnscheduledPodAdd", "podgroup"): 1.0,
    }
    entities = q.entities_by_queue()
    assert entities[("active", "pod")] == 1.0
    assert entities[("active", "podgroup")] == 1.0
