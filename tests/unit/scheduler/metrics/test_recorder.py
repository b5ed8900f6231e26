"""The engine's recorder: values land in upstream's buckets, survive many threads without a
lock, and are exposed in the text kube-scheduler's client writes."""

from __future__ import annotations

import threading

import pytest
from prometheus_client import CollectorRegistry, generate_latest

from corral.scheduler import metrics as m
from corral.scheduler.metrics import Metric, Recorder, exponential_buckets
from corral.scheduler.metrics.recorder import go_float

HIST = Metric("t_duration_seconds", "A histogram.", "histogram", ("point",), (0.1, 1.0, 10.0))
COUNT = Metric("t_things_total", "A counter.", "counter", ("kind", "result"))
GAUGE = Metric("t_level", "A gauge.", "gauge", ("queue",))


def text(recorder: Recorder) -> str:
    registry = CollectorRegistry(auto_describe=True)
    registry.register(recorder)
    return generate_latest(registry).decode()


@pytest.mark.parametrize(
    ("value", "bucket"),
    [
        pytest.param(0.05, "0.1", id="below the first bound"),
        pytest.param(0.1, "0.1", id="on a bound: le is inclusive"),
        pytest.param(0.5, "1", id="between bounds"),
        pytest.param(10.0, "10", id="on the last bound"),
        pytest.param(11.0, "+Inf", id="above every bound"),
    ],
)
def test_an_observation_lands_in_the_first_bucket_at_or_above_it(value: float, bucket: str) -> None:
    rec = Recorder((HIST,))
    rec.observe(HIST, ("Filter",), value)
    out = text(rec)
    bounds = ["0.1", "1", "10", "+Inf"]
    first = bounds.index(bucket)
    for i, le in enumerate(bounds):
        want = 1.0 if i >= first else 0.0
        assert f't_duration_seconds_bucket{{le="{le}",point="Filter"}} {want}' in out
    assert f't_duration_seconds_sum{{point="Filter"}} {value}' in out
    assert 't_duration_seconds_count{point="Filter"} 1.0' in out


def test_exposition_is_upstreams_text() -> None:
    rec = Recorder((COUNT, GAUGE))
    rec.inc(COUNT, ("pod", "ok"))
    rec.inc(COUNT, ("pod", "ok"), 2)
    rec.set(GAUGE, ("active",), 3)
    rec.gauge_source(GAUGE, lambda: {("backoff",): 1.0})
    assert text(rec) == (
        "# HELP t_things_total A counter.\n"
        "# TYPE t_things_total counter\n"
        't_things_total{kind="pod",result="ok"} 3.0\n'
        "# HELP t_level A gauge.\n"
        "# TYPE t_level gauge\n"
        't_level{queue="active"} 3.0\n'
        't_level{queue="backoff"} 1.0\n'
    )  # no _created series: kube-scheduler's client writes none


def test_many_threads_lose_no_count() -> None:
    rec = Recorder((COUNT, HIST))
    per_thread, threads = 20_000, 8

    def work() -> None:
        for _ in range(per_thread):
            rec.inc(COUNT, ("pod", "ok"))
            rec.observe(HIST, ("Bind",), 0.5)

    workers = [threading.Thread(target=work) for _ in range(threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    assert rec.value(COUNT, ("pod", "ok")) == per_thread * threads
    assert rec.value(HIST, ("Bind",)) == per_thread * threads


@pytest.mark.parametrize(
    ("kwargs", "error"),
    [
        pytest.param(
            {"name": "t_things", "kind": "counter"},
            "counter 't_things': the name must end in _total",
            id="counter without _total",
        ),
        pytest.param(
            {"name": "t_h", "kind": "histogram"}, "histogram 't_h': no buckets", id="no buckets"
        ),
        pytest.param(
            {"name": "t_h", "kind": "histogram", "buckets": (1.0, 0.5)},
            "histogram 't_h': buckets must increase",
            id="decreasing buckets",
        ),
    ],
)
def test_a_bad_declaration_is_refused(kwargs: dict[str, object], error: str) -> None:
    with pytest.raises(ValueError, match=f"^{error}$"):
        Metric(help="x", **kwargs)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        pytest.param((0.001, 2, 3), (0.001, 0.002, 0.004), id="x2"),
        pytest.param((1, 2, 5), (1, 2, 4, 8, 16), id="attempts"),
    ],
)
def test_exponential_buckets_as_the_go_client(
    args: tuple[float, float, int], expected: tuple[float, ...]
) -> None:
    assert exponential_buckets(*args) == pytest.approx(expected)


def test_every_declaration_is_exported_once_with_a_unique_name() -> None:
    names = [metric.name for metric in m.DECLARED]
    assert len(names) == len(set(names))
    exported = text(m.new_recorder())
    for metric in m.DECLARED:
        assert f"# TYPE {metric.name} {metric.kind}\n" in exported


@pytest.mark.parametrize(
    ("attempts", "label"),
    [pytest.param(1, "1", id="first"), pytest.param(14, "14", id="14"),
     pytest.param(15, "15+", id="capped at 15"), pytest.param(99, "15+", id="capped")],
)  # fmt: skip
def test_the_sli_attempts_label_is_capped_as_upstream(attempts: int, label: str) -> None:
    assert m.attempts_label(attempts) == label


@pytest.mark.parametrize(
    ("value", "text"),
    [
        pytest.param(1.0, "1", id="an integer has no .0"),
        pytest.param(0.0001, "0.0001", id="fixed down to 1e-4"),
        pytest.param(1e-05, "1e-05", id="below: exponent, two digits"),
        pytest.param(1.5e-05, "1.5e-05", id="mantissa digits"),
        pytest.param(5242.88, "5242.88", id="fraction"),
        pytest.param(100000.0, "100000", id="fixed below 1e6"),
        pytest.param(1048576.0, "1.048576e+06", id="from 1e6: exponent"),
        pytest.param(0.00001 * 1.5**19, "0.022168378200531007", id="shortest round trip"),
    ],
)
def test_le_is_spelled_as_gos_client_spells_it(value: float, text: str) -> None:
    assert go_float(value) == text
