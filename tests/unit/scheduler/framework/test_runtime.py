"""The runtime: build checks, PreFilter/Filter/Score semantics, sampling, host selection,
Reserve/Permit/Bind, and a full cycle with the in-tree plugins."""

from __future__ import annotations

import random
from dataclasses import replace
from typing import Any

import numpy as np
import pytest

from corral.scheduler.backend.cache import Cache
from corral.scheduler.framework.cycle_state import CycleState
from corral.scheduler.framework.diagnosis import FitError
from corral.scheduler.framework.interface import FilterVerdict, PostFilterResult, PreFilterResult
from corral.scheduler.framework.profile import ResolvedProfile, ScorePluginRef
from corral.scheduler.framework.runtime.framework import Framework, FrameworkError
from corral.scheduler.framework.runtime.schedule_one import binding_cycle, scheduling_cycle
from corral.scheduler.framework.runtime.schedule_pod import PodScheduler, num_feasible_nodes_to_find
from corral.scheduler.framework.status import Code, Status, StatusError
from corral.scheduler.plugins.registry import default_profile, in_tree_registry
from corral.testing.builders import build_cache, node, pod, pod_info
from support.scheduler_fakes import (
    SKIP,
    FakeBatchFilter,
    FakeBatchScore,
    FakeBind,
    FakeNodeFilter,
    FakeNormalizedScore,
    FakePermit,
    FakePreBind,
    FakePreBindPreFlight,
    FakePreFilter,
    FakeReserve,
    FakeScore,
    registry_of,
)

UUR = Code.UNSCHEDULABLE_AND_UNRESOLVABLE


def _profile(**points: Any) -> ResolvedProfile:
    base: dict[str, Any] = {"queue_sort": ("FakeQueueSort",), "bind": ("FakeBind",)}
    return ResolvedProfile(scheduler_name="test", **{**base, **points})


def _scheduler(*plugins: Any, pct: int | None = None, seed: int = 0, **points: Any) -> PodScheduler:
    profile = _profile(percentage_of_nodes_to_score=pct, **points)
    return PodScheduler(Framework(profile, registry_of(*plugins)), rng=random.Random(seed))


def _cache(count: int) -> Cache:
    return build_cache([node(f"n{i}") for i in range(count)])


# --- build ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("points", "message"),
    [
        pytest.param({"filter": ("Nope",)}, "FilterPlugin 'Nope' does not exist", id="unknown"),
        pytest.param(
            {"filter": ("FakeQueueSort",)},
            "plugin 'FakeQueueSort' does not extend FilterPlugin plugin",
            id="wrong point",
        ),
        pytest.param({"queue_sort": ()}, "no queue sort plugin is enabled", id="no queue sort"),
        pytest.param({"bind": ()}, "at least one bind plugin is needed", id="no bind"),
        pytest.param(
            {"score": (ScorePluginRef("S", 2**62),)}, "could overflow", id="weights overflow"
        ),
        pytest.param(
            {"pre_filter": ("P", "P")}, "already registered as 'PreFilterPlugin'", id="duplicate"
        ),
    ],
)
def test_build_errors(points: dict[str, Any], message: str) -> None:
    base: dict[str, Any] = {"queue_sort": ("FakeQueueSort",), "bind": ("FakeBind",)}
    profile = ResolvedProfile(scheduler_name="t", **{**base, **points})
    registry = registry_of(FakeScore("S", {}), FakePreFilter("P"))
    with pytest.raises(FrameworkError, match=message):
        Framework(profile, registry)


def test_bad_plugin_args_fail_the_build() -> None:
    profile = default_profile(plugin_args={"NodeResourcesFit": {"scoringStrategy": {"type": "X"}}})
    with pytest.raises(FrameworkError, match="NodeResourcesFit"):
        Framework(profile, in_tree_registry())


# --- sampling ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("pct", "nodes", "want"),
    [
        pytest.param(0, 50, 50, id="fewer than 100: all"),
        pytest.param(0, 500, 230, id="adaptive 46%"),
        pytest.param(0, 1000, 420, id="adaptive 42%"),
        pytest.param(0, 2000, 680, id="adaptive 34%"),
        pytest.param(0, 5000, 500, id="adaptive 10%"),
        pytest.param(0, 6000, 300, id="floor 5%"),
        pytest.param(10, 500, 100, id="at least 100"),
        pytest.param(100, 5000, 5000, id="all"),
    ],
)
def test_num_feasible_nodes_to_find(pct: int, nodes: int, want: int) -> None:
    assert num_feasible_nodes_to_find(pct, nodes) == want


