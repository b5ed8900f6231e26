"""Plugin names, as upstream's ``plugins/names``, and Corral's own."""

from typing import Final

PRIORITY_SORT: Final = "PrioritySort"
SCHEDULING_GATES: Final = "SchedulingGates"
NODE_UNSCHEDULABLE: Final = "NodeUnschedulable"
NODE_NAME: Final = "NodeName"
TAINT_TOLERATION: Final = "TaintToleration"
NODE_AFFINITY: Final = "NodeAffinity"
NODE_RESOURCES_FIT: Final = "NodeResourcesFit"
DEFAULT_BINDER: Final = "DefaultBinder"
NODE_PORTS: Final = "NodePorts"
NODE_RESOURCES_BALANCED_ALLOCATION: Final = "NodeResourcesBalancedAllocation"
IMAGE_LOCALITY: Final = "ImageLocality"
INTER_POD_AFFINITY: Final = "InterPodAffinity"
POD_TOPOLOGY_SPREAD: Final = "PodTopologySpread"
VOLUME_RESTRICTIONS: Final = "VolumeRestrictions"
NODE_VOLUME_LIMITS: Final = "NodeVolumeLimits"
VOLUME_BINDING: Final = "VolumeBinding"
VOLUME_ZONE: Final = "VolumeZone"
DYNAMIC_RESOURCES: Final = "DynamicResources"
DEFAULT_PREEMPTION: Final = "DefaultPreemption"
# 1.37: NodeDeclaredFeatures in upstream's default set; the rest in its registry,
# behind gates that are off by default.
NODE_DECLARED_FEATURES: Final = "NodeDeclaredFeatures"
GANG_SCHEDULING: Final = "GangScheduling"
TOPOLOGY_PLACEMENT_GENERATOR: Final = "TopologyPlacementGenerator"
POD_GROUP_PODS_COUNT: Final = "PodGroupPodsCount"
DEFERRED_POD_SCHEDULING: Final = "DeferredPodScheduling"
# Corral's own plugins.
CHECK_POD_COUNT_LIMIT: Final = "CheckPodCountLimit"
CHECK_POD_LIMIT_RESOURCES: Final = "CheckPodLimitResources"
TENANT_SPREAD: Final = "TenantSpread"
CHECK_CSI_STORAGE_CAPACITY: Final = "CheckCSIStorageCapacity"
LVM_VOLUME_CAPACITY: Final = "LvmVolumeCapacity"
# kubernetes-sigs/scheduler-plugins' plugins (their semantics; Corral's code).
NODE_RESOURCES_ALLOCATABLE: Final = "NodeResourcesAllocatable"
NODE_METADATA: Final = "NodeMetadata"
