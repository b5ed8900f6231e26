"""Cluster objects other than nodes and pods, as raw JSON, for plugins (``ObjectLister``).

The engine's informers feed it: ``ObjectStore.apply(kind, event_type, obj)`` with the watch
event type (``ADDED``, ``MODIFIED``, ``DELETED``; ``BOOKMARK`` is ignored) and the object's raw
JSON; ``replace(kind, objects)`` after a (re)list. Which kinds to watch, and why:

=====================  =======================================  ==================================
kind                   list/watch path                          read by
=====================  =======================================  ==================================
Service                /api/v1/services                         PodTopologySpread (system default
ReplicationController  /api/v1/replicationcontrollers           constraints: selectors of the
ReplicaSet             /apis/apps/v1/replicasets                pod's Services and owner)
StatefulSet            /apis/apps/v1/statefulsets
Namespace              /api/v1/namespaces                       InterPodAffinity (namespaceSelector)
PersistentVolumeClaim  /api/v1/persistentvolumeclaims           VolumeBinding, VolumeZone,
PersistentVolume       /api/v1/persistentvolumes                VolumeRestrictions, NodeVolumeLimits
StorageClass           /apis/storage.k8s.io/v1/storageclasses   VolumeBinding, VolumeZone
CSINode                /apis/storage.k8s.io/v1/csinodes         NodeVolumeLimits
CSIDriver              /apis/storage.k8s.io/v1/csidrivers       VolumeBinding (capacity tracking),
CSIStorageCapacity     /apis/storage.k8s.io/v1/                 CheckCSIStorageCapacity
                       csistoragecapacities
VolumeAttachment       /apis/storage.k8s.io/v1/                 NodeVolumeLimits
                       volumeattachments
PodDisruptionBudget    /apis/policy/v1/poddisruptionbudgets     DefaultPreemption
PriorityClass          /apis/scheduling.k8s.io/v1/priorityclasses  (informational: priorities are
                                                                resolved into spec.priority at
                                                                admission)
ResourceClaim          /apis/resource.k8s.io/v1/resourceclaims  DynamicResources (claims, devices
ResourceSlice          /apis/resource.k8s.io/v1/resourceslices  in use, the devices of each node,
DeviceClass            /apis/resource.k8s.io/v1/deviceclasses   their classes, the taints
DeviceTaintRule        /apis/resource.k8s.io/v1/                rules add to devices)
                       devicetaintrules
podgroups.v1alpha1.    /apis/scheduling.x-k8s.io/v1alpha1/      Coscheduling (scheduler-plugins'
scheduling.x-k8s.io    podgroups                                PodGroup CRD; optional)
noderesourcetopologies /apis/topology.node.k8s.io/v1alpha2/     NodeResourceTopologyMatch (the
.v1alpha2.topology.    noderesourcetopologies                   NRT CRD of noderesourcetopology-
node.k8s.io                                                     api; optional)
elasticquotas.v1alpha1 /apis/scheduling.x-k8s.io/v1alpha1/      CapacityScheduling (scheduler-
.scheduling.x-k8s.io   elasticquotas                            plugins' ElasticQuota; optional)
=====================  =======================================  ==================================

:data:`WATCHED` maps each watchable (API group, resource) to its kind and path. Which
informers the engine starts comes from the plugin declarations alone (``cluster_reads``, the same
reads their RBAC is rendered from), through :func:`kinds_for`: an out-of-tree plugin that
declares a read of a watched resource gets its informer too, and a read of a resource not in
:data:`WATCHED` is named by :func:`unwatched_reads`. Thread-safety: one lock; readers get lists
that later writes do not change.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping, Sequence
from typing import Final

from corral.scheduler.config import PluginDeclaration
from corral.scheduler.config.declarations import Resource
from corral.scheduler.framework import listers
from corral.scheduler.framework.api_types import RawObject

# (API group, resource) -> (kind, list/watch path): the resources an informer can feed.
WATCHED: Final[Mapping[Resource, tuple[str, str]]] = {
    ("", "services"): (listers.SERVICE, "/api/v1/services"),
    ("", "replicationcontrollers"): (
        listers.REPLICATION_CONTROLLER, "/api/v1/replicationcontrollers"
    ),
    ("apps", "replicasets"): (listers.REPLICA_SET, "/apis/apps/v1/replicasets"),
    ("apps", "statefulsets"): (listers.STATEFUL_SET, "/apis/apps/v1/statefulsets"),
    ("", "namespaces"): (listers.NAMESPACE, "/api/v1/namespaces"),
    ("", "persistentvolumeclaims"): (
        listers.PERSISTENT_VOLUME_CLAIM, "/api/v1/persistentvolumeclaims"
    ),
    ("", "persistentvolumes"): (listers.PERSISTENT_VOLUME, "/api/v1/persistentvolumes"),
    ("storage.k8s.io", "storageclasses"): (
        listers.STORAGE_CLASS, "/apis/storage.k8s.io/v1/storageclasses"
    ),
    ("storage.k8s.io", "csinodes"): (listers.CSI_NODE, "/apis/storage.k8s.io/v1/csinodes"),
    ("storage.k8s.io", "csidrivers"): (listers.CSI_DRIVER, "/apis/storage.k8s.io/v1/csidrivers"),
    ("storage.k8s.io", "csistoragecapacities"): (
        listers.CSI_STORAGE_CAPACITY, "/apis/storage.k8s.io/v1/csistoragecapacities"
    ),
    ("storage.k8s.io", "volumeattachments"): (
        listers.VOLUME_ATTACHMENT, "/apis/storage.k8s.io/v1/volumeattachments"
    ),
    ("policy", "poddisruptionbudgets"): (
        listers.POD_DISRUPTION_BUDGET, "/apis/policy/v1/poddisruptionbudgets"
    ),
    ("scheduling.k8s.io", "priorityclasses"): (
        listers.PRIORITY_CLASS, "/apis/scheduling.k8s.io/v1/priorityclasses"
    ),
    ("resource.k8s.io", "resourceclaims"): (
        listers.RESOURCE_CLAIM, "/apis/resource.k8s.io/v1/resourceclaims"
    ),
    ("resource.k8s.io", "resourceslices"): (
        listers.RESOURCE_SLICE, "/apis/resource.k8s.io/v1/resourceslices"
    ),
    ("resource.k8s.io", "deviceclasses"): (
        listers.DEVICE_CLASS, "/apis/resource.k8s.io/v1/deviceclasses"
    ),
    ("resource.k8s.io", "devicetaintrules"): (
        listers.DEVICE_TAINT_RULE, "/apis/resource.k8s.io/v1/devicetaintrules"
    ),
    ("scheduling.x-k8s.io", "podgroups"): (
        listers.SP_POD_GROUP, "/apis/scheduling.x-k8s.io/v1alpha1/podgroups"
    ),
    ("topology.node.k8s.io", "noderesourcetopologies"): (
        listers.NODE_RESOURCE_TOPOLOGY, "/apis/topology.node.k8s.io/v1alpha2/noderesourcetopologies"
    ),
    ("scheduling.x-k8s.io", "elasticquotas"): (
        listers.SP_ELASTIC_QUOTA, "/apis/scheduling.x-k8s.io/v1alpha1/elasticquotas"
    ),
}  # fmt: skip
# kind -> list/watch path, in WATCHED's order.
WATCHED_KINDS: Final[Mapping[str, str]] = dict(WATCHED.values())

# Kinds older API servers do not serve (resource.k8s.io/v1 is served from 1.34 on, and its
# DeviceTaintRule from 1.37 on: a v1.33 server has at most v1beta1 and v1beta2, off by default,
# and the engine waited for its DRA informers for ever, scheduling nothing), and third-party
# CRDs that may not be installed (scheduler-plugins' PodGroup and ElasticQuota,
# NodeResourceTopology): their informers count as synced, empty, while the server answers 404,
# and list again after each backoff. DynamicResources then sees no claims, slices or classes:
# a pod naming a claim stays unschedulable (its claim is not found), none is placed wrongly.
OPTIONAL_KINDS: Final = frozenset(
    {
        listers.RESOURCE_CLAIM,
        listers.RESOURCE_SLICE,
        listers.DEVICE_CLASS,
        listers.DEVICE_TAINT_RULE,
        listers.SP_POD_GROUP,
        listers.SP_ELASTIC_QUOTA,
        listers.NODE_RESOURCE_TOPOLOGY,
    }
)

# Kinds whose watch events are cluster events for the scheduling queue (plugins register for
# them in events_to_register): the storage objects VolumeBinding and the volume plugins read,
# and the DRA objects DynamicResources reads.
QUEUEING_KINDS: Final = frozenset(
    {
        listers.PERSISTENT_VOLUME_CLAIM,
        listers.PERSISTENT_VOLUME,
        listers.STORAGE_CLASS,
        listers.CSI_NODE,
        listers.CSI_DRIVER,
        listers.CSI_STORAGE_CAPACITY,
        listers.RESOURCE_CLAIM,
        listers.RESOURCE_SLICE,
        listers.DEVICE_CLASS,
        listers.SP_POD_GROUP,
        listers.NODE_RESOURCE_TOPOLOGY,
        listers.SP_ELASTIC_QUOTA,
    }
)

ADDED: Final = "ADDED"
MODIFIED: Final = "MODIFIED"
DELETED: Final = "DELETED"
BOOKMARK: Final = "BOOKMARK"


def kinds_for(declarations: Iterable[PluginDeclaration]) -> list[str]:
    """The kinds the declared plugins read (``cluster_reads``), in :data:`WATCHED` order."""
    reads = {r for d in declarations for r in d.cluster_reads}
    return [kind for resource, (kind, _) in WATCHED.items() if resource in reads]


def unwatched_reads(declarations: Iterable[PluginDeclaration]) -> list[tuple[str, Resource]]:
    """(plugin, read) for each declared read no informer can feed (not in :data:`WATCHED`)."""
    return [(d.name, r) for d in declarations for r in d.cluster_reads if r not in WATCHED]


def _key(obj: RawObject) -> tuple[str, str]:
    meta = obj.get("metadata") or {}
    return str(meta.get("namespace") or ""), str(meta.get("name") or "")


class ObjectStore:
    """Implements :class:`corral.scheduler.framework.listers.ObjectLister`."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._objects: dict[str, dict[tuple[str, str], RawObject]] = {}
        self._generations: dict[str, int] = {}

    def apply(self, kind: str, event_type: str, obj: RawObject) -> None:
        if event_type == BOOKMARK:
            return
        if event_type not in (ADDED, MODIFIED, DELETED):
            raise ValueError(f"unknown watch event type {event_type!r}")
        key = _key(obj)
        with self._lock:
            objects = self._objects.setdefault(kind, {})
            if event_type == DELETED:
                objects.pop(key, None)
            else:
                objects[key] = obj
            self._generations[kind] = self._generations.get(kind, 0) + 1

    def replace(self, kind: str, objects: Iterable[RawObject]) -> None:
        """The full list of ``kind`` (after a list or a re-list)."""
        fresh = {_key(o): o for o in objects}
        with self._lock:
            self._objects[kind] = fresh
            self._generations[kind] = self._generations.get(kind, 0) + 1

    # --- ObjectLister -----------------------------------------------------------------------

    def sizes(self) -> dict[str, int]:
        """Objects held, by kind."""
        with self._lock:
            return {kind: len(objects) for kind, objects in self._objects.items()}

    def get(self, kind: str, namespace: str, name: str) -> RawObject | None:
        with self._lock:
            return self._objects.get(kind, {}).get((namespace, name))

    def list(self, kind: str, namespace: str | None = None) -> Sequence[RawObject]:
        with self._lock:
            objects = self._objects.get(kind, {})
            if namespace is None:
                return list(objects.values())
            return [o for (ns, _), o in objects.items() if ns == namespace]

    def generation(self, kind: str) -> int:
        with self._lock:
            return self._generations.get(kind, 0)
