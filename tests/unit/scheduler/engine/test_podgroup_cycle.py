"""The pod-group cycle over the default plugins with GenericWorkload: the queue's group entity,
the cycle's outcome per member (binding, upstream's messages), the PodGroup condition, the
metrics' results; no API server (a recording binder and reporters)."""

from __future__ import annotations

import random
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Final

import pytest

from corral.scheduler.backend.cache import Cache
from corral.scheduler.backend.queue import SchedulingQueue
from corral.scheduler.backend.records import pod_from_json
from corral.scheduler.config import FeatureGates
from corral.scheduler.engine.loop import Failure, SchedulingLoop, Success
from corral.scheduler.framework import cluster_events as events
from corral.scheduler.framework.podgroup import (
    PodGroupRecord,
    condition_patch,
    pod_group_from_json,
)
from corral.scheduler.framework.runtime.framework import Framework
from corral.scheduler.framework.runtime.schedule_pod import PodScheduler
from corral.scheduler.framework.types import PodInfo
from corral.scheduler.plugins.registry import default_profile, in_tree_registry
from corral.testing.builders import JSON, node_record, pod, pod_group

GATES = FeatureGates({"GenericWorkload": True})
NO_VICTIMS = "pod group preemption: No preemption victims found for incoming preemptor"


@dataclass
class Reports:
    """The loop's reporter and the pod-group cycle's, recording."""

    scheduled: list[Success] = field(default_factory=list)
    failed: list[Failure] = field(default_factory=list)
    conditions: list[tuple[str, dict[str, object]]] = field(default_factory=list)
    # What the engine's reporter would send for each condition (podgroups.PodGroupReports).
    patches: list[dict[str, Any] | None] = field(default_factory=list)
    attempts: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    # podgroup_cycle.PodGroupReporter
    def condition(self, group: PodGroupRecord, condition: dict[str, object]) -> None:
        self.conditions.append((group.key, condition))
        self.patches.append(condition_patch(group.raw, condition))

    def attempt(self, profile: str, result: str, duration: float) -> None:
        self.attempts.append(result)

    def algorithm(self, duration: float) -> None:
        pass

    def skipped(self, pod: PodInfo) -> None:
        pass


class _LoopReporter:
    def __init__(self, reports: Reports) -> None:
        self.reports = reports

    def scheduled(self, outcome: Success) -> None:
        with self.reports.lock:
            self.reports.scheduled.append(outcome)

    def failed(self, outcome: Failure) -> None:
        with self.reports.lock:
            self.reports.failed.append(outcome)


class Harness:
    def __init__(self, nodes: Sequence[JSON]) -> None:
        self.cache = Cache(generic_workload=True)
        for raw in nodes:
            self.cache.add_node(node_record(raw["metadata"]["name"], cpu=raw["cpu"]))
        self.bound: list[tuple[str, str]] = []
        self.reports = Reports()
        self.queue: SchedulingQueue
        fwk = Framework(
            default_profile(gates=GATES),
            in_tree_registry(),
            pod_binder=self._bind,
            generic_workload=True,
            pod_groups=self.cache,
            activator=lambda uids: [self.queue.activate(u) for u in uids],
        )
        self.scheduler = PodScheduler(fwk, percentage_of_nodes_to_score=100, rng=random.Random(0))
        self.queue = SchedulingQueue(
            less=fwk.less,
            pre_enqueue=fwk.run_pre_enqueue,
            events_by_plugin=fwk.events_by_plugin(),
            generic_workload=True,
        )
        self.loop = SchedulingLoop(
            self.queue,
            self.cache,
            {"default-scheduler": self.scheduler},
            _LoopReporter(self.reports),
            pod_groups=self.reports,
        )
        self.loop._pool = ThreadPoolExecutor(8)

    def _bind(self, pod: PodInfo, node_name: str) -> None:
        self.bound.append((pod.name, node_name))

    def add_group(self, raw: JSON) -> None:
        group = pod_group_from_json(raw)
        self.cache.set_pod_group(group)
        self.queue.add_pod_group(group)

    def add_pod(self, raw: JSON) -> PodInfo:
        """As the engine's pod handler: the group's state, the queue, then the pod-add event
        (GenericWorkload), which re-judges a gated group."""
        p = pod_from_json(raw)
        self.cache.add_pod_group_member(p)
        self.queue.add(p)
        self.queue.move_all_to_active_or_backoff(events.UNSCHEDULED_POD_ADD, None, p)
        return p

    def run_one(self) -> None:
        qpi = self.queue.pop(timeout=0)
        assert qpi is not None
        self.loop.schedule_one(qpi)
        assert self.loop._pool is not None
        self.loop._pool.shutdown(wait=True)
        self.loop._pool = ThreadPoolExecutor(8)

    def messages(self) -> dict[str, str]:
        return {f.pod.name: f.message for f in self.reports.failed}