def test_sampling_stops_at_enough_feasible_nodes_and_rotates() -> None:
    cache = _cache(300)
    odd = {f"n{i}" for i in range(1, 300, 2)}
    reject = FakeBatchFilter("F", odd, Status.of(Code.UNSCHEDULABLE, "odd"))
    sched = _scheduler(reject, FakeBatchScore("S", 1), filter=("F",), score=(ScorePluginRef("S"),))
    snapshot = cache.snapshot()
    result = sched.schedule_pod(CycleState(), pod_info("p"), snapshot)
    # 300 nodes → 48% → 144 feasible wanted; 150 exist. The 144th even node is at index 286.
    assert (result.feasible_nodes, result.evaluated_nodes) == (144, 287)
    assert sched.next_start_node_index == 287
    # From index 287 (odd): 6 evens up to n298, wrap, 138 more up to n274 → 13 + 275 processed.
    result = sched.schedule_pod(CycleState(), pod_info("p"), snapshot)
    assert result.evaluated_nodes == 288
    assert sched.next_start_node_index == (287 + 288) % 300


def _odd_rejecting(form: str) -> tuple[Any, ...]:
    odd = {f"n{i}" for i in range(1, 300, 2)}
    no = Status.of(Code.UNSCHEDULABLE, "odd")
    if form == "batch":
        return (FakeBatchFilter("F", odd, no),)
    if form == "per node":
        return (FakeNodeFilter("F", lambda n: no if n.name in odd else None),)
    # A per-node filter behind a batch one that passes everything: the walk is node by node.
    return (
        FakeBatchFilter("B", set(), no),
        FakeNodeFilter("F", lambda n: no if n.name in odd else None),
    )


@pytest.mark.parametrize("form", ["batch", "per node", "batch then per node"])
def test_per_node_filters_stop_where_the_sampling_stops(form: str) -> None:
    plugins = _odd_rejecting(form)
    names = tuple(p.name for p in plugins)
    sched = _scheduler(*plugins, FakeBatchScore("S", 1), filter=names, score=(ScorePluginRef("S"),))
    snapshot = _cache(300).snapshot()
    first = sched.schedule_pod(CycleState(), pod_info("p"), snapshot)
    second = sched.schedule_pod(CycleState(), pod_info("p"), snapshot)
    # The same numbers as the batch sampling test, whichever form rejects the odd nodes.
    assert (first.feasible_nodes, first.evaluated_nodes) == (144, 287)
    assert second.evaluated_nodes == 288
    assert sched.next_start_node_index == (287 + 288) % 300
    single = plugins[-1]
    if isinstance(single, FakeNodeFilter):  # never called past the processed nodes
        assert single.seen[:287] == [f"n{i}" for i in range(287)]
        assert len(single.seen) == 287 + 288


@pytest.mark.parametrize(
    ("order", "want"),
    [
        pytest.param(("S", "B"), "2 node says no.", id="per-node first owns both"),
        pytest.param(("B", "S"), "1 batch says no, 1 node says no.", id="batch first owns n0"),
    ],
)
def test_the_first_rejection_in_profile_order_owns_a_node(
    order: tuple[str, str], want: str
) -> None:
    # n0 fails both filters, n1 only the per-node one: the node's status is its first failure.
    batch = FakeBatchFilter("B", {"n0"}, Status.of(Code.UNSCHEDULABLE, "batch says no"))
    single = FakeNodeFilter("S", lambda n: Status.of(UUR, "node says no"))
    sched = _scheduler(batch, single, filter=order)
    with pytest.raises(FitError) as err:
        sched.schedule_pod(CycleState(), pod_info("p"), _cache(2).snapshot())
    assert str(err.value) == f"0/2 nodes are available: {want}"
    assert sorted(single.seen) == (["n0", "n1"] if order[0] == "S" else ["n1"])


def test_without_scoring_one_feasible_node_is_enough() -> None:
    sched = _scheduler(FakeBatchFilter("F", set(), Status(Code.UNSCHEDULABLE)), filter=("F",))
    result = sched.schedule_pod(CycleState(), pod_info("p"), _cache(10).snapshot())
    assert (result.suggested_host, result.feasible_nodes, result.evaluated_nodes) == ("n0", 1, 1)


