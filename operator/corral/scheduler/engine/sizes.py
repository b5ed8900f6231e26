"""How big the engine's in-memory structures are, read at each scrape of ``/metrics``.

- ``scheduler_scheduler_cache_size{type}``: upstream's gauge (nodes, pods, assumed_pods).
- ``corral_engine_entries{structure}``: every structure that grows with what the engine has
  seen — the cache's columns and vocabularies, the queue's heaps and maps, informers' keys,
  the object store by kind, the nominator, the event handlers, the Event recorders' series.
  A soak (``make soak``) watches them for growth beyond the cluster's own.

A scrape takes each structure's lock once, briefly (``sizes()`` of each counts entries only).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping

from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

Source = Callable[[], Mapping[str, int]]
CACHE_TYPES = ("nodes", "pods", "assumed_pods")


class StructureSizes(Collector):
    """``sources``: structure prefix -> a callable giving its ``{name: entries}``; the one named
    ``cache`` also feeds upstream's cache-size gauge."""

    def __init__(self, sources: Mapping[str, Source]) -> None:
        self.sources = dict(sources)

    def collect(self) -> Iterator[GaugeMetricFamily]:
        upstream = GaugeMetricFamily(
            "scheduler_scheduler_cache_size",
            "Number of nodes, pods, and assumed (bound) pods in the scheduler cache.",
            labels=["type"],
        )
        entries = GaugeMetricFamily(
            "corral_engine_entries",
            "Entries of the engine's in-memory structures, by structure.",
            labels=["structure"],
        )
        for prefix, source in self.sources.items():
            sizes = source()
            if prefix == "cache":
                for kind in CACHE_TYPES:
                    upstream.add_metric([kind], sizes.get(kind, 0))
            for name, value in sorted(sizes.items()):
                entries.add_metric([f"{prefix}.{name}"], value)
        yield upstream
        yield entries
