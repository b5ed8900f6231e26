"""What one pod's cycles record, as upstream's framework does: every extension point that
runs, with its status and profile (scheduler_framework_extension_point_duration_seconds), and
in a sampled cycle only every plugin call (scheduler_plugin_execution_duration_seconds)."""

from __future__ import annotations

import random
from typing import Any

import pytest

from corral.scheduler import metrics as m
from corral.scheduler.framework.cycle_state import CycleState
from corral.scheduler.framework.profile import ResolvedProfile, ScorePluginRef
from corral.scheduler.framework.runtime.framework import Framework, sample_plugin_metrics
from corral.scheduler.framework.runtime.schedule_one import binding_cycle, scheduling_cycle
from corral.scheduler.framework.runtime.schedule_pod import PodScheduler
from corral.scheduler.framework.status import Code, Status
from corral.testing.builders import build_cache, node, pod_info
from support.scheduler_fakes import (
    FakeBatchFilter,
    FakeBatchScore,
    FakePreBind,
    FakePreFilter,
    FakeReserve,
    registry_of,
)

NO = Status.of(Code.UNSCHEDULABLE, "no")
PROFILE = "team-a"


def _run(reject: set[str], *, sampled: bool) -> m.Recorder:
    rec = m.new_recorder()
    plugins: list[Any] = [
        FakePreFilter("Pre"),
        FakeBatchFilter("Fit", reject, NO),
        FakeBatchScore("Spread", 1),
        FakeReserve("Res"),
        FakePreBind("Vol"),
    ]
    profile = ResolvedProfile(
        scheduler_name=PROFILE,
        queue_sort=("FakeQueueSort",),
        pre_filter=("Pre",),
        filter=("Fit",),
        score=(ScorePluginRef("Spread", 1),),
        reserve=("Res",),
        pre_bind=("Vol",),
        bind=("FakeBind",),
    )
    fwk = Framework(profile, registry_of(*plugins), metrics=rec)
    scheduler = PodScheduler(fwk, rng=random.Random(0))
    cache = build_cache([node("n1"), node("n2"), node("n3")])
    pod = pod_info("p")
    state = CycleState(record_plugin_metrics=sampled)
    outcome = scheduling_cycle(scheduler, state, pod, cache.snapshot(), cache)
    if outcome.ok:
        assert outcome.result is not None
        assert binding_cycle(scheduler, state, pod, outcome.result.suggested_host, cache) is None
    return rec


BOUND_POINTS = {
    (point, "Success", PROFILE): 1.0
    for point in (
        "PreFilter", "Filter", "PreScore", "Score", "Reserve", "Permit",
        "PreBindPreFlight", "PreBind", "Bind", "PostBind",
    )
}  # fmt: skip
BOUND_PLUGINS = {
    ("Pre", "PreFilter", "Success"): 1.0,
    ("Fit", "Filter", "Success"): 1.0,  # one batch call over every node
    ("Spread", "Score", "Success"): 1.0,
    ("Res", "Reserve", "Success"): 1.0,
    ("Vol", "PreBind", "Success"): 1.0,
    ("FakeBind", "Bind", "Success"): 1.0,
}


@pytest.mark.parametrize(
    ("reject", "sampled", "points", "plugins"),
    [
        pytest.param(set(), False, BOUND_POINTS, {}, id="bound, not sampled"),
        pytest.param(set(), True, BOUND_POINTS, BOUND_PLUGINS, id="bound, sampled"),
        pytest.param(
            {"n1", "n2", "n3"},
            True,
            {("PreFilter", "Success", PROFILE): 1.0, ("Filter", "Success", PROFILE): 1.0},
            {("Pre", "PreFilter", "Success"): 1.0, ("Fit", "Filter", "Success"): 1.0},
            id="no node fits: Filter is still Success, as upstream's",
        ),
    ],
)
def test_a_cycle_records_its_points_and_sampled_plugins(
    reject: set[str],
    sampled: bool,
    points: dict[tuple[str, ...], float],
    plugins: dict[tuple[str, ...], float],
) -> None:
    rec = _run(reject, sampled=sampled)
    assert rec.series(m.FRAMEWORK_EXTENSION_POINT_DURATION) == points
    assert rec.series(m.PLUGIN_EXECUTION_DURATION) == plugins
    assert rec.value(m.SCHEDULING_ALGORITHM_DURATION) == 1.0


def test_about_a_tenth_of_cycles_are_sampled() -> None:
    random.seed(7)
    share = sum(sample_plugin_metrics() for _ in range(20_000)) / 20_000
    assert share == pytest.approx(m.PLUGIN_METRICS_SAMPLE_PERCENT / 100, abs=0.01)
