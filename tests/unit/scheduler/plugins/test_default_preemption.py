"""DefaultPreemption through the real runtime: eligibility, victims with PDBs, the pick-one-node
order, messages, the executor seam, and nominated pods in the Filter (two-pass) and first-try."""

from __future__ import annotations

import random
from collections.abc import Collection, Sequence
from typing import Any

import pytest

from corral.scheduler.backend.cache import Cache
from corral.scheduler.backend.objects import ObjectStore
from corral.scheduler.backend.records import node_from_json, pod_from_json
from corral.scheduler.config import FeatureGates
from corral.scheduler.framework.cycle_state import CycleState
from corral.scheduler.framework.podgroup import PodGroupState, pod_group_from_json
from corral.scheduler.framework.runtime.framework import Framework
from corral.scheduler.framework.runtime.schedule_one import scheduling_cycle
from corral.scheduler.framework.runtime.schedule_pod import PodScheduler
from corral.scheduler.framework.status import Code, Status
from corral.scheduler.framework.types import PodInfo
from corral.scheduler.plugins import default_preemption
from corral.scheduler.plugins.helper.preemption import candidates as cand
from corral.scheduler.plugins.helper.preemption import workload_victims as wv
from corral.scheduler.plugins.helper.preemption.victims import split_by_pdb
from corral.scheduler.plugins.registry import default_profile, in_tree_registry
from corral.testing.builders import build_cache, node, pod, pod_group

GATES = FeatureGates({"GenericWorkload": True})


class Executor:
    def __init__(self) -> None:
        self.preempted: list[tuple[str, str, list[str], list[str]]] = []
        self.cleared: list[str] = []
        self.running: set[str] = set()
        self.protected: set[str] = set()  # namespaces whose pods may not be evicted

    def preempt(
        self,
        preemptor: PodInfo,
        node_name: str,
        victims: Sequence[PodInfo],
        lower_priority_nominated: Sequence[PodInfo],
    ) -> Status | None:
        self.preempted.append(
            (
                preemptor.name,
                node_name,
                [v.name for v in victims],
                [p.name for p in lower_priority_nominated],
            )
        )
        return None

    def clear_nominated_node_name(self, pods: Sequence[PodInfo]) -> None:
        self.cleared.extend(p.name for p in pods)

    def is_running_preemption(self, uid: str) -> bool:
        return uid in self.running

    def may_evict(self, pod: PodInfo) -> bool:
        return pod.namespace not in self.protected


class Nominator:
    def __init__(self, pods: Sequence[PodInfo] = ()) -> None:
        self.pods = list(pods)

    def nominated_pods_for_node(self, node_name: str) -> Sequence[PodInfo]:
        return [p for p in self.pods if p.nominated_node_name == node_name]

    def nominated_node_names(self) -> Collection[str]:
        return {p.nominated_node_name for p in self.pods}


def running(name: str, on: str, prio: int, cpu: str = "1", **kw: Any) -> dict[str, Any]:
    return pod(name, cpu=cpu, node_name=on, priority=prio, **kw)


def schedule(
    cache: Cache,
    incoming: PodInfo,
    *,
    objects: ObjectStore | None = None,
    nominator: Nominator | None = None,
    protected: Collection[str] = (),
) -> tuple[Any, Executor]:
    executor = Executor()
    executor.protected.update(protected)
    fwk = Framework(
        default_profile(percentage_of_nodes_to_score=100),
        in_tree_registry(),
        pod_binder=lambda _p, _n: None,
        objects=objects,
        nominator=nominator,
        preemption_executor=executor,
    )
    scheduler = PodScheduler(fwk, rng=random.Random(0))
    return scheduling_cycle(scheduler, CycleState(), incoming, cache.snapshot(), cache), executor


def high(cpu: str = "2", **kw: Any) -> PodInfo:
    return pod_from_json(pod("hi", cpu=cpu, priority=100, **kw))


