"""Corral's own plugins: CheckPodCountLimit, CheckPodLimitResources, TenantSpread (per-node and
batch forms agree in every row)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from corral.scheduler.backend.records import pod_from_json
from corral.scheduler.framework.cycle_state import CycleState
from corral.scheduler.plugins import check_pod_count_limit, check_pod_limit_resources, tenant_spread
from corral.testing.builders import build_cache, node, pod
from corral.testing.framework import FakeHandle


def both_filters(
    plugin: Any, existing: list[dict[str, Any]], incoming: dict[str, Any]
) -> dict[str, str]:
    snapshot = build_cache(
        [node("a", cpu="4", memory="8Gi"), node("b", cpu="4", memory="8Gi")], existing
    ).snapshot()
    p = pod_from_json(incoming)
    state = CycleState()
    verdict = plugin.filter_batch(state, p, snapshot)
    out = {}
    for slot in snapshot.order.tolist():
        single = plugin.filter(state, p, snapshot.node_info(slot))
        code = 0 if verdict.reasons is None else int(verdict.reasons[slot])
        batch = None if verdict.passed[slot] else verdict.describe(code)
        assert batch == single
        out[snapshot.names[slot]] = "ok" if single is None else single.message
    return out


def mine(name: str, on: str, **kw: Any) -> dict[str, Any]:
    raw = pod(name, node_name=on, **kw)
    raw["spec"]["schedulerName"] = "team-a"
    return raw


def incoming_of(scheduler: str = "team-a", **kw: Any) -> dict[str, Any]:
    raw = pod("p", **kw)
    raw["spec"]["schedulerName"] = scheduler
    return raw


FULL = check_pod_count_limit.reason("team-a", 2)


@pytest.mark.parametrize(
    ("existing", "want"),
    [
        pytest.param([mine("x", "a")], {"a": "ok", "b": "ok"}, id="below-limit"),
        pytest.param([mine("x", "a"), mine("y", "a")], {"a": FULL, "b": "ok"}, id="at-limit"),
        pytest.param(
            [mine("x", "a"), pod("other", node_name="a")],
            {"a": "ok", "b": "ok"},
            id="other-schedulers-pods-do-not-count",
        ),
        pytest.param(
            [mine("x", "a"), {**mine("done", "a"), "status": {"phase": "Succeeded"}}],
            {"a": "ok", "b": "ok"},
            id="terminal-pods-do-not-count",
        ),
    ],
)
def test_check_pod_count_limit(existing: list[dict[str, Any]], want: dict[str, str]) -> None:
    plugin = check_pod_count_limit.new({"podCountLimit": 2}, FakeHandle())
    assert both_filters(plugin, existing, incoming_of()) == want


def limited(name: str, on: str | None, cpu: str, limit: str | None) -> dict[str, Any]:
    c: dict[str, Any] = {"name": "c", "resources": {"requests": {"cpu": cpu}}}
    if limit is not None:
        c["resources"]["limits"] = {"cpu": limit}
    return pod(name, node_name=on, containers=[c])


CPU_OVER = check_pod_limit_resources.reason("cpu")


@pytest.mark.parametrize(
    ("existing", "incoming", "want"),
    [
        pytest.param(
            [limited("x", "a", "1", "2")],
            limited("p", None, "100m", "800m"),
            {"a": "ok", "b": "ok"},
            id="2.8-of-2.8",
        ),
        pytest.param(
            [limited("x", "a", "1", "2")],
            limited("p", None, "100m", "900m"),
            {"a": CPU_OVER, "b": "ok"},
            id="2.9-over-0.7x4",
        ),
        pytest.param(
            [limited("x", "a", "2500m", None)],
            limited("p", None, "400m", None),
            {"a": CPU_OVER, "b": "ok"},
            id="requests-stand-in-for-limits",
        ),
        pytest.param(
            [limited("x", "a", "3", "4")],
            pod("p"),
            {"a": "ok", "b": "ok"},
            id="pod-without-cpu-is-not-checked",
        ),
    ],
)
def test_check_pod_limit_resources(
    existing: list[dict[str, Any]], incoming: dict[str, Any], want: dict[str, str]
) -> None:
    args = {"limitRatio": {"cpu": 0.7, "memory": 0.7}}
    plugin = check_pod_limit_resources.new(args, FakeHandle())
    assert both_filters(plugin, existing, incoming) == want


@pytest.mark.parametrize(
    ("args", "error"),
    [
        pytest.param((check_pod_count_limit, {}), "podCountLimit: required", id="count-missing"),
        pytest.param((check_pod_count_limit, {"podCountLimit": 0}), "must be >= 1", id="count-0"),
        pytest.param((check_pod_limit_resources, {}), "limitRatio: required", id="ratio-missing"),
        pytest.param(
            (check_pod_limit_resources, {"limitRatio": {"cpu": 0}}),
            r"limitRatio\[cpu\]: 0.0: must be greater than 0",
            id="ratio-0",
        ),
        pytest.param(
            (tenant_spread, {"labelKey": "a/b/c"}),
            'labelKey: "a/b/c": a qualified name must consist',
            id="tenant-key-invalid",
        ),
    ],
)
def test_bad_args_fail_at_construction(args: Any, error: str) -> None:
    module, raw = args
    with pytest.raises(ValueError, match=error):
        module.new(raw, None)


def test_tenant_spread_prefers_nodes_with_fewest_pods_of_the_tenant() -> None:
    tenant = {"tenant": "blue"}
    existing = [
        pod("x", node_name="a", labels=tenant),
        pod("y", node_name="a", labels=tenant),
        pod("z", node_name="b", labels=tenant),
        pod("r", node_name="c", labels={"tenant": "red"}),
    ]
    snapshot = build_cache([node("a"), node("b"), node("c")], existing).snapshot()
    plugin = tenant_spread.new({"labelKey": "tenant"}, FakeHandle())
    p = pod_from_json(pod("p", labels=tenant))
    state = CycleState()
    slots = snapshot.order
    assert plugin.pre_score(state, p, snapshot, slots) is None
    batch, _ = plugin.score_batch(state, p, snapshot, slots)
    single = [plugin.score(state, p, snapshot.node_info(s))[0] for s in slots.tolist()]
    assert batch.tolist() == single == [2, 1, 0]
    out = np.array(batch)
    plugin.normalize_score(state, p, out)
    assert out.tolist() == [0, 50, 100]
    unlabeled = pod_from_json(pod("q"))
    assert plugin.pre_score(CycleState(), unlabeled, snapshot, slots).is_skip


def test_args_are_defaulted_where_profiles_default_them() -> None:
    # One definition (corral.scheduler.config): empty TenantSpread args get upstream-style
    # defaulting, as a profile's pluginConfig would.
    assert tenant_spread.new({}, FakeHandle()).key == "corral.dev/tenant"
    assert tenant_spread.new(None, FakeHandle()).key == "corral.dev/tenant"
