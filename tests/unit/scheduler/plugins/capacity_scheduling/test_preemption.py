"""CapacityScheduling's PostFilter (scheduler-plugins): transcribed from SP
(kubernetes-sigs/scheduler-plugins at 903da7df) ``pkg/capacityscheduling/
capacity_scheduling_test.go`` (TestPostFilter, TestDryRunPreemption,
TestPodEligibleToPreemptOthers) and ``test/integration/capacity_scheduling_test.go``
(TestCapacityScheduling, run offline by the engine's simulator); SP's row names are the ids.
SP's unit rows set each quota's ``Used``; here the pods on the node make it, and they agree.
Rows marked "corral:" are Corral's own."""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Sequence
from typing import Any

import pytest

from corral.scheduler.backend.objects import ADDED, ObjectStore
from corral.scheduler.backend.records import pod_from_json
from corral.scheduler.engine.frameworks import load_engine_config
from corral.scheduler.engine.simulate import SCHEDULED, SimulatedEngine, Simulator
from corral.scheduler.framework import listers
from corral.scheduler.framework.cycle_state import CycleState
from corral.scheduler.framework.diagnosis import NodeToStatus
from corral.scheduler.framework.runtime.framework import Framework
from corral.scheduler.framework.runtime.schedule_one import scheduling_cycle
from corral.scheduler.framework.runtime.schedule_pod import PodScheduler
from corral.scheduler.framework.status import Code, Status
from corral.scheduler.framework.types import PodInfo
from corral.scheduler.plugins import capacity_scheduling as cs
from corral.scheduler.plugins.capacity_scheduling import victims as cv
from corral.scheduler.plugins.registry import default_profile, in_tree_registry
from corral.testing.builders import JSON, build_cache, node
from corral.testing.framework import FakeHandle

from .support import HIGH, LOW, MID, sp_eq, sp_pod

NODE_A = node("node-a", cpu="100", memory="150", pods="32")  # SP: memory 150, 32 pods


class Executor:
    def __init__(self) -> None:
        self.preempted: list[tuple[str, list[str]]] = []

    def preempt(
        self,
        preemptor: PodInfo,
        node_name: str,
        victims: Sequence[PodInfo],
        lower_priority_nominated: Sequence[PodInfo],
    ) -> Status | None:
        self.preempted.append((node_name, sorted(v.name for v in victims)))
        return None

    def clear_nominated_node_name(self, pods: Sequence[PodInfo]) -> None:
        pass

    def is_running_preemption(self, uid: str) -> bool:
        return False

    def may_evict(self, pod: PodInfo) -> bool:
        return True


def quota(namespace: str, min_mem: int, max_mem: int) -> JSON:
    # SP's unit rows give memory only: cpu's bounds are 0, and every pod asks for 0m.
    return sp_eq(namespace, f"eq-{namespace}", {"memory": max_mem}, {"memory": min_mem})


def cycle(quotas: Sequence[JSON], running: Sequence[JSON], incoming: JSON) -> tuple[Any, Executor]:
    cache = build_cache([NODE_A], running)
    objects = ObjectStore()
    for q in quotas:
        objects.apply(listers.SP_ELASTIC_QUOTA, ADDED, q)
    executor = Executor()
    base = default_profile(percentage_of_nodes_to_score=100)
    profile = dataclasses.replace(
        base,
        pre_filter=(*base.pre_filter, cs.NAME),
        post_filter=(cs.NAME,),
        reserve=(*base.reserve, cs.NAME),
    )
    fwk = Framework(profile, in_tree_registry(), pod_binder=lambda _p, _n: None,
                    objects=objects, preemption_executor=executor)  # fmt: skip
    scheduler = PodScheduler(fwk, rng=random.Random(0))
    outcome = scheduling_cycle(
        scheduler, CycleState(), pod_from_json(incoming), cache.snapshot(), cache
    )
    return outcome, executor


THREE_ON_A = [
    sp_pod("t1-p2", "ns1", 50, 0, 0, MID, "node-a"),
    sp_pod("t1-p3", "ns2", 50, 0, 0, MID, "node-a"),
    sp_pod("t1-p4", "ns2", 50, 0, 0, MID, "node-a"),
]


