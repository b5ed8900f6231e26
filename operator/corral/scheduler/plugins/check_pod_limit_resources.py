"""CheckPodLimitResources (Filter) — Corral's own.

Guards against overcommit through limits. For every resource in ``limitRatio`` (e.g. cpu 0.7,
memory 0.7) for which the incoming pod's effective limit is > 0, the node is filtered out when

    sum(effective limits of the pods on the node) + the pod's effective limit
        > limitRatio[resource] * allocatable[resource]

The effective limit of a container is its limit, or its request where it sets no limit
(nothing if neither); a pod's is summed like requests (containers and sidecars, the largest
init container, plus overhead). Pods on the node are those the scheduler's cache counts
(bound and assumed), as for NodeResourcesFit. cpu is compared in millicores, everything else
in the resource's base unit; the product is computed in float64. Every exceeded resource is a
reason (``Insufficient <resource> limit headroom``); the status is Unschedulable.
"""

from __future__ import annotations

from typing import Final

import numpy as np

from corral.scheduler.config import plugin_args
from corral.scheduler.config.args import CheckPodLimitResourcesArgs
from corral.scheduler.framework.cycle_state import CycleState
from corral.scheduler.framework.interface import FilterVerdict, Handle
from corral.scheduler.framework.snapshot import Snapshot
from corral.scheduler.framework.status import Code, Status
from corral.scheduler.framework.types import NodeInfo, PodInfo
from corral.scheduler.plugins import names

NAME: Final = names.CHECK_POD_LIMIT_RESOURCES
EXTENSION_POINTS: Final = ("filter",)


def reason(resource: str) -> str:
    return f"Insufficient {resource} limit headroom"


def _used(node: NodeInfo, resource: str) -> int:
    return sum(p.limits.get(resource) for p in node.pods)


class CheckPodLimitResources:
    name: str = NAME

    def __init__(self, args: CheckPodLimitResourcesArgs) -> None:
        self.ratios = dict(args.limit_ratio)  # non-empty, each > 0: checked by plugin_args

    def _checked(self, pod: PodInfo) -> list[tuple[str, float, int]]:
        return [
            (name, ratio, want)
            for name, ratio in self.ratios.items()
            if (want := pod.limits.get(name)) > 0
        ]

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status | None:
        reasons = [
            reason(name)
            for name, ratio, want in self._checked(pod)
            if float(_used(node, name) + want) > ratio * float(node.allocatable.get(name))
        ]
        return Status(Code.UNSCHEDULABLE, tuple(reasons)) if reasons else None

    def filter_batch(self, state: CycleState, pod: PodInfo, snapshot: Snapshot) -> FilterVerdict:
        checked = self._checked(pod)
        codes = np.zeros(snapshot.capacity, dtype=np.int64)
        for bit, (name, ratio, want) in enumerate(checked):
            row = snapshot.resource_row(name)
            if row is None or row >= snapshot.limits.shape[0]:
                used = np.zeros(snapshot.capacity, dtype=np.int64)
                alloc = np.zeros(snapshot.capacity, dtype=np.int64)
            else:
                used, alloc = snapshot.limits[row], snapshot.allocatable[row]
            over = (used + want).astype(np.float64) > ratio * alloc.astype(np.float64)
            codes |= over.astype(np.int64) << bit
        names_ = [name for name, _, _ in checked]

        def describe(code: int) -> Status:
            return Status(
                Code.UNSCHEDULABLE,
                tuple(reason(n) for bit, n in enumerate(names_) if code >> bit & 1),
            )

        return FilterVerdict(codes == 0, codes, describe)


def new(args: object, handle: Handle) -> CheckPodLimitResources:
    return CheckPodLimitResources(plugin_args(NAME, args))
