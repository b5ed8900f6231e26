"""Names vulture (``make lint``'s dead-code check) cannot see used, each with the reason. The
check reads tests/ too, so a name the tests use counts as used; a name nothing uses is deleted,
not listed here."""

# ruff: noqa: B018, F821
# mypy: ignore-errors

# Called by their framework, not by Corral: asyncio Protocol callbacks, kopf handlers and
# settings, the Kubernetes client's configuration attributes.
_.connection_made  # asyncio.Protocol (k8s/aio_transport.py)
_.data_received
_.eof_received
_.connection_lost
on_profile  # kopf handlers registered by decorator (controller/handlers.py)
admit
_.converter  # kopf settings (cli/scheduler.py)
_.api_key  # kubernetes.client.Configuration (k8s/client.py)
_.api_key_prefix
_.sub_evaluator  # celpy's Evaluator builds macros' evaluators through it (cel_limits.py)

# API fields: KubeSchedulerConfiguration and args types mirror upstream's, read by decoding
# and dumping (dataclasses.fields), not by name; likewise the fields of records.
match_label_keys
placement_generate
placement_score
pod_group_post_filter
accept_content_types
delay_cache_until_active
resync_scope  # NodeResourceTopologyMatchArgs.cache, SP's (no default, no cache in Corral)
cluster_rules  # render/rbac.py RbacPlan, dumped into templates
invalid_reason  # dynamic_resources/pools.py, upstream's pool validity
binding_finished  # backend/cache.py, as upstream's cache podState.bindingFinished
links  # corral_dev/hoststate.py HostState, compared by dataclasses.fields
addresses
throughput_series  # bench/driver.py results, written with dataclasses.asdict
created_series
scheduler_cpu_total_s
apiserver_cpu_s
setup_s
ready_s
pin_self  # bench/pinning.py: unused (bench is benchdocs' scope; left to them)
shadow_raw  # engine/shadow/compare.py PluginScores: the evidence, encoded with the dataclass
live_raw
last_update  # engine/shadow/tally.py ShadowStatus, encoded with the dataclass (status.shadow)

# TypedDict keys (framework/api_types.py, controller/status.py, render/rbac.py): Kubernetes
# field names, read as strings (``spec.get("nodeName")``), never as attributes.
(
    _.adminAccess,
    _.allocationMode,
    _.allocationTimestamp,
    _.apiGroup,
    _.apiGroups,
    _.apiVersion,
    _.bindingConditions,
    _.bindingFailureConditions,
    _.blockOwnerDeletion,
    _.consumedCapacity,
    _.containerName,
    _.creationTimestamp,
    _.declaredFeatures,
    _.deletionTimestamp,
    _.deviceClassName,
    _.distinctAttribute,
    _.extendedResourceClaimStatus,
    _.finalizers,
    _.firstAvailable,
    _.generateName,
    _.initContainers,
    _.labelSelector,
    _.lastProbeTime,
    _.lastTransitionTime,
    _.matchAttribute,
    _.matchExpressions,
    _.matchFields,
    _.matchLabels,
    _.namespaceSelector,
    _.nodeAffinity,
    _.nodeName,
    _.nodeSelector,
    _.nodeSelectorTerms,
    _.nominatedNodeName,
    _.observedGeneration,
    _.ownerReferences,
    _.podAffinity,
    _.podAffinityTerm,
    _.podAntiAffinity,
    _.podGroupName,
    _.preemptionPolicy,
    _.preferredDuringSchedulingIgnoredDuringExecution,
    _.priorityClassName,
    _.requestMappings,
    _.requestName,
    _.requiredDuringSchedulingIgnoredDuringExecution,
    _.reservedFor,
    _.resourceClaimName,
    _.resourceClaims,
    _.resourceClaimStatuses,
    _.resourceClaimTemplateName,
    _.resourceName,
    _.resourceNames,
    _.resourceVersion,
    _.schedulerName,
    _.schedulingGates,
    _.schedulingGroup,
    _.shareID,
    _.sizeBytes,
    _.startTime,
    _.tolerationSeconds,
    _.topologyKey,
    _.topologySpreadConstraints,
)
