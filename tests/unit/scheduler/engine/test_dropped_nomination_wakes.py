"""A pending pod's nomination dropped by the API (its ``status.nominatedNodeName`` cleared or
moved) frees its node for the pods of lower or equal priority that counted it: an
AssignedPodDelete event for them (upstream ``updatePodInSchedulingQueue``,
``hasNominatedNodeNameChanged``), through the engine's cluster state, queue, cache and loop
(binding cycles run on demand).

The live case (Coscheduling e2e, dropped in 1bdf750): a gang of 3 on a 2-cpu node, g-0 and g-1
waiting at Permit with the node announced as their nominatedNodeName, g-2 fitting nowhere;
g-2's PostFilter rejects them, their binding cycles forget them and drop their nominations;
the watch then delivers the late announce, nominating them again; a 2-cpu pod x of the same
priority fails NodeResourcesFit against those nominations; the failure's patch clearing
nominatedNodeName drops them. Without the event x waited for the 5-minute unschedulable flush.
"""

from __future__ import annotations

from typing import Any

import pytest

from corral.scheduler.engine.loop import Failure
from corral.scheduler.framework import listers
from corral.scheduler.framework.types import PodInfo
from corral.scheduler.plugins.coscheduling import POD_GROUP_LABEL
from corral.testing.builders import JSON, node, pod
from support.engine_rig import EngineRig

PROFILE = "gang"
NS = "team"


def _config() -> JSON:
    return {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [{
            "schedulerName": PROFILE,
            "plugins": {"multiPoint": {"enabled": [{"name": "Coscheduling"}],
                                       "disabled": [{"name": "PrioritySort"}]}},
            "pluginConfig": [{"name": "Coscheduling", "args": {"podGroupBackoffSeconds": 60}}],
        }],
    }  # fmt: skip


class Engine(EngineRig):
    def __init__(self) -> None:
        self.announced: list[tuple[str, str]] = []  # (pod, node) written, not yet watched
        super().__init__(_config(), PROFILE, announcer=self._announce)
        self.pods: dict[str, JSON] = {}
        self.state.on_node("ADDED", node("n", cpu="2", labels={"pool": "p"}))
        self.objects.apply(listers.SP_POD_GROUP, "ADDED", {
            "apiVersion": "scheduling.x-k8s.io/v1alpha1", "kind": "PodGroup",
            "metadata": {"name": "g", "namespace": NS, "creationTimestamp": "2026-01-01T00:00:00Z"},
            "spec": {"minMember": 3, "scheduleTimeoutSeconds": 600},
        })  # fmt: skip

    def _announce(self, about: PodInfo, node_name: str) -> None:
        self.announced.append((about.name, node_name))

    def add(self, name: str, cpu: str, selector: dict[str, str], group: bool) -> None:
        raw = pod(name, namespace=NS, cpu=cpu, node_selector=selector,
                  labels={POD_GROUP_LABEL: "g"} if group else None)  # fmt: skip
        raw["spec"]["schedulerName"] = PROFILE
        raw["metadata"]["resourceVersion"] = "1"
        self.pods[name] = raw
        self.state.on_pod("ADDED", raw)

    def watch(self, name: str, status: JSON) -> None:
        """The watch delivers a status update of pending pod ``name``."""
        raw = self.pods[name]
        raw = {**raw, "metadata": {**raw["metadata"]}, "status": status}
        raw["metadata"]["resourceVersion"] = str(int(raw["metadata"]["resourceVersion"]) + 1)
        self.pods[name] = raw
        self.state.on_pod("MODIFIED", raw)

    def cycle(self, expect: str) -> None:
        qpi = self.queue.pop(timeout=0)
        assert qpi is not None, "nothing to schedule"
        assert qpi.pod.name == expect
        self.loop.schedule_one(qpi)

    def where(self, name: str) -> str:
        return str(self.queue.where(self.pods[name]["metadata"]["uid"]))

    def failures(self, name: str) -> list[str]:
        return [o.message for o in self.reported.outcomes
                if isinstance(o, Failure) and o.pod.name == name]  # fmt: skip


CLEARED: JSON = {"nominatedNodeName": None,
                 "conditions": [{"type": "PodScheduled", "status": "False"}]}  # fmt: skip

SEQUENCES = [
    # id, the gang members whose announce the watch delivers after their forget (the others'
    # while assumed), the status the failure's patch leaves them with, whether that update
    # arrives while x is in flight (after its Filter, before its requeue) or after it
    pytest.param(("g-0", "g-1"), CLEARED, False,
                 id="both announces late, cleared by the failure: x woken (the live case)"),
    pytest.param(("g-1",), CLEARED, False,
                 id="one announce late, cleared by the failure: x woken"),
    pytest.param(("g-0", "g-1"), {"nominatedNodeName": "elsewhere"}, False,
                 id="both announces late, moved off the node: x woken"),
    pytest.param(("g-0", "g-1"), CLEARED, True,
                 id="cleared while x is in flight: x requeued to backoff, not parked"),
]  # fmt: skip


@pytest.mark.parametrize(("late", "then", "in_flight"), SEQUENCES)
def test_a_dropped_nomination_wakes_the_pods_it_blocked(
    late: tuple[str, ...], then: JSON, in_flight: bool
) -> None:
    e = Engine()
    e.add("g-0", "1", {"pool": "p"}, group=True)
    e.add("g-1", "1", {"pool": "p"}, group=True)
    e.add("g-2", "1", {"pool": "p", "absent": "label"}, group=True)
    e.cycle("g-0")  # assumed, waiting at Permit
    e.cycle("g-1")
    e.cycle("g-2")  # fits nowhere; its PostFilter rejects the waiting g-0 and g-1
    assert e.failures("g-2"), "g-2 should have failed"
    for name, node_name in e.announced:  # announces seen while the members are assumed
        if name not in late:
            e.watch(name, {"nominatedNodeName": node_name})
    e.pool.run()  # their binding cycles: rejected, forgotten, nominations dropped
    assert e.binder.bound == []
    assert len(e.nominator) == 0
    for name, node_name in e.announced:  # the late announces, after the forget
        if name in late:
            e.watch(name, {"nominatedNodeName": node_name})
    assert len(e.nominator) == len(late)
    e.add("x", "2", {"pool": "p"}, group=False)

    def drop() -> None:  # the failure's patch (or another writer) drops the nomination
        for name in late:
            e.watch(name, then)

    if in_flight:
        requeue = e.loop._requeue

        def drop_then_requeue(*args: Any) -> None:
            drop()
            requeue(*args)

        e.loop._requeue = drop_then_requeue  # type: ignore[method-assign]
    e.cycle("x")
    (message,) = e.failures("x")
    assert "Insufficient cpu" in message, message
    if not in_flight:
        assert e.where("x") == "unschedulable"
        drop()
    assert e.nominator.nominated_pods_for_node("n") == []
    assert e.where("x") in ("active", "backoff")  # not left for the 5-minute flush
    e.clock.now += 20  # x's backoff, not the gang's (60 s)
    e.queue.flush_backoff_completed()
    e.cycle("x")
    e.pool.run()
    assert e.binder.bound == ["x"]