def test_preempts_the_lowest_priority_victims_and_nominates() -> None:
    cache = build_cache(
        [node("a", cpu="2"), node("b", cpu="2")],
        [
            running("a1", "a", 10),
            running("a2", "a", 50),
            running("b1", "b", 20),
            running("b2", "b", 30),
        ],
    )
    outcome, executor = schedule(cache, high())
    assert outcome.nominated_node_name == "b"  # highest victim 30 < 50
    assert executor.preempted == [("hi", "b", ["b2", "b1"], [])]
    assert outcome.status is not None
    assert outcome.status.message == (
        "0/2 nodes are available: 2 Insufficient cpu. "
        "preemption: found a potential placement for pod on node b, preempting 2 victims"
    )


def test_reprieves_victims_that_are_not_needed() -> None:
    cache = build_cache(
        [node("a", cpu="3")],
        [running("small", "a", 10, cpu="1"), running("big", "a", 5, cpu="2")],
    )
    _, executor = schedule(cache, high(cpu="2"))
    assert executor.preempted == [("hi", "a", ["big"], [])]


@pytest.mark.parametrize(
    ("protected", "nominated", "victims", "message"),
    [
        pytest.param((), "a", ["other"], "", id="any namespace without tenancy"),
        pytest.param(("other",), "b", ["own"], "", id="own namespace's node instead"),
        pytest.param(
            ("other", "team"),
            "",
            [],
            "2 No preemption victims found for incoming pod",
            id="nothing evictable",
        ),
    ],
)
def test_only_evictable_pods_are_victims(
    protected: tuple[str, ...], nominated: str, victims: list[str], message: str
) -> None:
    # A tenant scheduler's executor allows only pods of its namespaces: another tenant's pod
    # stays put like a higher-priority one, even where evicting it would be the better choice.
    cache = build_cache(
        [node("a", cpu="1"), node("b", cpu="1")],
        [
            running("other", "a", 1, namespace="other"),
            running("own", "b", 50, namespace="team"),
        ],
    )
    outcome, executor = schedule(cache, high(cpu="1"), protected=protected)
    assert outcome.nominated_node_name == nominated
    assert [v for _, _, vs, _ in executor.preempted for v in vs] == victims
    assert message in outcome.status.message


@pytest.mark.parametrize(
    ("policy", "nominated_terminating", "want"),
    [
        pytest.param("Never", False, default_preemption.NOT_ELIGIBLE_NEVER, id="policy-never"),
        pytest.param(
            "", True, default_preemption.NOT_ELIGIBLE_TERMINATING, id="terminating-on-nominated"
        ),
    ],
)
def test_not_eligible(policy: str, nominated_terminating: bool, want: str) -> None:
    victim = running("v", "a", 1)
    if nominated_terminating:
        victim["metadata"]["deletionTimestamp"] = "2024-01-01T00:00:00Z"
        victim["status"] = {
            "conditions": [
                {"type": "DisruptionTarget", "status": "True", "reason": "PreemptionByScheduler"}
            ]
        }
    cache = build_cache([node("a", cpu="1")], [victim])
    raw = pod("hi", cpu="1", priority=100)
    if policy:
        raw["spec"]["preemptionPolicy"] = policy
    if nominated_terminating:
        raw["status"] = {"nominatedNodeName": "a"}
    outcome, executor = schedule(cache, pod_from_json(raw))
    assert outcome.status.message.endswith("preemption: " + want)
    assert executor.preempted == []


def test_no_candidates_message_lists_dry_run_statuses() -> None:
    gpu = {"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}
    cache = build_cache(
        [node("a", cpu="1"), node("b", cpu="1"), node("t", cpu="1", taints=(gpu,))],
        [running("x", "a", 500), running("y", "b", 500)],
    )
    outcome, _ = schedule(cache, high(cpu="1"))
    assert outcome.status.message == (
        "0/3 nodes are available: 1 node(s) had untolerated taint(s), "
        # DynamicResources' PostFilter runs first in the default set (the pod has no claims:
        # no reason since 1.37).
        "2 Insufficient cpu. preemption: 0/3 nodes are available: "
        "1 Preemption is not helpful for scheduling, "
        "2 No preemption victims found for incoming pod."
    )


def pdb(name: str, selector: dict[str, str], allowed: int) -> dict[str, Any]:
    return {
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"selector": {"matchLabels": selector}},
        "status": {"disruptionsAllowed": allowed},
    }


