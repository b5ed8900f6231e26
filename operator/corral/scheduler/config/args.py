"""Typed plugin args: upstream's ``*Args`` kinds and Corral's own plugins' args.

Contract: :func:`decode_plugin_args` turns the raw ``pluginConfig[].args`` object of a plugin
into its dataclass, strictly (unknown fields and wrong types are errors with field paths). The
``kind`` and ``apiVersion`` keys are accepted when they name the right kind, as upstream's
decoder does. A plugin without a registered args type keeps its raw object.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Final

from corral.scheduler.config import decode as _decode
from corral.scheduler.config.errors import FieldError, FieldPath, field_error, quote
from corral.scheduler.config.types import API_VERSION

_OMIT: Final = {"omitempty": True}

# --- shared value types -------------------------------------------------------------------------


@dataclass(slots=True)
class ResourceSpec:
    name: str
    weight: int | None = None


@dataclass(slots=True)
class UtilizationShapePoint:
    utilization: int
    score: int


@dataclass(slots=True)
class RequestedToCapacityRatioParam:
    shape: list[UtilizationShapePoint] = field(default_factory=list)


@dataclass(slots=True)
class ScoringStrategy:
    type: str | None = None
    resources: list[ResourceSpec] = field(default_factory=list, metadata=_OMIT)
    requested_to_capacity_ratio: RequestedToCapacityRatioParam | None = None


@dataclass(slots=True)
class NodeSelectorRequirement:
    key: str
    operator: str
    values: list[str] = field(default_factory=list, metadata=_OMIT)


@dataclass(slots=True)
class NodeSelectorTerm:
    match_expressions: list[NodeSelectorRequirement] = field(default_factory=list, metadata=_OMIT)
    match_fields: list[NodeSelectorRequirement] = field(default_factory=list, metadata=_OMIT)


@dataclass(slots=True)
class NodeSelector:
    node_selector_terms: list[NodeSelectorTerm] = field(default_factory=list)


@dataclass(slots=True)
class PreferredSchedulingTerm:
    weight: int
    preference: NodeSelectorTerm


@dataclass(slots=True)
class NodeAffinity:
    required_during_scheduling_ignored_during_execution: NodeSelector | None = None
    preferred_during_scheduling_ignored_during_execution: list[PreferredSchedulingTerm] = field(
        default_factory=list, metadata=_OMIT
    )


@dataclass(slots=True)
class TopologySpreadConstraint:
    max_skew: int
    topology_key: str
    when_unsatisfiable: str
    label_selector: dict[str, Any] | None = None
    min_domains: int | None = None
    node_affinity_policy: str | None = None
    node_taints_policy: str | None = None
    match_label_keys: list[str] = field(default_factory=list, metadata=_OMIT)


# --- upstream args ------------------------------------------------------------------------------


@dataclass(slots=True)
class DefaultPreemptionArgs:
    min_candidate_nodes_percentage: int | None = None
    min_candidate_nodes_absolute: int | None = None


@dataclass(slots=True)
class InterPodAffinityArgs:
    hard_pod_affinity_weight: int | None = None
    ignore_preferred_terms_of_existing_pods: bool | None = None


@dataclass(slots=True)
class NodeAffinityArgs:
    added_affinity: NodeAffinity | None = None


@dataclass(slots=True)
class NodeResourcesBalancedAllocationArgs:
    resources: list[ResourceSpec] = field(default_factory=list, metadata=_OMIT)


@dataclass(slots=True)
class NodeResourcesFitArgs:
    ignored_resources: list[str] = field(default_factory=list, metadata=_OMIT)
    ignored_resource_groups: list[str] = field(default_factory=list, metadata=_OMIT)
    scoring_strategy: ScoringStrategy | None = None


@dataclass(slots=True)
class PodTopologySpreadArgs:
    default_constraints: list[TopologySpreadConstraint] = field(
        default_factory=list, metadata=_OMIT
    )
    defaulting_type: str | None = None


@dataclass(slots=True)
class VolumeBindingArgs:
    bind_timeout_seconds: int | None = field(default=None, metadata={"bits": 64})
    shape: list[UtilizationShapePoint] | None = None


@dataclass(slots=True)
class DynamicResourcesArgs:
    filter_timeout: str | None = field(default=None, metadata={"duration": True})
    binding_timeout: str | None = field(default=None, metadata={"duration": True})


# --- Corral's own plugins' args -----------------------------------------------------------------


@dataclass(slots=True)
class CheckPodCountLimitArgs:
    """A node already running ``podCountLimit`` pods placed by this scheduler is filtered out."""

    pod_count_limit: int | None = None


@dataclass(slots=True)
class CheckPodLimitResourcesArgs:
    """A node is filtered out when its pods' limits plus the pod's would exceed
    ``limitRatio[resource]`` times allocatable, per listed resource."""

    limit_ratio: dict[str, float] = field(default_factory=dict)


@dataclass(slots=True)
class TenantSpreadArgs:
    """Prefer nodes running the fewest pods with the same value of label ``labelKey``."""

    label_key: str | None = None


@dataclass(slots=True)
class LvmVolumeCapacityArgs:
    """Claims of StorageClasses whose provisioner is one of ``provisioners`` are LVM claims;
    a class without TopoLVM's device-class parameter uses ``defaultDeviceClass``."""

    provisioners: list[str] = field(default_factory=list)
    default_device_class: str | None = None