# --- prefilter and filter ---------------------------------------------------------------------


def test_pre_filter_unschedulable_runs_the_rest_unresolvable_stops() -> None:
    first = FakePreFilter("A", status=Status.of(Code.UNSCHEDULABLE, "later"))
    second = FakePreFilter("B", status=Status.of(UUR, "stop"))
    third = FakePreFilter("C")
    sched = _scheduler(first, second, third, pre_filter=("A", "B", "C"))
    with pytest.raises(FitError) as err:
        sched.schedule_pod(CycleState(), pod_info("p"), _cache(3).snapshot())
    assert (first.calls, second.calls, third.calls) == (1, 1, 0)
    assert str(err.value) == "0/3 nodes are available: stop."


@pytest.mark.parametrize(
    ("results", "message"),
    [
        pytest.param(
            [frozenset({"n0"}), frozenset({"n1"})],
            "0/3 nodes are available: node(s) didn't satisfy plugin(s) [A B] simultaneously.",
            id="disjoint",
        ),
        pytest.param(
            [frozenset(), None],
            "0/3 nodes are available: node(s) didn't satisfy plugin A.",
            id="empty",
        ),
    ],
)
def test_pre_filter_results_intersect(results: list[frozenset[str] | None], message: str) -> None:
    plugins = [FakePreFilter(n, PreFilterResult(r)) for n, r in zip("AB", results, strict=True)]
    sched = _scheduler(*plugins, pre_filter=("A", "B"))
    with pytest.raises(FitError) as err:
        sched.schedule_pod(CycleState(), pod_info("p"), _cache(3).snapshot())
    assert str(err.value) == message


def test_pre_filter_result_restricts_nodes_and_others_count_as_absent() -> None:
    narrow = FakePreFilter("A", PreFilterResult(frozenset({"n1", "n2", "ghost"})))
    reject = FakeBatchFilter("F", {"n1", "n2"}, Status.of(Code.UNSCHEDULABLE, "busy"))
    sched = _scheduler(narrow, reject, pre_filter=("A",), filter=("F",))
    with pytest.raises(FitError) as err:
        sched.schedule_pod(CycleState(), pod_info("p"), _cache(5).snapshot())
    assert str(err.value) == (
        "0/5 nodes are available: 2 busy, 3 node(s) didn't satisfy plugin(s) [A]."
    )


def test_pre_filter_skip_skips_that_plugins_filter() -> None:
    both = FakePreFilter("F", status=SKIP)
    filt = FakeBatchFilter("F", {"n0", "n1"}, Status(Code.UNSCHEDULABLE, ("no",)))
    registry = registry_of(filt)
    registry["F"] = lambda _a, _h: _Both(both, filt)
    profile = _profile(pre_filter=("F",), filter=("F",))
    result = PodScheduler(Framework(profile, registry)).schedule_pod(
        CycleState(), pod_info("p"), _cache(2).snapshot()
    )
    assert result.feasible_nodes == 1  # no scoring: one is enough; the filter did not run


class _Both:
    def __init__(self, pre: FakePreFilter, filt: FakeBatchFilter) -> None:
        self.name = "F"
        self.pre_filter = pre.pre_filter
        self.pre_filter_extensions = pre.pre_filter_extensions
        self.filter_batch = filt.filter_batch


def test_first_failing_filter_owns_the_node_and_per_node_plugins_run_only_on_survivors() -> None:
    batch = FakeBatchFilter("B", {"n0"}, Status.of(Code.UNSCHEDULABLE, "batch says no"))
    single = FakeNodeFilter(
        "S", lambda n: Status.of(UUR, "node says no") if n.name != "n2" else None
    )
    sched = _scheduler(batch, single, filter=("B", "S"))
    result = sched.schedule_pod(CycleState(), pod_info("p"), _cache(3).snapshot())
    assert result.suggested_host == "n2"
    assert sorted(single.seen) == ["n1", "n2"]
    batch.reject = {"n0", "n2"}
    with pytest.raises(FitError) as err:
        sched.schedule_pod(CycleState(), pod_info("p"), _cache(3).snapshot())
    assert str(err.value) == "0/3 nodes are available: 1 node says no, 2 batch says no."
    assert err.value.diagnosis.unschedulable_plugins == {"B", "S"}


