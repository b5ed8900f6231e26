"""CheckCSIStorageCapacity (PreFilter, Filter) — Corral's own.

A stricter, simpler check than VolumeBinding's capacity check, usable without VolumeBinding.
The pod's claims to be provisioned (:mod:`.pending_claims`: unbound, WaitForFirstConsumer
class) are grouped by StorageClass; a class is checked only when its provisioner names a
CSIDriver with ``spec.storageCapacity: true`` (other drivers publish no capacity), and only
when its claims request some storage. Per checked class, with ``total`` the sum of the pod's
requests in it and ``largest`` its largest one, a CSIStorageCapacity object (any namespace)
can hold the claims when

    storageClassName == class and capacity is set and capacity >= total
    and (maximumVolumeSize is unset or maximumVolumeSize >= largest)

A node passes when, for every checked class, one such object's ``nodeTopology`` (a label
selector; unset selects no node, as upstream) matches the node's labels. Stricter than
upstream's VolumeBinding, which tests each claim alone (against ``maximumVolumeSize`` when
set, else ``capacity``): here the claims of one class must fit together in one topology
segment. Rejection: Unschedulable (capacity may grow) with :func:`reason` for the first
failing class in the pod's volume order. A missing claim is UnschedulableAndUnresolvable as
in the volume plugins. PreFilter returns Skip when no class is checked; Filter alone (without
PreFilter enabled) computes the same thing itself.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from corral.scheduler.config import quantity
from corral.scheduler.framework import labels, listers
from corral.scheduler.framework.cluster_events import NODE, ActionType, ClusterEvent
from corral.scheduler.framework.cycle_state import CycleState
from corral.scheduler.framework.interface import Handle, PreFilterExtensions, PreFilterResult
from corral.scheduler.framework.snapshot import Snapshot
from corral.scheduler.framework.status import Code, Status
from corral.scheduler.framework.types import NodeInfo, PodInfo
from corral.scheduler.plugins import names
from corral.scheduler.plugins.helper.pending_claims import class_name, pending_claims

NAME: Final = names.CHECK_CSI_STORAGE_CAPACITY
EXTENSION_POINTS: Final = ("preFilter", "filter")
STATE_KEY: Final = "PreFilter" + NAME


def reason(storage_class: str) -> str:
    return (
        f'node(s) did not have enough CSI storage capacity for StorageClass "{storage_class}" '
        f"({NAME})"
    )


@dataclass(frozen=True, slots=True)
class _Demand:
    storage_class: str
    total: int
    largest: int


@dataclass(frozen=True, slots=True)
class _State:
    # Per checked class, in the pod's volume order: the topologies of the capacity objects
    # that can hold the pod's claims of that class.
    classes: tuple[tuple[str, tuple[labels.Selector, ...]], ...]

    def clone(self) -> _State:
        return self


def _bytes(value: object) -> int | None:
    if value is None:
        return None
    try:
        return quantity.value(quantity.parse(value))  # type: ignore[arg-type]
    except ValueError:
        return None


def fits(capacity: Mapping[str, Any], demand: _Demand) -> bool:
    """Whether one CSIStorageCapacity object can hold the pod's claims of its class."""
    if capacity.get("storageClassName") != demand.storage_class:
        return False
    available = _bytes(capacity.get("capacity"))
    maximum = _bytes(capacity.get("maximumVolumeSize"))
    if available is None or available < demand.total:
        return False
    return maximum is None or maximum >= demand.largest


def _capacity_tracked(handle: Handle | None, storage_class: Mapping[str, Any]) -> bool:
    objects = handle.objects if handle is not None else None
    if objects is None:
        return False
    driver = objects.get(listers.CSI_DRIVER, "", str(storage_class.get("provisioner") or ""))
    return bool(((driver or {}).get("spec") or {}).get("storageCapacity"))


def demands(handle: Handle | None, pod: PodInfo) -> tuple[list[_Demand], Status | None]:
    """The checked classes' demands, in the pod's volume order."""
    claims, failure = pending_claims(handle, pod)
    if failure is not None:
        return [], failure
    totals: dict[str, tuple[int, int]] = {}
    for claim in claims:
        if claim.request <= 0 or not _capacity_tracked(handle, claim.storage_class):
            continue
        total, largest = totals.get(class_name(claim.storage_class), (0, 0))
        totals[class_name(claim.storage_class)] = (
            total + claim.request,
            max(largest, claim.request),
        )
    return [_Demand(sc, total, largest) for sc, (total, largest) in totals.items()], None


def compute_state(handle: Handle | None, pod: PodInfo) -> tuple[_State, Status | None]:
    wanted, failure = demands(handle, pod)
    if failure is not None or not wanted:
        return _State(()), failure
    objects = handle.objects if handle is not None else None
    capacities = objects.list(listers.CSI_STORAGE_CAPACITY) if objects is not None else ()
    return _State(
        tuple(
            (
                demand.storage_class,
                tuple(labels.parse(c.get("nodeTopology")) for c in capacities if fits(c, demand)),
            )
            for demand in wanted
        )
    ), None


class CheckCSIStorageCapacity:
    name: str = NAME

    def __init__(self, handle: Handle | None) -> None:
        self.handle = handle

    def pre_filter(
        self, state: CycleState, pod: PodInfo, snapshot: Snapshot
    ) -> tuple[PreFilterResult | None, Status | None]:
        computed, failure = compute_state(self.handle, pod)
        if failure is not None:
            return None, failure
        if not computed.classes:
            return None, Status(Code.SKIP)
        state.write(STATE_KEY, computed)
        return None, None

    def pre_filter_extensions(self) -> PreFilterExtensions | None:
        return None

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status | None:
        computed = state.read(STATE_KEY, _State)
        if computed is None:  # PreFilter not enabled: the same state, computed here
            computed, failure = compute_state(self.handle, pod)
            if failure is not None:
                return failure
            state.write(STATE_KEY, computed)
        for storage_class, topologies in computed.classes:
            if not any(t.matches(node.labels) for t in topologies):
                return Status.of(Code.UNSCHEDULABLE, reason(storage_class))
        return None

    def events_to_register(self) -> Sequence[ClusterEvent]:
        return (
            ClusterEvent(NODE, ActionType.ADD | ActionType.UPDATE_NODE_LABEL),
            ClusterEvent(listers.CSI_STORAGE_CAPACITY, ActionType.ADD | ActionType.UPDATE),
            ClusterEvent(listers.CSI_DRIVER, ActionType.ADD | ActionType.UPDATE),
            ClusterEvent(listers.PERSISTENT_VOLUME_CLAIM, ActionType.ADD | ActionType.UPDATE),
            ClusterEvent(listers.STORAGE_CLASS, ActionType.ADD | ActionType.UPDATE),
        )


def new(args: object, handle: Handle) -> CheckCSIStorageCapacity:
    return CheckCSIStorageCapacity(handle)