# --- scheduler-plugins' args (sigs.k8s.io/scheduler-plugins apis/config/v1/types.go) --------


@dataclass(slots=True)
class CoschedulingArgs:
    permit_waiting_time_seconds: int | None = field(default=None, metadata={"bits": 64})
    pod_group_backoff_seconds: int | None = field(default=None, metadata={"bits": 64})
    # Percent (0-100) of minMember still unassigned at or below which PostFilter does not
    # reject the whole group.
    pod_group_reject_percentage: int | None = None


@dataclass(slots=True)
class NodeResourceTopologyScoringStrategy:
    type: str | None = None  # LeastAllocated | MostAllocated | BalancedAllocation | LeastNUMANodes
    resources: list[ResourceSpec] = field(default_factory=list, metadata=_OMIT)


@dataclass(slots=True)
class NodeResourceTopologyCache:
    """SP's overreserve-cache settings: accepted, defaulted as SP does; Corral has no such cache
    (docs/plugins/NodeResourceTopologyMatch.md)."""

    foreign_pods_detect: str | None = None  # None | All | OnlyExclusiveResources
    resync_method: str | None = None  # Autodetect | All | OnlyExclusiveResources
    informer_mode: str | None = None  # Shared | Dedicated
    resync_scope: str | None = None  # All | OnlyResources


@dataclass(slots=True)
class NodeResourceTopologyMatchArgs:
    scoring_strategy: NodeResourceTopologyScoringStrategy | None = None
    cache_resync_period_seconds: int | None = field(default=None, metadata={"bits": 64})
    discard_reserved_nodes: bool | None = None
    cache: NodeResourceTopologyCache | None = None
    preemption_mode: str | None = None  # Disabled | Enabled


@dataclass(slots=True)
class NodeResourcesAllocatableArgs:
    resources: list[ResourceSpec] = field(default_factory=list, metadata=_OMIT)
    mode: str | None = None  # Least | Most


@dataclass(slots=True)
class PreemptionTolerationArgs:
    """SP reuses upstream's DefaultPreemptionArgs under its own kind."""

    min_candidate_nodes_percentage: int | None = None
    min_candidate_nodes_absolute: int | None = None


@dataclass(slots=True)
class NodeMetadataArgs:
    metadata_key: str | None = None
    metadata_source: str | None = None  # Label | Annotation
    metadata_type: str | None = None  # Number | Timestamp
    scoring_strategy: str | None = None  # Highest | Lowest (Number), Newest | Oldest (Timestamp)
    timestamp_format: str | None = None  # a Go time layout; RFC3339 for Timestamp by default


_TYPE_META_KEYS: Final = ("kind", "apiVersion")


def decode_plugin_args(
    args_type: type[Any],
    plugin: str,
    raw: object,
    path: FieldPath,
    errors: list[FieldError],
) -> Any:
    """Decode ``raw`` into ``args_type``; ``kind``/``apiVersion`` must match if present."""
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        errors.append(field_error(path, f"must be an object, got {_decode.type_name(raw)}"))
        return None
    body = dict(raw)
    kind = body.pop("kind", None)
    api_version = body.pop("apiVersion", None)
    if kind is not None and kind != f"{plugin}Args":
        errors.append(field_error(path.child("kind"), f"must be {quote(plugin + 'Args')}"))
    if api_version is not None and api_version != API_VERSION:
        errors.append(field_error(path.child("apiVersion"), f"must be {quote(API_VERSION)}"))
    return _decode.decode(args_type, body, path, errors)


def encode_plugin_args(plugin: str, args: object) -> dict[str, Any]:
    """The raw JSON of typed args, with ``kind``/``apiVersion`` as upstream writes them."""
    body = _decode.encode(args)
    assert isinstance(body, dict)
    return {"apiVersion": API_VERSION, "kind": f"{plugin}Args", **body}


def strip_type_meta(raw: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in raw.items() if k not in _TYPE_META_KEYS}
