"""PodGroupPodsCount (PlacementScore): scores a PodGroup placement by the number of the group's
pods it holds. In upstream's registry behind the TopologyAwareWorkloadScheduling gate (alpha,
off by default in 1.37), so not in the default set.

Its only extension point belongs to the pod-group (workload) cycle, which upstream runs only with
GenericWorkload on and Corral does not run: a profile may enable it (validated as upstream does)
and the plugin is never called.
"""

from __future__ import annotations

from typing import Final

from corral.scheduler.framework.interface import Handle
from corral.scheduler.plugins import names

NAME: Final = names.POD_GROUP_PODS_COUNT


class PodGroupPodsCount:
    name: str = NAME


def new(args: object, handle: Handle) -> PodGroupPodsCount:
    if args is not None:
        raise TypeError(f"{NAME} takes no args")
    return PodGroupPodsCount()
