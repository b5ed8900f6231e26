"""The in-tree plugin registry and upstream's default profile (1.36 multiPoint expansion)."""

from __future__ import annotations

from corral.scheduler.framework.profile import ResolvedProfile, ScorePluginRef
from corral.scheduler.framework.registry import Registry
from corral.scheduler.plugins import (
    balanced_allocation,
    check_pod_count_limit,
    check_pod_limit_resources,
    default_binder,
    default_preemption,
    dynamic_resources,
    image_locality,
    inter_pod_affinity,
    names,
    node_affinity,
    node_name,
    node_ports,
    node_resources_fit,
    node_unschedulable,
    node_volume_limits,
    pod_topology_spread,
    priority_sort,
    scheduling_gates,
    taint_toleration,
    tenant_spread,
    volume_binding,
    volume_restrictions,
    volume_zone,
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
            names.NODE_PORTS: node_ports.new,
            names.NODE_RESOURCES_FIT: node_resources_fit.new,
            names.VOLUME_RESTRICTIONS: volume_restrictions.new,
            names.NODE_VOLUME_LIMITS: node_volume_limits.new,
            names.VOLUME_BINDING: volume_binding.new,
            names.VOLUME_ZONE: volume_zone.new,
            names.POD_TOPOLOGY_SPREAD: pod_topology_spread.new,
            names.INTER_POD_AFFINITY: inter_pod_affinity.new,
            names.DYNAMIC_RESOURCES: dynamic_resources.new,
            names.DEFAULT_PREEMPTION: default_preemption.new,
            names.NODE_RESOURCES_BALANCED_ALLOCATION: balanced_allocation.new,
            names.IMAGE_LOCALITY: image_locality.new,
            names.DEFAULT_BINDER: default_binder.new,
            names.CHECK_POD_COUNT_LIMIT: check_pod_count_limit.new,
            names.CHECK_POD_LIMIT_RESOURCES: check_pod_limit_resources.new,
            names.TENANT_SPREAD: tenant_spread.new,
        }
    )


# Upstream's default multiPoint list expanded per point: every default PreFilter plugin also
# filters, after the three Filter-only plugins that precede it in the multiPoint order.
_PRE_FILTER = (
    names.NODE_AFFINITY,
    names.NODE_PORTS,
    names.NODE_RESOURCES_FIT,
    names.VOLUME_RESTRICTIONS,
    names.NODE_VOLUME_LIMITS,
    names.VOLUME_BINDING,
    names.VOLUME_ZONE,
    names.POD_TOPOLOGY_SPREAD,
    names.INTER_POD_AFFINITY,
    names.DYNAMIC_RESOURCES,
)


def default_profile(
    scheduler_name: str = "default-scheduler",
    *,
    plugin_args: dict[str, object] | None = None,
    percentage_of_nodes_to_score: int | None = None,
) -> ResolvedProfile:
    """Upstream's default plugins (multiPoint order and weights), expanded per point."""
    return ResolvedProfile(
        scheduler_name=scheduler_name,
        pre_enqueue=(names.SCHEDULING_GATES, names.DEFAULT_PREEMPTION),
        queue_sort=(names.PRIORITY_SORT,),
        pre_filter=_PRE_FILTER,
        filter=(names.NODE_UNSCHEDULABLE, names.NODE_NAME, names.TAINT_TOLERATION, *_PRE_FILTER),
        post_filter=(names.DEFAULT_PREEMPTION,),
        pre_score=(
            names.TAINT_TOLERATION,
            names.NODE_AFFINITY,
            names.NODE_RESOURCES_FIT,
            names.VOLUME_BINDING,
            names.POD_TOPOLOGY_SPREAD,
            names.INTER_POD_AFFINITY,
            names.NODE_RESOURCES_BALANCED_ALLOCATION,
        ),
        score=(
            ScorePluginRef(names.TAINT_TOLERATION, 3),
            ScorePluginRef(names.NODE_AFFINITY, 2),
            ScorePluginRef(names.NODE_RESOURCES_FIT, 1),
            ScorePluginRef(names.VOLUME_BINDING, 1),
            ScorePluginRef(names.POD_TOPOLOGY_SPREAD, 2),
            ScorePluginRef(names.INTER_POD_AFFINITY, 2),
            ScorePluginRef(names.NODE_RESOURCES_BALANCED_ALLOCATION, 1),
            ScorePluginRef(names.IMAGE_LOCALITY, 1),
        ),
        reserve=(names.VOLUME_BINDING,),
        pre_bind=(names.VOLUME_BINDING,),
        bind=(names.DEFAULT_BINDER,),
        plugin_args=plugin_args or {},
        percentage_of_nodes_to_score=percentage_of_nodes_to_score,
    )