class _Declining:
    """Batch for pods named "b…", node by node for the others (rejects n0 either way)."""

    name = "D"

    def __init__(self, per_node: bool = True) -> None:
        self.seen: list[str] = []
        if per_node:
            self.filter = self._filter

    def filter_batch(self, state: CycleState, pod: Any, snapshot: Any) -> FilterVerdict | None:
        if not pod.name.startswith("b"):
            return None
        passed = np.array([n != "n0" for n in snapshot.names], dtype=np.bool_)
        return FilterVerdict.uniform(passed, Status.of(Code.UNSCHEDULABLE, "no n0"))

    def _filter(self, state: CycleState, pod: Any, node: Any) -> Status | None:
        self.seen.append(node.name)
        return Status.of(Code.UNSCHEDULABLE, "no n0") if node.name == "n0" else None


@pytest.mark.parametrize("pod_name", ["batch", "walk"])
def test_a_batch_filter_may_decline_for_a_pod(pod_name: str) -> None:
    plugin = _Declining()
    sched = _scheduler(plugin, filter=("D",))
    result = sched.schedule_pod(CycleState(), pod_info(pod_name), _cache(3).snapshot())
    assert result.suggested_host == "n1"
    assert plugin.seen == ([] if pod_name == "batch" else ["n0", "n1"])


def test_declining_without_a_per_node_form_is_an_error() -> None:
    sched = _scheduler(_Declining(per_node=False), filter=("D",))
    with pytest.raises(StatusError, match="'D' declined its batch form and has no other"):
        sched.schedule_pod(CycleState(), pod_info("walk"), _cache(3).snapshot())


def test_filter_error_aborts_the_cycle() -> None:
    single = FakeNodeFilter("S", lambda n: Status.error("boom"))
    with pytest.raises(StatusError, match="running 'S' filter plugin: boom"):
        _scheduler(single, filter=("S",)).schedule_pod(
            CycleState(), pod_info("p"), _cache(2).snapshot()
        )


def test_no_nodes_is_unschedulable_not_an_error() -> None:
    with pytest.raises(StatusError, match="no nodes available to schedule pods") as raised:
        _scheduler().schedule_pod(CycleState(), pod_info("p"), Cache().snapshot())
    assert raised.value.status.code == UUR  # upstream's ErrNoNodesAvailable


class _PostFilter:
    """A PostFilter plugin answering ``result`` (and Unschedulable)."""

    name = "PF"

    def __init__(self, result: PostFilterResult | None) -> None:
        self.result = result

    def post_filter(self, *_: Any) -> tuple[PostFilterResult | None, Status]:
        return self.result, Status.of(Code.UNSCHEDULABLE, "nothing to preempt")


NEVER = FakeNodeFilter("F", lambda n: Status.of(UUR, "never"))
NOMINATIONS = [
    # id, plugins and points, nodes, the outcome's nominated node (None: left as it is)
    pytest.param((NEVER,), {"filter": ("F",)}, 1, "", id="no PostFilter plugins: cleared"),
    pytest.param((NEVER, _PostFilter(None)), {"filter": ("F",), "post_filter": ("PF",)}, 1,
                 None, id="PostFilter offers nothing: left"),
    pytest.param((NEVER, _PostFilter(PostFilterResult(""))),
                 {"filter": ("F",), "post_filter": ("PF",)}, 1, "",
                 id="PostFilter clears it (no preemption candidate)"),
    pytest.param((NEVER, _PostFilter(PostFilterResult("n0"))),
                 {"filter": ("F",), "post_filter": ("PF",)}, 1, "n0", id="preemption made room"),
    pytest.param((), {}, 0, "", id="no nodes: cleared"),
    pytest.param((FakeReserve("R", Status.of(Code.UNSCHEDULABLE, "no")),), {"reserve": ("R",)},
                 1, "", id="Reserve rejects: cleared"),
    pytest.param((FakePermit("W", Status.error("boom")),), {"permit": ("W",)}, 1, "",
                 id="Permit fails: cleared"),
]  # fmt: skip


@pytest.mark.parametrize(("plugins", "points", "nodes", "want"), NOMINATIONS)
def test_a_failed_scheduling_cycle_says_what_becomes_of_the_nomination(
    plugins: tuple[Any, ...], points: dict[str, Any], nodes: int, want: str | None
) -> None:
    cache = _cache(nodes)
    outcome = scheduling_cycle(
        _scheduler(*plugins, **points), CycleState(), pod_info("p"), cache.snapshot(), cache
    )
    assert not outcome.ok
    assert outcome.nominated_node_name == want


