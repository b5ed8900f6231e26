"""Upstream validation of a defaulted KubeSchedulerConfiguration v1 (``validation.go``).

Contract: :func:`validate` returns every :class:`FieldError` of a configuration that went
through :func:`~corral.scheduler.config.defaults.set_defaults`. Plugin args are decoded and
checked here too (upstream defers NodeResourcesFit's to plugin construction by a quirk; Corral
reports them at load time). Whether plugin names exist is not checked here: that needs the
plugin registry, see :mod:`corral.scheduler.config.multipoint`.
"""

from __future__ import annotations

import base64
import binascii
from typing import Any, Final

from corral.scheduler.config import args as _args
from corral.scheduler.config.declarations import PluginArgs, args_kind
from corral.scheduler.config.decode import MAX_DURATION_SECONDS, parse_duration
from corral.scheduler.config.errors import FieldError, FieldPath, field_error, quote
from corral.scheduler.config.extender_urls import redact_url, url_problem, verb_problem
from corral.scheduler.config.names import check_qualified_name, is_extended_resource_name
from corral.scheduler.config.types import (
    API_VERSION,
    EXTENSION_POINTS,
    Extender,
    KubeSchedulerConfiguration,
    KubeSchedulerProfile,
    LeaderElectionConfiguration,
)

# Plugins removed from the v1 API (validation.go invalidPluginsByVersion, 1.31+). As upstream,
# only specific extension points and pluginConfig are checked, not multiPoint.
REMOVED_PLUGINS: Final = ("AzureDiskLimits", "CinderLimits", "EBSLimits", "GCEPDLimits")
# Upstream's removed-plugin check covers every point but these two (validation.go).
_NOT_CHECKED_FOR_REMOVED: Final = ("placementGenerate", "placementScore")
_Errs = list[FieldError]
# Corral's own bound (upstream accepts any float32): below this the client-side rate limiter
# would sleep hours between requests (a float32's smallest qps, for ages).
MIN_QPS: Final = 0.01
_REMOVED: Final = f'was invalid in version "{API_VERSION}" (the plugin was removed)'


def validate(cfg: KubeSchedulerConfiguration) -> _Errs:
    errs: _Errs = []
    cc = cfg.client_connection
    if cc.burst is not None and cc.burst < 0:
        errs.append(
            field_error(
                FieldPath.root("clientConnection", "burst"), f"{cc.burst}: must be non-negative"
            )
        )
    if cc.qps is not None and 0 < cc.qps < MIN_QPS:
        errs.append(
            field_error(
                FieldPath.root("clientConnection", "qps"),
                f"{cc.qps!r}: must be at least {MIN_QPS} (one request per "
                f"{1 / MIN_QPS:g}s), or 0 or less for no limit; a smaller qps makes the "
                "client wait longer than any leader election lasts between requests",
            )
        )
    errs += validate_leader_election(FieldPath.root("leaderElection"), cfg.leader_election)
    if cfg.parallelism is None or cfg.parallelism <= 0:
        errs.append(
            field_error(
                FieldPath.root("parallelism"),
                f"{cfg.parallelism}: should be an integer value greater than zero",
            )
        )
    profiles = FieldPath.root("profiles")
    if not cfg.profiles:
        errs.append(field_error(profiles, "required: at least one profile"))
    seen: dict[str, int] = {}
    for i, profile in enumerate(cfg.profiles):
        errs += validate_profile(profiles.index(i), profile)
        name = profile.scheduler_name or ""
        if name in seen:
            errs.append(
                field_error(
                    profiles.index(i).child("schedulerName"),
                    f"duplicate value {quote(name)} (also profiles[{seen[name]}])",
                )
            )
        seen.setdefault(name, i)
    errs += _validate_common_queue_sort(profiles, cfg.profiles)
    errs += _validate_percentage(
        FieldPath.root("percentageOfNodesToScore"), cfg.percentage_of_nodes_to_score
    )
    initial = cfg.pod_initial_backoff_seconds or 0
    if initial <= 0:
        errs.append(
            field_error(
                FieldPath.root("podInitialBackoffSeconds"), f"{initial}: must be greater than 0"
            )
        )
    errs += backoff_range_errors(FieldPath(), initial, cfg.pod_max_backoff_seconds or 0)
    if (cfg.pod_max_backoff_seconds or 0) < initial:
        errs.append(
            field_error(
                FieldPath.root("podMaxBackoffSeconds"),
                f"{cfg.pod_max_backoff_seconds}: must be greater than or equal to "
                "podInitialBackoffSeconds",
            )
        )
    errs += validate_extenders(FieldPath.root("extenders"), cfg.extenders)
    return errs