@pytest.mark.parametrize(
    ("quotas", "running", "victims"),
    [
        pytest.param(
            [quota("ns1", 50, 200), quota("ns2", 200, 200)], THREE_ON_A, ["t1-p2"],
            id="in-namespace preemption",
        ),
        pytest.param(
            [quota("ns1", 150, 200), quota("ns2", 50, 200)], THREE_ON_A, ["t1-p3"],
            id="cross-namespace preemption",
        ),
        pytest.param([], THREE_ON_A, ["t1-p4"], id="without elasticQuotas"),
    ],
)  # fmt: skip
def test_post_filter(quotas: list[JSON], running: list[JSON], victims: list[str]) -> None:
    """SP checks the nominated node (node-a, Success); the victims are Corral's addition. A
    cross-namespace preemption takes one of ns2's two pods, the least important (SP's DryRun
    row below); equal here, the first the node lists (Go's unstable sort may pick either),
    and ns2 is then at its min. Without quotas, all three are candidates and the last one
    reprieved stays the victim."""
    outcome, executor = cycle(quotas, running, sp_pod("t1-p1", "ns1", 50, 0, 0, HIGH))
    assert outcome.nominated_node_name == "node-a"
    assert executor.preempted == [("node-a", victims)]


@pytest.mark.parametrize(
    ("quotas", "running", "victims"),
    [
        pytest.param(
            [quota("ns1", 50, 200), quota("ns2", 200, 200)],
            [sp_pod("t1-p1", "ns1", 50, 0, 0, MID, "node-a"),
             sp_pod("t1-p2", "ns2", 50, 0, 0, MID, "node-a"),
             sp_pod("t1-p3", "ns2", 50, 0, 0, MID, "node-a")],
            ["t1-p1"],
            id="in-namespace preemption",
        ),
        pytest.param(
            [quota("ns1", 150, 200), quota("ns2", 50, 200)],
            [sp_pod("t1-p1", "ns1", 50, 0, 0, MID, "node-a"),
             sp_pod("t1-p2", "ns2", 50, 0, 0, HIGH, "node-a"),
             sp_pod("t1-p3", "ns2", 50, 0, 0, MID, "node-a")],
            ["t1-p3"],
            id="cross-namespace preemption",
        ),
    ],
)  # fmt: skip
def test_dry_run_preemption(quotas: list[JSON], running: list[JSON], victims: list[str]) -> None:
    _, executor = cycle(quotas, running, sp_pod("t1-p", "ns1", 50, 0, 0, HIGH))
    assert executor.preempted == [("node-a", victims)]


@pytest.mark.parametrize(
    ("quotas", "running", "incoming", "message"),
    [
        pytest.param(
            [quota("ns1", 50, 200), quota("ns2", 100, 200)],
            [sp_pod("mine", "ns1", 50, 0, 0, HIGH, "node-a"),
             sp_pod("theirs", "ns2", 100, 0, 0, LOW, "node-a")],
            sp_pod("p", "ns1", 50, 0, 0, MID),
            "1 No victims found on node node-a for preemptor pod p",
            id="corral: over its min, only its own namespace's lower-priority pods are victims",
        ),
        pytest.param(
            [quota("ns1", 100, 200), quota("ns2", 100, 200)],
            [sp_pod("theirs", "ns2", 100, 0, 0, HIGH, "node-a"),
             sp_pod("free", "default", 50, 0, 0, LOW, "node-a")],
            sp_pod("p", "ns1", 50, 0, 0, MID),
            "1 No victims found on node node-a for preemptor pod p",
            id="corral: within its min, a quota at its min gives nothing, nor a pod in no quota",
        ),
        pytest.param(
            [quota("ns2", 50, 200)],
            [sp_pod("quota", "ns2", 100, 0, 0, LOW, "node-a"),
             sp_pod("same", "ns1", 50, 0, 0, HIGH, "node-a")],
            sp_pod("p", "ns1", 50, 0, 0, MID),
            "1 No victims found on node node-a for preemptor pod p",
            id="corral: in no quota, pods of quotas are never victims",
        ),
    ],
)  # fmt: skip
def test_no_victims(quotas: list[JSON], running: list[JSON], incoming: JSON, message: str) -> None:
    outcome, executor = cycle(quotas, running, incoming)
    assert executor.preempted == []
    assert outcome.status is not None
    assert message in outcome.status.message