# --- score ------------------------------------------------------------------------------------


def _halve(scores: np.ndarray[Any, Any]) -> None:
    scores //= 2


def test_scores_are_normalized_weighted_and_summed() -> None:
    a = FakeNormalizedScore("A", {"n0": 100, "n1": 40, "n2": 0}, normalize=_halve)
    b = FakeScore("B", {"n0": 0, "n1": 30, "n2": 20})
    sched = _scheduler(a, b, score=(ScorePluginRef("A", 1), ScorePluginRef("B", 3)))
    result = sched.schedule_pod(CycleState(), pod_info("p"), _cache(3).snapshot())
    assert result.plugin_scores["A"].tolist() == [50, 20, 0]
    assert result.plugin_scores["B"].tolist() == [0, 90, 60]
    assert result.suggested_host == "n1"  # 110 beats 50 and 60


def test_out_of_range_score_is_an_error() -> None:
    bad = FakeScore("A", {"n0": 101})
    with pytest.raises(StatusError) as err:
        _scheduler(bad, score=(ScorePluginRef("A"),)).schedule_pod(
            CycleState(), pod_info("p"), _cache(2).snapshot()
        )
    assert err.value.status.message == (
        'applying score defaultWeights on Score plugins: plugin "A" returns an invalid score 101, '
        "it should in the range of [0, 100] after normalizing"
    )


def test_ties_are_broken_uniformly_among_top_nodes_only() -> None:
    table = {"n0": 10, "n1": 90, "n2": 90, "n3": 50, "n4": 90}
    chosen = set()
    for seed in range(60):
        sched = _scheduler(FakeScore("A", table), seed=seed, score=(ScorePluginRef("A"),))
        chosen.add(
            sched.schedule_pod(CycleState(), pod_info("p"), _cache(5).snapshot()).suggested_host
        )
    assert chosen == {"n1", "n2", "n4"}


def test_a_single_feasible_node_is_not_scored() -> None:
    scorer = FakeScore("A", {})
    reject = FakeBatchFilter("F", {"n0", "n2"}, Status(Code.UNSCHEDULABLE, ("x",)))
    sched = _scheduler(reject, scorer, filter=("F",), score=(ScorePluginRef("A"),))
    assert (
        sched.schedule_pod(CycleState(), pod_info("p"), _cache(3).snapshot()).suggested_host == "n1"
    )
    assert scorer.calls == 0


# --- reserve, permit, bind --------------------------------------------------------------------


def test_reserve_failure_unreserves_and_forgets() -> None:
    reserve = FakeReserve("R", Status.of(Code.UNSCHEDULABLE, "taken"))
    cache = _cache(1)
    sched = _scheduler(reserve, reserve=("R",))
    p = pod_info("p", cpu="1")
    outcome = scheduling_cycle(sched, CycleState(), p, cache.snapshot(), cache)
    # Upstream wraps a rejection on the chosen host as a FitError over that one node.
    assert outcome.status == Status(Code.UNSCHEDULABLE, ("0/1 nodes are available: 1 taken.",), "R")
    assert outcome.fit_error is not None
    assert outcome.fit_error.diagnosis.unschedulable_plugins == {"R"}
    assert reserve.log == ["reserve n0", "unreserve n0"]
    assert cache.get_pod(p.uid) is None


@pytest.mark.parametrize(
    ("decide", "want"),
    [
        pytest.param("allow", None, id="allowed"),
        pytest.param(
            "reject",
            Status(Code.UNSCHEDULABLE, ("0/1 nodes are available: 1 not now.",), "W"),
            id="rejected",
        ),
        pytest.param(
            "timeout",
            Status(
                Code.UNSCHEDULABLE,
                (
                    "0/1 nodes are available: 1 rejected due to timeout after waiting 0s "
                    "at plugin W.",
                ),
                "W",
            ),
            id="timed out",
        ),
    ],
)
def test_permit_wait(decide: str, want: Status | None) -> None:
    permit = FakePermit("W", Status(Code.WAIT), timeout=0.0 if decide == "timeout" else 60.0)
    bind = FakeBind("FakeBind", None)
    cache = _cache(1)
    sched = _scheduler(permit, bind, permit=("W",))
    p = pod_info("p", cpu="1")
    state = CycleState()
    outcome = scheduling_cycle(sched, state, p, cache.snapshot(), cache)
    assert outcome.waiting
    assert outcome.ok
    waiting = sched.fwk.get_waiting_pod(p.uid)
    assert waiting is not None
    assert waiting.pending_plugins() == ["W"]
    if decide == "allow":
        waiting.allow("W")
    elif decide == "reject":
        waiting.reject("W", "not now")
    assert binding_cycle(sched, state, p, "n0", cache) == want
    assert bind.bound == ([("p", "n0")] if want is None else [])
    assert (cache.get_pod(p.uid) is not None) is (want is None)
    assert sched.fwk.get_waiting_pod(p.uid) is None


