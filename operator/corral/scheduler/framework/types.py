"""Compact pod and node records the engine works on (never the client library's models).

Contract: records are parsed once from the API's raw JSON (``corral.scheduler.backend.records``)
and then treated as immutable; an update replaces the record. ``raw`` keeps the JSON for the
fields later plugins read (pod affinity, volumes, ports) and for binding.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import Final

from corral.scheduler.framework import nodeselector, podaffinity, taints
from corral.scheduler.framework.api_types import Node, Pod

CPU: Final = "cpu"
MEMORY: Final = "memory"
EPHEMERAL_STORAGE: Final = "ephemeral-storage"
PODS: Final = "pods"

# Non-zero defaults used for scoring containers without a cpu/memory request
# (upstream pkg/scheduler/util: DefaultMilliCPURequest, DefaultMemoryRequest).
DEFAULT_MILLI_CPU_REQUEST: Final = 100
DEFAULT_MEMORY_REQUEST: Final = 200 * 1024 * 1024


def is_extended_resource(name: str) -> bool:
    """Upstream ``IsExtendedResourceName``: namespaced, not kubernetes.io, not a quota name."""
    if "/" not in name or "kubernetes.io/" in name:
        return False
    return not name.startswith("requests.")


def is_scalar_resource(name: str) -> bool:
    """Upstream ``IsScalarResourceName``: extended, hugepages, prefixed native, attachable."""
    return (
        is_extended_resource(name)
        or name.startswith("hugepages-")
        or "kubernetes.io/" in name
        or name.startswith("attachable-volumes-")
    )


@dataclass(frozen=True, slots=True)
class Resources:
    """Upstream ``framework.Resource``: cpu in millis, memory and storage in bytes."""

    milli_cpu: int = 0
    memory: int = 0
    ephemeral_storage: int = 0
    allowed_pods: int = 0  # allocatable only
    scalar: Mapping[str, int] = field(default_factory=dict)

    def is_zero(self) -> bool:
        """True when nothing is requested at all (scalar entries count even when 0, as upstream)."""
        return not (self.milli_cpu or self.memory or self.ephemeral_storage or self.scalar)

    def get(self, name: str) -> int:
        if name == CPU:
            return self.milli_cpu
        if name == MEMORY:
            return self.memory
        if name == EPHEMERAL_STORAGE:
            return self.ephemeral_storage
        if name == PODS:
            return self.allowed_pods
        return self.scalar.get(name, 0)


@dataclass(frozen=True, slots=True)
class HostPort:
    """A container port with ``hostPort > 0``; ip "" → 0.0.0.0 and protocol "" → TCP."""

    ip: str
    protocol: str
    port: int


@dataclass(frozen=True, slots=True)
class ImageState:
    """Upstream ``ImageStateSummary``: the image's size and on how many nodes it is, plus the
    number of nodes in the snapshot (ImageLocality's denominator)."""

    size: int
    num_nodes: int
    total_nodes: int = 1


@dataclass(frozen=True, slots=True, eq=False)
class PodInfo:
    """One pod, as the scheduler needs it."""

    uid: str
    namespace: str
    name: str
    node_name: str = ""
    scheduler_name: str = "default-scheduler"
    priority: int = 0
    labels: Mapping[str, str] = field(default_factory=dict)
    # None when the pod has no nodeSelector (upstream distinguishes nil from empty).
    node_selector: Mapping[str, str] | None = None
    required_affinity: nodeselector.NodeSelector | None = None
    # None when the pod lists no preferred node affinity.
    preferred_affinity: nodeselector.PreferredTerms | None = None
    tolerations: tuple[taints.Toleration, ...] = ()
    requests: Resources = field(default_factory=Resources)
    # Requests with non-zero defaults, as the node's accounting counts the pod.
    non_zero_milli_cpu: int = 0
    non_zero_memory: int = 0
    # ... and as NodeResourcesFit's scorer sees the incoming pod (upstream 1.36 ignores pod-level
    # requests there); None: the same as above (always so without pod-level requests).
    scored_milli_cpu: int | None = None
    scored_memory: int | None = None
    scheduling_gates: tuple[str, ...] = ()
    deleting: bool = False
    nominated_node_name: str = ""
    resource_version: str = ""
    # Pod (anti-)affinity, interned (None: the pod has neither).
    affinity: podaffinity.PodAffinity | None = None
    host_ports: tuple[HostPort, ...] = ()
    # Per container the limit, or the request where no limit is set, summed as requests are.
    limits: Resources = field(default_factory=Resources)
    images: tuple[str, ...] = ()  # init containers', containers', then image volumes' images
    pvc_names: tuple[str, ...] = ()  # persistentVolumeClaim and generic ephemeral volumes
    has_resource_claims: bool = False
    phase: str = ""
    start_time: float | None = None  # status.startTime, seconds since the epoch
    preemption_policy: str = ""  # "" means PreemptLowerPriority
    # deletionTimestamp set and DisruptionTarget=True with reason PreemptionByScheduler.
    terminating_by_preemption: bool = False
    # spec.schedulingGroup.podGroupName ("" without one): the pod's PodGroup, in its namespace.
    scheduling_group: str = ""
    raw: Pod = field(default_factory=Pod)

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    @property
    def pod_group_key(self) -> str:
        """``namespace/podGroupName`` ("" for a pod in no scheduling group)."""
        return f"{self.namespace}/{self.scheduling_group}" if self.scheduling_group else ""

    @property
    def terminal(self) -> bool:
        return self.phase in ("Succeeded", "Failed")


_POD_FIELDS: Final = tuple(f.name for f in fields(PodInfo))


def on_node(pod: PodInfo, node_name: str) -> PodInfo:
    """``dataclasses.replace(pod, node_name=node_name)`` at half its cost: every field copied
    as it is, without the generated ``__init__``'s keyword handling (the scheduling thread
    assumes each pod so; PodInfo has no ``__post_init__`` and no ``init=False`` field)."""
    new = object.__new__(PodInfo)
    for name in _POD_FIELDS:
        object.__setattr__(new, name, getattr(pod, name))
    object.__setattr__(new, "node_name", node_name)
    return new


@dataclass(frozen=True, slots=True, eq=False)
class NodeRecord:
    """One node's scheduling-relevant state, parsed from the Node object."""

    name: str
    labels: Mapping[str, str] = field(default_factory=dict)
    taints: tuple[taints.Taint, ...] = ()
    unschedulable: bool = False
    # status.declaredFeatures (NodeDeclaredFeatures).
    declared_features: frozenset[str] = frozenset()
    allocatable: Resources = field(default_factory=Resources)
    resource_version: str = ""
    # The Node's JSON, for extenders that are not nodeCacheCapable (they receive full Node
    # objects); empty when the record was built without it.
    raw: Node = field(default_factory=Node)
    # status.images: (names, sizeBytes) per image (ImageLocality).
    images: tuple[tuple[tuple[str, ...], int], ...] = ()
    # metadata.annotations (LvmVolumeCapacity reads TopoLVM's capacity annotations).
    annotations: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True, eq=False)
