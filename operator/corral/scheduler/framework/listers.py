"""What plugins read besides nodes and pods, and the seams the engine wires behind the Handle.

- :class:`ObjectLister`: cluster objects as raw API JSON, kept current by informers
  (``corral.scheduler.backend.objects.ObjectStore`` implements it). Kinds are the constants
  below; ``namespace=None`` lists every namespace.
- :class:`PodNominator`: pending pods nominated to a node (the scheduling queue's nominator).
- :class:`PreemptionExecutor`: the API side of a preemption decision (deleting victims, events,
  clearing nominations); the plugin decides, the executor acts.
- :class:`ResourceClaimWriter`: the API side of DynamicResources (claim status and finalizer
  writes in PreBind, Unreserve and PostFilter; the claim for extended resources is created,
  deleted and named in the pod's status).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Final, Protocol

from corral.scheduler.framework.api_types import PodStatus, RawObject, ResourceClaim
from corral.scheduler.framework.status import Status
from corral.scheduler.framework.types import PodInfo

SERVICE: Final = "Service"
REPLICATION_CONTROLLER: Final = "ReplicationController"
REPLICA_SET: Final = "ReplicaSet"
STATEFUL_SET: Final = "StatefulSet"
NAMESPACE: Final = "Namespace"
PERSISTENT_VOLUME: Final = "PersistentVolume"
PERSISTENT_VOLUME_CLAIM: Final = "PersistentVolumeClaim"
STORAGE_CLASS: Final = "StorageClass"
CSI_NODE: Final = "CSINode"
POD_DISRUPTION_BUDGET: Final = "PodDisruptionBudget"
PRIORITY_CLASS: Final = "PriorityClass"
# Dynamic resource allocation (resource.k8s.io/v1), read by DynamicResources.
RESOURCE_CLAIM: Final = "ResourceClaim"
RESOURCE_SLICE: Final = "ResourceSlice"
DEVICE_CLASS: Final = "DeviceClass"
DEVICE_TAINT_RULE: Final = "DeviceTaintRule"  # its taints are applied to the slices' devices
# VolumeBinding, CheckCSIStorageCapacity (storage capacity tracking)
CSI_DRIVER: Final = "CSIDriver"
CSI_STORAGE_CAPACITY: Final = "CSIStorageCapacity"
VOLUME_ATTACHMENT: Final = "VolumeAttachment"  # NodeVolumeLimits
# scheduler-plugins' PodGroup CRD (scheduling.x-k8s.io/v1alpha1), read by Coscheduling; the kind
# is spelled as SP's event resource, so that its watch events are the cluster events SP names.
SP_POD_GROUP: Final = "podgroups.v1alpha1.scheduling.x-k8s.io"
# NodeResourceTopology (topology.node.k8s.io/v1alpha2, cluster-scoped, named as its node), read
# by NodeResourceTopologyMatch; spelled as SP's event resource too.
NODE_RESOURCE_TOPOLOGY: Final = "noderesourcetopologies.v1alpha2.topology.node.k8s.io"
# scheduler-plugins' ElasticQuota CRD (scheduling.x-k8s.io/v1alpha1), read by CapacityScheduling.
SP_ELASTIC_QUOTA: Final = "elasticquotas.v1alpha1.scheduling.x-k8s.io"


class ObjectLister(Protocol):
    def get(self, kind: str, namespace: str, name: str) -> RawObject | None:
        """One object (``namespace`` "" for cluster-scoped kinds), or ``None``."""
        ...

    def list(self, kind: str, namespace: str | None = None) -> Sequence[RawObject]:
        """Objects of ``kind`` (in ``namespace`` when given), in no particular order."""
        ...

    def generation(self, kind: str) -> int:
        """Grows on every change to ``kind``: plugins may cache what they derive from it."""
        ...


class PodLister(Protocol):
    """The pods the engine knows of (upstream's pod informer), by an indexed label.

    Contract: ``labelled(namespace, key, value)`` lists the non-terminal pods of ``namespace``
    whose label ``key`` is ``value``: every bound pod, and the pending pods this engine serves
    (a pending pod of another scheduler is not watched as a pending pod). Only the label keys
    some plugin declares (``PluginDeclaration.indexed_pod_labels``) are indexed; any other key
    lists none. ``get`` finds any of those pods by name. Safe from any thread; the list is a
    copy."""

    def labelled(self, namespace: str, key: str, value: str) -> Sequence[PodInfo]: ...

    def get(self, namespace: str, name: str) -> PodInfo | None:
        """The pod of that name the engine keeps (bound, or pending and served), whatever its
        labels; None once it is deleted (upstream ``podLister.Pods(ns).Get``)."""
        ...


class PodNominator(Protocol):
    def nominated_pods_for_node(self, node_name: str) -> Sequence[PodInfo]:
        """Pending pods whose nominatedNodeName is ``node_name`` (upstream
        ``NominatedPodsForNode``), in nomination order."""
        ...

    def nominated_node_names(self) -> Collection[str]:
        """Every node that has nominated pods (so a cycle need not ask about each node)."""
        ...


class PreemptionExecutor(Protocol):
    """Carries out the preemption that DefaultPreemption decided (upstream ``prepareCandidate``).

    ``preempt``: clear the nominatedNodeName of ``lower_priority_nominated``; for every victim,
    add the ``DisruptionTarget`` condition (reason ``PreemptionByScheduler``), delete it and
    record a Normal event ``Preempted`` (action ``Preempting``, note ``Preempted by pod
    <preemptor uid> on node <node>``). Victims waiting on Permit are rejected by the plugin
    itself and are not passed here. Returns ``None`` or an Error status (the preemptor then
    keeps its old nomination and is retried). An asynchronous executor returns at once and
    reports the work as running through ``is_running_preemption`` until it is done.

    ``clear_nominated_node_name``: remove the nomination of ``pods`` (the preemptor's, when
    preemption cannot help any more).

    The preemptor's own new nominatedNodeName is applied by the scheduler from the
    PostFilterResult, not by the executor.
    """

    def preempt(
        self,
        preemptor: PodInfo,
        node_name: str,
        victims: Sequence[PodInfo],
        lower_priority_nominated: Sequence[PodInfo],
    ) -> Status | None: ...

    def preempt_group(
        self,
        group_uid: str,
        group_key: str,
        members: Sequence[PodInfo],
        victims: Sequence[PodInfo],
    ) -> Status | None:
        """A pod group's preemption (GenericWorkload): the same for every victim, the Event
        saying ``Preempted by podgroup <uid> on node cluster``; ``group_uid`` counts as
        preempting until it is done; its members are activated when nothing else may requeue
        them."""
        ...

    def clear_nominated_node_name(self, pods: Sequence[PodInfo]) -> None: ...

    def is_running_preemption(self, uid: str) -> bool:
        """Whether the preemption started for pod ``uid`` is still under way."""
        ...

    def may_evict(self, pod: PodInfo) -> bool:
        """Whether ``pod`` may be a victim at all: a tenant scheduler evicts only pods in the
        namespaces it serves. A pod it may not evict stays on its node in the dry run, as a
        pod of higher priority would (Corral's addition; upstream may evict any pod)."""
        ...


class WriteError(Exception):
    """A write the API server refused; ``conflict`` when the object changed meanwhile (409),
    ``not_found`` when it is gone (404)."""

    def __init__(self, message: str, *, conflict: bool = False, not_found: bool = False) -> None:
        super().__init__(message)
        self.conflict = conflict
        self.not_found = not_found


class ResourceClaimWriter(Protocol):
    """ResourceClaims through the API server, synchronously (the binding cycle's thread).

    Each method raises :class:`WriteError` with the API server's message."""

    def get(self, namespace: str, name: str) -> ResourceClaim:
        """The claim as the API server has it now (after a conflict)."""
        ...

    def update(self, claim: ResourceClaim) -> ResourceClaim:
        """PUT the claim (metadata and spec: the finalizer); returns the stored object."""
        ...

    def update_status(self, claim: ResourceClaim) -> ResourceClaim:
        """PUT the claim's status subresource; returns the stored object."""
        ...

    # Extended resources backed by DRA: the claim the scheduler creates for a pod.
    def create(self, claim: ResourceClaim) -> ResourceClaim:
        """POST a new claim (``generateName``); returns the stored object."""
        ...

    def delete(self, namespace: str, name: str) -> None:
        """DELETE the claim; one that is already gone is no error."""
        ...

    def patch_pod_status(self, namespace: str, name: str, status: PodStatus) -> None:
        """Strategic-merge-patch ``status`` into the pod's status subresource."""
        ...


class ObjectUpdater(Protocol):
    """Writes plugins make through the API (VolumeBinding's PreBind): ``update`` PUTs ``obj`` of
    ``kind`` (:data:`PERSISTENT_VOLUME` or :data:`PERSISTENT_VOLUME_CLAIM`), its
    ``resourceVersion`` guarding against lost updates, and returns the stored object. It raises
    on failure; the exception's text is the API server's message."""

    def update(self, kind: str, obj: RawObject) -> RawObject: ...
