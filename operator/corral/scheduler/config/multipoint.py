"""Plugin names against a registry, and upstream's MultiPoint expansion.

Contract: ``implements`` maps each known plugin name to the extension points (JSON keys such as
``"filter"``) it implements; the engine's registry and :mod:`corral.api`'s catalog both provide
one. :func:`check_plugin_names` checks the user's own sets before merging, so paths point into
the user's document; :func:`expand` runs after defaulting and mirrors
``framework.expandMultiPointPlugins`` plus NewFramework's profile checks.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Final

from corral.scheduler.config.errors import FieldError, FieldPath, field_error, quote, suggest
from corral.scheduler.config.types import (
    ALL_PLUGINS,
    EXTENSION_POINTS,
    MULTI_POINT,
    KubeSchedulerProfile,
    Plugins,
)

Registry = Mapping[str, frozenset[str]]
MAX_NODE_SCORE: Final = 100
MAX_TOTAL_SCORE: Final = 2**63 - 1


def unknown_plugin_message(name: str, registry: Registry) -> str:
    hint = suggest(name, registry)
    if not hint:
        hint = "; known plugins: " + ", ".join(sorted(registry))
    return f"unknown plugin {quote(name)}{hint}"


def check_plugin_names(path: FieldPath, plugins: Plugins, registry: Registry) -> list[FieldError]:
    """Unknown plugins and plugins enabled at a point they do not implement. Disabled names are
    not checked: upstream ignores a disabled name it does not know (old configurations disable
    removed plugins)."""
    errs: list[FieldError] = []
    for point in (MULTI_POINT, *EXTENSION_POINTS):
        for i, plugin in enumerate(plugins.point(point).enabled):
            p = path.child(point, "enabled").index(i).child("name")
            if plugin.name not in registry:
                errs.append(field_error(p, unknown_plugin_message(plugin.name, registry)))
            elif point != MULTI_POINT and point not in registry[plugin.name]:
                points = ", ".join(sorted(registry[plugin.name])) or "none"
                errs.append(
                    field_error(
                        p,
                        f"plugin {quote(plugin.name)} does not extend {point}; "
                        f"it extends: {points}",
                    )
                )
    return errs


@dataclass(slots=True)
class ExpandedProfile:
    """The plugins a profile runs at each extension point, in order, and the score weights."""

    scheduler_name: str
    points: dict[str, list[str]] = field(default_factory=dict)
    score_weights: dict[str, int] = field(default_factory=dict)


def expand(
    path: FieldPath, profile: KubeSchedulerProfile, registry: Registry
) -> tuple[ExpandedProfile, list[FieldError]]:
    """Expand a defaulted profile's MultiPoint set into every extension point."""
    plugins = profile.plugins or Plugins()
    name = profile.scheduler_name or ""
    out = ExpandedProfile(scheduler_name=name)
    errs: list[FieldError] = []
    pp = path.child("plugins")
    for point in EXTENSION_POINTS:
        pset = plugins.point(point)
        specific: list[str] = []
        for i, plugin in enumerate(pset.enabled):
            if plugin.name not in registry:
                errs.append(
                    field_error(
                        pp.child(point, "enabled").index(i).child("name"),
                        unknown_plugin_message(plugin.name, registry),
                    )
                )
            elif point not in registry[plugin.name]:
                errs.append(
                    field_error(
                        pp.child(point, "enabled").index(i).child("name"),
                        f"plugin {quote(plugin.name)} does not extend {point}",
                    )
                )
            elif plugin.name in specific:
                errs.append(
                    field_error(
                        pp.child(point, "enabled").index(i).child("name"),
                        f"plugin {quote(plugin.name)} already registered as {point}",
                    )
                )
            else:
                specific.append(plugin.name)
        disabled = {p.name for p in pset.disabled}
        if ALL_PLUGINS in disabled:
            out.points[point] = specific
            continue
        multi: list[str] = []
        overrides: set[str] = set()
        for i, plugin in enumerate(plugins.multi_point.enabled):
            if plugin.name not in registry:
                if point == EXTENSION_POINTS[0]:  # report once, not once per point
                    errs.append(
                        field_error(
                            pp.child(MULTI_POINT, "enabled").index(i).child("name"),
                            unknown_plugin_message(plugin.name, registry),
                        )
                    )
                continue
            if point not in registry[plugin.name] or plugin.name in disabled:
                continue
            if plugin.name in specific:
                overrides.add(plugin.name)
            elif plugin.name in multi:
                errs.append(
                    field_error(
                        pp.child(MULTI_POINT, "enabled").index(i).child("name"),
                        f"plugin {quote(plugin.name)} already registered as {point}",
                    )
                )
            else:
                multi.append(plugin.name)
        ordered = (
            [n for n in specific if n in overrides]
            + multi
            + [n for n in specific if n not in overrides]
        )
        out.points[point] = ordered
    errs += _score_weights(pp, plugins, out)
    errs += _score_weights(pp, plugins, out, "placementScore")
    if len(out.points.get("queueSort", [])) != 1:
        errs.append(
            field_error(
                pp.child("queueSort"),
                f"exactly one queue sort plugin is required for profile {quote(name)}",
            )
        )
    if not out.points.get("bind"):
        errs.append(
            field_error(
                pp.child("bind"),
                f"at least one bind plugin is needed for profile with scheduler name {quote(name)}",
            )
        )
    if len(out.points.get("placementGenerate", [])) > 1:
        errs.append(
            field_error(
                pp.child("placementGenerate"),
                "at most one placement generate plugin is allowed for profile with scheduler "
                f"name {quote(name)}",
            )
        )
    return out, errs


def _score_weights(
    path: FieldPath, plugins: Plugins, out: ExpandedProfile, point: str = "score"
) -> list[FieldError]:
    """Weights of the plugins run at ``point`` (score or placementScore): the point's own entry
    wins over multiPoint's, 0 means 1, and the total must not overflow (NewFramework)."""
    weights: dict[str, int] = {}
    for plugin in plugins.multi_point.enabled:
        weights.setdefault(plugin.name, plugin.weight or 0)
    for plugin in plugins.point(point).enabled:
        weights[plugin.name] = plugin.weight or 0
    total = 0
    for name in out.points.get(point, []):
        weight = weights.get(name) or 1
        if point == "score":
            out.score_weights[name] = weight
        if total > MAX_TOTAL_SCORE - MAX_NODE_SCORE * weight:
            what = "Score" if point == "score" else "placement score"
            return [field_error(path.child(point), f"total score of {what} plugins could overflow")]
        total += MAX_NODE_SCORE * weight
    return []
