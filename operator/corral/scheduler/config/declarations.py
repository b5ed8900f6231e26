"""Every plugin a Corral engine can run, declared once.

Contract: a :class:`PluginDeclaration` is the single source of a plugin's name, factory,
extension points, place and weight in the default set, args (type, defaulting, validation) and
the API resources it reads and writes. Everything else is derived from :data:`IN_TREE` and the
installed entry points: the engine's registry, upstream's default MultiPoint set and profile,
the API catalog (``corral validate``, the webhook) and the RBAC a rendered scheduler gets.

- In-tree declarations name their factory as ``"module:attribute"``: this package stays a leaf
  (the operator validates profiles without importing the engine); the engine imports the
  factory when it builds the plugin. :data:`IN_TREE`'s order is upstream's MultiPoint order.
- Out-of-tree plugins are distributions declaring, in the entry-point group ``corral.plugins``,
  ``<Name> = package.module:attribute`` where the attribute is a :class:`PluginDeclaration` or
  an object (the plugin module, or a callable factory) with ``NAME`` and ``EXTENSION_POINTS``
  and optionally ``new`` (else the object itself is the factory), ``Args`` (a dataclass decoded
  strictly from the args), ``default_args(args)`` (fills defaults in place) and
  ``validate_args(path, args) -> list[FieldError]`` (as in-tree args kinds; together the
  declaration's :class:`PluginArgs`, used alike by a SchedulerProfile, a
  KubeSchedulerConfiguration and the factory's ``plugin_args``), ``CLUSTER_READS``
  (``(apiGroup, resource)`` pairs, which also start the engine's informers for them) and
  ``DESCRIPTION``. :func:`load_entry_points` is the only loader. Its error policy: a broken
  entry point, or one reusing a known name, is left out and reported as a problem line, never
  raised; a profile naming it then fails validation as an unknown plugin.
"""

from __future__ import annotations

import dataclasses
import functools
import importlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from importlib import metadata
from typing import Any, Final

from corral.scheduler.config import args as a
from corral.scheduler.config import args_defaults as d
from corral.scheduler.config import args_validation as v
from corral.scheduler.config.errors import FieldError, FieldPath
from corral.scheduler.config.types import EXTENSION_POINTS

ENTRY_POINT_GROUP: Final = "corral.plugins"

Resource = tuple[str, str]  # (apiGroup, resource)
Write = tuple[str, str, tuple[str, ...]]  # (apiGroup, resource, verbs)
# factory(args, handle) -> plugin; the engine's framework types it precisely.
Factory = Callable[[Any, Any], Any]


@dataclass(frozen=True, slots=True)
class PluginArgs:
    """A plugin's ``<Plugin>Args`` kind: its type, upstream's defaulting and validation."""

    type: type[Any]
    default: Callable[[Any], None] | None = None
    validate: Callable[[FieldPath, Any], list[FieldError]] | None = None


@dataclass(frozen=True, slots=True)
class PluginDeclaration:
    name: str
    # "module:attribute" (imported by the engine on use) or the factory itself.
    factory: str | Factory
    extension_points: frozenset[str]
    description: str
    args: PluginArgs | None = None
    # In upstream's default MultiPoint set (in IN_TREE order), with this weight (None: the
    # plugin does not score, or scores with weight 1 without being listed with a weight).
    in_default_set: bool = False
    default_weight: int | None = None
    # Read cluster-wide (get/list/watch) when the plugin is enabled.
    cluster_reads: tuple[Resource, ...] = ()
    # Granted where the scheduler may bind (cluster-wide, or only in tenant namespaces).
    namespaced_writes: tuple[Write, ...] = ()
    # Writes to cluster-scoped objects, granted cluster-wide even to a tenant scheduler
    # (VolumeBinding binds PersistentVolumes, which belong to no namespace).
    cluster_writes: tuple[Write, ...] = ()
    # Pod label keys the engine indexes for this plugin's pod lister (``Handle.pod_lister``).
    indexed_pod_labels: tuple[str, ...] = ()
    source: str = "upstream"

    @property
    def args_type(self) -> type[Any] | None:
        return self.args.type if self.args is not None else None

    def load_factory(self) -> Factory:
        if not isinstance(self.factory, str):
            return self.factory
        module, _, attribute = self.factory.partition(":")
        factory: Factory = getattr(importlib.import_module(module), attribute)
        return factory


_PV: Final = (("", "persistentvolumes"), ("", "persistentvolumeclaims"))
_STORAGE: Final = (("storage.k8s.io", "storageclasses"), ("storage.k8s.io", "csinodes"))
_PLUGINS: Final = "corral.scheduler.plugins."


