"""The engine's timing hooks: which phases a cycle books, what a mark books, the export."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest
from prometheus_client import CollectorRegistry, generate_latest

from corral.scheduler.engine.timing import EngineTiming, PhaseClock, Tally
from corral.scheduler.framework.cycle_state import CycleState
from corral.scheduler.framework.runtime.framework import Framework
from corral.scheduler.framework.runtime.schedule_one import scheduling_cycle
from corral.scheduler.framework.runtime.schedule_pod import PodScheduler
from corral.scheduler.plugins.registry import default_profile, in_tree_registry
from corral.testing.builders import build_cache, node, pod_info


@pytest.mark.parametrize(
    ("nodes", "cpu", "booked"),
    [
        pytest.param(2, "500m", {"filter": 1, "score": 1, "assume": 1}, id="placed after scoring"),
        pytest.param(1, "500m", {"filter": 1, "assume": 1}, id="one feasible node: no scoring"),
        pytest.param(2, "99", {"filter": 1, "post_filter": 1}, id="unschedulable: PostFilter"),
    ],
)
def test_a_cycle_books_its_phases(nodes: int, cpu: str, booked: dict[str, int]) -> None:
    cache = build_cache([node(f"n{i}") for i in range(nodes)])
    fwk = Framework(default_profile(), in_tree_registry(), pod_binder=lambda _p, _n: None)
    scheduler = PodScheduler(fwk)
    clock = PhaseClock()
    scheduler.mark = clock.mark
    scheduling_cycle(scheduler, CycleState(), pod_info("p", cpu=cpu), cache.snapshot(), cache)
    assert {phase: n for phase, n in clock.count.items() if n} == booked


def test_a_mark_books_the_time_since_the_previous_one() -> None:
    clock = PhaseClock()
    time.sleep(0.05)  # waiting: wall time, next to no CPU
    clock.mark("pop")
    sum(i * i for i in range(200_000))  # working: CPU time
    clock.mark("filter")
    assert clock.wall["pop"] >= 0.05
    assert clock.cpu["pop"] < clock.wall["pop"]
    assert clock.cpu["filter"] > 0
    assert clock.count == {**dict.fromkeys(clock.count, 0), "pop": 1, "filter": 1}


def test_tally_sums_spans_from_several_threads() -> None:
    tally = Tally()

    def work() -> None:
        with tally.span():
            time.sleep(0.01)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert tally.count == 4
    assert tally.wall >= 0.04


def test_the_clocks_are_exported_as_counters() -> None:
    timing = EngineTiming()
    timing.scheduling.mark("filter")
    timing.tallies["api_bind"].add(0.5, 0.1)
    registry = CollectorRegistry()
    registry.register(timing)
    text = generate_latest(registry).decode()
    lines: Any = set(text.splitlines())
    assert 'corral_scheduler_thread_phases_total{phase="filter"} 1.0' in lines
    assert 'corral_scheduler_span_seconds_total{clock="wall",span="api_bind"} 0.5' in lines
    assert 'corral_scheduler_spans_total{span="api_bind"} 1.0' in lines
    assert any(
        line.startswith('corral_scheduler_thread_seconds_total{clock="cpu",phase="pop"}')
        for line in lines
    )