# --- PodEligibleToPreemptOthers ---------------------------------------------------------------


def _terminating(name: str, namespace: str) -> JSON:
    raw = sp_pod(name, namespace, 0, 0, None, MID, "node-a")
    raw["spec"]["containers"][0]["resources"] = {}
    raw["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    return raw


def _using(name: str, namespace: str, mem: int) -> JSON:
    return sp_pod(name, namespace, mem, node_name="node-a")


def _preemptor(policy: str | None = None, nominated: str = "node-a") -> JSON:
    raw = sp_pod("t1-p1", "ns1", 0, 0, None, HIGH)
    raw["spec"]["containers"][0]["resources"] = {}  # SP's st.MakePod() requests nothing
    if policy is not None:
        raw["spec"]["preemptionPolicy"] = policy
    if nominated:
        raw["status"] = {"nominatedNodeName": nominated}
    return raw


@pytest.mark.parametrize(
    ("incoming", "running", "quotas", "nominated_status", "eligible"),
    [
        pytest.param(
            _preemptor("Never", nominated=""),
            [sp_pod("t1-p0", "ns1", 50, 10, 0, MID, "node-a")], [quota("ns1", 50, 150)],
            Status.of(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "untolerated taint"), False,
            id="Pod with PreemptNever preemption policy",
        ),
        pytest.param(
            _preemptor(), [sp_pod("t1-p0", "ns1", 50, 10, 0, MID, "node-a")],
            [quota("ns1", 50, 150)],
            Status.of(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "untolerated taint"), True,
            id="Pod with unschedulableAndUnresolvable nominated node",
        ),
        pytest.param(
            _preemptor(), [_terminating("t1-p0", "ns1")], [quota("ns1", 50, 150)], None, False,
            id="Pod with terminating pod in the same namespace",
        ),
        pytest.param(
            _preemptor(), [_terminating("t1-p0", "ns2"), _using("u", "ns2", 100)],
            [quota("ns1", 50, 150), quota("ns2", 50, 150)], None, False,
            id="Pod with terminating pod in another namespace",
        ),
        pytest.param(
            _preemptor(), [_terminating("t1-p0", "ns2")], [], None, False,
            id="Pod without elasticQuotas and terminating pod exists in the same namespace",
        ),
        pytest.param(
            _preemptor(), [_terminating("t1-p0", "ns2"), _using("u", "ns2", 100)],
            [quota("ns2", 50, 150)], None, True,
            id="Pod without ElasticQuotas and terminating pod exists in another namespace",
        ),
    ],
)  # fmt: skip
def test_pod_eligible_to_preempt_others(
    incoming: JSON,
    running: list[JSON],
    quotas: list[JSON],
    nominated_status: Status | None,
    eligible: bool,
) -> None:
    cache = build_cache([NODE_A], running)
    snapshot = cache.snapshot()
    handle = FakeHandle(snapshot=snapshot)
    for q in quotas:
        handle.objects.apply(listers.SP_ELASTIC_QUOTA, ADDED, q)
    plugin = cs.CapacityScheduling(handle)
    state = CycleState()
    pod = pod_from_json(incoming)
    plugin.pre_filter(state, pod, snapshot)
    statuses = NodeToStatus()
    statuses.set(snapshot.slot_of["node-a"], nominated_status or Status.of(Code.UNSCHEDULABLE))
    _, status = plugin.post_filter(state, pod, statuses)
    assert status is not None
    assert ("not eligible" in status.message) is not eligible, status.message


def test_without_its_pre_filter_state_it_is_not_eligible() -> None:
    """corral: SP's ``not eligible due to failed to read from cycleState`` (PreFilter did not
    run, e.g. an earlier PreFilter plugin rejected the pod)."""
    plugin = cs.CapacityScheduling(FakeHandle(snapshot=build_cache([NODE_A]).snapshot()))
    _, status = plugin.post_filter(CycleState(), pod_from_json(_preemptor()), NodeToStatus())
    assert status is not None
    assert status.message == "preemption: " + cv.NOT_ELIGIBLE_NO_STATE


# --- the integration test, offline ----------------------------------------------------------------

CONFIG: JSON = {
    "apiVersion": "kubescheduler.config.k8s.io/v1",
    "kind": "KubeSchedulerConfiguration",
    "profiles": [{
        "schedulerName": "default-scheduler",
        "plugins": {
            "preFilter": {"enabled": [{"name": cs.NAME}]},
            "postFilter": {"enabled": [{"name": cs.NAME}], "disabled": [{"name": "*"}]},
            "reserve": {"enabled": [{"name": cs.NAME}]},
        },
    }],
}  # fmt: skip
FAKE_NODES = [node(f"fake-node-{i}", cpu="100", memory="100", pods="32") for i in (1, 2)]


def _mk(name: str, ns: str, mem: int, cpu: int, priority: int, on: str = "") -> JSON:
    """SP test/util ``MakePod``: memory in bytes, cpu in millis."""
    return sp_pod(name, ns, mem, cpu, None, priority, f"fake-node-{on}" if on else "")


def _eqs(*spec: tuple[str, int, int, int, int]) -> list[JSON]:
    """(namespace, min memory, min cpu milli, max memory, max cpu milli)."""
    return [
        sp_eq(ns, f"eq{ns[-1]}", {"memory": xm, "cpu": f"{xc}m"}, {"memory": nm, "cpu": f"{nc}m"})
        for ns, nm, nc, xm, xc in spec
    ]


TWO_EQS = _eqs(("ns1", 100, 100, 200, 200), ("ns2", 100, 100, 200, 200))


@pytest.mark.parametrize(
    ("exist", "add", "quotas", "expected"),
    [
        pytest.param(
            [_mk("t1-p1", "ns1", 50, 10, MID, "1"), _mk("t1-p2", "ns1", 50, 10, MID, "1"),
             _mk("t1-p3", "ns1", 50, 10, LOW, "2")],
            [_mk("t1-p4", "ns2", 50, 10, MID), _mk("t1-p5", "ns2", 50, 10, MID),
             _mk("t1-p6", "ns2", 50, 10, LOW)],
            TWO_EQS, {"t1-p1", "t1-p2", "t1-p4", "t1-p5"},
            id="cross-namespace preemption",
        ),
        pytest.param(
            [_mk("t2-p1", "ns1", 50, 10, MID, "1"), _mk("t2-p2", "ns1", 50, 10, LOW, "1"),
             _mk("t2-p3", "ns2", 50, 10, MID, "2"), _mk("t2-p4", "ns2", 50, 10, LOW, "2")],
            [_mk("t2-p5", "ns1", 50, 10, MID), _mk("t2-p6", "ns2", 50, 10, MID)],
            TWO_EQS, {"t2-p1", "t2-p3", "t2-p5", "t2-p6"},
            id="in-namespace preemption",
        ),
        pytest.param(
            [_mk("t3-p1", "ns1", 50, 10, HIGH, "1"), _mk("t3-p2", "ns1", 50, 10, LOW, "1"),
             _mk("t3-p3", "ns2", 50, 10, HIGH, "2"), _mk("t3-p4", "ns2", 50, 10, LOW, "2")],
            [_mk("t3-p5", "ns1", 50, 10, MID), _mk("t3-p6", "ns2", 50, 10, MID)],
            [], {"t3-p1", "t3-p3", "t3-p5", "t3-p6"},
            id="regular preemption without Elastic Quota",
        ),
        pytest.param(
            [_mk("t4-p1", "ns1", 50, 10, MID, "1"), _mk("t4-p2", "ns1", 50, 10, MID, "1"),
             _mk("t4-p3", "ns1", 50, 10, LOW, "2"), _mk("t4-p4", "ns2", 50, 10, MID, "2")],
            [_mk("t4-p5", "ns1", 150, 10, HIGH), _mk("t4-p6", "ns2", 150, 10, HIGH)],
            TWO_EQS, {"t4-p1", "t4-p2", "t4-p3", "t4-p4"},
            id="in-namespace preemption failed because it can't find node which is suitable "
            "for preemption",
        ),
        pytest.param(
            [_mk("t5-p1", "ns1", 50, 10, MID, "1"), _mk("t5-p2", "ns2", 50, 10, HIGH, "1"),
             _mk("t5-p3", "ns2", 50, 10, HIGH, "2"), _mk("t5-p4", "ns2", 50, 10, HIGH, "2")],
            [_mk("t5-p5", "ns2", 50, 10, HIGH)],
            TWO_EQS, {"t5-p1", "t5-p2", "t5-p3", "t5-p4"},
            id="pod subjects to overused quota can't preempt pods subjects to other quotas",
        ),
        pytest.param(
            [_mk("t6-p1", "ns1", 50, 10, LOW, "1"), _mk("t6-p2", "ns1", 50, 10, LOW, "2"),
             _mk("t6-p3", "ns2", 50, 10, MID, "1"), _mk("t6-p4", "ns2", 50, 10, MID, "2")],
            [_mk("t6-p5", "ns1", 100, 20, HIGH), _mk("t6-p6", "ns2", 100, 20, HIGH)],
            TWO_EQS, {"t6-p1", "t6-p2", "t6-p3", "t6-p4"},
            id="cross-node preemption isn't supported",
        ),
        pytest.param(
            [_mk("t7-p1", "ns1", 0, 1, HIGH, "1"), _mk("t7-p2", "ns1", 0, 1, MID, "2"),
             _mk("t7-p3", "ns1", 0, 1, MID, "2"), _mk("t7-p5", "ns2", 0, 1, MID, "2"),
             _mk("t7-p6", "ns2", 0, 1, MID, "1"), _mk("t7-p7", "ns2", 0, 1, MID, "2")],
            [_mk(f"t7-p{i}", "ns3", 0, 1, MID) for i in (9, 10, 11, 12)],
            _eqs(("ns1", 100, 1, 200, 3), ("ns2", 100, 3, 200, 3), ("ns3", 100, 3, 200, 4)),
            {"t7-p1", "t7-p5", "t7-p6", "t7-p7", "t7-p9", "t7-p10", "t7-p11"},
            id="cross-namespace preemption with three elasticquota",
        ),
    ],
)  # fmt: skip
def test_capacity_scheduling_integration(
    exist: list[JSON], add: list[JSON], quotas: list[JSON], expected: set[str]
) -> None:
    """SP waits until the expected pods are scheduled; Corral also checks that no other pod is
    (every victim gone, every other added pod pending)."""
    simulator = Simulator([SimulatedEngine("sp", load_engine_config(CONFIG))], seed=0)
    for q in quotas:
        assert simulator.add_object(q)
    for n in FAKE_NODES:
        simulator.add_node(n)
    for p in exist:
        assert simulator.add_running_pod(p)
    placements = simulator.run(add)
    evicted = {v.rsplit("/", 1)[-1] for p in placements for v in p.victims}
    survivors = {p["metadata"]["name"] for p in exist} - evicted
    scheduled = {p.pod.rsplit("/", 1)[-1] for p in placements if p.verdict == SCHEDULED}
    assert survivors | scheduled == expected, [(p.pod, p.verdict, p.victims) for p in placements]


def test_a_victim_that_neither_fits_nor_keeps_the_quota_is_one_victim() -> None:
    """corral: reprieving ``v`` fails the filters *and* takes ns1 past its max again; SP
    removes it twice (the second removal fails: the node's status is an Error and there is no
    preemption); Corral counts it once and preempts."""
    running = [
        sp_pod("v", "ns1", 50, 0, 0, LOW, "node-a"),
        sp_pod("other", "ns2", 50, 0, 0, HIGH, "node-a"),
    ]
    outcome, executor = cycle(
        [quota("ns1", 100, 100)], running, sp_pod("p", "ns1", 100, 0, 0, HIGH)
    )
    assert executor.preempted == [("node-a", ["v"])]
    assert outcome.nominated_node_name == "node-a"
