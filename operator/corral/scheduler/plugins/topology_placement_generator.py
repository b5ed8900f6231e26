"""TopologyPlacementGenerator (PlacementGenerate): generates a PodGroup's candidate placements (one
per domain of the group's topology key). In upstream's registry behind the
TopologyAwareWorkloadScheduling gate (alpha, off by default in 1.37), so not in the default set.

Its only extension point belongs to the pod-group (workload) cycle, which upstream runs only with
GenericWorkload on and Corral does not run: a profile may enable it (validated as upstream does)
and the plugin is never called.
"""

from __future__ import annotations

from typing import Final

from corral.scheduler.framework.interface import Handle
from corral.scheduler.plugins import names

NAME: Final = names.TOPOLOGY_PLACEMENT_GENERATOR


class TopologyPlacementGenerator:
    name: str = NAME


def new(args: object, handle: Handle) -> TopologyPlacementGenerator:
    if args is not None:
        raise TypeError(f"{NAME} takes no args")
    return TopologyPlacementGenerator()
