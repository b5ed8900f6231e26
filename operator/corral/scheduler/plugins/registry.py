"""The engine's side of the plugin declarations: factories, and profiles the runtime builds.

Contract: :func:`registry` imports the factory of every declaration it is given (in-tree by
default); :func:`resolved_profile` turns a profile expanded by :mod:`corral.scheduler.config`
into the runtime's :class:`ResolvedProfile`; :func:`default_profile` is upstream's default set
expanded that way, the profile a config with no ``plugins`` runs.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from corral.scheduler.config import (
    IN_TREE,
    ExpandedProfile,
    FeatureGates,
    KubeSchedulerProfile,
    PluginDeclaration,
    default_plugins,
    expand,
    validation,
)
from corral.scheduler.config.errors import FieldPath, ValidationError
from corral.scheduler.framework.profile import ResolvedProfile, ScorePluginRef
from corral.scheduler.framework.registry import Registry


def registry(declarations: Iterable[PluginDeclaration] = IN_TREE) -> Registry:
    return Registry({d.name: _factory(d) for d in declarations})


def _factory(declaration: PluginDeclaration) -> Any:
    """An out-of-tree plugin's factory gets its args as its declaration types them (decoded,
    defaulted and validated as a profile's are; in-tree factories do it with ``plugin_args``)."""
    factory = declaration.load_factory()
    kind = declaration.args
    if isinstance(declaration.factory, str) or kind is None:
        return factory

    def with_args(raw: object, handle: Any) -> Any:
        if isinstance(raw, kind.type):
            return factory(raw, handle)
        typed, errors = validation.decode_args(FieldPath(), declaration.name, kind, raw)
        if errors:
            raise ValidationError(errors)
        return factory(typed, handle)

    return with_args


def in_tree_registry() -> Registry:
    return registry(IN_TREE)


def resolved_profile(
    plan: ExpandedProfile,
    plugin_args: Mapping[str, object],
    percentage_of_nodes_to_score: int | None,
) -> ResolvedProfile:
    def at(point: str) -> tuple[str, ...]:
        return tuple(plan.points.get(point, ()))

    return ResolvedProfile(
        scheduler_name=plan.scheduler_name,
        pre_enqueue=at("preEnqueue"),
        queue_sort=at("queueSort"),
        pre_filter=at("preFilter"),
        filter=at("filter"),
        post_filter=at("postFilter"),
        pre_score=at("preScore"),
        score=tuple(ScorePluginRef(n, plan.score_weights.get(n, 1)) for n in at("score")),
        reserve=at("reserve"),
        permit=at("permit"),
        pre_bind=at("preBind"),
        bind=at("bind"),
        post_bind=at("postBind"),
        pod_group_post_filter=at("podGroupPostFilter"),
        plugin_args=plugin_args,
        percentage_of_nodes_to_score=percentage_of_nodes_to_score,
    )


def default_profile(
    scheduler_name: str = "default-scheduler",
    *,
    plugin_args: dict[str, object] | None = None,
    percentage_of_nodes_to_score: int | None = None,
    gates: FeatureGates | None = None,
) -> ResolvedProfile:
    """Upstream's default plugins (MultiPoint order and weights) for these feature ``gates``,
    expanded per point."""
    plugins = default_plugins(gates if gates is not None else FeatureGates())
    profile = KubeSchedulerProfile(scheduler_name=scheduler_name, plugins=plugins)
    points = {d.name: d.extension_points for d in IN_TREE}
    plan, errors = expand(FieldPath(), profile, points)
    if errors:  # the declarations' own default set always expands
        raise RuntimeError(f"the default plugin set does not expand: {errors}")
    return resolved_profile(plan, plugin_args or {}, percentage_of_nodes_to_score)
