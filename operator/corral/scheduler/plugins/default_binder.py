"""DefaultBinder (Bind): posts the pod's Binding through the framework's ``PodBinder``.

The binder is a callable handed to the framework (``corral.k8s`` will provide the real one:
``POST pods/<name>/binding`` with ``target {kind: Node, name}``); the plugin stays free of
API-client imports and is testable with a fake.
"""

from __future__ import annotations

from typing import Final

from corral.scheduler.framework.cycle_state import CycleState
from corral.scheduler.framework.interface import Handle
from corral.scheduler.framework.status import Status
from corral.scheduler.framework.types import PodInfo
from corral.scheduler.plugins import names

NAME: Final = names.DEFAULT_BINDER


class DefaultBinder:
    name: str = NAME

    def __init__(self, handle: Handle) -> None:
        self._handle = handle

    def bind(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        binder = self._handle.pod_binder
        if binder is None:
            return Status.error("no pod binder is configured")
        try:
            binder(pod, node_name)
        except Exception as exc:  # the API's answer, whatever it is, fails this binding
            return Status.error(str(exc))
        return None


def new(args: object, handle: Handle) -> DefaultBinder:
    if args is not None:
        raise TypeError(f"{NAME} takes no args")
    return DefaultBinder(handle)