OK = Status(Code.SUCCESS)
ANNOUNCES = [
    # id, PreBind plugins (name, PreBindPreFlight answer; None: no PreBindPreFlight), Permit
    # waits, the pod already nominated to the host, announced, the binding cycle's status
    pytest.param([("P", OK)], False, False, True, None, id="PreBind will act: announced"),
    pytest.param([("P", SKIP)], False, False, False, None, id="no PreBind acts: not announced"),
    pytest.param([("P", SKIP), ("Q", OK)], False, False, True, None, id="one of two acts"),
    pytest.param([("P", "none")], False, False, True, None,
                 id="without PreBindPreFlight: taken to act"),
    pytest.param([], False, False, False, None, id="no PreBind plugins"),
    pytest.param([], True, False, True, None, id="Permit makes the pod wait: announced"),
    pytest.param([("P", OK)], False, True, False, None,
                 id="already nominated to the host: not written again"),
    pytest.param([("P", Status.error("boom"))], False, False, False,
                 Status(Code.ERROR, ('running PreBindPreFlight "P": boom',), "P"),
                 id="PreBindPreFlight error: the cycle fails before anything is written"),
]  # fmt: skip


@pytest.mark.parametrize(("pre_binds", "waits", "nominated", "announced", "want"), ANNOUNCES)
def test_the_binding_cycle_announces_the_host_when_it_will_take_time(
    pre_binds: list[tuple[str, Any]], waits: bool, nominated: bool, announced: bool,
    want: Status | None,
) -> None:  # fmt: skip
    plugins = [FakePreBind(n) if a == "none" else FakePreBindPreFlight(n, a) for n, a in pre_binds]
    reserve, bind = FakeReserve("R"), FakeBind("FakeBind", None)
    permit = FakePermit("W", Status(Code.WAIT) if waits else None, timeout=60.0)
    names = tuple(p.name for p in plugins)
    sched = _scheduler(*plugins, reserve, permit, bind, pre_bind=names, reserve=("R",),
                       permit=("W",))  # fmt: skip
    cache = _cache(1)
    p = replace(pod_info("p"), nominated_node_name="n0" if nominated else "")
    state = CycleState()
    assert scheduling_cycle(sched, state, p, cache.snapshot(), cache).ok
    if waits:
        waiting = sched.fwk.get_waiting_pod(p.uid)
        assert waiting is not None
        waiting.allow("W")
    written: list[tuple[str, str]] = []
    status = binding_cycle(sched, state, p, "n0", cache,
                           announce=lambda pod, host: written.append((pod.name, host)))  # fmt: skip
    assert status == want
    assert written == ([("p", "n0")] if announced else [])
    assert bind.bound == ([("p", "n0")] if want is None else [])
    if want is not None:  # undone: Unreserve ran and the pod is forgotten
        assert reserve.log == ["reserve n0", "unreserve n0"]
        assert cache.get_pod(p.uid) is None
    for plugin in plugins:  # PreBind runs unless its PreBindPreFlight skipped (or failed)
        ran = want is None and getattr(plugin, "pre_flight", None) != SKIP
        assert ("pre_bind n0" in plugin.log) is ran


def test_permit_rejection_fails_the_scheduling_cycle() -> None:
    cache = _cache(1)
    sched = _scheduler(FakePermit("W", Status.of(Code.UNSCHEDULABLE, "no")), permit=("W",))
    outcome = scheduling_cycle(sched, CycleState(), pod_info("p"), cache.snapshot(), cache)
    assert not outcome.ok
    assert outcome.status == Status(Code.UNSCHEDULABLE, ("0/1 nodes are available: 1 no.",), "W")
    assert outcome.fit_error is not None
    assert outcome.fit_error.diagnosis.unschedulable_plugins == {"W"}