def backoff_range_errors(parent: FieldPath, initial: int, maximum: int) -> _Errs:
    """Backoffs become durations (int64 nanoseconds): larger ones would overflow."""
    return [
        field_error(
            parent.child(key),
            f"{seconds}: must be at most {int(MAX_DURATION_SECONDS)} "
            "(a duration is int64 nanoseconds)",
        )
        for key, seconds in (
            ("podInitialBackoffSeconds", initial),
            ("podMaxBackoffSeconds", maximum),
        )
        if seconds > MAX_DURATION_SECONDS
    ]


def validate_leader_election(path: FieldPath, le: LeaderElectionConfiguration) -> _Errs:
    """component-base rules (only when leaderElect is on) plus ``resourceLock == "leases"``."""
    if not le.leader_elect:
        return []
    errs: _Errs = []
    durations: dict[str, float] = {}
    for key, text in (
        ("leaseDuration", le.lease_duration),
        ("renewDeadline", le.renew_deadline),
        ("retryPeriod", le.retry_period),
    ):
        seconds = parse_duration(text) if text else 0.0
        durations[key] = seconds
        if seconds <= 0:
            errs.append(field_error(path.child(key), f"{text}: must be greater than zero"))
    if durations["leaseDuration"] <= durations["renewDeadline"]:
        errs.append(
            field_error(
                path.child("leaseDuration"),
                f"{le.lease_duration}: leaseDuration must be greater than renewDeadline",
            )
        )
    if not le.resource_lock:
        errs.append(field_error(path.child("resourceLock"), "required"))
    elif le.resource_lock != "leases":
        errs.append(
            field_error(
                path.child("resourceLock"),
                f'{quote(le.resource_lock)}: resourceLock value must be "leases"',
            )
        )
    if not le.resource_namespace:
        errs.append(field_error(path.child("resourceNamespace"), "required"))
    if not le.resource_name:
        errs.append(field_error(path.child("resourceName"), "required"))
    return errs


def _validate_percentage(path: FieldPath, value: int | None) -> _Errs:
    if value is not None and not 0 <= value <= 100:
        return [field_error(path, f"{value}: not in valid range [0-100]")]
    return []


def validate_profile(path: FieldPath, profile: KubeSchedulerProfile) -> _Errs:
    errs: _Errs = []
    if not profile.scheduler_name:
        errs.append(field_error(path.child("schedulerName"), "required"))
    errs += _validate_percentage(
        path.child("percentageOfNodesToScore"), profile.percentage_of_nodes_to_score
    )
    if profile.plugins is not None:
        for point in EXTENSION_POINTS:
            if point in _NOT_CHECKED_FOR_REMOVED:
                continue
            for i, plugin in enumerate(profile.plugins.point(point).enabled):
                if plugin.name in REMOVED_PLUGINS:
                    errs.append(
                        field_error(
                            path.child("plugins", point, "enabled").index(i),
                            f"{quote(plugin.name)}: {_REMOVED}",
                        )
                    )
    seen: set[str] = set()
    for i, pc in enumerate(profile.plugin_config):
        p = path.child("pluginConfig").index(i)
        if pc.name in seen:
            errs.append(field_error(p, f"duplicate value {quote(pc.name)}"))
        seen.add(pc.name)
        if pc.name in REMOVED_PLUGINS:
            errs.append(field_error(p, f"{quote(pc.name)}: {_REMOVED}"))
            continue
        errs += validate_plugin_args(p.child("args"), pc.name, pc.args)
    return errs


def validate_plugin_args(path: FieldPath, plugin: str, raw: dict[str, object]) -> _Errs:
    """Decode, default (upstream validates defaulted args) and check the args of a plugin with
    a known args kind (others pass), in-tree or installed through an entry point."""
    kind = args_kind(plugin)
    return [] if kind is None else check_args(path, plugin, kind, raw)


def check_args(path: FieldPath, plugin: str, kind: PluginArgs, raw: object) -> _Errs:
    """``raw`` decoded strictly into ``kind``'s type, defaulted, then validated."""
    return decode_args(path, plugin, kind, raw)[1]


def decode_args(path: FieldPath, plugin: str, kind: PluginArgs, raw: object) -> tuple[Any, _Errs]:
    """The typed, defaulted args and their errors (the value is not to be used if any)."""
    errs: _Errs = []
    typed = _args.decode_plugin_args(kind.type, plugin, raw, path, errs)
    if typed is None or errs:
        return None, errs
    if kind.default is not None:
        kind.default(typed)
    if kind.validate is not None:
        errs += kind.validate(path, typed)
    return typed, errs


