"""DeferredPodScheduling (PreFilter, Filter, Permit): upstream's hold on pods whose in-place
resize is deferred, behind the InPlacePodVerticalScalingSchedulerPreemption gate (alpha, off by
default in 1.37), so not in the default set. With the gate off upstream's plugin skips every pod
at PreFilter and passes every Filter and Permit; so does this one.
"""

from __future__ import annotations

from typing import Final

from corral.scheduler.framework.cycle_state import CycleState
from corral.scheduler.framework.interface import Handle, PreFilterExtensions, PreFilterResult
from corral.scheduler.framework.snapshot import Snapshot
from corral.scheduler.framework.status import Code, Status
from corral.scheduler.framework.types import NodeInfo, PodInfo
from corral.scheduler.plugins import names

NAME: Final = names.DEFERRED_POD_SCHEDULING


class DeferredPodScheduling:
    name: str = NAME

    def pre_filter(
        self, state: CycleState, pod: PodInfo, snapshot: Snapshot
    ) -> tuple[PreFilterResult | None, Status | None]:
        return None, Status(Code.SKIP)

    def pre_filter_extensions(self) -> PreFilterExtensions | None:
        return None

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status | None:
        return None

    def permit(
        self, state: CycleState, pod: PodInfo, node_name: str
    ) -> tuple[Status | None, float]:
        return None, 0.0


def new(args: object, handle: Handle) -> DeferredPodScheduling:
    if args is not None:
        raise TypeError(f"{NAME} takes no args")
    return DeferredPodScheduling()
