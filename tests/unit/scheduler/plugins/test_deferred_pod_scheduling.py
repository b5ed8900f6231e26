"""DeferredPodScheduling: skips every pod (1.37's stub)."""

from __future__ import annotations

from corral.scheduler.framework.cycle_state import CycleState
from corral.scheduler.plugins import (
    deferred_pod_scheduling,
)
from corral.testing.builders import node, pod_info, snapshot_of
from corral.testing.framework import FakeHandle


def test_deferred_pod_scheduling_skips_every_pod() -> None:
    plugin = deferred_pod_scheduling.new(None, FakeHandle())
    snapshot = snapshot_of([node("n")])
    result, status = plugin.pre_filter(CycleState(), pod_info("p"), snapshot)
    assert result is None
    assert status is not None
    assert status.is_skip
    assert plugin.filter(CycleState(), pod_info("p"), snapshot.node_info(0)) is None
    assert plugin.permit(CycleState(), pod_info("p"), "n") == (None, 0.0)
