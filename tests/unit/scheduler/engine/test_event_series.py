"""The Event series cache aggregates isomorphic Events as client-go's events broadcaster does:
same key → one series (the second observation writes count 2, later ones only count), another
key → a new Event, and a key quiet for the window ends its series; long FailedScheduling notes
are cut as upstream's truncateMessage."""

from __future__ import annotations

from typing import Any

import pytest

from corral.k8s import JSON
from corral.scheduler.engine.event_recorder import (
    FINISH_SECONDS,
    NOTE_LIMIT,
    SeriesCache,
    truncate_note,
    worth_retrying,
)
from corral.scheduler.engine.leaderelection import micro_time

T0 = 1_800_000_000.0


def event(note: str = "0/3 nodes are available", **change: Any) -> JSON:
    regarding = {"apiVersion": "v1", "kind": "Pod", "namespace": "ns", "name": "p", "uid": "u1",
                 "resourceVersion": change.pop("resource_version", "7")}  # fmt: skip
    return {
        "metadata": {"name": f"p.{len(note):x}", "namespace": "ns"},
        "type": "Warning", "action": "Scheduling", "reason": "FailedScheduling",
        "reportingController": "corral", "reportingInstance": "corral-host",
        "note": note, "regarding": regarding, **change,
    }  # fmt: skip


def summary(written: JSON | None) -> str | None:
    """What a write is: the new Event's note, or its series' count."""
    if written is None:
        return None
    series = written.get("series")
    return f"series {series['count']}" if series else f"new {written['note']}"


@pytest.mark.parametrize(
    ("events", "writes"),
    [
        pytest.param([event()] * 3, ["new 0/3 nodes are available", "series 2", None],
                     id="same key: one Event, then its series, then counted only"),
        pytest.param([event(), event("0/4 nodes are available"), event("other")],
                     ["new 0/3 nodes are available", "series 2", None],
                     id="another note, same key: the series keeps the first note"),
        pytest.param([event(), event(reason="Scheduled", type="Normal")],
                     ["new 0/3 nodes are available", "new 0/3 nodes are available"],
                     id="another reason and type: a new Event"),
        pytest.param([event(), event(resource_version="8"), event(resource_version="8")],
                     ["new 0/3 nodes are available", "new 0/3 nodes are available", "series 2"],
                     id="the pod's resourceVersion is part of the key, as in client-go"),
        pytest.param([event(), event(reportingInstance="corral-other")],
                     ["new 0/3 nodes are available", "new 0/3 nodes are available"],
                     id="another reporting instance: a new Event"),
    ],
)  # fmt: skip
def test_observe(events: list[JSON], writes: list[str | None]) -> None:
    cache = SeriesCache()
    got = [summary(cache.observe(e, T0 + i)) for i, e in enumerate(events)]
    assert got == writes


def test_series_count_and_last_observed_time_advance() -> None:
    cache = SeriesCache()
    for i in range(20):
        cache.observe(event(), T0 + i)
    (series,) = cache.refresh()
    assert series["series"] == {"count": 20, "lastObservedTime": micro_time(T0 + 19)}
    assert series["note"] == "0/3 nodes are available"


@pytest.mark.parametrize(
    ("observations", "finish_at", "final", "left"),
    [
        pytest.param(1, T0 + FINISH_SECONDS + 1, [], 0, id="a quiet singleton is forgotten"),
        pytest.param(1, T0 + FINISH_SECONDS - 1, [], 1, id="a singleton within the window stays"),
        pytest.param(5, T0 + 4 + FINISH_SECONDS + 1, [5], 0,
                     id="a quiet series ends with its final count written"),
        pytest.param(5, T0 + FINISH_SECONDS + 1, [], 1,
                     id="a series observed within the window stays open"),
    ],
)  # fmt: skip
def test_window_expiry(observations: int, finish_at: float, final: list[int], left: int) -> None:
    cache = SeriesCache()
    for i in range(observations):
        cache.observe(event(), T0 + i)
    assert [e["series"]["count"] for e in cache.finish(finish_at)] == final
    assert len(cache) == left


def test_after_expiry_the_same_key_starts_a_new_event() -> None:
    cache = SeriesCache()
    cache.observe(event(), T0)
    cache.observe(event(), T0 + 1)
    cache.finish(T0 + 1 + FINISH_SECONDS + 1)
    assert summary(cache.observe(event(), T0 + 2 * FINISH_SECONDS)) == "new 0/3 nodes are available"


def test_written_events_are_not_changed_by_later_observations() -> None:
    cache = SeriesCache()
    first = cache.observe(event(), T0)
    second = cache.observe(event(), T0 + 1)
    cache.observe(event(), T0 + 2)
    assert first is not None
    assert "series" not in first
    assert second is not None
    assert second["series"]["count"] == 2


@pytest.mark.parametrize(
    ("length", "want"),
    [
        pytest.param(NOTE_LIMIT, "x" * NOTE_LIMIT, id="at the limit: kept"),
        pytest.param(NOTE_LIMIT + 1, "x" * (NOTE_LIMIT - 4) + " ...", id="over: cut, ' ...'"),
    ],
)
def test_failed_scheduling_notes_are_truncated_as_upstream(length: int, want: str) -> None:
    assert truncate_note("x" * length) == want


@pytest.mark.parametrize(
    ("status", "series", "retried"),
    [
        pytest.param(0, False, True, id="transport failure: tried again"),
        pytest.param(0, True, True, id="transport failure of a series: tried again"),
        pytest.param(409, True, True, id="series POST raced its first Event: tried again"),
        pytest.param(409, False, False, id="new Event already exists: abandoned"),
        pytest.param(404, False, False, id="namespace gone: abandoned"),
        pytest.param(422, True, False, id="invalid series: abandoned"),
        pytest.param(500, False, False, id="server error: abandoned, as client-go's StatusError"),
        pytest.param(403, False, False, id="forbidden: abandoned"),
    ],
)
def test_which_failed_writes_are_tried_again(status: int, series: bool, retried: bool) -> None:
    assert worth_retrying(status, series=series) is retried
