"""CheckPodLimitResources (Corral): a node's pods' limits stay under limitRatio of allocatable."""

from __future__ import annotations

from typing import Any

import pytest

from corral.scheduler.plugins import check_pod_limit_resources
from corral.testing.builders import pod
from corral.testing.framework import FakeHandle
from support.plugin_checks import both_filters


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
    ("raw", "error"),
    [
        pytest.param({}, "limitRatio: required", id="ratio-missing"),
        pytest.param(
            {"limitRatio": {"cpu": 0}},
            r"limitRatio\[cpu\]: 0.0: must be greater than 0",
            id="ratio-0",
        ),
    ],
)
def test_check_pod_limit_resources_bad_args_fail_at_construction(raw: Any, error: str) -> None:
    with pytest.raises(ValueError, match=error):
        check_pod_limit_resources.new(raw, FakeHandle())
