"""VolumeRestrictions (PreFilter with Add/RemovePod, Filter).

- Disk conflicts of inline volumes (GCE PD and iSCSI unless all mounts are read-only, AWS EBS by
  volume ID, RBD by monitors/pool/image unless read-only) with the node's pods → Unschedulable
  ``node(s) had no available disk``.
- ReadWriteOncePod: if another pod anywhere already uses one of the pod's RWOP claims →
  Unschedulable (upstream's reason); a missing claim → UnschedulableAndUnresolvable NotFound.
PreFilter returns Skip when there is nothing to check. Per-node form only: pods with such
volumes are rare, and the runtime loops per-node plugins only over nodes still feasible.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from corral.scheduler.framework import cluster_events as ev
from corral.scheduler.framework.cluster_events import (
    ASSIGNED_POD,
    NODE,
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    QueueingHint,
)
from corral.scheduler.framework.cycle_state import CycleState
from corral.scheduler.framework.interface import Handle, PreFilterExtensions, PreFilterResult
from corral.scheduler.framework.snapshot import Snapshot
from corral.scheduler.framework.status import Code, Status
from corral.scheduler.framework.types import NodeInfo, PodInfo
from corral.scheduler.plugins import names
from corral.scheduler.plugins.helper import volumes

NAME: Final = names.VOLUME_RESTRICTIONS
STATE_KEY: Final = "PreFilter" + NAME
ERR_REASON_DISK_CONFLICT: Final = "node(s) had no available disk"
ERR_REASON_RWOP_CONFLICT: Final = (
    "node(s) unavailable due to PersistentVolumeClaim with ReadWriteOncePod access mode already "
    "in-use by another pod"
)
_INLINE: Final = ("gcePersistentDisk", "awsElasticBlockStore", "rbd", "iscsi")


@dataclass(slots=True)
class _State:
    rwop_claims: frozenset[str]
    conflicting: int

    def clone(self) -> _State:
        return _State(self.rwop_claims, self.conflicting)


def _volumes(pod: PodInfo) -> list[Mapping[str, Any]]:
    return list((pod.raw.get("spec") or {}).get("volumes") or ())


def volume_conflict(volume: Mapping[str, Any], other: PodInfo) -> bool:
    """Upstream ``isVolumeConflict``."""
    for existing in _volumes(other):
        for kind in _INLINE:
            a, b = volume.get(kind), existing.get(kind)
            if a is None or b is None:
                continue
            both_ro = bool(a.get("readOnly")) and bool(b.get("readOnly"))
            if kind == "gcePersistentDisk" and a.get("pdName") == b.get("pdName") and not both_ro:
                return True
            if kind == "awsElasticBlockStore" and a.get("volumeID") == b.get("volumeID"):
                return True
            if kind == "iscsi" and a.get("iqn") == b.get("iqn") and not both_ro:
                return True
            if kind == "rbd":
                same = (
                    set(a.get("monitors") or ()) & set(b.get("monitors") or ())
                    and a.get("pool", "rbd") == b.get("pool", "rbd")
                    and a.get("image") == b.get("image")
                )
                if same and not both_ro:
                    return True
    return False


def _uses(pod: PodInfo, namespace: str, claims: frozenset[str]) -> int:
    return sum(1 for c in pod.pvc_names if pod.namespace == namespace and c in claims)


class VolumeRestrictions:
    name: str = NAME

    def __init__(self, handle: Handle | None) -> None:
        self.handle = handle

    def pre_filter(
        self, state: CycleState, pod: PodInfo, snapshot: Snapshot
    ) -> tuple[PreFilterResult | None, Status | None]:
        needs_check = any(any(k in v for k in _INLINE) for v in _volumes(pod))
        rwop: set[str] = set()
        for name, ephemeral in volumes.claims(pod):
            if ephemeral:
                continue
            claim, failure = volumes.find_pvc(self.handle, pod.namespace, name)
            if claim is None:
                return None, failure
            modes = (claim.get("spec") or {}).get("accessModes") or ()
            if volumes.READ_WRITE_ONCE_POD in modes:
                rwop.add(name)
        claims = frozenset(rwop)
        conflicting = 0
        if claims:
            table = snapshot.pods
            infos, live = table.infos, table.live()
            for row in range(table.size):
                other = infos[row]
                if live[row] and other is not None and other.uid != pod.uid:
                    conflicting += _uses(other, pod.namespace, claims)
        if not needs_check and conflicting == 0:
            return None, Status(Code.SKIP)
        state.write(STATE_KEY, _State(claims, conflicting))
        return None, None

    def pre_filter_extensions(self) -> PreFilterExtensions | None:
        return self

    def add_pod(
        self, state: CycleState, pod: PodInfo, pod_to_add: PodInfo, node: NodeInfo
    ) -> Status | None:
        s = state.read(STATE_KEY, _State)
        if s is not None:
            s.conflicting += _uses(pod_to_add, pod.namespace, s.rwop_claims)
        return None

    def remove_pod(
        self, state: CycleState, pod: PodInfo, pod_to_remove: PodInfo, node: NodeInfo
    ) -> Status | None:
        s = state.read(STATE_KEY, _State)
        if s is not None:
            s.conflicting -= _uses(pod_to_remove, pod.namespace, s.rwop_claims)
        return None

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status | None:
        for volume in _volumes(pod):
            if any(k in volume for k in _INLINE) and any(
                volume_conflict(volume, other) for other in node.pods
            ):
                return Status.of(Code.UNSCHEDULABLE, ERR_REASON_DISK_CONFLICT)
        s = state.read(STATE_KEY, _State)
        if s is not None and s.conflicting > 0:
            return Status.of(Code.UNSCHEDULABLE, ERR_REASON_RWOP_CONFLICT)
        return None

    # --- queueing hints ---------------------------------------------------------------------

    def events_to_register(self) -> Sequence[ClusterEventWithHint]:
        # Volumes are immutable: pod updates cannot release one. An added node always may.
        return (
            ClusterEventWithHint(
                ClusterEvent(ASSIGNED_POD, ActionType.DELETE), self.hint_assigned_pod_deleted
            ),
            ClusterEventWithHint(ClusterEvent(NODE, ActionType.ADD)),
            ClusterEventWithHint(
                ClusterEvent("PersistentVolumeClaim", ActionType.ADD), self.hint_claim_added
            ),
        )

    def hint_assigned_pod_deleted(self, pod: PodInfo, old: object, new: object) -> QueueingHint:
        """The deleted pod (same namespace) held an inline disk the pod's volumes conflict
        with, or used one of the pod's claims (maybe ReadWriteOncePod; not looked up)."""
        deleted, _ = ev.as_objects(old, new, PodInfo)
        assert deleted is not None
        if deleted.namespace != pod.namespace:
            return QueueingHint.QUEUE_SKIP
        if any(volume_conflict(v, deleted) for v in _volumes(pod)):
            return QueueingHint.QUEUE
        mine = {name for name, ephemeral in volumes.claims(pod) if not ephemeral}
        theirs = {name for name, ephemeral in volumes.claims(deleted) if not ephemeral}
        return QueueingHint.QUEUE if mine & theirs else QueueingHint.QUEUE_SKIP

    def hint_claim_added(self, pod: PodInfo, old: object, new: object) -> QueueingHint:
        """A claim the pod names was created (its access modes can be checked now)."""
        _, claim = ev.as_objects(old, new, dict)
        assert claim is not None
        meta = claim.get("metadata") or {}
        if meta.get("namespace") != pod.namespace:
            return QueueingHint.QUEUE_SKIP
        named = {name for name, ephemeral in volumes.claims(pod) if not ephemeral}
        return QueueingHint.QUEUE if meta.get("name") in named else QueueingHint.QUEUE_SKIP


def new(args: object, handle: Handle) -> VolumeRestrictions:
    if args is not None:
        raise TypeError(f"{NAME} takes no args")
    return VolumeRestrictions(handle)
