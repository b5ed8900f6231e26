"""The engine process's garbage collector: its thresholds, the freeze after the first sync, and
the clock that times every collection."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from typing import Any

import pytest
from prometheus_client import CollectorRegistry, generate_latest

from corral.scheduler.engine import gc_tuning


@pytest.fixture
def collector_state() -> Iterator[None]:
    """The test process's thresholds and permanent generation, as they were before."""
    threshold = gc.get_threshold()
    yield
    gc.set_threshold(*threshold)
    gc.unfreeze()


@pytest.mark.usefixtures("collector_state")
def test_configure_raises_only_the_young_generations_threshold() -> None:
    gc.set_threshold(700, 10, 10)
    gc_tuning.configure()
    assert gc.get_threshold() == (gc_tuning.GEN0_THRESHOLD, 10, 10)


def _collected_over(obj: Any) -> bool:
    """Whether a collection of some generation would traverse ``obj``."""
    return any(o is obj for o in gc.get_objects())


@pytest.mark.usefixtures("collector_state")
def test_freeze_moves_what_is_alive_out_of_every_collection() -> None:
    kept: list[list[int]] = [[] for _ in range(100)]  # containers the collector tracks
    assert _collected_over(kept[0])
    gc_tuning.freeze()
    assert gc.get_freeze_count() >= len(kept)
    assert not _collected_over(kept[0])
    made_after: list[int] = []
    assert _collected_over(made_after)


@pytest.mark.parametrize("generation", [0, 1, 2], ids=["young", "middle", "full"])
def test_the_clock_times_each_collection_by_generation(generation: int) -> None:
    clock = gc_tuning.GcClock()
    clock.install()
    try:
        gc.collect(generation)
    finally:
        clock.uninstall()
    assert clock.count[generation] == 1
    assert sum(clock.count) == 1
    assert clock.wall[generation] > 0.0
    assert clock._callback not in gc.callbacks


def test_the_clock_installs_once_and_ignores_a_collection_it_saw_end_only() -> None:
    clock = gc_tuning.GcClock()
    clock.install()
    clock.install()
    try:
        assert gc.callbacks.count(clock._callback) == 1
        clock._callback("stop", {"generation": 2, "collected": 0, "uncollectable": 0})
        assert clock.count == [0, 0, 0]
    finally:
        clock.uninstall()


def test_the_clock_is_exported_as_counters() -> None:
    clock = gc_tuning.GcClock()
    clock.wall[2], clock.cpu[2], clock.count[2] = 0.5, 0.25, 3
    registry = CollectorRegistry()
    registry.register(clock)
    lines = set(generate_latest(registry).decode().splitlines())
    assert 'corral_gc_seconds_total{clock="wall",generation="2"} 0.5' in lines
    assert 'corral_gc_seconds_total{clock="cpu",generation="2"} 0.25' in lines
    assert 'corral_gc_collections_total{generation="2"} 3.0' in lines
    assert 'corral_gc_collections_total{generation="0"} 0.0' in lines