def test_pdb_violations_are_avoided() -> None:
    cache = build_cache(
        [node("a", cpu="1"), node("b", cpu="1")],
        [
            running("a1", "a", 1, labels={"app": "guarded"}),
            running("b1", "b", 50, labels={"app": "free"}),
        ],
    )
    objects = ObjectStore()
    objects.apply("PodDisruptionBudget", "ADDED", pdb("p", {"app": "guarded"}, 0))
    outcome, executor = schedule(cache, high(cpu="1"), objects=objects)
    # Without the PDB node a (victim priority 1) would win; the PDB makes b better.
    assert outcome.nominated_node_name == "b"
    assert executor.preempted == [("hi", "b", ["b1"], [])]


def labelled(name: str, **labels: str) -> PodInfo:
    return pod_from_json(pod(name, labels=labels))


def budget(selector: dict[str, str], allowed: int, disrupted: Sequence[str] = ()) -> dict[str, Any]:
    b = pdb("b", selector, allowed)
    b["status"]["disruptedPods"] = dict.fromkeys(disrupted, "2024-01-01T00:00:00Z")
    return b


# Upstream 1.37's TestFilterVictimsWithPDBViolation (framework/preemption/util_test.go), single-pod
# victims, plus the row where 1.37 differs from 1.36: a pod stops at the first PDB it violates.
@pytest.mark.parametrize(
    ("pods", "pdbs", "violating", "fine"),
    [
        pytest.param([], [], [], [], id="no victims, no PDBs"),
        pytest.param(
            [labelled("p1", app="foo")],
            [budget({"app": "bar"}, 0)],
            [],
            ["p1"],
            id="victim with no matching PDBs",
        ),
        pytest.param(
            [labelled("p1", app="foo")],
            [budget({"app": "foo"}, 1)],
            [],
            ["p1"],
            id="victim matching PDB, adequate DisruptionsAllowed",
        ),
        pytest.param(
            [labelled("p1", app="foo")],
            [budget({"app": "foo"}, 0)],
            ["p1"],
            [],
            id="victim matching PDB, no DisruptionsAllowed",
        ),
        pytest.param(
            [labelled("p1", app="foo"), labelled("p2", app="foo")],
            [budget({"app": "foo"}, 1)],
            ["p2"],
            ["p1"],
            id="multiple victims matching the same PDB",
        ),
        pytest.param(
            [labelled("p1", app="foo")],
            [budget({"app": "foo"}, 0, disrupted=["p1"])],
            [],
            ["p1"],
            id="pod in DisruptedPods is ignored",
        ),
        pytest.param(
            [labelled("p1", app="foo")],
            [budget({}, 0)],
            [],
            ["p1"],
            id="PDB with empty selector",
        ),
        pytest.param(
            [labelled("p1", app="foo", tier="backend")],
            [budget({"app": "foo"}, 1), budget({"tier": "backend"}, 0)],
            ["p1"],
            [],
            id="Multiple PDBs",
        ),
        pytest.param(
            [labelled("p1", app="foo", tier="backend"), labelled("p2", tier="backend")],
            [budget({"app": "foo"}, 0), budget({"tier": "backend"}, 1)],
            ["p1"],
            ["p2"],
            id="a violating pod does not charge the PDBs after the one it violates",
        ),
    ],
)
def test_split_by_pdb(
    pods: list[PodInfo], pdbs: list[dict[str, Any]], violating: list[str], fine: list[str]
) -> None:
    got_violating, got_fine = split_by_pdb(pods, pdbs)
    assert [p.name for p in got_violating] == violating
    assert [p.name for p in got_fine] == fine


def C(name: str, *victims: tuple[int, float | None], violations: int = 0) -> cand.Candidate:  # noqa: N802
    pods = tuple(
        pod_from_json(
            {
                "metadata": {"name": f"{name}{i}", "namespace": "d", "uid": f"{name}{i}"},
                "spec": {"priority": prio},
                "status": {"startTime": f"2024-01-01T00:00:{int(start):02d}Z"} if start else {},
            }
        )
        for i, (prio, start) in enumerate(victims)
    )
    return cand.Candidate(name, pods, violations)


