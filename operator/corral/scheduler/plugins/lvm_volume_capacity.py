"""LvmVolumeCapacity (Filter) — Corral's own.

LVM CSI drivers keep each node's free capacity per device class (a volume group) in a node
annotation; Corral reads TopoLVM's convention, ``capacity.topolvm.io/<device-class>`` = free
bytes. The pod's LVM claims are its claims to be provisioned (:mod:`.pending_claims`:
unbound, WaitForFirstConsumer class) whose StorageClass provisioner is one of the args'
``provisioners``; a claim's device class is its class's ``topolvm.io/device-class``
parameter, else the args' ``defaultDeviceClass``. Per device class the pod's requests are
summed, and a node is filtered out

- when it has no annotation for the class: :func:`reason_missing`;
- when the annotation (a quantity; one that does not parse counts as 0) is below the sum:
  :func:`reason_insufficient`.

Both are Unschedulable: the driver rewrites the annotation as volumes come and go, and a node
update requeues the pod. The first failing device class in the pod's volume order is named.
A pod without LVM claims passes every node. A missing claim is UnschedulableAndUnresolvable
as in the volume plugins. The per-pod demand is computed once per cycle (CycleState).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from corral.scheduler.config import plugin_args, quantity
from corral.scheduler.config.args import LvmVolumeCapacityArgs
from corral.scheduler.config.args_validation import LVM_CAPACITY_ANNOTATION_PREFIX
from corral.scheduler.framework import listers
from corral.scheduler.framework.cluster_events import NODE, ActionType, ClusterEvent
from corral.scheduler.framework.cycle_state import CycleState
from corral.scheduler.framework.interface import Handle
from corral.scheduler.framework.status import Code, Status
from corral.scheduler.framework.types import NodeInfo, PodInfo
from corral.scheduler.plugins import names
from corral.scheduler.plugins.helper.pending_claims import pending_claims

NAME: Final = names.LVM_VOLUME_CAPACITY
EXTENSION_POINTS: Final = ("filter",)
STATE_KEY: Final = NAME
DEVICE_CLASS_PARAMETER: Final = "topolvm.io/device-class"


def reason_missing(device_class: str) -> str:
    return f'node(s) had no LVM device class "{device_class}" ({NAME})'


def reason_insufficient(device_class: str) -> str:
    return (
        f'node(s) did not have enough free LVM capacity in device class "{device_class}" ({NAME})'
    )


@dataclass(frozen=True, slots=True)
class _State:
    # (device class, bytes the pod asks for in it), in the pod's volume order.
    demands: tuple[tuple[str, int], ...]
    failure: Status | None = None

    def clone(self) -> _State:
        return self


def free_bytes(annotation: str) -> int:
    try:
        return quantity.value(quantity.parse(annotation))
    except ValueError:
        return 0


class LvmVolumeCapacity:
    name: str = NAME

    def __init__(self, args: LvmVolumeCapacityArgs, handle: Handle | None) -> None:
        self.provisioners = frozenset(args.provisioners)
        self.default_device_class = args.default_device_class or ""
        self.handle = handle

    def _demands(self, pod: PodInfo) -> _State:
        claims, failure = pending_claims(self.handle, pod)
        if failure is not None:
            return _State((), failure)
        totals: dict[str, int] = {}
        for claim in claims:
            sc = claim.storage_class
            if sc.get("provisioner") not in self.provisioners:
                continue
            parameters = sc.get("parameters") or {}
            device_class = str(parameters.get(DEVICE_CLASS_PARAMETER) or self.default_device_class)
            totals[device_class] = totals.get(device_class, 0) + claim.request
        return _State(tuple(totals.items()))

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status | None:
        computed = state.read(STATE_KEY, _State)
        if computed is None:
            computed = self._demands(pod)
            state.write(STATE_KEY, computed)
        if computed.failure is not None:
            return computed.failure
        for device_class, wanted in computed.demands:
            annotation = node.annotations.get(LVM_CAPACITY_ANNOTATION_PREFIX + device_class)
            if annotation is None:
                return Status.of(Code.UNSCHEDULABLE, reason_missing(device_class))
            if free_bytes(annotation) < wanted:
                return Status.of(Code.UNSCHEDULABLE, reason_insufficient(device_class))
        return None

    def events_to_register(self) -> Sequence[ClusterEvent]:
        return (
            ClusterEvent(NODE, ActionType.ADD | ActionType.UPDATE_NODE_ANNOTATION),
            ClusterEvent(listers.PERSISTENT_VOLUME_CLAIM, ActionType.ADD | ActionType.UPDATE),
            ClusterEvent(listers.STORAGE_CLASS, ActionType.ADD | ActionType.UPDATE),
        )


def new(args: object, handle: Handle) -> LvmVolumeCapacity:
    return LvmVolumeCapacity(plugin_args(NAME, args), handle)