def _nodes(*cpus: str) -> list[JSON]:
    return [{"metadata": {"name": f"n{i}"}, "cpu": c} for i, c in enumerate(cpus)]


def _members(group: str, count: int, cpu: str = "1") -> list[JSON]:
    return [pod(f"{group}-{i}", group=group, cpu=cpu) for i in range(count)]


def test_a_gang_that_fits_binds_whole() -> None:
    h = Harness(_nodes("2", "2"))
    h.add_group(pod_group("g", min_count=3))
    for raw in _members("g", 3):
        h.add_pod(raw)
    h.run_one()
    assert sorted(name for name, _ in h.bound) == ["g-0", "g-1", "g-2"]
    assert not h.reports.failed
    assert h.reports.attempts == ["scheduled"]
    (key, condition), *_ = h.reports.conditions
    assert key == "default/g"
    assert condition | {"observedGeneration": 1} == {
        "type": "PodGroupInitiallyScheduled", "status": "True", "reason": "Scheduled",
        "message": "", "observedGeneration": 1,
    }  # fmt: skip


def test_a_gang_that_cannot_reach_min_count_binds_nothing() -> None:
    h = Harness(_nodes("1", "1"))
    h.add_group(pod_group("g", min_count=3))
    for raw in _members("g", 3):
        h.add_pod(raw)
    h.run_one()
    assert h.bound == []
    group_message = f"minCount (3) cannot be satisfied: 2 scheduled, 0 remaining, {NO_VICTIMS}"
    assert h.messages() == {
        "g-0": f"pod group is unschedulable, {group_message}",
        "g-1": f"pod group is unschedulable, {group_message}",
        "g-2": "0/2 nodes are available: 2 Insufficient cpu.",
    }
    assert {f.reason for f in h.reports.failed} == {"Unschedulable"}
    assert h.reports.attempts == ["unschedulable"]
    _, condition = h.reports.conditions[0]
    assert (condition["status"], condition["reason"], condition["message"]) == (
        "False", "Unschedulable", group_message,
    )  # fmt: skip
    assert h.queue.where("uid-default-g-0") == "backoff"


def test_a_basic_group_binds_what_fits() -> None:
    h = Harness(_nodes("1", "1"))
    h.add_group(pod_group("b"))
    for raw in _members("b", 3):
        h.add_pod(raw)
    h.run_one()
    assert sorted(name for name, _ in h.bound) == ["b-0", "b-1"]
    assert h.messages() == {"b-2": "0/2 nodes are available: 2 Insufficient cpu."}
    assert h.reports.attempts == ["scheduled"]
    assert h.reports.conditions[0][1]["status"] == "True"
    # The rest is retried at once, its old timestamp kept (upstream: its preemption comes next).
    assert h.queue.where("uid-default-b-2") == "active"


EARLIER: Final = {
    "type": "PodGroupInitiallyScheduled", "status": "False", "reason": "Unschedulable",
    "message": "pod group is unschedulable, pod group preemption: found a placement",
    "observedGeneration": 1, "lastTransitionTime": "2026-12-02T00:00:00Z",
}  # fmt: skip


