"""Scraped counters: growth over the measured phase, the scheduler's requests per pod with the
harness's subtracted, the engine's phases."""

from __future__ import annotations

from typing import Any

import pytest
from bench import scrape

BEFORE = """\
# TYPE apiserver_request_total counter
apiserver_request_total{code="201",resource="pods",subresource="binding",verb="POST"} 10
apiserver_request_total{code="201",resource="pods",subresource="",verb="POST"} 5
apiserver_request_total{code="200",resource="nodes",subresource="",verb="LIST"} 2
# TYPE apiserver_flowcontrol_dispatched_requests_total counter
apiserver_flowcontrol_dispatched_requests_total{flow_schema="kube-scheduler",priority_level="workload-high"} 12
apiserver_flowcontrol_dispatched_requests_total{flow_schema="exempt",priority_level="exempt"} 40
# TYPE apiserver_storage_objects gauge
apiserver_storage_objects{resource="pods"} 15
"""  # noqa: E501
AFTER = """\
# TYPE apiserver_request_total counter
apiserver_request_total{code="201",resource="pods",subresource="binding",verb="POST"} 110
apiserver_request_total{code="201",resource="pods",subresource="",verb="POST"} 108
apiserver_request_total{code="200",resource="pods",subresource="status",verb="PATCH"} 7
apiserver_request_total{code="201",resource="events",subresource="",verb="POST",group="events.k8s.io"} 4
apiserver_request_total{code="200",resource="nodes",subresource="",verb="LIST"} 2
apiserver_request_total{code="200",resource="",subresource="openapi/v3",verb="GET"} 6
apiserver_request_total{code="200",group="coordination.k8s.io",resource="leases",subresource="",verb="PUT"} 2
apiserver_request_total{code="200",resource="limitranges",subresource="",verb="LIST"} 1
# TYPE apiserver_flowcontrol_dispatched_requests_total counter
apiserver_flowcontrol_dispatched_requests_total{flow_schema="kube-scheduler",priority_level="workload-high"} 123
apiserver_flowcontrol_dispatched_requests_total{flow_schema="exempt",priority_level="exempt"} 150
# TYPE apiserver_storage_objects gauge
apiserver_storage_objects{resource="pods"} 115
"""  # noqa: E501


def _grown() -> scrape.Samples:
    return scrape.growth(
        scrape.parse(BEFORE, scrape.APISERVER), scrape.parse(AFTER, scrape.APISERVER)
    )


def test_growth_keeps_the_named_counters_that_grew_but_not_the_api_servers_own() -> None:
    kinds = scrape.requests_by_kind(_grown())
    assert kinds == {"POST pods/binding": 100, "POST pods": 103, "PATCH pods/status": 7,
                     "POST events": 4}  # fmt: skip


@pytest.mark.parametrize(
    ("harness", "want"),
    [
        pytest.param({"POST pods": 103}, {"POST events": 4, "PATCH pods/status": 7,
                                          "POST pods/binding": 100}, id="harness posts out"),
        pytest.param({"POST pods": 100}, {"POST events": 4, "PATCH pods/status": 7,
                                          "POST pods": 3, "POST pods/binding": 100},
                     id="3 posts not the harness's stay"),
    ],
)  # fmt: skip
def test_scheduler_requests_subtract_the_harness(harness: dict[str, int], want: Any) -> None:
    got = scrape.scheduler_requests(_grown(), harness, pods=100)
    assert got["by_kind"] == want
    assert got["total"] == sum(want.values())
    assert got["per_pod"] == pytest.approx(sum(want.values()) / 100)
    # APF's independent count for the scheduler's FlowSchema.
    assert (got["flow_schema_total"], got["flow_schema_per_pod"]) == (111, 1.11)


def test_engine_phases() -> None:
    text = """\
corral_scheduler_thread_seconds_total{clock="wall",phase="filter"} 2.5
corral_scheduler_thread_seconds_total{clock="cpu",phase="filter"} 2.0
corral_scheduler_thread_phases_total{phase="filter"} 100
corral_scheduler_span_seconds_total{clock="wall",span="api_bind"} 3.0
corral_scheduler_spans_total{span="api_bind"} 100
corral_gc_seconds_total{clock="wall",generation="0"} 0.25
corral_gc_seconds_total{clock="cpu",generation="0"} 0.25
corral_gc_seconds_total{clock="cpu",generation="2"} 1.0
corral_gc_collections_total{generation="0"} 40
corral_gc_collections_total{generation="2"} 2
corral_thread_cpu_seconds_total{thread="MainThread"} 7.5
"""
    before = """\
corral_scheduler_thread_seconds_total{clock="wall",phase="filter"} 0.5
corral_gc_seconds_total{clock="cpu",generation="2"} 0.5
corral_gc_collections_total{generation="2"} 1
corral_thread_cpu_seconds_total{thread="MainThread"} 2.5
"""
    grown = scrape.growth(scrape.parse(before, scrape.ENGINE), scrape.parse(text, scrape.ENGINE))
    assert scrape.engine_phases(grown) == {
        "filter": {"wall": 2.0, "cpu": 2.0, "count": 100.0},
        "span:api_bind": {"wall": 3.0, "count": 100.0},
        # every generation's collections in the measured phase, together
        "gc": {"wall": 0.25, "cpu": 0.75, "count": 41.0},
        # and each generation's alone
        "gc:0": {"wall": 0.25, "cpu": 0.25, "count": 40.0},
        "gc:2": {"cpu": 0.5, "count": 1.0},
        # the event loop's thread, in the measured phase
        "thread:MainThread": {"cpu": 5.0},
    }


def test_attempts_by_result_and_of_bound_pods() -> None:
    text = """\
scheduler_schedule_attempts_total{profile="a",result="scheduled"} 10
scheduler_schedule_attempts_total{profile="b",result="scheduled"} 5
scheduler_schedule_attempts_total{profile="a",result="unschedulable"} 7
scheduler_pod_scheduling_attempts_sum 22
scheduler_pod_scheduling_attempts_count 15
"""
    before = 'scheduler_schedule_attempts_total{profile="a",result="unschedulable"} 2\n'
    grown = scrape.growth(
        scrape.parse(before, scrape.ATTEMPTS), scrape.parse(text, scrape.ATTEMPTS)
    )
    assert scrape.attempts(grown) == {
        "scheduled": 15.0,
        "unschedulable": 5.0,
        "attempts_of_bound_pods": 22.0,
        "bound_pods": 15.0,
    }
