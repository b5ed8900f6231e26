"""DynamicResources (PreFilter, Filter, PostFilter) — ResourceClaims are not supported yet.

A pod without ``spec.resourceClaims`` is untouched (PreFilter returns Skip, so Filter never runs
for it). A pod with claims is refused at PreFilter with UnschedulableAndUnresolvable
:data:`ERR_REASON_UNSUPPORTED`: Corral does not allocate devices (no ResourceSlice /
DeviceClass reading, no claim status writes), so scheduling such a pod would strand it.

PostFilter answers as upstream's does when there is no claim to deallocate: Unschedulable with
:data:`ERR_REASON_NO_CLAIMS`, which upstream's FailedScheduling messages carry before the
preemption verdict ("... no new claims to deallocate, preemption: ...").
"""

from __future__ import annotations

from typing import Final

from corral.scheduler.framework.cycle_state import CycleState
from corral.scheduler.framework.diagnosis import NodeToStatus
from corral.scheduler.framework.interface import (
    Handle,
    PostFilterResult,
    PreFilterExtensions,
    PreFilterResult,
)
from corral.scheduler.framework.snapshot import Snapshot
from corral.scheduler.framework.status import Code, Status
from corral.scheduler.framework.types import NodeInfo, PodInfo
from corral.scheduler.plugins import names

NAME: Final = names.DYNAMIC_RESOURCES
ERR_REASON_UNSUPPORTED: Final = (
    "pod uses ResourceClaims (dynamic resource allocation), which Corral does not support yet"
)


ERR_REASON_NO_CLAIMS: Final = "no new claims to deallocate"


class DynamicResources:
    name: str = NAME

    def pre_filter(
        self, state: CycleState, pod: PodInfo, snapshot: Snapshot
    ) -> tuple[PreFilterResult | None, Status | None]:
        if not pod.has_resource_claims:
            return None, Status(Code.SKIP)
        return None, Status.of(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_UNSUPPORTED)

    def pre_filter_extensions(self) -> PreFilterExtensions | None:
        return None

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status | None:
        return None  # only reached for pods without claims

    def post_filter(
        self, state: CycleState, pod: PodInfo, statuses: NodeToStatus
    ) -> tuple[PostFilterResult | None, Status]:
        return None, Status.of(Code.UNSCHEDULABLE, ERR_REASON_NO_CLAIMS)


def new(args: object, handle: Handle) -> DynamicResources:
    # DynamicResourcesArgs (filterTimeout, bindingTimeout) are accepted and unused.
    return DynamicResources()
