"""CapacityScheduling's quota arithmetic: transcribed from SP (kubernetes-sigs/scheduler-plugins
at 903da7df) ``pkg/capacityscheduling/elasticquota_test.go`` (TestReserveResource,
TestUnReserveResource, TestUsedOverMinWith, TestUsedOverMaxWith, TestUsedOverMin,
TestNewElasticQuotaInfo); SP's row names are the ids. Rows marked "corral:" are Corral's own
(parsing the ElasticQuota object)."""

from __future__ import annotations

from typing import Any

import pytest

from corral.scheduler.backend.records import pod_from_json
from corral.scheduler.framework.types import Resources
from corral.scheduler.plugins.capacity_scheduling import elastic_quota as eq

from .support import GPU, MID, res, rl, sp_eq, sp_pod

MAX, MIN = eq.UPPER_BOUND_OF_MAX, eq.LOWER_BOUND_OF_MIN


def _request(raw: dict[str, Any]) -> Resources:
    return pod_from_json(raw).requests


THREE_PODS = [
    sp_pod("t1-p1", "ns1", 50, 1000, 1, MID, "node-a"),
    sp_pod("t1-p2", "ns2", 100, 2000, 0, MID, "node-a"),
    sp_pod("t1-p3", "ns2", 0, 0, 2, MID, "node-a"),
]


def test_reserve_resource() -> None:
    """ElasticQuotaInfo ReserveResource"""
    info = eq.QuotaInfo("ns1", used=res(1000, 200, gpu=2))
    for raw in THREE_PODS:
        info.reserve(_request(raw))
    assert info.used == res(4000, 350, gpu=5)


def test_unreserve_resource() -> None:
    """ElasticQuotaInfo UnReserveResource"""
    info = eq.QuotaInfo("ns1", used=res(4000, 200, gpu=5))
    for raw in THREE_PODS:
        info.unreserve(_request(raw))
    assert info.used == res(1000, 50, gpu=2)


@pytest.mark.parametrize(
    ("info", "request_", "want"),
    [
        pytest.param(
            eq.QuotaInfo("ns1", used=res(4000, 200, gpu=5), min=res(3000, 100, gpu=5)),
            res(1500, 100), True,
            id="ElasticQuotaInfo OverMinWith Sum Of PodRequest And Used Is Bigger Than Min",
        ),
        pytest.param(
            eq.QuotaInfo("ns1", used=res(300, 100, gpu=5), min=res(4000, 200, gpu=5)),
            res(100, 50), False,
            id="ElasticQuotaInfo OverMinWith Sum Of PodRequest And Used Is Not Bigger Than Min",
        ),
        pytest.param(
            eq.QuotaInfo("ns1", used=res(3900, 100, gpu=5)),
            res(100, 100), True,
            id="ElasticQuotaInfo OverMinWith ElasticQuotaInfo Doesn't Have Max",
        ),
        pytest.param(
            eq.QuotaInfo("ns1", used=res(10, 10), min=res(3000, 100)),
            res(10, 10, gpu=5), True,
            id="ElasticQuotaInfo OverMinWith Used And Min Don't Have GPU Value",
        ),
        pytest.param(
            eq.QuotaInfo("ns1", used=res(10, 10, 10), min=res(3000, 100, 100)),
            res(10, 10, 10), False,
            id="ElasticQuotaInfo OverMinWith EphemeralStorage",
        ),
    ],
)  # fmt: skip
def test_used_over_min_with(info: eq.QuotaInfo, request_: Resources, want: bool) -> None:
    assert info.used_over_min_with(request_) is want


@pytest.mark.parametrize(
    ("info", "request_", "want"),
    [
        pytest.param(
            eq.QuotaInfo("ns1", used=res(4000, 200, gpu=5), max=res(4000, 200, gpu=5)),
            res(100, 100), True,
            id="ElasticQuotaInfo OverMaxWith Sum Of PodRequest And Used Is Bigger Than Max",
        ),
        pytest.param(
            eq.QuotaInfo("ns1", used=res(3900, 100, gpu=5), max=res(4000, 200, gpu=5)),
            res(100, 100), False,
            id="ElasticQuotaInfo OverMaxWith Sum Of PodRequest And Used Is Not Bigger Than Max",
        ),
        pytest.param(
            eq.QuotaInfo("ns1", used=res(3900, 100, gpu=5)),
            res(100, 100), False,
            id="ElasticQuotaInfo OverMaxWith ElasticQuotaInfo Doesn't Have Max",
        ),
        pytest.param(
            eq.QuotaInfo("ns1", used=res(10, 10), max=res(3000, 100)),
            res(10, 10, gpu=5), False,
            id="ElasticQuotaInfo OverMaxWith Used And Max Don't Have GPU Value",
        ),
        pytest.param(
            eq.QuotaInfo("ns1", used=res(10, 10, 10), max=res(3000, 100, 100)),
            res(10, 10, 100), True,
            id="ElasticQuotaInfo OverMaxWith EphemeralStorage",
        ),
    ],
)  # fmt: skip
def test_used_over_max_with(info: eq.QuotaInfo, request_: Resources, want: bool) -> None:
    assert info.used_over_max_with(request_) is want