def test_bind_skip_passes_to_the_next_binder_and_errors_forget() -> None:
    skipper, binder = FakeBind("A", SKIP), FakeBind("B", None)
    cache = _cache(1)
    sched = _scheduler(skipper, binder, bind=("A", "B"))
    p = pod_info("p")
    scheduling_cycle(sched, CycleState(), p, cache.snapshot(), cache)
    assert binding_cycle(sched, CycleState(), p, "n0", cache) is None
    assert binder.bound == [("p", "n0")]
    assert cache.is_assumed(p.uid)  # bound; stays assumed until the informer confirms it
    failing = _scheduler(FakeBind("A", Status.error("409")), bind=("A",))
    q = pod_info("q")
    scheduling_cycle(failing, CycleState(), q, cache.snapshot(), cache)
    assert binding_cycle(failing, CycleState(), q, "n0", cache) == Status(
        Code.ERROR, ('running Bind plugin "A": 409',), "A"
    )
    assert cache.get_pod(q.uid) is None


# --- the in-tree plugins together -------------------------------------------------------------


def test_failed_scheduling_message_with_in_tree_plugins() -> None:
    gpu = {"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}
    nodes = [node("a", cpu="1"), node("b", cpu="1")] + [
        node(f"t{i}", taints=(gpu,)) for i in range(3)
    ]
    cache = build_cache(nodes)
    fwk = Framework(default_profile(), in_tree_registry(), pod_binder=lambda _p, _n: None)
    outcome = scheduling_cycle(
        PodScheduler(fwk), CycleState(), pod_info("p", cpu="2"), cache.snapshot(), cache
    )
    assert outcome.fit_error is not None
    assert outcome.status is not None
    assert outcome.status.code is Code.UNSCHEDULABLE
    assert outcome.status.message == (
        "0/5 nodes are available: 2 Insufficient cpu, "
        "3 node(s) had untolerated taint(s). "
        # PostFilter runs DynamicResources first (the pod has no claims: a plain Unschedulable
        # without reasons since 1.37), then DefaultPreemption: every node is
        # UnschedulableAndUnresolvable (cpu beyond allocatable, taints), so it has no potential
        # node; upstream joins both plugins' reasons the same way.
        "preemption: 0/5 nodes are available: 5 Preemption is not helpful for scheduling."
    )
    assert outcome.fit_error.diagnosis.unschedulable_plugins == {
        "NodeResourcesFit",
        "TaintToleration",
    }


def test_in_tree_cycle_places_on_the_least_allocated_node_and_assumes() -> None:
    cache = build_cache(
        [node("busy"), node("idle")], [pod("r", cpu="3", memory="16Gi", node_name="busy")]
    )
    fwk = Framework(default_profile(), in_tree_registry(), pod_binder=lambda _p, _n: None)
    sched = PodScheduler(fwk)
    p = pod_info("p", cpu="500m")
    state = CycleState()
    outcome = scheduling_cycle(sched, state, p, cache.snapshot(), cache)
    assert outcome.result is not None
    assert outcome.result.suggested_host == "idle"
    assert cache.is_assumed(p.uid)
    assert binding_cycle(sched, state, p, "idle", cache) is None


class _PostFilter:
    name = "Preempt"

    def __init__(self, status: Status) -> None:
        self.status = status

    def post_filter(self, state: Any, pod: Any, statuses: Any) -> tuple[None, Status]:
        self.seen = len(statuses)
        return None, self.status


def test_post_filter_message_is_appended_to_the_failure() -> None:
    post = _PostFilter(Status.of(Code.UNSCHEDULABLE, "preemption: 0/2 nodes are available: 2 No."))
    reject = FakeBatchFilter("F", {"n0", "n1"}, Status.of(Code.UNSCHEDULABLE, "busy"))
    cache = _cache(2)
    sched = _scheduler(reject, post, filter=("F",), post_filter=("Preempt",))
    outcome = scheduling_cycle(sched, CycleState(), pod_info("p"), cache.snapshot(), cache)
    assert post.seen == 2
    assert outcome.status == Status.of(
        Code.UNSCHEDULABLE,
        "0/2 nodes are available: 2 busy. preemption: 0/2 nodes are available: 2 No.",
    )