def _in_tree(name: str, module: str, points: str, description: str, **kw: Any) -> PluginDeclaration:
    return PluginDeclaration(
        name, f"{_PLUGINS}{module}:new", frozenset(points.split()), description, **kw
    )


def _upstream(
    name: str, module: str, points: str, description: str, **kw: Any
) -> PluginDeclaration:
    return _in_tree(name, module, points, description, in_default_set=True, **kw)


def _gated(name: str, module: str, points: str, description: str, **kw: Any) -> PluginDeclaration:
    """In upstream's registry, out of its default set (its feature gate is off by default)."""
    return _in_tree(name, module, points, description, **kw)


def _corral(name: str, module: str, points: str, description: str, **kw: Any) -> PluginDeclaration:
    return _in_tree(name, module, points, description, source="corral", **kw)


SCHEDULER_PLUGINS: Final = "scheduler-plugins"


def _sp(name: str, module: str, points: str, description: str, **kw: Any) -> PluginDeclaration:
    """A kubernetes-sigs/scheduler-plugins plugin: its name, args and semantics, Corral's code."""
    return _in_tree(name, module, points, description, source=SCHEDULER_PLUGINS, **kw)


IN_TREE: Final[tuple[PluginDeclaration, ...]] = (
    _upstream(
        "SchedulingGates",
        "scheduling_gates",
        "preEnqueue",
        "Holds pods with spec.schedulingGates out of the queue.",
    ),
    _upstream(
        "PrioritySort",
        "priority_sort",
        "queueSort",
        "Orders the queue by pod priority, then arrival time.",
    ),
    # 1.37 runs NodeName before NodeUnschedulable; both and TaintToleration gained a PreFilter.
    _upstream("NodeName", "node_name", "preFilter filter", "Honours a pod's spec.nodeName."),
    _upstream(
        "NodeUnschedulable",
        "node_unschedulable",
        "preFilter filter",
        "Filters out nodes with spec.unschedulable set.",
    ),
    _upstream(
        "TaintToleration",
        "taint_toleration",
        "preFilter filter preScore score",
        "Taints and tolerations.",
        default_weight=3,
    ),
    _upstream(
        "NodeAffinity",
        "node_affinity",
        "preFilter filter preScore score",
        "Node selector and node affinity.",
        default_weight=2,
        args=PluginArgs(a.NodeAffinityArgs, None, v.validate_node_affinity),
    ),
    _upstream("NodePorts", "node_ports", "preFilter filter", "Host ports already in use."),
    _upstream(
        "NodeResourcesFit",
        "node_resources_fit",
        "preFilter filter preScore score placementScore",
        "Requests against allocatable.",
        default_weight=1,
        args=PluginArgs(a.NodeResourcesFitArgs, d.default_fit, v.validate_fit),
    ),
    _upstream(
        "VolumeRestrictions",
        "volume_restrictions",
        "preFilter filter",
        "Volume access-mode conflicts.",
        cluster_reads=(("", "persistentvolumeclaims"),),
    ),
    _upstream(
        "NodeVolumeLimits",
        "node_volume_limits",
        "preFilter filter",
        "CSI attach limits per node.",
        cluster_reads=(
            *_PV,
            *_STORAGE,
            ("storage.k8s.io", "volumeattachments"),
            ("storage.k8s.io", "csidrivers"),
        ),
    ),
    _upstream(
        "VolumeBinding",
        "volume_binding",
        "preFilter filter reserve preBind preScore score",
        "Binds and provisions PersistentVolumes (WaitForFirstConsumer), PV node affinity.",
        args=PluginArgs(a.VolumeBindingArgs, d.default_volume_binding, v.validate_volume_binding),
        cluster_reads=(
            *_PV,
            *_STORAGE,
            ("storage.k8s.io", "csidrivers"),
            ("storage.k8s.io", "csistoragecapacities"),
        ),
        # As upstream's system:kube-scheduler role: update PVs (claimRef) and PVCs
        # (volume.kubernetes.io/selected-node).
        cluster_writes=(("", "persistentvolumes", ("update",)),),
        namespaced_writes=(("", "persistentvolumeclaims", ("update",)),),
    ),
    _upstream(
        "VolumeZone",
        "volume_zone",
        "preFilter filter",
        "PersistentVolume zone labels.",
        cluster_reads=(*_PV, ("storage.k8s.io", "storageclasses")),
    ),
    _upstream(
        "PodTopologySpread",
        "pod_topology_spread",
        "preFilter filter preScore score",
        "Topology spread constraints.",
        default_weight=2,
        args=PluginArgs(a.PodTopologySpreadArgs, d.default_spread, v.validate_spread),
        cluster_reads=(
            ("", "services"),
            ("", "replicationcontrollers"),
            ("apps", "replicasets"),
            ("apps", "statefulsets"),
        ),
    ),
    _upstream(
        "InterPodAffinity",
        "inter_pod_affinity",
        "preFilter filter preScore score",
        "Pod affinity and anti-affinity.",
        default_weight=2,
        args=PluginArgs(
            a.InterPodAffinityArgs, d.default_inter_pod_affinity, v.validate_inter_pod_affinity
        ),
        cluster_reads=(("", "namespaces"),),
    ),
    _upstream(
        "DynamicResources",
        "dynamic_resources",
        # Upstream's extension points; preScore only skips Score for pods without claims.
        "preEnqueue preFilter filter postFilter preScore score reserve preBind podGroupPostFilter",
        "Dynamic resource allocation: allocates devices from ResourceSlices to ResourceClaims.",
        default_weight=2,
        args=PluginArgs(
            a.DynamicResourcesArgs, d.default_dynamic_resources, v.validate_dynamic_resources
        ),
        cluster_reads=(
            ("resource.k8s.io", "deviceclasses"),
            ("resource.k8s.io", "resourceclaims"),
            ("resource.k8s.io", "resourceslices"),
            ("resource.k8s.io", "devicetaintrules"),  # their taints apply to the slices' devices
        ),
        namespaced_writes=(
            # PreBind adds the delete-protection finalizer (update), then writes the status.
            ("resource.k8s.io", "resourceclaims", ("update",)),
            # Extended resources backed by DRA: PreBind creates the pod's claim, Unreserve
            # and PostFilter delete it.
            ("resource.k8s.io", "resourceclaims", ("create", "delete")),
            ("resource.k8s.io", "resourceclaims/status", ("patch", "update")),
        ),
    ),
    _upstream(
        "DefaultPreemption",
        "default_preemption",
        "preEnqueue postFilter podGroupPostFilter",
        "Preempts lower-priority pods.",
        args=PluginArgs(
            a.DefaultPreemptionArgs, d.default_preemption, v.validate_default_preemption
        ),
        cluster_reads=(("policy", "poddisruptionbudgets"),),
        namespaced_writes=(("", "pods", ("delete",)),),
    ),
    _upstream(
        "NodeResourcesBalancedAllocation",
        "balanced_allocation",
        "preScore score",
        "Balances resource usage.",
        default_weight=1,
        args=PluginArgs(
            a.NodeResourcesBalancedAllocationArgs,
            d.default_balanced,
            v.validate_balanced_allocation,
        ),
    ),
    _upstream(
        "ImageLocality",
        "image_locality",
        "score",
        "Prefers nodes that already have the images.",
        default_weight=1,
    ),
    _upstream("DefaultBinder", "default_binder", "bind", "Binds through pods/binding."),
    # 1.37 config parity: NodeDeclaredFeatures is GA and in the default set; the
    # other four are in upstream's registry behind gates that are off by default (GenericWorkload,
    # TopologyAwareWorkloadScheduling, InPlacePodVerticalScalingSchedulerPreemption), so a profile
    # may name them; Corral runs them as upstream does with their gates off.
    _upstream(
        "NodeDeclaredFeatures",
        "node_declared_features",
        "preFilter filter",
        "Filters out nodes whose status.declaredFeatures lack a feature the pod needs.",
    ),
    _gated(
        "GangScheduling",
        "gang_scheduling",
        "preEnqueue permit",
        "All-or-nothing placement of PodGroups (gate GenericWorkload, in the default set with "
        "it): a gang's pods wait for minCount, are placed together or not at all.",
        # Reads PodGroups through the engine's own pod-group state (features.GATE_CLUSTER_READS
        # grants their watch with the gate), not through an object informer.
    ),
    _gated(
        "TopologyPlacementGenerator",
        "topology_placement_generator",
        "placementGenerate",
        "PodGroup placements by topology (gate TopologyAwareWorkloadScheduling, off): "
        "accepted, never run.",
    ),
    _gated(
        "PodGroupPodsCount",
        "pod_group_pods_count",
        "placementScore",
        "Scores PodGroup placements by pod count (gate TopologyAwareWorkloadScheduling, off): "
        "accepted, never run.",
    ),
    _gated(
        "DeferredPodScheduling",
        "deferred_pod_scheduling",
        "preFilter filter permit",
        "Deferred in-place resizes (gate InPlacePodVerticalScalingSchedulerPreemption, off): "
        "skips every pod.",
    ),
    _corral(
        "CheckPodCountLimit",
        "check_pod_count_limit",
        "filter",
        "Filters out nodes already running podCountLimit pods placed by this scheduler.",
        args=PluginArgs(a.CheckPodCountLimitArgs, None, v.validate_check_pod_count_limit),
    ),
    _corral(
        "CheckPodLimitResources",
        "check_pod_limit_resources",
        "filter",
        "Filters out nodes where pod limits would exceed limitRatio times allocatable.",
        args=PluginArgs(a.CheckPodLimitResourcesArgs, None, v.validate_check_pod_limit_resources),
    ),
    _corral(
        "TenantSpread",
        "tenant_spread",
        "preScore score",
        "Prefers nodes with the fewest pods sharing the pod's tenant label value.",
        args=PluginArgs(a.TenantSpreadArgs, d.default_tenant_spread, v.validate_tenant_spread),
    ),
    # Storage capacity (seed 000's configuration).
    _corral(
        "CheckCSIStorageCapacity",
        "check_csi_storage_capacity",
        "preFilter filter",
        "Filters out nodes whose CSIStorageCapacity cannot hold the pod's claims to be "
        "provisioned, per StorageClass.",
        cluster_reads=(
            *_PV,
            ("storage.k8s.io", "storageclasses"),
            ("storage.k8s.io", "csidrivers"),
            ("storage.k8s.io", "csistoragecapacities"),
        ),
    ),
    _corral(
        "LvmVolumeCapacity",
        "lvm_volume_capacity",
        "filter",
        "Filters out nodes whose free LVM capacity (TopoLVM's capacity.topolvm.io/<device-class> "
        "annotation) cannot hold the pod's LVM claims.",
        args=PluginArgs(
            a.LvmVolumeCapacityArgs, d.default_lvm_volume_capacity, v.validate_lvm_volume_capacity
        ),
        cluster_reads=(*_PV, ("storage.k8s.io", "storageclasses")),
    ),
    # kubernetes-sigs/scheduler-plugins (v0.35), docs/plugins/<Name>.md each.
    _sp(
        "NodeResourcesAllocatable",
        "node_resources_allocatable",
        "score",
        "Prefers nodes with the least (or most) allocatable resources, weighted.",
        args=PluginArgs(
            a.NodeResourcesAllocatableArgs,
            d.default_node_resources_allocatable,
            v.validate_node_resources_allocatable,
        ),
    ),
    _sp(
        "NodeMetadata",
        "node_metadata",
        "score",
        "Scores nodes by a numeric or timestamp label or annotation.",
        args=PluginArgs(a.NodeMetadataArgs, d.default_node_metadata, v.validate_node_metadata),
    ),
    _sp(
        "PreemptionToleration",
        "preemption_toleration",
        "postFilter",
        "Preempts lower-priority pods, except those whose PriorityClass tolerates the preemptor.",
        args=PluginArgs(
            a.PreemptionTolerationArgs,
            d.default_preemption_toleration,
            v.validate_preemption_toleration,
        ),
        cluster_reads=(
            ("policy", "poddisruptionbudgets"),
            ("scheduling.k8s.io", "priorityclasses"),
        ),
        namespaced_writes=(("", "pods", ("delete",)),),
    ),
    _sp(
        "Coscheduling",
        "coscheduling",
        "queueSort preFilter postFilter permit reserve",
        "Schedules the pods of a PodGroup (scheduling.x-k8s.io) all or nothing: they wait at "
        "Permit until minMember of them are assumed.",
        args=PluginArgs(a.CoschedulingArgs, d.default_coscheduling, v.validate_coscheduling),
        cluster_reads=(("scheduling.x-k8s.io", "podgroups"),),
        indexed_pod_labels=("scheduling.x-k8s.io/pod-group",),
    ),
    _sp(
        "NodeResourceTopologyMatch",
        "node_resource_topology",
        "preFilter filter score reserve postBind",
        "NUMA-aware placement from NodeResourceTopology objects (topology.node.k8s.io): "
        "single-numa-node admission at pod or container scope, and NUMA-zone scoring.",
        args=PluginArgs(
            a.NodeResourceTopologyMatchArgs,
            d.default_node_resource_topology_match,
            v.validate_node_resource_topology_match,
        ),
        cluster_reads=(("topology.node.k8s.io", "noderesourcetopologies"),),
    ),
    _sp(
        "CapacityScheduling",
        "capacity_scheduling",
        "preFilter postFilter reserve",
        "Per-namespace ElasticQuotas (scheduling.x-k8s.io): a pod may not take its namespace "
        "past max, nor past its min unless other quotas leave theirs unused; preemption "
        "reclaims borrowed capacity.",
        cluster_reads=(
            ("policy", "poddisruptionbudgets"),
            ("scheduling.x-k8s.io", "elasticquotas"),
        ),
        namespaced_writes=(("", "pods", ("delete",)),),
    ),
)

