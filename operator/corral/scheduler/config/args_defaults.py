"""Upstream's args defaulting (``apis/config/v1/defaults.go`` ``SetDefaults_<Plugin>Args``).

Contract: each ``default_<plugin>`` fills, in place, the fields upstream defaults on the typed
args of :mod:`corral.scheduler.config.args`; it never validates. The plugin declarations
(:mod:`corral.scheduler.config.declarations`) pair every args type with its defaulter.
"""

from __future__ import annotations

from typing import Final

from corral.scheduler.config import args

DEFAULT_TENANT_LABEL_KEY: Final = "corral.dev/tenant"
# TopoLVM's CSI driver name, and the name its node annotation gives the default device class.
DEFAULT_LVM_PROVISIONERS: Final = ("topolvm.io",)
DEFAULT_LVM_DEVICE_CLASS: Final = "00default"


def default_preemption(a: args.DefaultPreemptionArgs) -> None:
    if a.min_candidate_nodes_percentage is None:
        a.min_candidate_nodes_percentage = 10
    if a.min_candidate_nodes_absolute is None:
        a.min_candidate_nodes_absolute = 100


def default_inter_pod_affinity(a: args.InterPodAffinityArgs) -> None:
    if a.hard_pod_affinity_weight is None:
        a.hard_pod_affinity_weight = 1
    if a.ignore_preferred_terms_of_existing_pods is None:  # a plain bool upstream
        a.ignore_preferred_terms_of_existing_pods = False


def default_resources() -> list[args.ResourceSpec]:
    return [args.ResourceSpec("cpu", 1), args.ResourceSpec("memory", 1)]


def default_balanced(a: args.NodeResourcesBalancedAllocationArgs) -> None:
    if not a.resources:
        a.resources = default_resources()
    for r in a.resources:
        if not r.weight:
            r.weight = 1


def default_fit(a: args.NodeResourcesFitArgs) -> None:
    if a.scoring_strategy is None:
        a.scoring_strategy = args.ScoringStrategy(type="LeastAllocated")
    if not a.scoring_strategy.resources:
        a.scoring_strategy.resources = default_resources()
    for r in a.scoring_strategy.resources:
        if not r.weight:
            r.weight = 1


def default_spread(a: args.PodTopologySpreadArgs) -> None:
    if not a.defaulting_type:
        a.defaulting_type = "System"


def default_volume_binding(a: args.VolumeBindingArgs) -> None:
    if a.bind_timeout_seconds is None:
        a.bind_timeout_seconds = 600
    # StorageCapacityScoring is beta and on from 1.37: prefer nodes with more free capacity.
    if not a.shape:
        a.shape = [args.UtilizationShapePoint(0, 10), args.UtilizationShapePoint(100, 0)]


def default_dynamic_resources(a: args.DynamicResourcesArgs) -> None:
    # DRASchedulerFilterTimeout is beta and on from 1.34; DRADeviceBindingConditions and
    # DRAResourceClaimDeviceStatus are beta and on in 1.36.
    if a.filter_timeout is None:
        a.filter_timeout = "10s"
    if a.binding_timeout is None:
        a.binding_timeout = "10m0s"


def default_tenant_spread(a: args.TenantSpreadArgs) -> None:
    if not a.label_key:
        a.label_key = DEFAULT_TENANT_LABEL_KEY


def default_lvm_volume_capacity(a: args.LvmVolumeCapacityArgs) -> None:
    if not a.provisioners:
        a.provisioners = list(DEFAULT_LVM_PROVISIONERS)
    if not a.default_device_class:
        a.default_device_class = DEFAULT_LVM_DEVICE_CLASS


# --- scheduler-plugins (apis/config/v1/defaults.go) -------------------------------------------

GO_RFC3339: Final = "2006-01-02T15:04:05Z07:00"


def default_coscheduling(a: args.CoschedulingArgs) -> None:
    if a.permit_waiting_time_seconds is None:
        a.permit_waiting_time_seconds = 60
    if a.pod_group_backoff_seconds is None:
        a.pod_group_backoff_seconds = 0
    if a.pod_group_reject_percentage is None:
        a.pod_group_reject_percentage = 10


def default_node_resource_topology_match(a: args.NodeResourceTopologyMatchArgs) -> None:
    """SP ``SetDefaults_NodeResourceTopologyMatchArgs``."""
    if a.scoring_strategy is None:
        a.scoring_strategy = args.NodeResourceTopologyScoringStrategy(type="LeastAllocated")
    if not a.scoring_strategy.resources:
        a.scoring_strategy.resources = [
            args.ResourceSpec("cpu", 1),
            args.ResourceSpec("memory", 1),
        ]
    for r in a.scoring_strategy.resources:
        if not r.weight:
            r.weight = 1
    if a.cache is None:
        a.cache = args.NodeResourceTopologyCache()
    if a.cache.foreign_pods_detect is None:
        a.cache.foreign_pods_detect = "All"
    if a.cache.resync_method is None:
        a.cache.resync_method = "Autodetect"
    if a.cache.informer_mode is None:
        a.cache.informer_mode = "Dedicated"
    if a.preemption_mode is None:
        a.preemption_mode = "Disabled"


def default_node_resources_allocatable(a: args.NodeResourcesAllocatableArgs) -> None:
    # A millicore weighs as much as a MiB.
    if not a.resources:
        a.resources = [args.ResourceSpec("cpu", 1 << 20), args.ResourceSpec("memory", 1)]
    if not a.mode:
        a.mode = "Least"


def default_preemption_toleration(a: args.PreemptionTolerationArgs) -> None:
    """SP's SetDefaults_PreemptionTolerationArgs: upstream's DefaultPreemptionArgs defaults."""
    if a.min_candidate_nodes_percentage is None:
        a.min_candidate_nodes_percentage = 10
    if a.min_candidate_nodes_absolute is None:
        a.min_candidate_nodes_absolute = 100


def default_node_metadata(a: args.NodeMetadataArgs) -> None:
    if not a.timestamp_format and a.metadata_type == "Timestamp":
        a.timestamp_format = GO_RFC3339
