"""The plugin catalog: every plugin a Corral engine can run, what it extends, what its args
look like and what it needs to read from the API server.

Contract:
- Built-in entries are upstream's in-tree plugins (the default set) and Corral's own.
- Out-of-tree plugins join through the entry-point group ``corral.plugins``. An entry point loads
  either a :class:`PluginInfo` or an object (usually the plugin module) with ``NAME: str`` and
  ``EXTENSION_POINTS`` (extension-point JSON keys such as ``"filter"``), and optionally ``Args``
  (a dataclass for its args, decoded strictly), ``CLUSTER_READS`` (a sequence of
  ``(api_group, resource)`` pairs it lists and watches) and ``DESCRIPTION``.
- A broken entry point, or one reusing a built-in name, is left out and reported in
  :attr:`Catalog.problems`, never raised: a bad third-party package must not break validation.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from importlib import metadata
from typing import Any, Final

from corral.scheduler import config as cfg

ENTRY_POINT_GROUP: Final = "corral.plugins"

Resource = tuple[str, str]  # (apiGroup, resource)


@dataclass(frozen=True, slots=True)
class PluginInfo:
    name: str
    extension_points: frozenset[str]
    description: str
    args_type: type[Any] | None = None
    # Read cluster-wide (get/list/watch) when the plugin is enabled.
    cluster_reads: tuple[Resource, ...] = ()
    # Granted where the scheduler may bind (cluster-wide, or only in tenant namespaces):
    # (apiGroup, resource, verbs).
    namespaced_writes: tuple[tuple[str, str, tuple[str, ...]], ...] = ()
    source: str = "upstream"


_PV: Final = (("", "persistentvolumes"), ("", "persistentvolumeclaims"))
_STORAGE: Final = (("storage.k8s.io", "storageclasses"), ("storage.k8s.io", "csinodes"))


def _p(name: str, points: str, description: str, **kw: Any) -> PluginInfo:
    return PluginInfo(name, frozenset(points.split()), description, cfg.ARGS_TYPES.get(name), **kw)


BUILTIN: Final[tuple[PluginInfo, ...]] = (
    _p("SchedulingGates", "preEnqueue", "Holds pods with spec.schedulingGates out of the queue."),
    _p("PrioritySort", "queueSort", "Orders the queue by pod priority, then arrival time."),
    _p("NodeUnschedulable", "filter", "Filters out nodes with spec.unschedulable set."),
    _p("NodeName", "filter", "Honours a pod's spec.nodeName."),
    _p("TaintToleration", "filter preScore score", "Taints and tolerations."),
    _p("NodeAffinity", "preFilter filter preScore score", "Node selector and node affinity."),
    _p("NodePorts", "preFilter filter", "Host ports already in use."),
    _p("NodeResourcesFit", "preFilter filter preScore score", "Requests against allocatable."),
    _p(
        "VolumeRestrictions",
        "preFilter filter",
        "Volume access-mode conflicts.",
        cluster_reads=(("", "persistentvolumeclaims"),),
    ),
    _p(
        "NodeVolumeLimits",
        "preFilter filter",
        "CSI attach limits per node.",
        cluster_reads=(*_PV, *_STORAGE, ("storage.k8s.io", "volumeattachments")),
    ),
    _p(
        "VolumeBinding",
        "preFilter filter reserve preBind preScore score",
        "Bound PersistentVolumes' node affinity.",
        cluster_reads=(
            *_PV,
            *_STORAGE,
            ("storage.k8s.io", "csidrivers"),
            ("storage.k8s.io", "csistoragecapacities"),
        ),
    ),
    _p(
        "VolumeZone",
        "preFilter filter",
        "PersistentVolume zone labels.",
        cluster_reads=(*_PV, ("storage.k8s.io", "storageclasses")),
    ),
    _p(
        "PodTopologySpread",
        "preFilter filter preScore score",
        "Topology spread constraints.",
        cluster_reads=(
            ("", "services"),
            ("", "replicationcontrollers"),
            ("apps", "replicasets"),
            ("apps", "statefulsets"),
        ),
    ),
    _p(
        "InterPodAffinity",
        "preFilter filter preScore score",
        "Pod affinity and anti-affinity.",
        cluster_reads=(("", "namespaces"),),
    ),
    _p(
        "DynamicResources",
        # Corral refuses pods with ResourceClaims at PreFilter (allocation is not implemented);
        # its PostFilter only reports, as upstream's, that there is no claim to deallocate.
        # It has no PreEnqueue, Reserve or PreBind of upstream's.
        "preFilter filter postFilter",
        "Dynamic resource allocation (ResourceClaims): not supported yet, such pods are refused.",
        cluster_reads=(
            ("resource.k8s.io", "deviceclasses"),
            ("resource.k8s.io", "resourceclaims"),
            ("resource.k8s.io", "resourceslices"),
        ),
        namespaced_writes=(("resource.k8s.io", "resourceclaims/status", ("patch", "update")),),
    ),
    _p(
        "DefaultPreemption",
        "preEnqueue postFilter",
        "Preempts lower-priority pods.",
        cluster_reads=(("policy", "poddisruptionbudgets"),),
        namespaced_writes=(("", "pods", ("delete",)),),
    ),
    _p("NodeResourcesBalancedAllocation", "preScore score", "Balances resource usage."),
    _p("ImageLocality", "score", "Prefers nodes that already have the images."),
    _p("DefaultBinder", "bind", "Binds through pods/binding."),
    _p(
        "CheckPodCountLimit",
        "filter",
        "Filters out nodes already running podCountLimit pods placed by this scheduler.",
        source="corral",
    ),
    _p(
        "CheckPodLimitResources",
        "filter",
        "Filters out nodes where pod limits would exceed limitRatio times allocatable.",
        source="corral",
    ),
    _p(
        "TenantSpread",
        "preScore score",
        "Prefers nodes with the fewest pods sharing the pod's tenant label value.",
        source="corral",
    ),
)


@dataclass(frozen=True, slots=True)
class Catalog:
    plugins: Mapping[str, PluginInfo]
    problems: tuple[str, ...] = field(default=())

    def registry(self) -> dict[str, frozenset[str]]:
        """Plugin name -> extension points, as :mod:`corral.scheduler.config` expects."""
        return {name: info.extension_points for name, info in self.plugins.items()}

    def __contains__(self, name: object) -> bool:
        return name in self.plugins

    def __getitem__(self, name: str) -> PluginInfo:
        return self.plugins[name]


def _from_entry_point(ep_name: str, obj: object, dist: str) -> PluginInfo:
    if isinstance(obj, PluginInfo):
        return obj
    name = getattr(obj, "NAME", None)
    points = getattr(obj, "EXTENSION_POINTS", None)
    if not isinstance(name, str) or not name:
        raise TypeError("has no NAME string")
    if points is None or isinstance(points, str) or not isinstance(points, Iterable):
        raise TypeError("has no EXTENSION_POINTS collection")
    unknown = set(points) - set(cfg.EXTENSION_POINTS)
    if unknown:
        raise TypeError(f"unknown extension points {sorted(unknown)}")
    args_type = getattr(obj, "Args", None)
    if args_type is not None and not dataclasses.is_dataclass(args_type):
        raise TypeError("Args is not a dataclass")
    reads = tuple((str(g), str(r)) for g, r in getattr(obj, "CLUSTER_READS", ()))
    return PluginInfo(
        name=name,
        extension_points=frozenset(points),
        description=str(getattr(obj, "DESCRIPTION", "") or f"Out-of-tree plugin from {dist}."),
        args_type=args_type if isinstance(args_type, type) else None,
        cluster_reads=reads,
        source=f"entry point {ep_name} ({dist})",
    )


def build_catalog(entry_points: Iterable[metadata.EntryPoint] | None = None) -> Catalog:
    plugins = {info.name: info for info in BUILTIN}
    problems: list[str] = []
    eps = metadata.entry_points(group=ENTRY_POINT_GROUP) if entry_points is None else entry_points
    for ep in sorted(eps, key=lambda e: e.name):
        dist = ep.dist.name if ep.dist is not None else "unknown distribution"
        try:
            info = _from_entry_point(ep.name, ep.load(), dist)
        except Exception as exc:
            problems.append(f"plugin entry point {ep.name!r} ({dist}) ignored: {exc}")
            continue
        if info.name in plugins:
            problems.append(
                f"plugin entry point {ep.name!r} ({dist}) ignored: "
                f"{info.name!r} is already in the catalog"
            )
            continue
        plugins[info.name] = info
    return Catalog(plugins=dict(sorted(plugins.items())), problems=tuple(problems))


@functools.cache
def default_catalog() -> Catalog:
    """The catalog of this installation (built-ins plus installed entry points), built once."""
    return build_catalog()
