"""The explanation is what the cycle evaluated: recorded at the runtime's own points, never by
running a plugin again."""

from __future__ import annotations

import random
from typing import Any

import pytest

from corral.scheduler.framework import explanation as x
from corral.scheduler.framework.cycle_state import CycleState
from corral.scheduler.framework.diagnosis import FitError
from corral.scheduler.framework.profile import ResolvedProfile, ScorePluginRef
from corral.scheduler.framework.runtime.framework import Framework
from corral.scheduler.framework.runtime.recording import CycleRecording
from corral.scheduler.framework.runtime.schedule_pod import PodScheduler
from corral.scheduler.framework.status import Code, Status
from corral.testing.builders import build_cache, node, pod_info
from support.scheduler_fakes import (
    SKIP,
    FakeBatchFilter,
    FakeNodeFilter,
    FakeNormalizedScore,
    FakePreFilter,
    FakeScore,
    registry_of,
)

REJECT = Status.of(Code.UNSCHEDULABLE, "nope")


def _explain(*plugins: Any, nodes: int = 4, pct: int | None = None, **points: Any) -> x.Explanation:
    profile = ResolvedProfile(
        scheduler_name="test",
        queue_sort=("FakeQueueSort",),
        bind=("FakeBind",),
        percentage_of_nodes_to_score=pct,
        **points,
    )
    scheduler = PodScheduler(Framework(profile, registry_of(*plugins)), rng=random.Random(0))
    snapshot = build_cache([node(f"n{i}") for i in range(nodes)]).snapshot()
    state = CycleState()
    rec = CycleRecording("default/p", "test")
    state.recorder = rec
    try:
        result = scheduler.schedule_pod(state, pod_info("p"), snapshot)
        rec.outcome("Success", result.suggested_host, "")
    except FitError as err:
        rec.outcome("Unschedulable", None, err.message())
    return rec.explanation


def test_a_skipped_plugin_has_no_filter_verdicts() -> None:
    """Review finding 1: a plugin whose PreFilter said Skip is shown skipped, not run."""
    skipper = FakePreFilter("Skipper", status=SKIP)
    filt = FakeBatchFilter("Skipper", set(), REJECT)

    class Both:
        name = "Skipper"
        pre_filter = skipper.pre_filter
        pre_filter_extensions = skipper.pre_filter_extensions
        filter_batch = filt.filter_batch

    e = _explain(Both(), FakeScore("S", {}), pre_filter=("Skipper",), filter=("Skipper",),
                 score=(ScorePluginRef("S", 1),))  # fmt: skip
    assert e.pre_filter == [x.PointResult("Skipper", "Skip")]
    (column,) = e.filter
    assert (column.plugin, column.skipped, column.nodes) == ("Skipper", True, {})
    assert e.feasible_nodes == ["n0", "n1", "n2", "n3"]


def test_a_per_node_plugin_is_recorded_only_where_it_ran() -> None:
    """A batch plugin answers for every node; a per-node one runs up to each node's first
    rejection, so it has no verdict on the node the batch plugin rejected."""
    batch = FakeBatchFilter("Batch", {"n1"}, REJECT)
    single = FakeNodeFilter("Single", lambda n: REJECT if n.name == "n2" else None)
    e = _explain(batch, single, FakeScore("S", {}), filter=("Batch", "Single"),
                 score=(ScorePluginRef("S", 1),))  # fmt: skip
    by = {c.plugin: c for c in e.filter}
    assert set(by["Batch"].nodes) == {"n0", "n1", "n2", "n3"}
    assert by["Batch"].nodes["n1"] == x.NodeVerdict("Unschedulable", "nope")
    assert set(by["Single"].nodes) == set(single.seen) == {"n0", "n2", "n3"}
    assert by["Single"].nodes["n2"] == x.NodeVerdict("Unschedulable", "nope")
    assert e.feasible_nodes == ["n0", "n3"]
    assert [(c.plugin, v.message) for c, v in e.failures("n1")] == [("Batch", "nope")]


def test_sampling_leaves_nodes_unevaluated() -> None:
    """With percentageOfNodesToScore the Filter stage stops early: the rest is not processed
    (and without Score plugins it stops at the first feasible node, as upstream's)."""
    single = FakeNodeFilter("Single", lambda n: None)
    e = _explain(single, FakeScore("S", {}), nodes=200, pct=10, filter=("Single",),
                 score=(ScorePluginRef("S", 1),))  # fmt: skip
    assert len(e.processed_nodes) == 100
    assert len(e.nodes) == 200
    assert len(e.filter[0].nodes) == 100
    e = _explain(FakeNodeFilter("Single", lambda n: None), nodes=5, filter=("Single",))
    assert (e.processed_nodes, e.feasible_nodes) == (["n0"], ["n0"])


def test_scores_raw_normalized_weighted_and_totals() -> None:
    def halve(scores: Any) -> None:
        scores //= 2

    a = FakeNormalizedScore("A", {"n0": 100, "n1": 40}, normalize=halve)
    b = FakeScore("B", {"n0": 10, "n1": 90})
    e = _explain(a, b, nodes=2, score=(ScorePluginRef("A", 3), ScorePluginRef("B", 1)))
    by = {c.plugin: c for c in e.score}
    assert by["A"].nodes["n0"] == x.NodeScore(raw=100, normalized=50, weighted=150)
    assert by["B"].nodes["n1"] == x.NodeScore(raw=90, normalized=90, weighted=90)
    assert e.totals == {"n0": 160, "n1": 150}
    assert e.selected_node == "n0"


def test_the_explanation_reads_back_from_its_json() -> None:
    batch = FakeBatchFilter("Batch", {"n1"}, REJECT)
    e = _explain(batch, FakeScore("S", {"n0": 5}), filter=("Batch",),
                 score=(ScorePluginRef("S", 2),))  # fmt: skip
    body = x.to_json(e)
    assert (body["apiVersion"], body["kind"]) == ("corral.dev/v1alpha1", "Explanation")
    assert x.from_json(body) == e


def test_a_cycle_without_recording_records_nothing() -> None:
    """The hooks cost nothing unless asked for: no recorder, no explanation anywhere."""
    state = CycleState()
    assert state.recorder is None
    assert state.clone().recorder is None
    state.recorder = CycleRecording("p", "t")
    assert state.clone().recorder is None  # preemption's dry runs record nothing


@pytest.mark.parametrize("bad", [{"apiVersion": 1}, {"filter": [{"plugin": "A", "nodes": 3}]}])
def test_a_malformed_explanation_is_refused_with_its_path(bad: dict[str, Any]) -> None:
    with pytest.raises(ValueError, match=r"apiVersion|filter\[0\]\.nodes"):
        x.from_json(bad)
