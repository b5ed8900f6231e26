"""PodGroupPodsCount: takes no args and runs at no extension point (1.37's stub)."""

from __future__ import annotations

from corral.scheduler.plugins import (
    pod_group_pods_count,
)
from corral.testing.framework import FakeHandle


def test_pod_group_pods_count_takes_no_args_and_runs_nowhere() -> None:
    plugin = pod_group_pods_count.new(None, FakeHandle())
    assert plugin.name == pod_group_pods_count.NAME
    assert not [m for m in ("filter", "score", "pre_filter", "permit") if hasattr(plugin, m)]