@pytest.mark.parametrize(
    "earlier",
    [
        pytest.param((), id="record without the condition"),
        pytest.param((EARLIER,), id="record still False from an earlier cycle"),
    ],
)
def test_a_retry_before_the_watch_reads_the_record_as_written(earlier: tuple[JSON, ...]) -> None:
    """A basic group's rest is retried at once. Whether upstream's retry reads the True it just
    patched is a race (schedule_one_podgroup.go:947-952: watch event before the PATCH's
    response or after); Corral's patch goes later, so its retry reads the record as its own
    write left it (until the watch shows a newer version): nothing is written after the True,
    upstream's "watch first" outcome (gang conformance kind, seed 2 group-12 at load ~4:
    upstream True/Scheduled with no message)."""
    h = Harness(_nodes("1", "1"))
    h.add_group(pod_group("b", conditions=earlier))
    for raw in _members("b", 3):
        h.add_pod(raw)
    h.run_one()
    h.run_one()  # b-2 alone: no room, no victims
    assert h.reports.attempts == ["scheduled", "unschedulable"]
    assert [c["status"] for _, c in h.reports.conditions] == ["True"]
    (patch,) = h.reports.patches
    assert patch is not None
    (element,) = patch["status"]["conditions"]
    assert (element["status"], element["reason"], element["message"]) == ("True", "Scheduled", "")


def test_a_retry_after_the_watch_moved_patches_against_that_record() -> None:
    """Once the watch shows a newer version, it is the record again. When that version still
    lacks the True (upstream's case when its watch lags: the gang conformance kind, seed 2
    group-12 at load ~11), the retry's False is the difference from it: only the message, so
    the server keeps True/Scheduled with the retry's message."""
    h = Harness(_nodes("1", "1"))
    h.add_group(pod_group("b", conditions=(EARLIER,)))
    for raw in _members("b", 3):
        h.add_pod(raw)
    h.run_one()
    moved = pod_group("b", conditions=(EARLIER,))
    moved["metadata"]["resourceVersion"] = "2"  # e.g. an earlier write of ours, seen now
    h.cache.set_pod_group(pod_group_from_json(moved))
    h.run_one()
    assert [c["status"] for _, c in h.reports.conditions] == ["True", "False"]
    retry = h.reports.patches[1]
    assert retry is not None
    (element,) = retry["status"]["conditions"]
    assert set(element) == {"type", "message"}
    assert str(element["message"]).startswith("pod group is unschedulable, ")
    assert retry["status"]["$setElementOrder/conditions"] == [
        {"type": "PodGroupInitiallyScheduled"}
    ]


def test_the_record_showing_true_guards_the_condition() -> None:
    """Once the record shows True, a later cycle's failure writes nothing (never back)."""
    shown = {**EARLIER, "status": "True", "reason": "Scheduled", "message": ""}
    h = Harness(_nodes("1"))
    h.add_group(pod_group("b", conditions=(shown,)))
    for raw in _members("b", 2):
        h.add_pod(raw)
    h.run_one()
    h.run_one()
    assert h.reports.attempts == ["scheduled", "unschedulable"]
    assert h.reports.conditions == []  # True again: no change, nothing sent


@pytest.mark.parametrize(
    ("steps", "where"),
    [
        pytest.param(["pod a"], "incomplete", id="PodGroup not observed"),
        pytest.param(["pod a", "group"], "gated", id="fewer pods than minCount"),
        pytest.param(["group", "pod a", "pod b"], "active", id="minCount reached"),
        pytest.param(["pod a", "pod b", "group"], "active", id="members waited for the group"),
    ],
)
def test_the_queue_holds_a_gang_until_min_count(steps: list[str], where: str) -> None:
    h = Harness(_nodes("4"))
    for step in steps:
        if step == "group":
            h.add_group(pod_group("g", min_count=2))
        else:
            h.add_pod(pod(step.split()[1], group="g", cpu="1"))
    assert h.queue.where("uid-default-a") == where


def test_members_keep_their_own_status_when_not_reached(monkeypatch: Any) -> None:
    """A gang whose first member fails stops there: the others get the group's status."""
    h = Harness(_nodes("1"))
    h.add_group(pod_group("g", min_count=3))
    members = [pod("g-0", group="g", cpu="2"), *_members("g", 3)[1:]]
    for raw in members:
        h.add_pod(raw)
    h.run_one()
    assert h.bound == []
    first = "0/1 nodes are available: 1 Insufficient cpu."
    rest = "minCount (3) cannot be satisfied: 0 scheduled, 2 remaining"
    messages = h.messages()
    assert messages["g-0"] == first
    assert messages["g-1"] == messages["g-2"] == rest
