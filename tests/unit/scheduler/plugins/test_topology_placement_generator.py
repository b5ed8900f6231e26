"""TopologyPlacementGenerator: takes no args and runs at no extension point (1.37's stub)."""

from __future__ import annotations

from corral.scheduler.plugins import (
    topology_placement_generator,
)
from corral.testing.framework import FakeHandle


def test_topology_placement_generator_takes_no_args_and_runs_nowhere() -> None:
    plugin = topology_placement_generator.new(None, FakeHandle())
    assert plugin.name == topology_placement_generator.NAME
    assert not [m for m in ("filter", "score", "pre_filter", "permit") if hasattr(plugin, m)]
