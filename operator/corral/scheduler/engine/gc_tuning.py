"""How the engine process uses CPython's cyclic garbage collector, and what it costs.

The engine's garbage is almost never cyclic: reference counting frees the decoded watch events,
the cycle states and the request bodies as soon as the last reference goes. What the cyclic
collector does instead is traverse the objects the engine keeps (the informers' pods and nodes,
the cache's views), again and again: with CPython's default thresholds (700, 10, 10) it took 15%
of the engine's CPU at 5,000 nodes (SchedulingBasic, 10,000 pods), 70% of that in full
collections of ~190 ms each that found nearly nothing (``docs/benchmarks/journal.md``, day 3).

So the ``corral scheduler`` process (never a library user's process: these are process-wide):

- :func:`configure`: a young generation of :data:`GEN0_THRESHOLD` net allocations before a
  collection (the older generations' multipliers as CPython's); :func:`freeze` after the first
  sync of every informer: one full collection, then everything alive moves to the permanent
  generation, which later collections never traverse. Garbage made later is collected as
  before; what was alive at the freeze and later becomes cyclic garbage is not (the startup
  state: modules, caches filled by the first lists, the frameworks).
- :class:`GcClock` times every collection (``gc.callbacks``: four clock reads each) and exports
  its wall and thread-CPU seconds per generation, so a benchmark sees what the collector still
  costs.
"""

from __future__ import annotations

import gc
import time
from collections.abc import Iterator
from typing import Any, Final

from prometheus_client.core import CounterMetricFamily
from prometheus_client.registry import Collector

# Net container allocations between young collections. CPython's 700 dates from much smaller
# heaps; 10,000 makes young collections ~14x rarer at a few hundred kB of extra young objects.
GEN0_THRESHOLD: Final = 10_000
GENERATIONS: Final = 3


def configure() -> None:
    """Set the process's collector thresholds for the engine (see the module docstring)."""
    _, gen1, gen2 = gc.get_threshold()
    gc.set_threshold(GEN0_THRESHOLD, gen1, gen2)


def freeze() -> None:
    """Collect once, then move every object alive to the permanent generation."""
    gc.collect()
    gc.freeze()


class GcClock(Collector):
    """Collections and their wall and thread-CPU seconds per generation, from ``gc.callbacks``.

    A collection runs whole on the thread that triggered it, holding the GIL, and never nests
    in another, so its start and stop are read on one thread and nothing else runs between;
    :meth:`install` registers the callback once, :meth:`uninstall` removes it."""

    def __init__(self) -> None:
        self.wall = [0.0] * GENERATIONS
        self.cpu = [0.0] * GENERATIONS
        self.count = [0] * GENERATIONS
        self._started: tuple[float, float] | None = None

    def install(self) -> None:
        if self._callback not in gc.callbacks:
            gc.callbacks.append(self._callback)

    def uninstall(self) -> None:
        if self._callback in gc.callbacks:
            gc.callbacks.remove(self._callback)

    def _callback(self, phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            self._started = time.perf_counter(), time.thread_time()
            return
        if self._started is None:  # installed during a collection
            return
        wall, cpu = self._started
        generation = info["generation"]
        self.wall[generation] += time.perf_counter() - wall
        self.cpu[generation] += time.thread_time() - cpu
        self.count[generation] += 1
        self._started = None

    def collect(self) -> Iterator[CounterMetricFamily]:
        seconds = CounterMetricFamily(
            "corral_gc_seconds",
            "Seconds spent in CPython's cyclic garbage collector, by generation and clock (wall "
            "or thread CPU).",
            labels=["generation", "clock"],
        )
        collections = CounterMetricFamily(
            "corral_gc_collections",
            "Collections of CPython's cyclic garbage collector, by generation.",
            labels=["generation"],
        )
        for generation in range(GENERATIONS):
            seconds.add_metric([str(generation), "wall"], self.wall[generation])
            seconds.add_metric([str(generation), "cpu"], self.cpu[generation])
            collections.add_metric([str(generation)], self.count[generation])
        yield from (seconds, collections)
