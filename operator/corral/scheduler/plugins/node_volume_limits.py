"""NodeVolumeLimits (PreFilter, Filter): CSI attach limits from CSINode.

Per CSI driver, the node's limit is ``CSINode.spec.drivers[].allocatable.count``. The pod's
new volumes are its claims' CSI PVs (``persistentVolumeClaim`` and generic ``ephemeral``
volumes; unbound claims: the StorageClass's provisioner), keyed by a unique volume name;
volumes already used by a pod on the node do not count twice. CSI inline (``csi:``) volumes
are not attached and never count, as upstream. ``attached + new > limit`` for a driver →
Unschedulable ``node(s) exceed max volume count``. A missing claim of the pod →
UnschedulableAndUnresolvable. No CSINode, or no limits, passes. In-tree inline volumes that
upstream would translate to CSI (``MIGRATABLE_INLINE``) are not translated: they keep the
Filter running but count nothing.

PreFilter skips, as upstream's ``CSILimits.PreFilter``, every pod without a claim, a generic
ephemeral volume or a migratable in-tree volume: nearly every pod (the ServiceAccount token's
projected volume, ``emptyDir`` and ``configMap`` do not count). Per-node form only.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from corral.scheduler.framework import listers
from corral.scheduler.framework.cluster_events import NODE, POD, ActionType, ClusterEvent
from corral.scheduler.framework.cycle_state import CycleState
from corral.scheduler.framework.interface import Handle, PreFilterExtensions, PreFilterResult
from corral.scheduler.framework.snapshot import Snapshot
from corral.scheduler.framework.status import Code, Status
from corral.scheduler.framework.types import NodeInfo, PodInfo
from corral.scheduler.plugins import names, volumes

NAME: Final = names.NODE_VOLUME_LIMITS
# csi-translation-lib's in-tree plugins whose inline volumes are "migratable" (v0.36).
MIGRATABLE_INLINE: Final = frozenset({
    "awsElasticBlockStore", "azureDisk", "azureFile", "cinder", "gcePersistentDisk",
    "portworxVolume", "vsphereVolume",
})  # fmt: skip
_CLAIMS: Final = frozenset({"persistentVolumeClaim", "ephemeral"})
ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED: Final = "node(s) exceed max volume count"


class NodeVolumeLimits:
    name: str = NAME

    def __init__(self, handle: Handle | None) -> None:
        self.handle = handle

    def pre_filter(
        self, state: CycleState, pod: PodInfo, snapshot: Snapshot
    ) -> tuple[PreFilterResult | None, Status | None]:
        for volume in (pod.raw.get("spec") or {}).get("volumes") or ():
            if not _CLAIMS.isdisjoint(volume) or not MIGRATABLE_INLINE.isdisjoint(volume):
                return None, None
        return None, Status(Code.SKIP)

    def pre_filter_extensions(self) -> PreFilterExtensions | None:
        return None

    def _attachable(self, pod: PodInfo, new_pod: bool) -> tuple[dict[str, str], Status | None]:
        """Unique volume name → driver; and the NotFound status of the new pod's first missing
        claim (an existing pod's missing claim is passed over)."""
        out: dict[str, str] = {}
        for name, _ephemeral in volumes.claims(pod):
            claim, failure = volumes.find_pvc(self.handle, pod.namespace, name)
            if claim is None:
                if new_pod:
                    return out, failure
                continue
            pv_name = volumes.volume_name(claim)
            if not pv_name:
                sc = volumes.claim_storage_class(self.handle, claim)
                if sc is not None and sc.get("provisioner"):
                    out[f"{pod.namespace}/{name}"] = str(sc["provisioner"])
                continue
            pv = volumes.pv(self.handle, pv_name)
            csi_pv = ((pv or {}).get("spec") or {}).get("csi")
            if csi_pv is not None:
                driver = str(csi_pv.get("driver", ""))
                out[f"{driver}/{csi_pv.get('volumeHandle', '')}"] = driver
        return out, None

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status | None:
        if not (pod.raw.get("spec") or {}).get("volumes"):
            return None
        new, missing = self._attachable(pod, True)
        if missing is not None:
            return missing
        if not new:
            return None
        objects = self.handle.objects if self.handle is not None else None
        csi_node = objects.get(listers.CSI_NODE, "", node.name) if objects is not None else None
        limits: dict[str, int] = {}
        for driver in ((csi_node or {}).get("spec") or {}).get("drivers") or ():
            count = (driver.get("allocatable") or {}).get("count")
            if count is not None:
                limits[str(driver.get("name", ""))] = int(count)
        if not limits:
            return None
        attached: dict[str, str] = {}
        for other in node.pods:
            attached.update(self._attachable(other, False)[0])
        attached_count: dict[str, int] = {}
        for unique, driver in attached.items():
            new.pop(unique, None)
            attached_count[driver] = attached_count.get(driver, 0) + 1
        new_count: dict[str, int] = {}
        for driver in new.values():
            new_count[driver] = new_count.get(driver, 0) + 1
        for driver, count in new_count.items():
            limit = limits.get(driver)
            if limit is not None and attached_count.get(driver, 0) + count > limit:
                return Status.of(Code.UNSCHEDULABLE, ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED)
        return None

    def events_to_register(self) -> Sequence[ClusterEvent]:
        return (
            ClusterEvent("CSINode", ActionType.ADD | ActionType.UPDATE),
            ClusterEvent(POD, ActionType.DELETE),
            ClusterEvent(NODE, ActionType.ADD),
            ClusterEvent("PersistentVolumeClaim", ActionType.ADD | ActionType.UPDATE),
        )


def new(args: object, handle: Handle) -> NodeVolumeLimits:
    if args is not None:
        raise TypeError(f"{NAME} takes no args")
    return NodeVolumeLimits(handle)
