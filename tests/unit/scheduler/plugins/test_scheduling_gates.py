"""SchedulingGates: PreEnqueue holds a gated pod; the pod's own gate removal requeues it."""

from __future__ import annotations

from corral.scheduler.framework.status import Code, Status
from corral.scheduler.plugins import (
    scheduling_gates,
)
from corral.testing.builders import pod_info
from corral.testing.framework import FakeHandle


def test_scheduling_gates_register_the_pods_own_gate_removal_without_a_hint() -> None:
    plugin = scheduling_gates.new(None, FakeHandle())
    (registration,) = plugin.events_to_register()
    assert registration.hint is None  # always Queue


UUR = Code.UNSCHEDULABLE_AND_UNRESOLVABLE


def test_scheduling_gates() -> None:
    plugin = scheduling_gates.new(None, FakeHandle())
    assert plugin.pre_enqueue(pod_info("p")) is None
    assert plugin.pre_enqueue(pod_info("p", gates=["a", "b"])) == Status.of(
        UUR, "waiting for scheduling gates: [a b]"
    )
