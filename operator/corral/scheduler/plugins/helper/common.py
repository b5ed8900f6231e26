"""What many plugins share: the missing-state error, the PreFilter that does nothing."""

from __future__ import annotations

from corral.scheduler.framework.cycle_state import CycleState
from corral.scheduler.framework.interface import PreFilterExtensions, PreFilterResult
from corral.scheduler.framework.snapshot import Snapshot
from corral.scheduler.framework.status import Status
from corral.scheduler.framework.types import PodInfo


def missing_state(key: str) -> Status:
    """The Error a plugin returns when its own PreFilter/PreScore state is not in the cycle."""
    return Status.error(f"reading {key!r} from cycleState: not found")


class NoOpPreFilter:
    """The PreFilter 1.37 gave NodeUnschedulable and TaintToleration: upstream's skips the plugin
    only for a pod whose resize is deferred (InPlacePodVerticalScalingSchedulerPreemption, alpha
    and off), so here it has nothing to do."""

    def pre_filter(
        self, state: CycleState, pod: PodInfo, snapshot: Snapshot
    ) -> tuple[PreFilterResult | None, Status | None]:
        return None, None

    def pre_filter_extensions(self) -> PreFilterExtensions | None:
        return None
