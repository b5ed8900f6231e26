"""PrioritySort (QueueSort): higher ``spec.priority`` first, then earlier queue timestamp."""

from __future__ import annotations

from typing import Final

from corral.scheduler.framework.interface import Handle
from corral.scheduler.framework.types import QueuedPodInfo
from corral.scheduler.plugins import names

NAME: Final = names.PRIORITY_SORT


class PrioritySort:
    name: str = NAME

    def less(self, a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
        pa, pb = a.pod.priority, b.pod.priority
        return pa > pb or (pa == pb and a.timestamp < b.timestamp)


def new(args: object, handle: Handle) -> PrioritySort:
    if args is not None:
        raise TypeError(f"{NAME} takes no args")
    return PrioritySort()
