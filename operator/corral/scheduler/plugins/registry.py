"""The in-tree plugin registry and the default profile of the plugins implemented so far."""

from __future__ import annotations

from corral.scheduler.framework.profile import ResolvedProfile, ScorePluginRef
from corral.scheduler.framework.registry import Registry
from corral.scheduler.plugins import (
    default_binder,
    names,
    node_affinity,
    node_name,
    node_resources_fit,
    node_unschedulable,
    priority_sort,
    scheduling_gates,
    taint_toleration,
)


def in_tree_registry() -> Registry:
    return Registry(
        {
            names.SCHEDULING_GATES: scheduling_gates.new,
            names.PRIORITY_SORT: priority_sort.new,
            names.NODE_UNSCHEDULABLE: node_unschedulable.new,
            names.NODE_NAME: node_name.new,
            names.TAINT_TOLERATION: taint_toleration.new,
            names.NODE_AFFINITY: node_affinity.new,
            names.NODE_RESOURCES_FIT: node_resources_fit.new,
            names.DEFAULT_BINDER: default_binder.new,
        }
    )


def default_profile(
    scheduler_name: str = "default-scheduler",
    *,
    plugin_args: dict[str, object] | None = None,
    percentage_of_nodes_to_score: int | None = None,
) -> ResolvedProfile:
    """Upstream's default plugin order and weights, restricted to the implemented plugins."""
    return ResolvedProfile(
        scheduler_name=scheduler_name,
        pre_enqueue=(names.SCHEDULING_GATES,),
        queue_sort=(names.PRIORITY_SORT,),
        pre_filter=(names.NODE_AFFINITY, names.NODE_RESOURCES_FIT),
        filter=(
            names.NODE_UNSCHEDULABLE,
            names.NODE_NAME,
            names.TAINT_TOLERATION,
            names.NODE_AFFINITY,
            names.NODE_RESOURCES_FIT,
        ),
        pre_score=(names.TAINT_TOLERATION, names.NODE_AFFINITY, names.NODE_RESOURCES_FIT),
        score=(
            ScorePluginRef(names.TAINT_TOLERATION, 3),
            ScorePluginRef(names.NODE_AFFINITY, 2),
            ScorePluginRef(names.NODE_RESOURCES_FIT, 1),
        ),
        bind=(names.DEFAULT_BINDER,),
        plugin_args=plugin_args or {},
        percentage_of_nodes_to_score=percentage_of_nodes_to_score,
    )
