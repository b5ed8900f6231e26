"""Where the engine spends and waits: wall and thread-CPU seconds per phase, as Prometheus
counters a benchmark scrapes before and after its measured phase.

- :class:`PhaseClock` is the scheduling thread's: each ``mark(phase)`` books the time since the
  previous mark to ``phase`` (``pop``: waiting for and popping a pod; ``snapshot``;
  ``filter``: PreFilter, Filter and filter extenders; ``score``: PreScore, Score, host
  selection; ``post_filter``: preemption's dry run; ``assume``: assume, Reserve, Permit;
  ``handoff``: submitting the binding cycle; ``failure``: requeue and failure report). Wall
  time minus thread-CPU time of a busy phase is time the thread was ready but not running: the
  GIL held by the binding or event-loop threads, or the core taken by another process.
- :class:`Tally` sums spans measured on many threads (the binding pool's cycles, the binder's
  API calls), under a lock.

A mark costs two clock reads (1-2 µs here); a cycle makes six to eight.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from typing import Final

from prometheus_client.core import CounterMetricFamily
from prometheus_client.registry import Collector

PHASES: Final = (
    "pop", "snapshot", "filter", "score", "post_filter", "assume", "handoff", "failure",
)  # fmt: skip


class PhaseClock:
    """Wall and CPU seconds per phase of one thread; only that thread calls :meth:`mark`."""

    def __init__(self) -> None:
        self.wall: dict[str, float] = dict.fromkeys(PHASES, 0.0)
        self.cpu: dict[str, float] = dict.fromkeys(PHASES, 0.0)
        self.count: dict[str, int] = dict.fromkeys(PHASES, 0)
        self._wall = time.perf_counter()
        self._cpu = time.thread_time()

    def restart(self) -> None:
        """Start timing from now on the calling thread (the thread that will mark)."""
        self._wall = time.perf_counter()
        self._cpu = time.thread_time()

    def mark(self, phase: str) -> None:
        wall, cpu = time.perf_counter(), time.thread_time()
        self.wall[phase] = self.wall.get(phase, 0.0) + wall - self._wall
        self.cpu[phase] = self.cpu.get(phase, 0.0) + cpu - self._cpu
        self.count[phase] = self.count.get(phase, 0) + 1
        self._wall, self._cpu = wall, cpu


class Tally:
    """Count, wall and CPU seconds of spans timed on any thread (see :meth:`span`)."""

    def __init__(self) -> None:
        self.count = 0
        self.wall = 0.0
        self.cpu = 0.0
        self._lock = threading.Lock()

    def add(self, wall: float, cpu: float) -> None:
        with self._lock:
            self.count += 1
            self.wall += wall
            self.cpu += cpu

    def span(self) -> _Span:
        return _Span(self)


class _Span:
    """``with tally.span(): ...`` adds the block's wall and thread-CPU time."""

    def __init__(self, tally: Tally) -> None:
        self.tally = tally
        self.wall = 0.0
        self.cpu = 0.0

    def __enter__(self) -> None:
        self.wall, self.cpu = time.perf_counter(), time.thread_time()

    def __exit__(self, *_: object) -> None:
        self.tally.add(time.perf_counter() - self.wall, time.thread_time() - self.cpu)


class EngineTiming(Collector):
    """The engine's clocks, exported on its registry."""

    def __init__(self) -> None:
        self.scheduling = PhaseClock()
        self.tallies: dict[str, Tally] = {"binding_cycle": Tally(), "api_bind": Tally()}

    def collect(self) -> Iterator[CounterMetricFamily]:
        seconds = CounterMetricFamily(
            "corral_scheduler_thread_seconds",
            "Seconds the scheduling thread spent per phase, by clock (wall or thread CPU).",
            labels=["phase", "clock"],
        )
        marks = CounterMetricFamily(
            "corral_scheduler_thread_phases",
            "Times the scheduling thread ended each phase.",
            labels=["phase"],
        )
        clock = self.scheduling
        for phase in list(clock.wall):
            seconds.add_metric([phase, "wall"], clock.wall[phase])
            seconds.add_metric([phase, "cpu"], clock.cpu[phase])
            marks.add_metric([phase], clock.count[phase])
        span_seconds = CounterMetricFamily(
            "corral_scheduler_span_seconds",
            "Seconds spent in spans timed on the binding threads (binding_cycle: a whole "
            "binding cycle; api_bind: the Binding POST with its rate-limiter wait).",
            labels=["span", "clock"],
        )
        spans = CounterMetricFamily(
            "corral_scheduler_spans", "Spans timed on the binding threads.", labels=["span"]
        )
        for name, tally in self.tallies.items():
            span_seconds.add_metric([name, "wall"], tally.wall)
            span_seconds.add_metric([name, "cpu"], tally.cpu)
            spans.add_metric([name], tally.count)
        yield from (seconds, marks, span_seconds, spans)
