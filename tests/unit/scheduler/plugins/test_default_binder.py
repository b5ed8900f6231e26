"""DefaultBinder: Bind posts through the Handle's pod binder."""

from __future__ import annotations

from typing import Any

import pytest

from corral.scheduler.framework.cycle_state import CycleState
from corral.scheduler.framework.status import Status
from corral.scheduler.framework.types import PodInfo
from corral.scheduler.plugins import (
    default_binder,
)
from corral.testing.builders import pod_info
from corral.testing.framework import FakeHandle


def test_default_binder_posts_through_the_binder() -> None:
    calls: list[tuple[str, str]] = []

    def binder(p: PodInfo, node_name: str) -> None:
        calls.append((p.name, node_name))

    plugin = default_binder.new(None, FakeHandle(pod_binder=binder))
    assert plugin.bind(CycleState(), pod_info("p"), "n1") is None
    assert calls == [("p", "n1")]


@pytest.mark.parametrize(
    ("binder", "message"),
    [
        pytest.param(None, "no pod binder is configured", id="no binder"),
        pytest.param(
            lambda p, n: (_ for _ in ()).throw(RuntimeError("409 Conflict")),
            "409 Conflict",
            id="api error",
        ),
    ],
)
def test_default_binder_errors(binder: Any, message: str) -> None:
    plugin = default_binder.new(None, FakeHandle(pod_binder=binder))
    assert plugin.bind(CycleState(), pod_info("p"), "n1") == Status.error(message)
