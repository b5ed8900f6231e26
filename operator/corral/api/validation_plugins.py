"""Validation of a profile's plugins, pluginConfig and extenders against the plugin catalog.

Contract: paths point into the user's document (``spec.plugins.filter.enabled[0].name``);
unknown names get a "did you mean" from the catalog; args are decoded strictly with the plugin's
args type (unknown fields, wrong types) and checked with upstream's (or Corral's) rules.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from corral.api.catalog import Catalog
from corral.api.types import ProfileExtender, SchedulerProfileSpec
from corral.scheduler import config as cfg
from corral.scheduler.config import multipoint, validation
from corral.scheduler.config.errors import FieldError, FieldPath, field_error, quote
from corral.scheduler.config.names import check_dns1123_subdomain
from corral.scheduler.config.types import ALL_PLUGINS

MAX_PLUGIN_WEIGHT: Final = 100
NODE_AFFINITY: Final = "NodeAffinity"
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
    merged = cfg.merge_plugins(cfg.default_plugins(cfg.FeatureGates(spec.feature_gates)), plugins)
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
        kind = catalog[name].args if name in catalog else None
        if kind is not None:
            errs += validation.check_args(cp.key(name).child("args"), name, kind, {})
    if not errs:
        errs += _expanded_checks(path, spec, merged, registry)
    return errs


def _validate_args(path: FieldPath, name: str, raw: dict[str, object], catalog: Catalog) -> _Errs:
    """Every plugin's args by its declaration's args kind, as a KubeSchedulerConfiguration's
    (in-tree or out of tree alike)."""
    kind = catalog[name].args
    if kind is None:
        if raw:
            return [field_error(path, f"plugin {quote(name)} takes no args")]
        return []
    return validation.check_args(path, name, kind, raw)


def _expanded_checks(
    path: FieldPath, spec: SchedulerProfileSpec, merged: cfg.Plugins, registry: multipoint.Registry
) -> _Errs:
    profile = cfg.KubeSchedulerProfile(scheduler_name=spec.scheduler_name, plugins=merged)
    expanded, errs = multipoint.expand(path, profile, registry)
    pool = spec.tenancy.node_selector if spec.tenancy is not None else {}
    if pool and NODE_AFFINITY not in expanded.points.get("filter", []):
        errs.append(_pool_dropped(path.child("plugins"), spec.plugins))
    return errs


def _pool_dropped(path: FieldPath, plugins: cfg.Plugins | None) -> FieldError:
    """The tenant pool is enforced by NodeAffinity's Filter (``addedAffinity``): a profile with
    ``tenancy.nodeSelector`` that takes it out of the filter point is refused, pointing at the
    entry that disables it."""
    where = path
    for point in ("filter", cfg.MULTI_POINT):
        entries = plugins.point(point).disabled if plugins is not None else []
        hit = next(
            (i for i, p in enumerate(entries) if p.name in (NODE_AFFINITY, ALL_PLUGINS)), None
        )
        if hit is not None:
            where = path.child(point, "disabled").index(hit).child("name")
            break
    return field_error(
        where,
        f"plugin {quote(NODE_AFFINITY)} must run at filter when spec.tenancy.nodeSelector is set: "
        "it enforces the tenant node pool; re-enable it (tenancy adds the pool to its args)",
    )


def validate_extenders(path: FieldPath, extenders: Sequence[ProfileExtender]) -> _Errs:
    errs = validation.validate_extenders(path, list(extenders))
    for i, ext in enumerate(extenders):
        errs += _extender_secrets(path.index(i), ext)
        if not ext.url_prefix:  # the engine's checks cover a URL that is given
            errs.append(
                field_error(
                    path.index(i).child("urlPrefix"), '"": must be an http:// or https:// URL'
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
            if verb == "":  # the engine's checks cover a verb that is given
                errs.append(
                    field_error(path.index(i).child(key), '"": must be a non-empty path segment')
                )
    return errs


def _extender_secrets(path: FieldPath, ext: ProfileExtender) -> _Errs:
    """Client keys never go into the ConfigMap: inline ``certData``/``keyData`` are refused in
    favour of ``tlsSecretRef``, whose mounted files the rendered ``tlsConfig`` names itself."""
    errs: _Errs = []
    tls = ext.tls_config
    tp = path.child("tlsConfig")
    for key, value in (
        ("certData", tls.cert_data if tls else None),
        ("keyData", tls.key_data if tls else None),
    ):
        if value:
            errs.append(
                field_error(
                    tp.child(key),
                    "inline client certificates and keys would be stored in the scheduler's "
                    "ConfigMap: put tls.crt, tls.key and ca.crt in a Secret in the profile's "
                    f"namespace and name it in {path.child('tlsSecretRef', 'name')}",
                )
            )
    ref = ext.tls_secret_ref
    if ref is None:
        return errs
    errs += [
        field_error(path.child("tlsSecretRef", "name"), f"{quote(ref.name)}: {m}")
        for m in check_dns1123_subdomain(ref.name)
    ]
    for key, value in (
        ("certFile", tls.cert_file if tls else None),
        ("keyFile", tls.key_file if tls else None),
        ("caFile", tls.ca_file if tls else None),
    ):
        if value:
            errs.append(
                field_error(
                    tp.child(key),
                    "set by tlsSecretRef (the files of the mounted Secret); remove it",
                )
            )
    return errs
