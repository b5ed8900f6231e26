"""Upstream defaulting of KubeSchedulerConfiguration v1 (``apis/config/v1/defaults.go``).

Contract: :func:`set_defaults` mutates a decoded configuration exactly as kube-scheduler's
defaulting would for the pinned release (the default MultiPoint plugin set including
DynamicResources, which is GA and on from 1.34), including the plugin-set merge rules and the
default args appended for every enabled plugin that has an args kind and no pluginConfig entry.
Plugin args stay raw JSON; defaulted ones are written back in upstream's order.
"""

from __future__ import annotations

import copy
from typing import Any, Final

from corral.scheduler.config import args as _args
from corral.scheduler.config.declarations import DEFAULT_MULTI_POINT, args_kind
from corral.scheduler.config.decode import decode
from corral.scheduler.config.errors import FieldError, FieldPath, ValidationError
from corral.scheduler.config.features import (
    DEFAULT,
    GENERIC_WORKLOAD,
    TOPOLOGY_AWARE_WORKLOAD_SCHEDULING,
    FeatureGates,
)
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


# Appended to the default MultiPoint set when their gate is on (upstream applyFeatureGates in
# apis/config/v1/default_plugins.go), in this order.
GATED_MULTI_POINT: Final[tuple[tuple[str, tuple[tuple[str, int | None], ...]], ...]] = (
    (GENERIC_WORKLOAD, (("GangScheduling", None),)),
    (
        TOPOLOGY_AWARE_WORKLOAD_SCHEDULING,
        (("TopologyPlacementGenerator", None), ("PodGroupPodsCount", 1)),
    ),
)


def default_multi_point(gates: FeatureGates = DEFAULT) -> tuple[tuple[str, int | None], ...]:
    """Upstream's default MultiPoint set (name, weight) in order, for these gates."""
    extra = [
        entry for gate, entries in GATED_MULTI_POINT if gates.enabled(gate) for entry in entries
    ]
    return (*DEFAULT_MULTI_POINT, *extra)


def default_plugins(gates: FeatureGates = DEFAULT) -> Plugins:
    return Plugins(
        multi_point=PluginSet(
            enabled=[Plugin(name=n, weight=w) for n, w in default_multi_point(gates)]
        )
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
    """Every plugin enabled at any point but podGroupPostFilter, sorted (upstream
    ``pluginsNames`` leaves that 1.37 point out: a plugin enabled only there gets no default
    args)."""
    points = [p for p in (MULTI_POINT, *EXTENSION_POINTS) if p != "podGroupPostFilter"]
    names = {p.name for point in points for p in plugins.point(point).enabled}
    return sorted(names)


def default_args(
    plugin: str, raw: dict[str, Any], path: FieldPath, errors: list[FieldError]
) -> dict[str, Any]:
    """Defaulted raw args of a plugin with a known args kind; others come back unchanged."""
    kind = args_kind(plugin)
    if kind is None:
        return raw
    before = len(errors)
    typed = _args.decode_plugin_args(kind.type, plugin, raw, path, errors)
    if typed is None or len(errors) > before:  # partly decoded args are not defaulted
        return raw
    if kind.default is not None:
        kind.default(typed)
    return _args.encode_plugin_args(plugin, typed)


def set_profile_defaults(
    profile: KubeSchedulerProfile,
    path: FieldPath,
    errors: list[FieldError],
    gates: FeatureGates = DEFAULT,
) -> None:
    profile.plugins = merge_plugins(default_plugins(gates), profile.plugins)
    seen: set[str] = set()
    for i, pc in enumerate(profile.plugin_config):
        seen.add(pc.name)
        pc.args = default_args(
            pc.name, pc.args, path.child("pluginConfig").index(i).child("args"), errors
        )
    for name in enabled_plugin_names(profile.plugins):
        if name in seen or args_kind(name) is None:
            continue
        profile.plugin_config.append(
            PluginConfig(name=name, args=default_args(name, {}, path, errors))
        )


def set_defaults(
    cfg: KubeSchedulerConfiguration,
    errors: list[FieldError] | None = None,
    gates: FeatureGates = DEFAULT,
) -> None:
    """Apply upstream defaults in place (for the engine's feature ``gates``); args that fail to
    decode are reported in ``errors``."""
    errs: list[FieldError] = [] if errors is None else errors
    if cfg.parallelism is None:
        cfg.parallelism = DEFAULT_PARALLELISM
    if not cfg.profiles:
        cfg.profiles.append(KubeSchedulerProfile())
    if len(cfg.profiles) == 1 and cfg.profiles[0].scheduler_name is None:
        cfg.profiles[0].scheduler_name = DEFAULT_SCHEDULER_NAME
    for i, profile in enumerate(cfg.profiles):
        set_profile_defaults(profile, FieldPath.root("profiles").index(i), errs, gates)
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
    kind = args_kind(plugin)
    if kind is None:
        return None
    errors: list[FieldError] = []
    return decode(kind.type, _args.strip_type_meta(raw), FieldPath(), errors)


def plugin_args(plugin: str, raw: object) -> Any:
    """A plugin's args as its declared args type (``<Plugin>Args`` in-tree, ``Args`` out of
    tree), from raw JSON (``None``: empty), decoded, defaulted and validated here, once, as a
    profile's args are; a value already of that type passes as is. Raises
    :class:`ValidationError` (paths relative to the args); ``KeyError`` for a plugin that
    declares no args."""
    kind = args_kind(plugin)
    if kind is None:
        raise KeyError(f"plugin {plugin!r} declares no args")
    if isinstance(raw, kind.type):
        return raw
    errors: list[FieldError] = []
    typed = _args.decode_plugin_args(kind.type, plugin, raw, FieldPath(), errors)
    if typed is not None and not errors:
        if kind.default is not None:
            kind.default(typed)
        if kind.validate is not None:
            errors += kind.validate(FieldPath(), typed)
    if errors:
        raise ValidationError(errors)
    return typed
