"""GangScheduling (PreEnqueue, Permit): upstream's gang scheduling of PodGroups, in its registry
behind the GenericWorkload gate (beta, off by default in 1.37), so not in the default set.

Corral runs no pod-group cycle. With the gate off the API server drops ``spec.schedulingGroup``
and upstream's plugin lets every pod through; so does this one. A pod that still carries a
scheduling group (an API server with the gate on) is refused at PreEnqueue rather than placed
without its gang.
"""

from __future__ import annotations

from typing import Final

from corral.scheduler.framework.cycle_state import CycleState
from corral.scheduler.framework.interface import Handle
from corral.scheduler.framework.status import Code, Status
from corral.scheduler.framework.types import PodInfo
from corral.scheduler.plugins import names

NAME: Final = names.GANG_SCHEDULING
ERR_REASON_NOT_SUPPORTED: Final = (
    "pod is in a scheduling group: Corral does not run gang scheduling (GenericWorkload)"
)

_REFUSED: Final = Status.of(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_NOT_SUPPORTED)


class GangScheduling:
    name: str = NAME

    def pre_enqueue(self, pod: PodInfo) -> Status | None:
        spec = pod.raw.get("spec")
        if isinstance(spec, dict) and spec.get("schedulingGroup") is not None:
            return _REFUSED
        return None

    def permit(
        self, state: CycleState, pod: PodInfo, node_name: str
    ) -> tuple[Status | None, float]:
        return None, 0.0


def new(args: object, handle: Handle) -> GangScheduling:
    if args is not None:
        raise TypeError(f"{NAME} takes no args")
    return GangScheduling()