@pytest.mark.parametrize(
    ("info", "want"),
    [
        pytest.param(
            eq.QuotaInfo("ns1", used=res(4000, 200, gpu=5), min=res(3000, 300, gpu=5)), True,
            id="ElasticQuotaInfo OverMin Used Is Bigger Than Min",
        ),
        pytest.param(
            eq.QuotaInfo("ns1", used=res(300, 100, gpu=5), min=res(4000, 200, gpu=5)), False,
            id="ElasticQuotaInfo OverMin Used Is Not Bigger Than Min",
        ),
        pytest.param(
            eq.QuotaInfo("ns1", used=res(3900, 100, gpu=5)), True,
            id="ElasticQuotaInfo OverMin ElasticQuotaInfo Doesn't Have Min",
        ),
        pytest.param(
            eq.QuotaInfo("ns1", used=res(300, 100, gpu=5), min=res(4000, 200)), True,
            id="ElasticQuotaInfo OverMin Used Has GPU But Min Doesn't Have GPU",
        ),
        pytest.param(
            eq.QuotaInfo("ns1", used=res(300, 100, 100), min=res(4000, 200, 10)), True,
            id="ElasticQuotaInfo OverMin EphemeralStorage",
        ),
    ],
)  # fmt: skip
def test_used_over_min(info: eq.QuotaInfo, want: bool) -> None:
    assert info.used_over_min() is want


@pytest.mark.parametrize(
    ("max_", "min_", "want_max", "want_min"),
    [
        pytest.param(rl(100, 1000), rl(10, 100), res(100, 1000), res(10, 100),
                     id="ElasticQuota"),
        pytest.param(None, rl(10, 100), res(MAX, MAX, MAX), res(10, 100),
                     id="ElasticQuota Without Max"),
        pytest.param(rl(100, 1000), None, res(100, 1000), res(MIN, MIN, MIN),
                     id="ElasticQuota Without Min"),
        pytest.param(None, None, res(MAX, MAX, MAX), res(MIN, MIN, MIN),
                     id="ElasticQuota Without Max and Min"),
    ],
)  # fmt: skip
def test_new_elastic_quota_info(
    max_: dict[str, str] | None,
    min_: dict[str, str] | None,
    want_max: Resources,
    want_min: Resources,
) -> None:
    quota = eq.elastic_quota_from_json(sp_eq("ns1", "t1-eq1", max_, min_))
    info = eq.new_quota_info("ns1", quota.min, quota.max, res(0, 0))
    assert (info.namespace, info.max, info.min, info.used, info.pods) == (
        "ns1", want_max, want_min, res(0, 0), set(),
    )  # fmt: skip


@pytest.mark.parametrize(
    ("spec", "want_max", "want_min"),
    [
        pytest.param(
            {"max": {"cpu": "20", "memory": "40Gi", GPU: 2}, "min": {"cpu": "10"}},
            res(20_000, 40 * 2**30, gpu=2), res(10_000),
            id="corral: SP's elasticquota-example amounts, in framework.Resource units",
        ),
        pytest.param(
            {"max": {}}, res(), res(MIN, MIN, MIN),
            id="corral: an empty max is zero everywhere (present but naming nothing)",
        ),
        pytest.param(
            {"max": {"cpu": "1", "example.com/foo": "3", "foo": "9", "pods": "4"}},
            Resources(milli_cpu=1000, allowed_pods=4, scalar={"example.com/foo": 3}),
            res(MIN, MIN, MIN),
            id="corral: a name neither native nor scalar is dropped, as framework.NewResource",
        ),
        pytest.param(
            {"max": {"cpu": "1500u", "memory": "1.5"}}, res(2, 2), res(MIN, MIN, MIN),
            id="corral: amounts round up (MilliValue, Value)",
        ),
    ],
)  # fmt: skip
def test_the_object_parses_as_sp_reads_it(
    spec: dict[str, Any], want_max: Resources, want_min: Resources
) -> None:
    raw = sp_eq("ns1", "q")
    raw["spec"] = spec
    quota = eq.elastic_quota_from_json(raw)
    info = eq.new_quota_info("ns1", quota.min, quota.max)
    assert (info.max, info.min) == (want_max, want_min)


@pytest.mark.parametrize(
    ("spec", "error"),
    [
        pytest.param({"min": {"cpu": "lots"}}, ValueError,
                     id="corral: an amount that does not parse"),
        pytest.param({"max": ["cpu"]}, TypeError, id="corral: a max that is not a map"),
    ],
)  # fmt: skip
def test_a_malformed_object_is_refused(spec: dict[str, Any], error: type[Exception]) -> None:
    raw = sp_eq("ns1", "q")
    raw["spec"] = spec
    with pytest.raises(error):
        eq.elastic_quota_from_json(raw)


def test_aggregated_used_over_min_sums_every_quota() -> None:
    """corral: SP #683's example: 5 GPUs, A (min 4) uses 5, B (min 1) asks for 1: refused."""
    infos = {
        "a": eq.QuotaInfo("a", min=res(gpu=4), max=res(MAX, MAX, MAX), used=res(gpu=5)),
        "b": eq.QuotaInfo("b", min=res(gpu=1), max=res(MAX, MAX, MAX), used=res(gpu=0)),
    }
    assert eq.aggregated_used_over_min_with(infos, res(gpu=1))
    assert not eq.aggregated_used_over_min_with(infos, res())
    assert infos["a"].used_over_min()
    assert not infos["b"].used_over_min_with(res(gpu=1))