@pytest.mark.parametrize(
    ("candidates", "want"),
    [
        pytest.param([C("a", (1, 1), violations=1), C("b", (9, 1))], "b", id="fewest-pdb"),
        pytest.param([C("a", (5, 1)), C("b", (3, 1), (3, 2))], "b", id="lowest-top-priority"),
        pytest.param([C("a", (3, 1), (3, 2)), C("b", (3, 1), (1, 1))], "b", id="lowest-sum"),
        pytest.param([C("a", (3, 1), (-(2**31), 1)), C("b", (3, 1))], "b", id="sum-offset-2^31"),
        pytest.param([C("a", (3, 1), (0, 1), (0, 1)), C("b", (3, 1), (0, 1))], "b", id="count"),
        pytest.param([C("a", (3, 5)), C("b", (3, 9))], "b", id="latest-start"),
        pytest.param([C("a", (3, None)), C("b", (3, 9))], "a", id="no-start-is-now"),
        pytest.param([C("a", (3, 9)), C("b", (3, 9))], "a", id="first"),
    ],
)
def test_pick_one_node(candidates: list[cand.Candidate], want: str) -> None:
    picked = cand.pick_one(candidates, now=2e9)
    assert picked is not None
    assert picked.node_name == want


@pytest.mark.parametrize(
    ("nodes", "pct", "absolute", "want"),
    [
        pytest.param(5000, 10, 100, 500, id="percentage"),
        pytest.param(500, 10, 100, 100, id="absolute-floor"),
        pytest.param(50, 10, 100, 50, id="capped-at-nodes"),
    ],
)
def test_num_candidates(nodes: int, pct: int, absolute: int, want: int) -> None:
    assert cand.num_candidates(nodes, pct, absolute) == want


def test_nominated_pods_of_higher_priority_hold_their_room() -> None:
    cache = build_cache([node("a", cpu="2"), node("b", cpu="2")])
    waiting = pod_from_json(pod("w", cpu="2", priority=200))
    waiting = pod_from_json({**waiting.raw, "status": {"nominatedNodeName": "a"}})
    outcome, _ = schedule(cache, high(cpu="1"), nominator=Nominator([waiting]))
    assert outcome.result is not None
    assert outcome.result.suggested_host == "b"


def test_nominated_node_is_tried_first() -> None:
    cache = build_cache([node(f"n{i}", cpu="2") for i in range(5)])
    raw = pod("hi", cpu="1", priority=100)
    raw["status"] = {"nominatedNodeName": "n3"}
    outcome, _ = schedule(cache, pod_from_json(raw))
    assert outcome.result is not None
    assert outcome.result.suggested_host == "n3"
    assert outcome.result.feasible_nodes == 1


@pytest.mark.parametrize(
    ("executor", "running", "want"),
    [
        pytest.param(True, True, default_preemption.WAITING, id="preempting: gated"),
        pytest.param(True, False, None, id="done: passes"),
        pytest.param(False, False, None, id="no executor (simulation): passes"),
    ],
)
def test_pre_enqueue_gates_a_pod_while_its_preemption_runs(
    executor: bool, running: bool, want: str | None
) -> None:
    ex = Executor()
    incoming = high()
    if running:
        ex.running.add(incoming.uid)
    fwk = Framework(
        default_profile(),
        in_tree_registry(),
        pod_binder=lambda _p, _n: None,
        preemption_executor=ex if executor else None,
    )
    s = fwk.run_pre_enqueue(incoming)
    if want is None:
        assert s is None or s.is_success
    else:
        assert s is not None
        assert (s.code, s.message, s.plugin) == (
            Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
            want,
            "DefaultPreemption",
        )


