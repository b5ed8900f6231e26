"""GangScheduling against upstream's gangscheduling_test.go cases (PreEnqueue, PlacementFeasible,
Permit, queueing hints), over the cache's live pod-group state."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import pytest

from corral.scheduler.backend.cache import Cache
from corral.scheduler.backend.records import pod_from_json
from corral.scheduler.framework.cluster_events import QueueingHint
from corral.scheduler.framework.cycle_state import CycleState
from corral.scheduler.framework.podgroup import PodGroupRecord, pod_group_from_json
from corral.scheduler.framework.status import Code, Status
from corral.scheduler.plugins import gang_scheduling
from corral.testing.builders import JSON, node_record, pod, pod_group, pod_info
from corral.testing.framework import FakeHandle


@dataclass
class _Waiting:
    uid: str
    allowed: list[str] = field(default_factory=list)

    def allow(self, plugin: str) -> None:
        self.allowed.append(plugin)


def _setup(group: JSON | None, members: Sequence[JSON]) -> tuple[FakeHandle, Any]:
    cache = Cache(generic_workload=True)
    cache.add_node(node_record("n1"))
    if group is not None:
        cache.set_pod_group(pod_group_from_json(group))
    for raw in members:
        p = pod_info_from(raw)
        if p.node_name:
            cache.add_pod(p)
        else:
            cache.add_pod_group_member(p)
    handle = FakeHandle(pod_groups=cache)
    return handle, gang_scheduling.new(None, handle)


def pod_info_from(raw: JSON) -> Any:
    return pod_from_json(raw)


WAITING_GROUP = 'waiting for pods\'s pod group "pg" to appear in scheduling queue'
WAITING_MIN = "waiting for minCount pods from a gang to appear in scheduling queue"


@pytest.mark.parametrize(
    ("group", "members", "want"),
    [
        pytest.param(None, [], None, id="pod without a scheduling group"),
        pytest.param(None, [pod("p", group="pg")], WAITING_GROUP, id="PodGroup not observed"),
        pytest.param(pod_group("pg"), [pod("p", group="pg")], None, id="basic policy"),
        pytest.param(
            pod_group("pg", min_count=3),
            [pod("p", group="pg"), pod("q", group="pg")],
            WAITING_MIN,
            id="fewer pods than minCount",
        ),
        pytest.param(
            pod_group("pg", min_count=3),
            [pod("p", group="pg"), pod("q", group="pg"), pod("r", group="pg", node_name="n1")],
            None,
            id="a bound member counts",
        ),
        pytest.param(
            pod_group("pg", min_count=2),
            [pod("p", group="pg"), pod("q", group="pg")],
            None,
            id="minCount reached",
        ),
    ],
)
def test_pre_enqueue(group: JSON | None, members: list[JSON], want: str | None) -> None:
    _, plugin = _setup(group, members)
    target = pod_info("p", group="pg") if members else pod_info("p")
    got = plugin.pre_enqueue(target)
    assert got == (None if want is None else Status.of(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, want))


def test_pre_enqueue_refuses_a_scheduling_group_without_the_gate() -> None:
    plugin = gang_scheduling.new(None, FakeHandle())
    assert plugin.pre_enqueue(pod_info("plain")) is None
    assert plugin.pre_enqueue(pod_info("p", group="pg")) == Status.of(
        Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
        "pod is in a scheduling group: this scheduler runs without the GenericWorkload gate",
    )
    assert plugin.permit(CycleState(), pod_info("p", group="pg"), "n") == (None, 0.0)


def _record(**kwargs: Any) -> PodGroupRecord:
    return pod_group_from_json(pod_group("pg", **kwargs))


@pytest.mark.parametrize(
    ("group", "remaining", "scheduled", "want"),
    [
        pytest.param(
            _record(min_count=3), 1, 1, Status.of(
                Code.UNSCHEDULABLE, "minCount (3) cannot be satisfied: 1 scheduled, 1 remaining"
            ), id="cannot be met",
        ),
        pytest.param(
            _record(min_count=3), 2, 1, Status.of(
                Code.WAIT, "minCount (3) is not yet satisfied: 1 scheduled, 2 remaining"
            ), id="may still be met",
        ),
        pytest.param(_record(min_count=3), 0, 3, None, id="met"),
        pytest.param(
            _record(), 0, 0, Status.of(
                Code.UNSCHEDULABLE, "minCount (1) cannot be satisfied: 0 scheduled, 0 remaining"
            ), id="basic: one pod at least",
        ),
        pytest.param(_record(), 2, 1, None, id="basic: one placed"),
    ],
)  # fmt: skip
def test_placement_feasible(
    group: PodGroupRecord, remaining: int, scheduled: int, want: Status | None
) -> None:
    _, plugin = _setup(None, [])
    assert plugin.placement_feasible(group, remaining, scheduled) == want


def test_permit_waits_for_min_count_then_allows_every_assumed_member() -> None:
    members = [pod(n, group="pg", cpu="1") for n in ("a", "b", "c")]
    handle, plugin = _setup(pod_group("pg", min_count=2), members)
    cache = handle.pod_groups
    assert isinstance(cache, Cache)
    handle.set_snapshot(cache.snapshot())
    a, b = pod_info_from(members[0]), pod_info_from(members[1])
    cache.assume_pod(a, "n1")
    status, timeout = plugin.permit(CycleState(), a, "n1")
    assert status == Status.of(Code.WAIT, "waiting for minCount pods from a gang to be scheduled")
    assert timeout == 300.0
    assert sorted(handle.activated) == ["uid-default-b", "uid-default-c"]
    waiting = _Waiting(a.uid)
    handle.waiting[a.uid] = waiting  # type: ignore[assignment]
    cache.assume_pod(b, "n1")
    assert plugin.permit(CycleState(), b, "n1") == (None, 0.0)
    assert waiting.allowed == ["GangScheduling"]


def _hint(fn_index: int) -> Iterator[Any]:
    _, plugin = _setup(None, [])
    yield plugin.events_to_register()[fn_index].hint


@pytest.mark.parametrize(
    ("index", "old", "new", "want"),
    [
        pytest.param(0, None, pod_info("x", group="pg"), QueueingHint.QUEUE, id="pod of the group"),
        pytest.param(0, None, pod_info("x", group="other"), QueueingHint.QUEUE_SKIP,
                     id="pod of another group"),
        pytest.param(0, None, pod_info("x"), QueueingHint.QUEUE_SKIP, id="pod in no group"),
        pytest.param(1, None, pod_info("x", group="pg", node_name="n1"), QueueingHint.QUEUE,
                     id="bound pod of the group"),
        pytest.param(2, None, pod_group("pg"), QueueingHint.QUEUE, id="its PodGroup added"),
        pytest.param(2, None, pod_group("other"), QueueingHint.QUEUE_SKIP,
                     id="another PodGroup added"),
        pytest.param(3, pod_group("pg", min_count=3), pod_group("pg", min_count=2),
                     QueueingHint.QUEUE, id="minCount went down"),
        pytest.param(3, pod_group("pg", min_count=2), pod_group("pg", min_count=3),
                     QueueingHint.QUEUE_SKIP, id="minCount went up"),
        pytest.param(3, pod_group("pg"), pod_group("pg", min_count=1), QueueingHint.QUEUE_SKIP,
                     id="basic to gang"),
    ],
)  # fmt: skip
def test_queueing_hints(index: int, old: object, new: object, want: QueueingHint) -> None:
    hint = next(_hint(index))
    assert hint(pod_info("p", group="pg"), old, new) is want


def test_registers_upstream_events() -> None:
    _, plugin = _setup(None, [])
    labels = [(r.event.resource, int(r.event.action)) for r in plugin.events_to_register()]
    assert labels == [("UnscheduledPod", 1), ("AssignedPod", 1), ("PodGroup", 1),
                      ("PodGroup", 4092)]  # fmt: skip
