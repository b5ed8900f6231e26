"""NodeVolumeLimits (PreFilter, Filter): CSI attach limits from CSINode, as upstream 1.37.

Per CSI driver, the node's limit is ``CSINode.spec.drivers[].allocatable.count``. The pod's
new volumes are keyed ``driver/handle``: its claims' CSI PVs (``persistentVolumeClaim`` and
generic ``ephemeral`` volumes); a claim that is unbound, or whose PV is missing, counts under
its StorageClass's provisioner with a handle of its own; when the node has a CSINode, in-tree
AWS EBS, GCE PD, Azure Disk, Cinder and Portworx volumes (PVs, inline volumes, in-tree
provisioners) count under their CSI drivers (``csi_translation``). Volumes already used by a pod
on the node, or attached there (VolumeAttachments of CSI PVs), count once. CSI inline (``csi:``)
volumes are not attached and never count. ``attached + new > limit`` for a driver →
Unschedulable ``node(s) exceed max volume count``. VolumeLimitScaling (beta, on in 1.37): a new
volume's CSIDriver with ``preventPodSchedulingIfMissing`` and not on the node's CSINode →
Unschedulable ``<driver> CSI driver is not installed on the node``. A missing claim of the pod
→ UnschedulableAndUnresolvable ``looking up PVC <ns>/<name>: persistentvolumeclaim "<name>" not
found``. No limits on the node passes.

PreFilter skips, as upstream's ``CSILimits.PreFilter``, every pod without a claim, a generic
ephemeral volume or a migratable in-tree volume: nearly every pod (the ServiceAccount token's
projected volume, ``emptyDir`` and ``configMap`` do not count). Per-node form only.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from corral.scheduler.framework import listers
from corral.scheduler.framework.api_types import RawObject
from corral.scheduler.framework.cluster_events import NODE, POD, ActionType, ClusterEvent
from corral.scheduler.framework.cycle_state import CycleState
from corral.scheduler.framework.interface import Handle, PreFilterExtensions, PreFilterResult
from corral.scheduler.framework.snapshot import Snapshot
from corral.scheduler.framework.status import Code, Status
from corral.scheduler.framework.types import NodeInfo, PodInfo
from corral.scheduler.plugins import names
from corral.scheduler.plugins.helper import csi_translation, volumes

NAME: Final = names.NODE_VOLUME_LIMITS
# csi-translation-lib's in-tree plugins whose inline volumes are "migratable" (v0.36).
MIGRATABLE_INLINE: Final = frozenset({
    "awsElasticBlockStore", "azureDisk", "azureFile", "cinder", "gcePersistentDisk",
    "portworxVolume", "vsphereVolume",
})  # fmt: skip
_CLAIMS: Final = frozenset({"persistentVolumeClaim", "ephemeral"})
# Unbound claims count under a handle no real volume has (upstream: a random prefix).
_UNBOUND_PREFIX: Final = "corral-unbound-claim"


def _owned_by(claim: RawObject, uid: str) -> bool:
    """Upstream ``ephemeral.VolumeIsForPod``: the pod controls the claim."""
    refs = (claim.get("metadata") or {}).get("ownerReferences") or ()
    return any(ref.get("controller") and ref.get("uid") == uid for ref in refs)


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

    def _attachable(
        self, pod: PodInfo, csi_node: RawObject | None, new_pod: bool
    ) -> tuple[dict[str, str], Status | None]:
        """Upstream ``filterAttachableVolumes``: unique volume name (``driver/handle``) →
        driver; and, for the new pod, the status of its first missing or foreign claim (an
        existing pod's missing claim is passed over)."""
        out: dict[str, str] = {}
        migrated = csi_node is not None  # upstream isCSIMigrationOn: the five plugins are on
        for volume in (pod.raw.get("spec") or {}).get("volumes") or ():
            if volume.get("persistentVolumeClaim") is not None:
                name, ephemeral = str(volume["persistentVolumeClaim"].get("claimName", "")), False
            elif volume.get("ephemeral") is not None:
                name, ephemeral = f"{pod.name}-{volume.get('name', '')}", True
            else:
                inline = csi_translation.inline_source(volume) if migrated else None
                if inline is not None:
                    out[f"{inline[0]}/{inline[1]}"] = inline[0]
                continue
            claim = volumes.pvc(self.handle, pod.namespace, name)
            if claim is None:
                if new_pod:
                    message = f"looking up PVC {pod.namespace}/{name}: " + volumes.not_found(
                        "persistentvolumeclaim", name
                    )
                    return out, volumes.unresolvable(message)
                continue
            if ephemeral and not _owned_by(claim, pod.uid):
                if new_pod:
                    return out, Status.error(
                        f"PVC {pod.namespace}/{name} was not created for pod "
                        f"{pod.namespace}/{pod.name} (pod is not owner)"
                    )
                continue
            found = self._driver_info(claim, migrated)
            if found is not None:
                out[f"{found[0]}/{found[1]}"] = found[0]
        return out, None

    def _driver_info(self, claim: RawObject, migrated: bool) -> tuple[str, str] | None:
        """Upstream ``getCSIDriverInfo``: the bound PV's CSI (or translated in-tree) source;
        for an unbound claim, or one whose PV is missing, its class's provisioner and a handle
        unique to the claim."""
        pv_name = volumes.volume_name(claim)
        pv = volumes.pv(self.handle, pv_name) if pv_name else None
        if pv is not None:
            csi = (pv.get("spec") or {}).get("csi")
            found = None
            if csi is not None:
                found = (str(csi.get("driver") or ""), str(csi.get("volumeHandle") or ""))
            elif migrated:
                found = csi_translation.pv_source(pv)
            return found if found is not None and found[0] and found[1] else None
        sc = volumes.claim_storage_class(self.handle, claim)
        if sc is None:
            return None
        provisioner = str(sc.get("provisioner") or "")
        driver = csi_translation.driver_of_provisioner(provisioner)
        if provisioner in csi_translation.IN_TREE_PROVISIONERS and not migrated:
            return None
        if not driver:
            return None
        meta = claim.get("metadata") or {}
        return driver, f"{_UNBOUND_PREFIX}-{meta.get('namespace', '')}/{meta.get('name', '')}"

    def _objects(self) -> listers.ObjectLister | None:
        return self.handle.objects if self.handle is not None else None

    def _driver_installed(self, driver: str, csi_node: RawObject | None) -> bool:
        """Upstream ``checkCSIDriverOnNode`` (VolumeLimitScaling, beta and on in 1.37)."""
        objects = self._objects()
        csi_driver = objects.get(listers.CSI_DRIVER, "", driver) if objects is not None else None
        if (
            csi_driver is None
            or (csi_driver.get("spec") or {}).get("preventPodSchedulingIfMissing") is not True
        ):
            return True
        drivers = ((csi_node or {}).get("spec") or {}).get("drivers") or ()
        return csi_node is not None and any(d.get("name") == driver for d in drivers)

    def _attachments(self, node_name: str) -> dict[str, str]:
        """Upstream ``getNodeVolumeAttachmentInfo``: the node's VolumeAttachments of CSI PVs."""
        objects = self._objects()
        out: dict[str, str] = {}
        for va in objects.list(listers.VOLUME_ATTACHMENT) if objects is not None else ():
            spec = va.get("spec") or {}
            attacher = str(spec.get("attacher") or "")
            pv_name = (spec.get("source") or {}).get("persistentVolumeName")
            if spec.get("nodeName") != node_name or not attacher or pv_name is None:
                continue
            pv = volumes.pv(self.handle, str(pv_name))
            csi = ((pv or {}).get("spec") or {}).get("csi")
            if csi is not None:
                out[f"{attacher}/{csi.get('volumeHandle', '')}"] = attacher
        return out

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status | None:
        if not (pod.raw.get("spec") or {}).get("volumes"):
            return None
        objects = self._objects()
        csi_node = objects.get(listers.CSI_NODE, "", node.name) if objects is not None else None
        new, failure = self._attachable(pod, csi_node, True)
        if failure is not None:
            return failure
        if not new:
            return None
        for driver in new.values():
            if not self._driver_installed(driver, csi_node):
                return Status.of(
                    Code.UNSCHEDULABLE, f"{driver} CSI driver is not installed on the node"
                )
        limits: dict[str, int] = {}
        for entry in ((csi_node or {}).get("spec") or {}).get("drivers") or ():
            count = (entry.get("allocatable") or {}).get("count")
            if count is not None:
                limits[str(entry.get("name", ""))] = int(count)
        if not limits:
            return None
        attached: dict[str, str] = {}
        for other in node.pods:
            attached.update(self._attachable(other, csi_node, False)[0])
        attached_count: dict[str, int] = {}
        for unique, driver in attached.items():
            new.pop(unique, None)
            attached_count[driver] = attached_count.get(driver, 0) + 1
        for unique, driver in self._attachments(node.name).items():
            if unique not in attached:
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