def test_pod_level_requests_are_counted_for_victims_and_preemptor() -> None:
    # As test_reprieves_victims_that_are_not_needed, with the cpu requests at pod level only.
    cache = build_cache(
        [node("a", cpu="3")],
        [running("small", "a", 10, cpu="0", pod_requests={"cpu": "1"}),
         running("big", "a", 5, cpu="0", pod_requests={"cpu": "2"})],
    )  # fmt: skip
    _, executor = schedule(cache, high(cpu="0", pod_requests={"cpu": "2"}))
    assert executor.preempted == [("hi", "a", ["big"], [])]


# --- GenericWorkload: victims are PodGroups (upstream getCrossNodesVictims) ------------------


def schedule_workload(
    nodes: Sequence[dict[str, Any]],
    pods: Sequence[dict[str, Any]],
    groups: Sequence[dict[str, Any]],
    incoming: PodInfo,
) -> tuple[Any, Executor]:
    cache = Cache(generic_workload=True)
    for raw in nodes:
        cache.add_node(node_from_json(raw))
    for raw in groups:
        cache.set_pod_group(pod_group_from_json(raw))
    for raw in pods:
        cache.add_pod(pod_from_json(raw))
    executor = Executor()
    fwk = Framework(
        default_profile(percentage_of_nodes_to_score=100, gates=GATES),
        in_tree_registry(),
        pod_binder=lambda _p, _n: None,
        preemption_executor=executor,
        generic_workload=True,
        pod_groups=cache,
    )
    scheduler = PodScheduler(fwk, rng=random.Random(0))
    return scheduling_cycle(scheduler, CycleState(), incoming, cache.snapshot(), cache), executor


def test_a_disruption_all_group_is_one_victim_across_nodes() -> None:
    """Evicting a member of a ``disruptionMode: all`` group evicts the whole group, on every
    node; the other node's pods of the group count as victims of this candidate."""
    nodes = [node("a", cpu="2"), node("b", cpu="2")]
    pods = [
        running("g-0", "a", 0, cpu="2", group="g"),
        running("g-1", "b", 0, cpu="1", group="g"),
        running("b1", "b", 5),
    ]
    outcome, executor = schedule_workload(
        nodes, pods, [pod_group("g", min_count=2, priority=1, disruption_all=True)], high()
    )
    # On a: the whole group (2 pods); on b: b1 alone (priority 5 < 100) frees 1 cpu, not
    # enough, so the group too: 3 victims. a wins on fewer victims.
    assert outcome.nominated_node_name == "a"
    assert executor.preempted == [("hi", "a", ["g-0", "g-1"], [])]


def test_a_victims_priority_is_its_pod_groups() -> None:
    """A member's own priority is ignored: the PodGroup's decides (here above the preemptor)."""
    nodes = [node("a", cpu="2")]
    pods = [running("g-0", "a", 0, cpu="2", group="g")]
    outcome, executor = schedule_workload(nodes, pods, [pod_group("g", priority=1000)], high())
    assert outcome.nominated_node_name == ""
    assert executor.preempted == []
    assert outcome.status is not None
    assert "No preemption victims found for incoming pod" in outcome.status.message


def test_single_disruption_members_are_victims_one_by_one() -> None:
    nodes = [node("a", cpu="2"), node("b", cpu="2")]
    pods = [
        running("g-0", "a", 0, cpu="2", group="g"),
        running("g-1", "b", 0, cpu="2", group="g"),
    ]
    outcome, executor = schedule_workload(nodes, pods, [pod_group("g", priority=1)], high())
    assert outcome.nominated_node_name in ("a", "b")
    assert len(executor.preempted) == 1
    assert len(executor.preempted[0][2]) == 1


def test_more_important_victim_order() -> None:
    now = 100.0
    plain = wv.single(pod_from_json(running("p", "a", 1)), {}, now)
    groups = {
        "default/g": _state(pod_group("g", priority=1)),
    }
    member = wv.single(pod_from_json(running("m", "a", 1, group="g")), groups, now)
    high_victim = wv.single(pod_from_json(running("h", "a", 2)), {}, now)
    assert [v.pods[0].name for v in wv.by_importance([plain, member, high_victim])] == [
        "h", "m", "p"
    ]  # fmt: skip


def _state(raw: dict[str, Any]) -> PodGroupState:
    return PodGroupState(group=pod_group_from_json(raw))
