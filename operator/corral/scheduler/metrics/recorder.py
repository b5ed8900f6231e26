"""The machinery behind the engine's metrics: declarations (:class:`Metric`) and the
:class:`Recorder` that keeps their values and exposes them to ``prometheus_client``.

Why not ``prometheus_client``'s own Counter and Histogram: a labelled child's ``observe`` takes
a lock per bucket and sum, and a bound pod records about 20 observations (a dozen extension
points, its attempt, its SLI, its API requests). The recorder keeps one table per recording
thread, so a recording is a thread-local lookup, a dict lookup, a ``bisect`` and two additions
with no lock at all: only the owning thread writes its table; a scrape sums every thread's
table. Measured side by side here: 2 to 5 times cheaper than ``labels(...).observe`` and than
a cached child's ``observe``. Exposition stays
``prometheus_client``'s (the recorder is a collector on the engine's registry), in the exact
text format kube-scheduler's client writes: ``_total`` counters without ``_created`` series,
and the same ``le`` spelling.

Contract: a label tuple has one value per declared label, in declaration order; a histogram's
buckets are the upper bounds of upstream's, ``+Inf`` implied.
"""

from __future__ import annotations

import bisect
import decimal
import math
import threading
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Literal

from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
)
from prometheus_client.registry import Collector

Kind = Literal["counter", "gauge", "histogram"]
Labels = tuple[str, ...]
GaugeSource = Callable[[], Mapping[Labels, float]]


@dataclass(frozen=True, slots=True, eq=False)
class Metric:
    """One declared metric. ``name`` is the exposed name (a counter's ends in ``_total``)."""

    name: str
    help: str
    kind: Kind
    labels: Labels = ()
    buckets: tuple[float, ...] = ()
    # The bucket index of a value is bisect_left(bounds, value): the first bound >= value
    # (Prometheus' "le"); one past the last bound is +Inf.
    bounds: tuple[float, ...] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        if self.kind == "counter" and not self.name.endswith("_total"):
            raise ValueError(f"counter {self.name!r}: the name must end in _total")
        if self.kind == "histogram" and not self.buckets:
            raise ValueError(f"histogram {self.name!r}: no buckets")
        if list(self.buckets) != sorted(set(self.buckets)):
            raise ValueError(f"histogram {self.name!r}: buckets must increase")
        object.__setattr__(self, "bounds", tuple(self.buckets))


def exponential_buckets(start: float, factor: float, count: int) -> tuple[float, ...]:
    """Prometheus' ExponentialBuckets, computed as the Go client does, by repeated
    multiplication (``start * factor**i`` rounds differently from the 4th bucket of a 1.5
    factor, and ``le`` must be the same string), ``+Inf`` implied."""
    buckets = []
    for _ in range(count):
        buckets.append(start)
        start *= factor
    return tuple(buckets)


def go_float(value: float) -> str:
    """A bucket bound as Go's client writes ``le`` (``strconv.FormatFloat(v, 'g', -1, 64)``):
    the shortest digits, fixed notation from 1e-4 to below 1e6, else ``1e-05``/``1e+06``; so
    ``1``, not prometheus_client's ``1.0`` (``le`` is a label: a different spelling is a
    different series for Prometheus 2 and the queries that name it)."""
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    if value == 0:
        return "0"
    sign, raw_digits, exponent = decimal.Decimal(repr(value)).as_tuple()
    assert isinstance(exponent, int)
    digits = list(raw_digits)
    while len(digits) > 1 and digits[-1] == 0:
        digits.pop()
        exponent += 1
    text = "".join(map(str, digits))
    magnitude = len(digits) + exponent - 1
    prefix = "-" if sign else ""
    if magnitude < -4 or magnitude >= 6:
        mantissa = text[0] + ("." + text[1:] if len(text) > 1 else "")
        return f"{prefix}{mantissa}e{'-' if magnitude < 0 else '+'}{abs(magnitude):02d}"
    if exponent >= 0:
        return prefix + text + "0" * exponent
    point = len(text) + exponent
    if point > 0:
        return f"{prefix}{text[:point]}.{text[point:]}"
    return f"{prefix}0.{'0' * -point}{text}"


_Cell = list[float]  # a counter: [value]; a histogram: [count per bucket..., +Inf, sum]