class NodeInfo:
    """Per-node view handed to per-node plugin forms (upstream ``NodeInfo``)."""

    name: str
    labels: Mapping[str, str]
    taints: tuple[taints.Taint, ...]
    unschedulable: bool
    allocatable: Resources
    requested: Resources
    non_zero_milli_cpu: int
    non_zero_memory: int
    num_pods: int
    slot: int = -1  # the snapshot column, or -1 for a node built outside a snapshot
    declared_features: frozenset[str] = frozenset()  # status.declaredFeatures
    pods: tuple[PodInfo, ...] = ()  # bound and assumed pods on the node
    image_states: Mapping[str, ImageState] = field(default_factory=dict)
    annotations: Mapping[str, str] = field(default_factory=dict)

    def with_pod(self, pod: PodInfo) -> NodeInfo:
        """This node with ``pod`` added (upstream ``NodeInfo.AddPod``), for what-if filtering."""
        return self._changed((pod,), 1, (*self.pods, pod))

    def without_pod(self, pod: PodInfo) -> NodeInfo:
        """This node with ``pod`` (matched by uid) removed (upstream ``NodeInfo.RemovePod``)."""
        uid = pod.uid
        kept = tuple([p for p in self.pods if p.uid != uid])
        if len(kept) == len(self.pods):
            return self
        return self._changed((pod,), -1, kept)

    def without_pods(self, pods: Sequence[PodInfo]) -> NodeInfo:
        """This node with each of ``pods`` that it holds removed, in one step."""
        uids = {p.uid for p in pods}
        kept = tuple([p for p in self.pods if p.uid not in uids])
        gone = [p for p in self.pods if p.uid in uids]
        return self._changed(gone, -1, kept) if gone else self

    def _changed(self, pods: Sequence[PodInfo], sign: int, kept: tuple[PodInfo, ...]) -> NodeInfo:
        # Preemption's dry run builds thousands of these per cycle: the fields are passed
        # positionally (``dataclasses.replace`` cost twice as much) and the scalar map is
        # shared, never copied, when no pod requests a scalar resource.
        have = self.requested
        cpu, memory, storage = have.milli_cpu, have.memory, have.ephemeral_storage
        nz_cpu, nz_memory = self.non_zero_milli_cpu, self.non_zero_memory
        scalar: dict[str, int] | None = None
        for pod in pods:
            req = pod.requests
            cpu += sign * req.milli_cpu
            memory += sign * req.memory
            storage += sign * req.ephemeral_storage
            nz_cpu += sign * pod.non_zero_milli_cpu
            nz_memory += sign * pod.non_zero_memory
            if req.scalar:
                if scalar is None:
                    scalar = dict(have.scalar)
                for name, amount in req.scalar.items():
                    scalar[name] = scalar.get(name, 0) + sign * amount
        return NodeInfo(
            self.name,
            self.labels,
            self.taints,
            self.unschedulable,
            self.allocatable,
            Resources(cpu, memory, storage, 0, have.scalar if scalar is None else scalar),
            nz_cpu,
            nz_memory,
            self.num_pods + sign * len(pods),
            self.slot,
            self.declared_features,
            kept,
            self.image_states,
            self.annotations,
        )


@dataclass(slots=True, eq=False)
class QueuedPodInfo:
    """A pending pod in the scheduling queue (upstream ``QueuedPodInfo``)."""

    pod: PodInfo
    # When the pod entered the queue or last failed; PrioritySort and backoff read it.
    timestamp: float
    initial_attempt_timestamp: float | None = None
    attempts: int = 0
    unschedulable_plugins: frozenset[str] = frozenset()
    pending_plugins: frozenset[str] = frozenset()
    # Rejected by a PreEnqueue plugin; waits in unschedulablePods until an update lifts it.
    gated: bool = False
    gating_plugin: str = ""
    # The queue it was last counted into (scheduler_queue_incoming_entities_total counts an
    # entity that changes queue, as upstream's); "" while popped.
    queue: str = ""
    # The pod's keys per Narrowing (by its id), with the pod object they were read from.
    narrowing_keys: dict[int, tuple[PodInfo, frozenset[Hashable]]] = field(
        default_factory=dict, repr=False
    )