BY_NAME: Final[dict[str, PluginDeclaration]] = {p.name: p for p in IN_TREE}

# Upstream's default MultiPoint set: (name, weight) in order.
DEFAULT_MULTI_POINT: Final[tuple[tuple[str, int | None], ...]] = tuple(
    (p.name, p.default_weight) for p in IN_TREE if p.in_default_set
)

# Plugin name -> args kind, for the in-tree plugins (the kind is ``<PluginName>Args``).
ARGS: Final[dict[str, PluginArgs]] = {p.name: p.args for p in IN_TREE if p.args is not None}


def _from_entry_point(ep_name: str, obj: object, dist: str) -> PluginDeclaration:
    if isinstance(obj, PluginDeclaration):
        return obj
    name = getattr(obj, "NAME", None)
    points = getattr(obj, "EXTENSION_POINTS", None)
    if not isinstance(name, str) or not name:
        raise TypeError("has no NAME string")
    if points is None or isinstance(points, str) or not isinstance(points, Iterable):
        raise TypeError("has no EXTENSION_POINTS collection")
    unknown = set(points) - set(EXTENSION_POINTS)
    if unknown:
        raise TypeError(f"unknown extension points {sorted(unknown)}")
    factory = getattr(obj, "new", obj)
    if not callable(factory):
        raise TypeError("is neither a factory nor has a callable new")
    args_type = getattr(obj, "Args", None)
    if args_type is not None and not (
        isinstance(args_type, type) and dataclasses.is_dataclass(args_type)
    ):
        raise TypeError("Args is not a dataclass")
    default, validate = getattr(obj, "default_args", None), getattr(obj, "validate_args", None)
    for hook, what in ((default, "default_args"), (validate, "validate_args")):
        if hook is not None and not callable(hook):
            raise TypeError(f"{what} is not callable")
        if hook is not None and args_type is None:
            raise TypeError(f"{what} without Args")
    reads = tuple((str(g), str(r)) for g, r in getattr(obj, "CLUSTER_READS", ()))
    return PluginDeclaration(
        name=name,
        factory=factory,
        extension_points=frozenset(points),
        description=str(getattr(obj, "DESCRIPTION", "") or f"Out-of-tree plugin from {dist}."),
        args=PluginArgs(args_type, default, validate) if args_type is not None else None,
        cluster_reads=reads,
        source=f"entry point {ep_name} ({dist})",
    )


