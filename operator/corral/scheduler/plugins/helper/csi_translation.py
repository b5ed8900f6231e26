"""In-tree volumes as their CSI drivers see them, after upstream's csi-translation-lib, for the
five plugins whose migration NodeVolumeLimits treats as on (``isCSIMigrationOn``: AWS EBS, GCE
PD, Azure Disk, Cinder, Portworx; Azure File and vSphere count as not migrated).

Contract: :func:`pv_source` and :func:`inline_source` give ``(driver, volume handle)`` of a PV or
an inline pod volume, ``None`` when it is not one of those five or its ID does not translate
(upstream then does not count it). :func:`driver_of_provisioner` maps an in-tree provisioner
(``kubernetes.io/aws-ebs``...) to its CSI driver; other provisioners are returned as they are,
``None`` for the two not migrated.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Final
from urllib.parse import urlparse

from corral.scheduler.framework.api_types import RawObject

UNSPECIFIED: Final = "UNSPECIFIED"
ZONE_BETA: Final = "failure-domain.beta.kubernetes.io/zone"
ZONE: Final = "topology.kubernetes.io/zone"
_EBS_ID: Final = re.compile(r"^vol-[^/]*$")

# volume source field → (in-tree plugin name, CSI driver)
SOURCES: Final[Mapping[str, tuple[str, str]]] = {
    "awsElasticBlockStore": ("kubernetes.io/aws-ebs", "ebs.csi.aws.com"),
    "gcePersistentDisk": ("kubernetes.io/gce-pd", "pd.csi.storage.gke.io"),
    "azureDisk": ("kubernetes.io/azure-disk", "disk.csi.azure.com"),
    "cinder": ("kubernetes.io/cinder", "cinder.csi.openstack.org"),
    "portworxVolume": ("kubernetes.io/portworx-volume", "pxd.portworx.com"),
}
NOT_MIGRATED: Final = frozenset({"kubernetes.io/azure-file", "kubernetes.io/vsphere-volume"})
_DRIVERS: Final = dict(SOURCES.values())
IN_TREE_PROVISIONERS: Final = frozenset(_DRIVERS) | NOT_MIGRATED


def _ebs_handle(volume_id: str) -> str | None:
    """Upstream ``KubernetesVolumeIDToEBSVolumeID``: ``aws://<zone>/vol-...`` or a bare id."""
    if not volume_id.startswith("aws://"):
        return volume_id
    parsed = urlparse(volume_id)
    handle = parsed.path.strip("/")
    return handle if _EBS_ID.match(handle) else None


def _gce_region(zones: list[str]) -> str | None:
    regions = {zone.rsplit("-", 1)[0] for zone in zones if "-" in zone}
    return regions.pop() if len(regions) == 1 and all("-" in z for z in zones) else None


def _handle(field: str, source: Mapping[str, Any], labels: Mapping[str, str] | None) -> str | None:
    if field == "awsElasticBlockStore":
        return _ebs_handle(str(source.get("volumeID") or ""))
    if field == "gcePersistentDisk":
        name = str(source.get("pdName") or "")
        if labels is None:  # inline: the zone is not known
            return f"projects/{UNSPECIFIED}/zones/{UNSPECIFIED}/disks/{name}"
        zones = [z for z in (labels.get(ZONE_BETA) or labels.get(ZONE) or "").split("__") if z]
        if len(zones) == 1:
            return f"projects/{UNSPECIFIED}/zones/{zones[0]}/disks/{name}"
        if len(zones) > 1:
            region = _gce_region(zones)
            return (
                None if region is None else f"projects/{UNSPECIFIED}/regions/{region}/disks/{name}"
            )
        return f"projects/{UNSPECIFIED}/zones/{UNSPECIFIED}/disks/{name}"
    if field == "azureDisk":
        return str(source.get("diskURI") or "")
    return str(source.get("volumeID") or "")


def pv_source(pv: RawObject) -> tuple[str, str] | None:
    spec = pv.get("spec") or {}
    labels = (pv.get("metadata") or {}).get("labels") or {}
    for field, (_plugin, driver) in SOURCES.items():
        source = spec.get(field)
        if source is not None:
            handle = _handle(field, source, labels)
            return None if handle is None else (driver, handle)
    return None


def inline_source(volume: RawObject) -> tuple[str, str] | None:
    for field, (_plugin, driver) in SOURCES.items():
        source = volume.get(field)
        if source is not None:
            handle = _handle(field, source, None)
            return None if handle is None else (driver, handle)
    return None


def driver_of_provisioner(provisioner: str) -> str | None:
    if provisioner in NOT_MIGRATED:
        return None
    return _DRIVERS.get(provisioner, provisioner)
