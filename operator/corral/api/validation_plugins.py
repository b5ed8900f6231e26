"""Validation of a profile's plugins, pluginConfig and extenders against the plugin catalog.

Contract: paths point into the user's document (``spec.plugins.filter.enabled[0].name``);
unknown names get a "did you mean" from the catalog; args are decoded strictly with the plugin's
args type (unknown fields, wrong types) and checked with upstream's (or Corral's) rules.
"""

from __future__ import annotations

from typing import Final
from urllib.parse import urlsplit

from corral.api.catalog import Catalog
from corral.api.types import SchedulerProfileSpec
from corral.scheduler import config as cfg
from corral.scheduler.config import args as cfg_args
from corral.scheduler.config import multipoint, validation
from corral.scheduler.config.defaults import default_args
from corral.scheduler.config.errors import FieldError, FieldPath, field_error, quote

MAX_PLUGIN_WEIGHT: Final = 100
_Errs = list[FieldError]


def validate_plugins(path: FieldPath, spec: SchedulerProfileSpec, catalog: Catalog) -> _Errs:
    registry = catalog.registry()
    errs: _Errs = []
    plugins = spec.plugins
    pp = path.child("plugins")
    if plugins is not None:
        errs += multipoint.check_plugin_names(pp, plugins, registry)
        for point in (cfg.MULTI_POINT, *cfg.EXTENSION_POINTS):
            for i, plugin in enumerate(plugins.point(point).enabled):
                w = plugin.weight
                if w is not None and not 0 <= w <= MAX_PLUGIN_WEIGHT:
                    errs.append(
                        field_error(
                            pp.child(point, "enabled").index(i).child("weight"),
                            f"{w}: must be between 0 and {MAX_PLUGIN_WEIGHT} "
                            "(0 means the default weight 1)",
                        )
                    )
    merged = cfg.merge_plugins(cfg.default_plugins(), plugins)
    enabled = {
        p.name
        for point in (cfg.MULTI_POINT, *cfg.EXTENSION_POINTS)
        for p in merged.point(point).enabled
    }
    cp = path.child("pluginConfig")
    seen: set[str] = set()
    for i, pc in enumerate(spec.plugin_config):
        p = cp.index(i)
        if pc.name in seen:
            errs.append(
                field_error(
                    p.child("name"),
                    f"duplicate value {quote(pc.name)}: each plugin is configured once",
                )
            )
        seen.add(pc.name)
        if pc.name not in catalog:
            errs.append(
                field_error(p.child("name"), multipoint.unknown_plugin_message(pc.name, registry))
            )
            continue
        if pc.name not in enabled:
            errs.append(
                field_error(
                    p.child("name"),
                    f"plugin {quote(pc.name)} is not enabled in this profile; "
                    "enable it under spec.plugins or remove this entry",
                )
            )
        errs += _validate_args(p.child("args"), pc.name, pc.args, catalog)
    # An enabled plugin without an entry runs with its default args, which some cannot have.
    for name in sorted(enabled - seen):
        if name in cfg.ARGS_TYPES:
            at = cp.key(name).child("args")
            errs += validation.validate_plugin_args(at, name, default_args(name, {}, at, errs))
    if not errs:
        errs += _expanded_checks(path, spec, merged, registry)
    return errs


def _validate_args(path: FieldPath, name: str, raw: dict[str, object], catalog: Catalog) -> _Errs:
    if name in cfg.ARGS_TYPES:
        return validation.validate_plugin_args(path, name, raw)
    args_type = catalog[name].args_type
    if args_type is None:
        if raw:
            return [field_error(path, f"plugin {quote(name)} takes no args")]
        return []
    errs: _Errs = []
    cfg_args.decode_plugin_args(args_type, name, raw, path, errs)
    return errs


def _expanded_checks(
    path: FieldPath, spec: SchedulerProfileSpec, merged: cfg.Plugins, registry: multipoint.Registry
) -> _Errs:
    profile = cfg.KubeSchedulerProfile(scheduler_name=spec.scheduler_name, plugins=merged)
    _, errs = multipoint.expand(path, profile, registry)
    return errs


def validate_extenders(path: FieldPath, extenders: list[cfg.Extender]) -> _Errs:
    errs = validation.validate_extenders(path, extenders)
    for i, ext in enumerate(extenders):
        url = urlsplit(ext.url_prefix)
        if (
            url.scheme not in ("http", "https")
            or not url.netloc
            or any(c.isspace() for c in ext.url_prefix)
        ):
            errs.append(
                field_error(
                    path.index(i).child("urlPrefix"),
                    f"{quote(ext.url_prefix)}: must be an http:// or https:// URL",
                )
            )
        if not (ext.filter_verb or ext.prioritize_verb or ext.bind_verb or ext.preempt_verb):
            errs.append(
                field_error(
                    path.index(i),
                    "sets no verb: give at least one of "
                    "filterVerb, prioritizeVerb, preemptVerb, bindVerb",
                )
            )
        for key, verb in (
            ("filterVerb", ext.filter_verb),
            ("prioritizeVerb", ext.prioritize_verb),
            ("preemptVerb", ext.preempt_verb),
            ("bindVerb", ext.bind_verb),
        ):
            if verb is not None and (not verb or "/" in verb or any(c.isspace() for c in verb)):
                errs.append(
                    field_error(
                        path.index(i).child(key),
                        f"{quote(verb)}: must be a non-empty path segment (no '/' or spaces)",
                    )
                )
    return errs