class Recorder(Collector):
    """The values of ``metrics``, recorded from any thread, collected by a registry."""

    def __init__(self, metrics: tuple[Metric, ...]) -> None:
        self.metrics = metrics
        self._local = threading.local()
        self._lock = threading.Lock()  # guards the list of tables and the gauge sources only
        self._tables: list[dict[tuple[Metric, Labels], _Cell]] = []
        self._gauges: dict[tuple[Metric, Labels], float] = {}
        self._sources: dict[Metric, GaugeSource] = {}

    # --- recording (hot path) ---------------------------------------------------------------

    def _table(self) -> dict[tuple[Metric, Labels], _Cell]:
        try:
            table: dict[tuple[Metric, Labels], _Cell] = self._local.table
        except AttributeError:
            table = self._local.table = {}
            with self._lock:
                self._tables.append(table)
        return table

    def inc(self, metric: Metric, labels: Labels = (), amount: float = 1.0) -> None:
        table = self._table()
        cell = table.get((metric, labels))
        if cell is None:
            cell = table[(metric, labels)] = [0.0]
        cell[0] += amount

    def observe(self, metric: Metric, labels: Labels, value: float) -> None:
        table = self._table()
        cell = table.get((metric, labels))
        if cell is None:
            cell = table[(metric, labels)] = [0.0] * (len(metric.bounds) + 2)
        cell[bisect.bisect_left(metric.bounds, value)] += 1
        cell[-1] += value

    def set(self, metric: Metric, labels: Labels, value: float) -> None:
        """A gauge's value (a plain dict store: atomic, the last writer wins)."""
        self._gauges[(metric, labels)] = value

    def gauge_source(self, metric: Metric, source: GaugeSource) -> None:
        """Compute ``metric`` when scraped: ``source()`` returns its value per label tuple."""
        with self._lock:
            self._sources[metric] = source

    # --- reading ----------------------------------------------------------------------------

    def _merged(self) -> dict[tuple[Metric, Labels], _Cell]:
        with self._lock:
            tables = list(self._tables)
        merged: dict[tuple[Metric, Labels], _Cell] = {}
        for table in tables:
            # list() of a dict's items is one C call under the GIL: it cannot see the dict
            # change size half-way; each cell is copied the same way.
            for key, cell in list(table.items()):
                values = cell[:]
                total = merged.get(key)
                if total is None:
                    merged[key] = values
                else:
                    for i, v in enumerate(values):
                        total[i] += v
        return merged

    def series(self, metric: Metric) -> dict[Labels, float]:
        """Each label tuple's value: a counter's or gauge's, a histogram's count (for tests
        and benchmarks)."""
        if metric.kind == "gauge":
            values = {lb: v for (mt, lb), v in list(self._gauges.items()) if mt is metric}
            source = self._sources.get(metric)
            values.update(source() if source is not None else {})
            return values
        return {
            labels: cell[0] if metric.kind == "counter" else sum(cell[:-1])
            for (mt, labels), cell in self._merged().items()
            if mt is metric
        }

    def value(self, metric: Metric, labels: Labels = ()) -> float:
        """:meth:`series`' value of one label tuple (0 when it has none)."""
        return self.series(metric).get(labels, 0.0)

    def collect(self) -> Iterator[CounterMetricFamily | GaugeMetricFamily | HistogramMetricFamily]:
        merged = self._merged()
        by_metric: dict[Metric, list[tuple[Labels, _Cell]]] = {}
        for (metric, labels), cell in merged.items():
            by_metric.setdefault(metric, []).append((labels, cell))
        gauges: dict[Metric, dict[Labels, float]] = {}
        for (metric, labels), value in list(self._gauges.items()):
            gauges.setdefault(metric, {})[labels] = value
        with self._lock:
            sources = dict(self._sources)
        for metric, source in sources.items():
            gauges.setdefault(metric, {}).update(source())
        for metric in self.metrics:
            # A metric without labels is one series, there from the start (0) as in Go's
            # client; a labelled one has a series per label tuple recorded so far.
            none: Labels = ()
            empty = [(none, [0.0] * (len(metric.bounds) + 2))] if not metric.labels else []
            if metric.kind == "gauge":
                yield _gauge(metric, gauges.get(metric) or {labels: 0.0 for labels, _ in empty})
            elif metric.kind == "counter":
                yield _counter(metric, by_metric.get(metric) or empty)
            else:
                yield _histogram(metric, by_metric.get(metric) or empty)


def _by_labels(item: tuple[Labels, _Cell]) -> Labels:
    return item[0]


def _counter(metric: Metric, cells: list[tuple[Labels, _Cell]]) -> CounterMetricFamily:
    family = CounterMetricFamily(metric.name, metric.help, labels=metric.labels)
    for labels, cell in sorted(cells, key=_by_labels):
        family.add_metric(labels, cell[0])
    return family


def _gauge(metric: Metric, values: Mapping[Labels, float]) -> GaugeMetricFamily:
    family = GaugeMetricFamily(metric.name, metric.help, labels=metric.labels)
    for labels, value in sorted(values.items()):
        family.add_metric(labels, value)
    return family


def _histogram(metric: Metric, cells: list[tuple[Labels, _Cell]]) -> HistogramMetricFamily:
    family = HistogramMetricFamily(metric.name, metric.help, labels=metric.labels)
    bounds = [*(go_float(b) for b in metric.bounds), "+Inf"]
    for labels, cell in sorted(cells, key=_by_labels):
        cumulative = 0.0
        buckets = []
        for le, count in zip(bounds, cell[:-1], strict=True):
            cumulative += count
            buckets.append((le, cumulative))
        family.add_metric(labels, buckets, cell[-1])
    return family
