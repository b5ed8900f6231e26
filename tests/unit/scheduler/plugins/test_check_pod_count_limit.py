"""CheckPodCountLimit (Corral): at most podCountLimit pods of this scheduler per node."""

from __future__ import annotations

from typing import Any

import pytest

from corral.scheduler.plugins import check_pod_count_limit
from corral.testing.builders import pod
from corral.testing.framework import FakeHandle
from support.plugin_checks import both_filters


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


@pytest.mark.parametrize(
    ("raw", "error"),
    [
        pytest.param({}, "podCountLimit: required", id="count-missing"),
        pytest.param({"podCountLimit": 0}, "must be >= 1", id="count-0"),
    ],
)
def test_check_pod_count_limit_bad_args_fail_at_construction(raw: Any, error: str) -> None:
    with pytest.raises(ValueError, match=error):
        check_pod_count_limit.new(raw, FakeHandle())