def _validate_common_queue_sort(path: FieldPath, profiles: list[KubeSchedulerProfile]) -> _Errs:
    if not profiles:
        return []
    errs: _Errs = []
    first = profiles[0]
    canon = first.plugins.queue_sort if first.plugins else None
    if canon is not None and len(canon.enabled) > 1:
        errs.append(
            field_error(
                path.index(0).child("plugins", "queueSort", "enabled"),
                f"{len(canon.enabled)}: only one queue sort plugin can be enabled",
            )
        )
    qs_name = canon.enabled[0].name if canon and canon.enabled else ""
    qs_args = next((pc.args for pc in first.plugin_config if qs_name and pc.name == qs_name), None)
    for i, profile in enumerate(profiles[1:], start=1):
        cur = profile.plugins.queue_sort if profile.plugins else None
        if cur != canon:
            errs.append(
                field_error(
                    path.index(i).child("plugins", "queueSort"), "must be the same for all profiles"
                )
            )
        for pc in profile.plugin_config:
            if pc.name == qs_name and pc.args != qs_args:
                errs.append(
                    field_error(
                        path.index(i).child("pluginConfig", "args"),
                        "queueSort must be the same for all profiles",
                    )
                )
    return errs


def validate_extenders(path: FieldPath, extenders: list[Extender]) -> _Errs:
    errs: _Errs = []
    binders = 0
    managed: set[str] = set()
    for i, ext in enumerate(extenders):
        p = path.index(i)
        errs += _validate_call(p, ext)
        if ext.prioritize_verb and (ext.weight or 0) <= 0:
            errs.append(
                field_error(
                    p.child("weight"),
                    f"{ext.weight or 0}: must have a positive weight applied to it",
                )
            )
        if ext.bind_verb:
            binders += 1
        errs += _validate_tls_data(p.child("tlsConfig"), ext)
        for j, res in enumerate(ext.managed_resources):
            rp = p.child("managedResources").index(j).child("name")
            problems = check_qualified_name(res.name)
            if problems:
                errs += [field_error(rp, f"{quote(res.name)}: {m}") for m in problems]
            elif not is_extended_resource_name(res.name):
                errs.append(
                    field_error(rp, f"{quote(res.name)}: is an invalid extended resource name")
                )
            if res.name in managed:
                errs.append(
                    field_error(rp, f"{quote(res.name)}: duplicate extender managed resource name")
                )
            managed.add(res.name)
    if binders > 1:
        errs.append(
            field_error(
                path,
                f"found {binders} extenders implementing bind: only one may",
            )
        )
    return errs


def _validate_call(path: FieldPath, ext: Extender) -> _Errs:
    """Corral's own: a ``urlPrefix`` that can never be called, or carries credentials, and a
    verb that is not one path segment (:mod:`.extender_urls`). An empty ``urlPrefix`` or verb
    is upstream's business (it accepts them; a call then fails, or the verb is not used)."""
    errs: _Errs = []
    problem = url_problem(ext.url_prefix) if ext.url_prefix else None
    if problem is not None:
        shown = quote(redact_url(ext.url_prefix))
        errs.append(field_error(path.child("urlPrefix"), f"{shown}: {problem}"))
    for key, verb in (
        ("filterVerb", ext.filter_verb),
        ("prioritizeVerb", ext.prioritize_verb),
        ("preemptVerb", ext.preempt_verb),
        ("bindVerb", ext.bind_verb),
    ):
        problem = verb_problem(verb) if verb else None
        if problem is not None:
            errs.append(field_error(path.child(key), f"{quote(verb)}: {problem}"))
    return errs


def _validate_tls_data(path: FieldPath, ext: Extender) -> _Errs:
    """``certData``/``keyData``/``caData`` are ``[]byte`` upstream: base64 in JSON and YAML, so a
    value that is not base64 fails upstream's decoding of the file."""
    tls = ext.tls_config
    if tls is None:
        return []
    errs: _Errs = []
    for key, value in (("certData", tls.cert_data), ("keyData", tls.key_data),
                       ("caData", tls.ca_data)):  # fmt: skip
        if not value:
            continue
        try:
            base64.b64decode(value, validate=True)
        except (binascii.Error, ValueError):
            errs.append(field_error(path.child(key), "illegal base64 data"))
    # What the engine's transport refuses when it builds the extender (client-go's rules):
    # refused here, so that an accepted configuration starts.
    has_cert, has_key = bool(tls.cert_file or tls.cert_data), bool(tls.key_file or tls.key_data)
    if has_cert != has_key:
        errs.append(field_error(path, "a client certificate needs both a cert and a key"))
    if tls.insecure and (tls.ca_file or tls.ca_data):
        errs.append(
            field_error(
                path.child("insecure"),
                "specifying a root certificates file with the insecure flag is not allowed",
            )
        )
    return errs
