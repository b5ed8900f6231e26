"""Upstream defaulting of KubeSchedulerConfiguration v1 (``apis/config/v1/defaults.go``).

Contract: :func:`set_defaults` mutates a decoded configuration exactly as kube-scheduler's
defaulting would for the pinned release (the default MultiPoint plugin set including
DynamicResources, which is GA and on from 1.34), including the plugin-set merge rules and the
default args appended for every enabled plugin that has an args kind and no pluginConfig entry.
Plugin args stay raw JSON; defaulted ones are written back in upstream's order.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any, Final

from corral.scheduler.config import args as _args
from corral.scheduler.config.decode import decode
from corral.scheduler.config.errors import FieldError, FieldPath
from corral.scheduler.config.types import (
    DEFAULT_SCHEDULER_NAME,
    EXTENSION_POINTS,
    MULTI_POINT,
    KubeSchedulerConfiguration,
    KubeSchedulerProfile,
    Plugin,
    PluginConfig,
    Plugins,
    PluginSet,
)

DEFAULT_PARALLELISM: Final = 16
DEFAULT_PERCENTAGE_OF_NODES_TO_SCORE: Final = 0
DEFAULT_POD_INITIAL_BACKOFF_SECONDS: Final = 1
DEFAULT_POD_MAX_BACKOFF_SECONDS: Final = 10
DEFAULT_LEASE_DURATION: Final = "15s"
DEFAULT_RENEW_DEADLINE: Final = "10s"
DEFAULT_RETRY_PERIOD: Final = "2s"
DEFAULT_RESOURCE_LOCK: Final = "leases"
DEFAULT_LOCK_NAMESPACE: Final = "kube-system"
DEFAULT_LOCK_NAME: Final = "kube-scheduler"
DEFAULT_CONTENT_TYPE: Final = "application/vnd.kubernetes.protobuf"
DEFAULT_QPS: Final = 50.0
DEFAULT_BURST: Final = 100
DEFAULT_TENANT_LABEL_KEY: Final = "corral.dev/tenant"

# (name, weight) in upstream's MultiPoint order; weight None = not a scorer by default.
DEFAULT_MULTI_POINT: Final[tuple[tuple[str, int | None], ...]] = (
    ("SchedulingGates", None),
    ("PrioritySort", None),
    ("NodeUnschedulable", None),
    ("NodeName", None),
    ("TaintToleration", 3),
    ("NodeAffinity", 2),
    ("NodePorts", None),
    ("NodeResourcesFit", 1),
    ("VolumeRestrictions", None),
    ("NodeVolumeLimits", None),
    ("VolumeBinding", None),
    ("VolumeZone", None),
    ("PodTopologySpread", 2),
    ("InterPodAffinity", 2),
    ("DynamicResources", None),
    ("DefaultPreemption", None),
    ("NodeResourcesBalancedAllocation", 1),
    ("ImageLocality", 1),
    ("DefaultBinder", None),
)


def default_plugins() -> Plugins:
    return Plugins(
        multi_point=PluginSet(enabled=[Plugin(name=n, weight=w) for n, w in DEFAULT_MULTI_POINT])
    )


def merge_plugin_set(default: PluginSet, custom: PluginSet) -> PluginSet:
    """Upstream ``mergePluginSet``: drop disabled defaults (``*`` drops all), replace a default
    in place by a custom entry of the same name, then append the other custom entries in order.
    Duplicated custom entries are kept; building the framework rejects them."""
    disabled = [Plugin(name=p.name) for p in custom.disabled]
    disabled += [Plugin(name=p.name) for p in default.disabled]
    disabled_names = {p.name for p in disabled}
    custom_index = {p.name: i for i, p in enumerate(custom.enabled)}
    replaced: set[int] = set()
    enabled: list[Plugin] = []
    if "*" not in disabled_names:
        for plugin in default.enabled:
            if plugin.name in disabled_names:
                continue
            chosen = plugin
            if plugin.name in custom_index:
                i = custom_index[plugin.name]
                chosen = custom.enabled[i]
                replaced.add(i)
            enabled.append(copy.copy(chosen))
    enabled += [copy.copy(p) for i, p in enumerate(custom.enabled) if i not in replaced]
    return PluginSet(enabled=enabled, disabled=disabled)


def merge_plugins(default: Plugins, custom: Plugins | None) -> Plugins:
    if custom is None:
        return default
    merged = Plugins()
    for point in (MULTI_POINT, *EXTENSION_POINTS):
        merged.set_point(point, merge_plugin_set(default.point(point), custom.point(point)))
    return merged


def enabled_plugin_names(plugins: Plugins) -> list[str]:
    """Every plugin enabled at any point, sorted (upstream ``pluginsNames``)."""
    names = {
        p.name for point in (MULTI_POINT, *EXTENSION_POINTS) for p in plugins.point(point).enabled
    }
    return sorted(names)


# Args defaulting per plugin: applied to the typed args in place.
def _default_preemption(a: _args.DefaultPreemptionArgs) -> None:
    if a.min_candidate_nodes_percentage is None:
        a.min_candidate_nodes_percentage = 10
    if a.min_candidate_nodes_absolute is None:
        a.min_candidate_nodes_absolute = 100


def _default_inter_pod_affinity(a: _args.InterPodAffinityArgs) -> None:
    if a.hard_pod_affinity_weight is None:
        a.hard_pod_affinity_weight = 1


def _default_resources() -> list[_args.ResourceSpec]:
    return [_args.ResourceSpec("cpu", 1), _args.ResourceSpec("memory", 1)]


def _default_balanced(a: _args.NodeResourcesBalancedAllocationArgs) -> None:
    if not a.resources:
        a.resources = _default_resources()
    for r in a.resources:
        if not r.weight:
            r.weight = 1


def _default_fit(a: _args.NodeResourcesFitArgs) -> None:
    if a.scoring_strategy is None:
        a.scoring_strategy = _args.ScoringStrategy(type="LeastAllocated")
    if not a.scoring_strategy.resources:
        a.scoring_strategy.resources = _default_resources()
    for r in a.scoring_strategy.resources:
        if not r.weight:
            r.weight = 1


def _default_spread(a: _args.PodTopologySpreadArgs) -> None:
    if not a.defaulting_type:
        a.defaulting_type = "System"


def _default_volume_binding(a: _args.VolumeBindingArgs) -> None:
    # shape is defaulted only with the StorageCapacityScoring gate, which is off (alpha).
    if a.bind_timeout_seconds is None:
        a.bind_timeout_seconds = 600


def _default_dynamic_resources(a: _args.DynamicResourcesArgs) -> None:
    # DRASchedulerFilterTimeout is beta and on from 1.34.
    if a.filter_timeout is None:
        a.filter_timeout = "10s"


def _default_tenant_spread(a: _args.TenantSpreadArgs) -> None:
    if not a.label_key:
        a.label_key = DEFAULT_TENANT_LABEL_KEY


ARGS_DEFAULTERS: Final[dict[str, Callable[[Any], None]]] = {
    "DefaultPreemption": _default_preemption,
    "InterPodAffinity": _default_inter_pod_affinity,
    "NodeResourcesBalancedAllocation": _default_balanced,
    "NodeResourcesFit": _default_fit,
    "PodTopologySpread": _default_spread,
    "VolumeBinding": _default_volume_binding,
    "DynamicResources": _default_dynamic_resources,
    "TenantSpread": _default_tenant_spread,
}


def default_args(
    plugin: str, raw: dict[str, Any], path: FieldPath, errors: list[FieldError]
) -> dict[str, Any]:
    """Defaulted raw args of a plugin with a known args kind; others come back unchanged."""
    args_type = _args.ARGS_TYPES.get(plugin)
    if args_type is None:
        return raw
    typed = _args.decode_plugin_args(args_type, plugin, raw, path, errors)
    if typed is None:
        return raw
    defaulter = ARGS_DEFAULTERS.get(plugin)
    if defaulter is not None:
        defaulter(typed)
    return _args.encode_plugin_args(plugin, typed)


def set_profile_defaults(
    profile: KubeSchedulerProfile, path: FieldPath, errors: list[FieldError]
) -> None:
    profile.plugins = merge_plugins(default_plugins(), profile.plugins)
    seen: set[str] = set()
    for i, pc in enumerate(profile.plugin_config):
        seen.add(pc.name)
        pc.args = default_args(
            pc.name, pc.args, path.child("pluginConfig").index(i).child("args"), errors
        )
    for name in enabled_plugin_names(profile.plugins):
        if name in seen or name not in _args.ARGS_TYPES:
            continue
        profile.plugin_config.append(
            PluginConfig(name=name, args=default_args(name, {}, path, errors))
        )


def set_defaults(cfg: KubeSchedulerConfiguration, errors: list[FieldError] | None = None) -> None:
    """Apply upstream defaults in place; args that fail to decode are reported in ``errors``."""
    errs: list[FieldError] = [] if errors is None else errors
    if cfg.parallelism is None:
        cfg.parallelism = DEFAULT_PARALLELISM
    if not cfg.profiles:
        cfg.profiles.append(KubeSchedulerProfile())
    if len(cfg.profiles) == 1 and cfg.profiles[0].scheduler_name is None:
        cfg.profiles[0].scheduler_name = DEFAULT_SCHEDULER_NAME
    for i, profile in enumerate(cfg.profiles):
        set_profile_defaults(profile, FieldPath.root("profiles").index(i), errs)
    if cfg.percentage_of_nodes_to_score is None:
        cfg.percentage_of_nodes_to_score = DEFAULT_PERCENTAGE_OF_NODES_TO_SCORE
    le = cfg.leader_election
    if le.leader_elect is None:
        le.leader_elect = True
    le.lease_duration = le.lease_duration or DEFAULT_LEASE_DURATION
    le.renew_deadline = le.renew_deadline or DEFAULT_RENEW_DEADLINE
    le.retry_period = le.retry_period or DEFAULT_RETRY_PERIOD
    le.resource_lock = le.resource_lock or DEFAULT_RESOURCE_LOCK
    le.resource_namespace = le.resource_namespace or DEFAULT_LOCK_NAMESPACE
    le.resource_name = le.resource_name or DEFAULT_LOCK_NAME
    cc = cfg.client_connection
    cc.content_type = cc.content_type or DEFAULT_CONTENT_TYPE
    cc.qps = cc.qps or DEFAULT_QPS
    cc.burst = cc.burst or DEFAULT_BURST
    if cfg.pod_initial_backoff_seconds is None:
        cfg.pod_initial_backoff_seconds = DEFAULT_POD_INITIAL_BACKOFF_SECONDS
    if cfg.pod_max_backoff_seconds is None:
        cfg.pod_max_backoff_seconds = DEFAULT_POD_MAX_BACKOFF_SECONDS
    if cfg.enable_profiling is None:
        cfg.enable_profiling = True
    if cfg.enable_profiling and cfg.enable_contention_profiling is None:
        cfg.enable_contention_profiling = True


def typed_args(plugin: str, raw: dict[str, Any]) -> Any:
    """Typed args of a plugin from raw JSON that already passed validation; ``None`` if the
    plugin has no args kind."""
    args_type = _args.ARGS_TYPES.get(plugin)
    if args_type is None:
        return None
    errors: list[FieldError] = []
    return decode(args_type, _args.strip_type_meta(raw), FieldPath(), errors)
