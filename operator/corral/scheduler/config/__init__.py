"""KubeSchedulerConfiguration v1: load, default and validate like upstream; typed plugin args.

This package imports nothing else of corral. The public surface::

    cfg = load_config(text_or_mapping, registry=...)   # raises ValidationError(errors=[FieldError])
    typed_args("NodeResourcesFit", cfg.profiles[0].plugin_config[i].args)
    IN_TREE, installed()                                # every plugin, declared once
    expand_profiles(cfg, registry)                      # plugins per extension point, weights
"""

from __future__ import annotations

from corral.scheduler.config.declarations import (
    ARGS,
    DEFAULT_MULTI_POINT,
    ENTRY_POINT_GROUP,
    IN_TREE,
    PluginArgs,
    PluginDeclaration,
    installed,
    load_entry_points,
)
from corral.scheduler.config.decode import parse_duration
from corral.scheduler.config.defaults import (
    default_multi_point,
    default_plugins,
    merge_plugin_set,
    merge_plugins,
    plugin_args,
    set_defaults,
    typed_args,
)
from corral.scheduler.config.errors import FieldError, FieldPath, ValidationError, suggest
from corral.scheduler.config.features import FeatureGates
from corral.scheduler.config.load import (
    decode_config,
    dump_config,
    expand_profiles,
    load_config,
    parse_yaml,
)
from corral.scheduler.config.multipoint import ExpandedProfile, Registry, expand
from corral.scheduler.config.types import (
    API_VERSION,
    EXTENSION_POINTS,
    KIND,
    MULTI_POINT,
    Extender,
    KubeSchedulerConfiguration,
    KubeSchedulerProfile,
    LeaderElectionConfiguration,
    Plugin,
    PluginConfig,
    Plugins,
    PluginSet,
)
from corral.scheduler.config.validation import validate

__all__ = [
    "API_VERSION",
    "ARGS",
    "DEFAULT_MULTI_POINT",
    "ENTRY_POINT_GROUP",
    "EXTENSION_POINTS",
    "IN_TREE",
    "KIND",
    "MULTI_POINT",
    "ExpandedProfile",
    "Extender",
    "FeatureGates",
    "FieldError",
    "FieldPath",
    "KubeSchedulerConfiguration",
    "KubeSchedulerProfile",
    "LeaderElectionConfiguration",
    "Plugin",
    "PluginArgs",
    "PluginConfig",
    "PluginDeclaration",
    "PluginSet",
    "Plugins",
    "Registry",
    "ValidationError",
    "decode_config",
    "default_multi_point",
    "default_plugins",
    "dump_config",
    "expand",
    "expand_profiles",
    "installed",
    "load_config",
    "load_entry_points",
    "merge_plugin_set",
    "merge_plugins",
    "parse_duration",
    "parse_yaml",
    "plugin_args",
    "set_defaults",
    "suggest",
    "typed_args",
    "validate",
]
