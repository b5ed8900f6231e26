"""Typed shapes of the Kubernetes object parts the engine reads: the whole pod the engine keeps
(``PodInfo.raw``), the node fields its records take, the selectors and affinity terms in pods
and nodes, and the ResourceClaims DynamicResources reads and writes (``k8s.io/api`` core/v1,
meta/v1 and resource/v1 field names).

Contract: these are views of raw JSON as the API server sends it, not validated values. Every
key is optional (``total=False``): an absent field and a JSON ``null`` are Go's zero value, so
readers keep their ``x.get(key) or default`` form. Only the fields the engine reads are named; a
raw object keeps every other field (``PodInfo.raw``). The shapes themselves are checked against
the pinned Go types by :mod:`corral.scheduler.backend.shapes` where objects enter; here they only
give the readers their types. Raw JSON whose kind is not modelled stays :data:`RawObject`.

Every key named here is a field of the pinned Go type at its place
(``tests/unit/scheduler/framework/test_api_types.py``). mypy checks ``x["key"]`` against these
keys, but ``x.get("key")`` of a key not named here is silently ``object``: a reader of a new
field names it here first.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, TypedDict

# One object of any kind, read-only, as decoded from JSON.
RawObject = Mapping[str, Any]

# --- meta/v1 -----------------------------------------------------------------------------------


class LabelSelectorRequirement(TypedDict, total=False):
    key: str
    operator: str
    values: Sequence[str] | None


class LabelSelector(TypedDict, total=False):
    matchLabels: Mapping[str, str] | None
    matchExpressions: Sequence[LabelSelectorRequirement] | None


class Condition(TypedDict, total=False):
    type: str
    status: str
    reason: str
    message: str
    observedGeneration: int
    lastTransitionTime: str | None


class OwnerReference(TypedDict, total=False):
    apiVersion: str
    kind: str
    name: str
    uid: str
    controller: bool | None
    blockOwnerDeletion: bool | None


class ObjectMeta(TypedDict, total=False):
    name: str
    generateName: str
    namespace: str
    uid: str
    resourceVersion: str
    generation: int
    creationTimestamp: str | None
    labels: Mapping[str, str] | None
    annotations: Mapping[str, str] | None
    ownerReferences: Sequence[OwnerReference] | None
    finalizers: Sequence[str] | None
    deletionTimestamp: str | None


# --- core/v1: node selection -------------------------------------------------------------------


class NodeSelectorRequirement(TypedDict, total=False):
    key: str
    operator: str
    values: Sequence[str] | None


class NodeSelectorTerm(TypedDict, total=False):
    matchExpressions: Sequence[NodeSelectorRequirement] | None
    matchFields: Sequence[NodeSelectorRequirement] | None


class NodeSelector(TypedDict, total=False):
    nodeSelectorTerms: Sequence[NodeSelectorTerm] | None


class PreferredSchedulingTerm(TypedDict, total=False):
    weight: int
    preference: NodeSelectorTerm | None


class NodeAffinity(TypedDict, total=False):
    requiredDuringSchedulingIgnoredDuringExecution: NodeSelector | None
    preferredDuringSchedulingIgnoredDuringExecution: Sequence[PreferredSchedulingTerm] | None


# --- core/v1: pod affinity ---------------------------------------------------------------------


class PodAffinityTerm(TypedDict, total=False):
    labelSelector: LabelSelector | None
    namespaces: Sequence[str] | None
    namespaceSelector: LabelSelector | None
    topologyKey: str


class WeightedPodAffinityTerm(TypedDict, total=False):
    weight: int
    podAffinityTerm: PodAffinityTerm


class PodAffinityRules(TypedDict, total=False):
    requiredDuringSchedulingIgnoredDuringExecution: Sequence[PodAffinityTerm] | None
    preferredDuringSchedulingIgnoredDuringExecution: Sequence[WeightedPodAffinityTerm] | None


class Affinity(TypedDict, total=False):
    nodeAffinity: NodeAffinity | None
    podAffinity: PodAffinityRules | None
    podAntiAffinity: PodAffinityRules | None


# --- core/v1: pods -----------------------------------------------------------------------------


class PodCondition(TypedDict, total=False):
    type: str
    status: str
    reason: str
    message: str
    lastProbeTime: str | None
    lastTransitionTime: str | None


class PodResourceClaimStatus(TypedDict, total=False):
    name: str
    resourceClaimName: str | None


class ContainerExtendedResourceRequest(TypedDict, total=False):
    containerName: str
    resourceName: str
    requestName: str


class PodExtendedResourceClaimStatus(TypedDict, total=False):
    requestMappings: Sequence[ContainerExtendedResourceRequest] | None
    resourceClaimName: str


class PodStatus(TypedDict, total=False):
    phase: str
    conditions: Sequence[PodCondition] | None
    nominatedNodeName: str
    startTime: str | None
    resourceClaimStatuses: Sequence[PodResourceClaimStatus] | None
    extendedResourceClaimStatus: PodExtendedResourceClaimStatus | None


class PodResourceClaim(TypedDict, total=False):
    name: str
    resourceClaimName: str | None
    resourceClaimTemplateName: str | None


class PodSchedulingGroup(TypedDict, total=False):
    podGroupName: str | None


class PodSpec(TypedDict, total=False):
    nodeName: str
    schedulerName: str
    priority: int | None
    priorityClassName: str
    preemptionPolicy: str | None
    nodeSelector: Mapping[str, str] | None
    affinity: Affinity | None
    tolerations: Sequence[RawObject] | None
    schedulingGates: Sequence[RawObject] | None
    topologySpreadConstraints: Sequence[RawObject] | None
    containers: Sequence[RawObject] | None
    initContainers: Sequence[RawObject] | None
    overhead: Mapping[str, str] | None
    resources: RawObject | None  # pod-level resources
    volumes: Sequence[RawObject] | None
    resourceClaims: Sequence[PodResourceClaim] | None
    schedulingGroup: PodSchedulingGroup | None


class Pod(TypedDict, total=False):
    """The whole pod the engine keeps (``PodInfo.raw``)."""

    apiVersion: str
    kind: str
    metadata: ObjectMeta
    spec: PodSpec | None
    status: PodStatus | None


# --- core/v1: nodes ----------------------------------------------------------------------------


class Taint(TypedDict, total=False):
    key: str
    value: str
    effect: str


class NodeSpec(TypedDict, total=False):
    unschedulable: bool | None
    taints: Sequence[Taint] | None


class NodeCondition(TypedDict, total=False):
    type: str
    status: str


class ContainerImage(TypedDict, total=False):
    names: Sequence[str] | None
    sizeBytes: int


class NodeStatus(TypedDict, total=False):
    allocatable: Mapping[str, str] | None  # resource name → quantity
    conditions: Sequence[NodeCondition] | None
    images: Sequence[ContainerImage] | None
    declaredFeatures: Sequence[str] | None


class Node(TypedDict, total=False):
    """A Node as the engine reads it (``records.node_from_json``, ``NodeRecord.raw``)."""

    apiVersion: str
    kind: str
    metadata: ObjectMeta
    spec: NodeSpec | None
    status: NodeStatus | None


# --- resource/v1: ResourceClaims ---------------------------------------------------------------


class CELDeviceSelector(TypedDict, total=False):
    expression: str


class DeviceSelector(TypedDict, total=False):
    cel: CELDeviceSelector | None


class CapacityRequirements(TypedDict, total=False):
    requests: Mapping[str, str] | None  # capacity name → quantity


class DeviceToleration(TypedDict, total=False):
    key: str
    operator: str
    value: str
    effect: str
    tolerationSeconds: int | None


class ExactDeviceRequest(TypedDict, total=False):
    deviceClassName: str
    selectors: Sequence[DeviceSelector] | None
    allocationMode: str
    count: int
    adminAccess: bool | None
    tolerations: Sequence[DeviceToleration] | None
    capacity: CapacityRequirements | None


class DeviceSubRequest(TypedDict, total=False):
    name: str
    deviceClassName: str
    selectors: Sequence[DeviceSelector] | None
    allocationMode: str
    count: int
    tolerations: Sequence[DeviceToleration] | None
    capacity: CapacityRequirements | None


class DeviceRequest(TypedDict, total=False):
    name: str
    exactly: ExactDeviceRequest | None
    firstAvailable: Sequence[DeviceSubRequest] | None


class DeviceConstraint(TypedDict, total=False):
    requests: Sequence[str] | None
    matchAttribute: str | None
    distinctAttribute: str | None


class DeviceClaimConfiguration(TypedDict, total=False):
    requests: Sequence[str] | None
    opaque: RawObject | None


class DeviceClaim(TypedDict, total=False):
    requests: Sequence[DeviceRequest] | None
    constraints: Sequence[DeviceConstraint] | None
    config: Sequence[DeviceClaimConfiguration] | None


class ResourceClaimSpec(TypedDict, total=False):
    devices: DeviceClaim | None


class DeviceRequestAllocationResult(TypedDict, total=False):
    request: str
    driver: str
    pool: str
    device: str
    adminAccess: bool | None
    tolerations: Sequence[DeviceToleration] | None
    bindingConditions: Sequence[str] | None
    bindingFailureConditions: Sequence[str] | None
    shareID: str | None
    consumedCapacity: Mapping[str, str] | None


class DeviceAllocationConfiguration(TypedDict, total=False):
    source: str
    requests: Sequence[str] | None
    opaque: RawObject | None


class DeviceAllocationResult(TypedDict, total=False):
    results: Sequence[DeviceRequestAllocationResult] | None
    config: Sequence[DeviceAllocationConfiguration] | None


class AllocationResult(TypedDict, total=False):
    devices: DeviceAllocationResult | None
    nodeSelector: NodeSelector | None
    allocationTimestamp: str | None


class ResourceClaimConsumerReference(TypedDict, total=False):
    apiGroup: str
    resource: str
    name: str
    uid: str


class AllocatedDeviceStatus(TypedDict, total=False):
    driver: str
    pool: str
    device: str
    shareID: str | None
    conditions: Sequence[Condition] | None


class ResourceClaimStatus(TypedDict, total=False):
    allocation: AllocationResult | None
    reservedFor: Sequence[ResourceClaimConsumerReference] | None
    devices: Sequence[AllocatedDeviceStatus] | None


class ResourceClaim(TypedDict, total=False):
    apiVersion: str
    kind: str
    metadata: ObjectMeta
    spec: ResourceClaimSpec | None
    status: ResourceClaimStatus | None