def load_entry_points(
    entry_points: Iterable[metadata.EntryPoint] | None = None,
    known: Iterable[str] = BY_NAME,
) -> tuple[list[PluginDeclaration], list[str]]:
    """Declarations of the installed ``corral.plugins`` entry points, and one problem line per
    entry point left out (it failed to load, broke the contract or reused a known name)."""
    taken = set(known)
    found: list[PluginDeclaration] = []
    problems: list[str] = []
    eps = metadata.entry_points(group=ENTRY_POINT_GROUP) if entry_points is None else entry_points
    for ep in sorted(eps, key=lambda e: e.name):
        dist = ep.dist.name if ep.dist is not None else "unknown distribution"
        where = f"plugin entry point {ep.name!r} ({dist}) ignored"
        try:
            declaration = _from_entry_point(ep.name, ep.load(), dist)
        except Exception as exc:  # a broken third-party package must not break validation
            problems.append(f"{where}: {exc}")
            continue
        if declaration.name in taken:
            problems.append(f"{where}: {declaration.name!r} is already a plugin name")
            continue
        taken.add(declaration.name)
        found.append(declaration)
    return found, problems


def args_kind(plugin: str) -> PluginArgs | None:
    """The args kind of any plugin this installation has (in-tree, then the entry points')."""
    kind = ARGS.get(plugin)
    if kind is not None or plugin in BY_NAME:
        return kind
    found = next((d for d in installed()[0] if d.name == plugin), None)
    return found.args if found is not None else None


@functools.cache
def installed() -> tuple[tuple[PluginDeclaration, ...], tuple[str, ...]]:
    """In-tree plus installed out-of-tree declarations (read once), and the loader's problems."""
    found, problems = load_entry_points()
    return (*IN_TREE, *found), tuple(problems)
