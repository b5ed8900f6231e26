"""VolumeBinding (PreFilter, Filter, Reserve, PreBind, PreScore, Score) for bound claims.

PreFilter: a pod without PVC volumes is skipped. A missing claim, a lost or deleting one, or a
generic ephemeral claim not created yet → UnschedulableAndUnresolvable with upstream's wording.
An unbound claim is refused here: ``pod has unbound immediate PersistentVolumeClaims`` for
Immediate binding (as upstream), and :data:`ERR_REASON_UNBOUND_DELAYED` for
WaitForFirstConsumer classes, because Corral does not bind or provision volumes yet.
Filter: every bound PV must exist (``ERR_REASON_PV_NOT_EXIST``) and its
``spec.nodeAffinity.required`` must match the node (``ERR_REASON_NODE_CONFLICT``); both
UnschedulableAndUnresolvable. Reserve/PreBind have nothing to do for bound claims; PreScore
returns Skip (StorageCapacityScoring is off upstream).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

import numpy as np

from corral.scheduler.framework import nodeselector as ns
from corral.scheduler.framework.cluster_events import NODE, POD, ActionType, ClusterEvent
from corral.scheduler.framework.cycle_state import CycleState
from corral.scheduler.framework.interface import (
    FilterVerdict,
    Handle,
    PreFilterExtensions,
    PreFilterResult,
    Scores,
    Slots,
)
from corral.scheduler.framework.snapshot import Snapshot
from corral.scheduler.framework.status import Code, Status
from corral.scheduler.framework.types import NodeInfo, PodInfo
from corral.scheduler.plugins import names, volumes

NAME: Final = names.VOLUME_BINDING
STATE_KEY: Final = NAME
ERR_REASON_NODE_CONFLICT: Final = "node(s) had volume node affinity conflict"
ERR_REASON_PV_NOT_EXIST: Final = (
    "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)"
)
ERR_REASON_UNBOUND_IMMEDIATE: Final = "pod has unbound immediate PersistentVolumeClaims"
ERR_REASON_UNBOUND_DELAYED: Final = (
    "pod has unbound PersistentVolumeClaims with WaitForFirstConsumer binding, "
    "which Corral does not bind or provision yet"
)


@dataclass(frozen=True, slots=True)
class _State:
    # Required node affinity of every bound PV; None where the PV does not exist.
    affinities: tuple[ns.NodeSelector | None, ...]
    missing_pv: bool

    def clone(self) -> _State:
        return self


class VolumeBinding:
    name: str = NAME

    def __init__(self, handle: Handle | None) -> None:
        self.handle = handle

    def pre_filter(
        self, state: CycleState, pod: PodInfo, snapshot: Snapshot
    ) -> tuple[PreFilterResult | None, Status | None]:
        claims = volumes.claims(pod)
        if not claims:
            return None, Status(Code.SKIP)
        affinities: list[ns.NodeSelector | None] = []
        missing = False
        unbound_immediate = unbound_delayed = False
        for name, ephemeral in claims:
            claim, failure = volumes.find_pvc(self.handle, pod.namespace, name)
            if claim is None:
                if ephemeral:
                    msg = (
                        "waiting for ephemeral volume controller to create the "
                        f'persistentvolumeclaim "{name}"'
                    )
                    return None, volumes.unresolvable(msg)
                return None, failure
            bound_to = volumes.volume_name(claim)
            if (claim.get("status") or {}).get("phase") == "Lost":
                msg = (
                    f'persistentvolumeclaim "{name}" bound to non-existent '
                    f'persistentvolume "{bound_to}"'
                )
                return None, volumes.unresolvable(msg)
            if (claim.get("metadata") or {}).get("deletionTimestamp") is not None:
                return None, volumes.unresolvable(
                    f'persistentvolumeclaim "{name}" is being deleted'
                )
            if not bound_to:
                sc = volumes.claim_storage_class(self.handle, claim)
                mode = (sc or {}).get("volumeBindingMode")
                if mode == volumes.WAIT_FOR_FIRST_CONSUMER:
                    unbound_delayed = True
                else:
                    unbound_immediate = True
                continue
            volume = volumes.pv(self.handle, bound_to)
            if volume is None:
                missing = True
                affinities.append(None)
                continue
            required = ((volume.get("spec") or {}).get("nodeAffinity") or {}).get("required")
            affinities.append(ns.parse_node_selector(required) if required else None)
        if unbound_immediate:
            return None, volumes.unresolvable(ERR_REASON_UNBOUND_IMMEDIATE)
        if unbound_delayed:
            return None, volumes.unresolvable(ERR_REASON_UNBOUND_DELAYED)
        state.write(STATE_KEY, _State(tuple(affinities), missing))
        return None, None

    def pre_filter_extensions(self) -> PreFilterExtensions | None:
        return None

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status | None:
        s = state.read(STATE_KEY, _State)
        if s is None:
            return None
        if s.missing_pv:
            return volumes.unresolvable(ERR_REASON_PV_NOT_EXIST)
        for selector in s.affinities:
            if selector is not None and not ns.selector_matches(selector, node.labels, node.name):
                return volumes.unresolvable(ERR_REASON_NODE_CONFLICT)
        return None

    def filter_batch(self, state: CycleState, pod: PodInfo, snapshot: Snapshot) -> FilterVerdict:
        s = state.read(STATE_KEY, _State)
        passed = np.ones(snapshot.capacity, dtype=np.bool_)
        if s is None:
            return FilterVerdict.uniform(passed, volumes.unresolvable(ERR_REASON_NODE_CONFLICT))
        if s.missing_pv:
            failed = np.zeros(snapshot.capacity, dtype=np.bool_)
            return FilterVerdict.uniform(failed, volumes.unresolvable(ERR_REASON_PV_NOT_EXIST))
        for selector in s.affinities:
            if selector is not None:
                passed &= ns.selector_mask(selector, snapshot)
        return FilterVerdict.uniform(passed, volumes.unresolvable(ERR_REASON_NODE_CONFLICT))

    # Bound claims need no binding: Reserve, PreBind and scoring have nothing to do.

    def reserve(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        return None

    def unreserve(self, state: CycleState, pod: PodInfo, node_name: str) -> None:
        return None

    def pre_bind(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        return None

    def pre_score(
        self, state: CycleState, pod: PodInfo, snapshot: Snapshot, slots: Slots
    ) -> Status | None:
        return Status(Code.SKIP)

    def score(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> tuple[int, Status | None]:
        return 0, None

    def score_batch(
        self, state: CycleState, pod: PodInfo, snapshot: Snapshot, slots: Slots
    ) -> tuple[Scores, Status | None]:
        return np.zeros(len(slots), dtype=np.int64), None

    def events_to_register(self) -> Sequence[ClusterEvent]:
        return (
            ClusterEvent(NODE, ActionType.ADD | ActionType.UPDATE_NODE_LABEL),
            ClusterEvent(POD, ActionType.DELETE),
            ClusterEvent("PersistentVolumeClaim", ActionType.ADD | ActionType.UPDATE),
            ClusterEvent("PersistentVolume", ActionType.ADD | ActionType.UPDATE),
            ClusterEvent("StorageClass", ActionType.ADD | ActionType.UPDATE),
        )


def new(args: object, handle: Handle) -> VolumeBinding:
    # VolumeBindingArgs (bindTimeoutSeconds, shape) only matter for binding and capacity
    # scoring, which are not implemented; they are accepted and ignored.
    return VolumeBinding(handle)
