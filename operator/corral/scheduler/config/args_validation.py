"""Validation of typed plugin args (upstream ``validation_pluginargs.go``, plus Corral's own).

Contract: each validator takes the args path and the *defaulted* typed args and returns field
errors; messages follow upstream's wording and say what is allowed.
"""

from __future__ import annotations

from typing import Final

from corral.scheduler.config import args as a
from corral.scheduler.config.decode import parse_duration
from corral.scheduler.config.errors import FieldError, FieldPath, field_error, quote
from corral.scheduler.config.names import check_qualified_name

MAX_CUSTOM_PRIORITY_SCORE: Final = 10
SCORING_STRATEGIES: Final = ("LeastAllocated", "MostAllocated", "RequestedToCapacityRatio")
NODE_SELECTOR_OPERATORS: Final = ("DoesNotExist", "Exists", "Gt", "In", "Lt", "NotIn")
_Errs = list[FieldError]


def _not_supported(path: FieldPath, value: object, allowed: tuple[str, ...]) -> FieldError:
    return field_error(
        path,
        f"unsupported value {quote(value)}: supported values: " + ", ".join(map(quote, allowed)),
    )


def _label_name(path: FieldPath, value: str) -> _Errs:
    return [field_error(path, f"{quote(value)}: {m}") for m in check_qualified_name(value)]


def validate_default_preemption(path: FieldPath, args: a.DefaultPreemptionArgs) -> _Errs:
    errs: _Errs = []
    pct = args.min_candidate_nodes_percentage or 0
    absolute = args.min_candidate_nodes_absolute or 0
    if not 0 <= pct <= 100:
        errs.append(
            field_error(
                path.child("minCandidateNodesPercentage"), f"{pct}: not in valid range [0, 100]"
            )
        )
    if absolute < 0:
        errs.append(
            field_error(
                path.child("minCandidateNodesAbsolute"), f"{absolute}: not in valid range [0, inf)"
            )
        )
    if pct == 0 and absolute == 0:
        errs.append(
            field_error(
                path.child("minCandidateNodesPercentage"),
                "cannot be zero at the same time as minCandidateNodesAbsolute",
            )
        )
        errs.append(
            field_error(
                path.child("minCandidateNodesAbsolute"),
                "cannot be zero at the same time as minCandidateNodesPercentage",
            )
        )
    return errs


def validate_inter_pod_affinity(path: FieldPath, args: a.InterPodAffinityArgs) -> _Errs:
    w = args.hard_pod_affinity_weight or 0
    if not 0 <= w <= 100:
        return [
            field_error(path.child("hardPodAffinityWeight"), f"{w}: not in valid range [0, 100]")
        ]
    return []


def _validate_requirements(
    path: FieldPath, reqs: list[a.NodeSelectorRequirement], *, fields: bool
) -> _Errs:
    errs: _Errs = []
    for i, req in enumerate(reqs):
        p = path.index(i)
        if req.operator not in NODE_SELECTOR_OPERATORS:
            errs.append(_not_supported(p.child("operator"), req.operator, NODE_SELECTOR_OPERATORS))
            continue
        if fields:
            if req.key != "metadata.name":
                errs.append(
                    field_error(
                        p.child("key"),
                        f'{quote(req.key)}: unsupported field selector key; use "metadata.name"',
                    )
                )
            if req.operator not in ("In", "NotIn") or len(req.values) != 1:
                errs.append(
                    field_error(
                        p, "metadata.name requires operator In or NotIn and exactly one value"
                    )
                )
            continue
        errs += _label_name(p.child("key"), req.key)
        n = len(req.values)
        if req.operator in ("In", "NotIn") and n == 0:
            errs.append(
                field_error(
                    p.child("values"), f"must be specified when operator is {quote(req.operator)}"
                )
            )
        elif req.operator in ("Exists", "DoesNotExist") and n:
            errs.append(
                field_error(
                    p.child("values"),
                    f"may not be specified when operator is {quote(req.operator)}",
                )
            )
        elif req.operator in ("Gt", "Lt"):
            if n != 1:
                errs.append(
                    field_error(
                        p.child("values"),
                        f"must be specified single value when operator is {quote(req.operator)}",
                    )
                )
            elif not _is_int(req.values[0]):
                errs.append(
                    field_error(
                        p.child("values").index(0), f"{quote(req.values[0])}: must be an integer"
                    )
                )
    return errs


def _is_int(text: str) -> bool:
    try:
        int(text, 10)
    except ValueError:
        return False
    return True


def _validate_term(path: FieldPath, term: a.NodeSelectorTerm) -> _Errs:
    return _validate_requirements(
        path.child("matchExpressions"), term.match_expressions, fields=False
    ) + _validate_requirements(path.child("matchFields"), term.match_fields, fields=True)


def validate_node_affinity(path: FieldPath, args: a.NodeAffinityArgs) -> _Errs:
    aff = args.added_affinity
    if aff is None:
        return []
    errs: _Errs = []
    p = path.child("addedAffinity")
    req = aff.required_during_scheduling_ignored_during_execution
    if req is not None:
        rp = p.child("requiredDuringSchedulingIgnoredDuringExecution", "nodeSelectorTerms")
        if not req.node_selector_terms:
            errs.append(field_error(rp, "must have at least one node selector term"))
        for i, term in enumerate(req.node_selector_terms):
            errs += _validate_term(rp.index(i), term)
    pp = p.child("preferredDuringSchedulingIgnoredDuringExecution")
    for i, pref in enumerate(aff.preferred_during_scheduling_ignored_during_execution):
        if not 1 <= pref.weight <= 100:
            errs.append(
                field_error(
                    pp.index(i).child("weight"), f"{pref.weight}: must be in the range 1-100"
                )
            )
        errs += _validate_term(pp.index(i).child("preference"), pref.preference)
    return errs


def validate_balanced_allocation(
    path: FieldPath, args: a.NodeResourcesBalancedAllocationArgs
) -> _Errs:
    errs: _Errs = []
    seen: set[str] = set()
    for i, r in enumerate(args.resources):
        p = path.child("resources").index(i)
        if r.name in seen:
            errs.append(field_error(p.child("name"), f"duplicate value {quote(r.name)}"))
        seen.add(r.name)
        if r.weight != 1:
            errs.append(field_error(p.child("weight"), f"{r.weight}: must be 1"))
    return errs


def _validate_shape(path: FieldPath, shape: list[a.UtilizationShapePoint]) -> _Errs:
    if not shape:
        return [field_error(path, "at least one point must be specified")]
    errs: _Errs = []
    for i in range(1, len(shape)):
        if shape[i - 1].utilization >= shape[i].utilization:
            errs.append(
                field_error(
                    path.index(i).child("utilization"),
                    f"{shape[i].utilization}: values must be sorted in increasing order",
                )
            )
            break
    for i, pt in enumerate(shape):
        if not 0 <= pt.utilization <= 100:
            errs.append(
                field_error(
                    path.index(i).child("utilization"),
                    f"{pt.utilization}: not in valid range [0, 100]",
                )
            )
        if not 0 <= pt.score <= MAX_CUSTOM_PRIORITY_SCORE:
            errs.append(
                field_error(
                    path.index(i).child("score"),
                    f"{pt.score}: not in valid range [0, {MAX_CUSTOM_PRIORITY_SCORE}]",
                )
            )
    return errs


def validate_fit(path: FieldPath, args: a.NodeResourcesFitArgs) -> _Errs:
    errs: _Errs = []
    for i, res in enumerate(args.ignored_resources):
        errs += _label_name(path.child("ignoredResources").index(i), res)
    for i, group in enumerate(args.ignored_resource_groups):
        p = path.child("ignoredResourceGroups").index(i)
        if "/" in group:
            errs.append(field_error(p, f"{quote(group)}: resource group name can't contain '/'"))
        errs += _label_name(p, group)
    sp = path.child("scoringStrategy")
    s = args.scoring_strategy
    if s is None:
        return [*errs, field_error(sp, "required")]
    if s.type not in SCORING_STRATEGIES:
        errs.append(_not_supported(sp.child("type"), s.type, SCORING_STRATEGIES))
    for i, r in enumerate(s.resources):
        if r.weight is None or not 0 < r.weight <= 100:
            errs.append(
                field_error(
                    sp.child("resources").index(i).child("weight"),
                    f"{r.weight}: resource weight of {r.name} not in valid range (0, 100]",
                )
            )
    rp = sp.child("requestedToCapacityRatio")
    if s.type == "RequestedToCapacityRatio":
        if s.requested_to_capacity_ratio is None:
            errs.append(field_error(rp, "must be specified when type is RequestedToCapacityRatio"))
        else:
            errs += _validate_shape(rp.child("shape"), s.requested_to_capacity_ratio.shape)
    elif s.requested_to_capacity_ratio is not None:
        errs.append(field_error(rp, "must not be set when type is not RequestedToCapacityRatio"))
    return errs


def validate_spread(path: FieldPath, args: a.PodTopologySpreadArgs) -> _Errs:
    errs: _Errs = []
    dt = args.defaulting_type
    if dt not in ("System", "List"):
        errs.append(_not_supported(path.child("defaultingType"), dt, ("List", "System")))
    elif dt == "System" and args.default_constraints:
        errs.append(
            field_error(
                path.child("defaultingType"), 'must be "List" when defaultConstraints are set'
            )
        )
    cp = path.child("defaultConstraints")
    seen: set[tuple[str, str]] = set()
    for i, c in enumerate(args.default_constraints):
        p = cp.index(i)
        if c.max_skew <= 0:
            errs.append(
                field_error(p.child("maxSkew"), f"{c.max_skew}: not in valid range (0, inf)")
            )
        if not c.topology_key:
            errs.append(field_error(p.child("topologyKey"), "required: can not be empty"))
        else:
            errs += _label_name(p.child("topologyKey"), c.topology_key)
        if c.when_unsatisfiable not in ("DoNotSchedule", "ScheduleAnyway"):
            errs.append(
                _not_supported(
                    p.child("whenUnsatisfiable"),
                    c.when_unsatisfiable,
                    ("DoNotSchedule", "ScheduleAnyway"),
                )
            )
        if c.label_selector is not None:
            errs.append(
                field_error(
                    p.child("labelSelector"),
                    "forbidden: a default constraint must not set a selector (deduced per pod)",
                )
            )
        key = (c.topology_key, c.when_unsatisfiable)
        if key in seen:
            errs.append(field_error(p, f"duplicate value {{{key[0]}, {key[1]}}}"))
        seen.add(key)
    return errs


def validate_volume_binding(path: FieldPath, args: a.VolumeBindingArgs) -> _Errs:
    errs: _Errs = []
    if (args.bind_timeout_seconds or 0) < 0:
        errs.append(
            field_error(
                path.child("bindTimeoutSeconds"),
                f"{args.bind_timeout_seconds}: should not be a negative value",
            )
        )
    # StorageCapacityScoring is on from 1.37: the (defaulted) shape is validated.
    errs += _validate_shape(path.child("shape"), args.shape or [])
    return errs


def validate_dynamic_resources(path: FieldPath, args: a.DynamicResourcesArgs) -> _Errs:
    errs: _Errs = []
    if args.filter_timeout is not None and parse_duration(args.filter_timeout) < 0:
        errs.append(
            field_error(
                path.child("filterTimeout"), f"{args.filter_timeout}: must be zero or positive"
            )
        )
    if args.binding_timeout is not None and parse_duration(args.binding_timeout) < 1:
        errs.append(
            field_error(
                path.child("bindingTimeout"), f"{args.binding_timeout}: must be at least 1 second"
            )
        )
    return errs


def validate_check_pod_count_limit(path: FieldPath, args: a.CheckPodCountLimitArgs) -> _Errs:
    if args.pod_count_limit is None:
        return [
            field_error(
                path.child("podCountLimit"),
                "required: how many of this scheduler's pods one node may run (an integer >= 1)",
            )
        ]
    if args.pod_count_limit < 1:
        return [field_error(path.child("podCountLimit"), f"{args.pod_count_limit}: must be >= 1")]
    return []


def validate_check_pod_limit_resources(
    path: FieldPath, args: a.CheckPodLimitResourcesArgs
) -> _Errs:
    p = path.child("limitRatio")
    if not args.limit_ratio:
        return [field_error(p, "required: at least one resource with its ratio, e.g. {cpu: 0.7}")]
    errs: _Errs = []
    for name, ratio in args.limit_ratio.items():
        errs += _label_name(p.key(name), name)
        if not ratio > 0:
            errs.append(field_error(p.key(name), f"{ratio}: must be greater than 0"))
    return errs


def validate_tenant_spread(path: FieldPath, args: a.TenantSpreadArgs) -> _Errs:
    return _label_name(path.child("labelKey"), args.label_key or "")


# The node annotation LvmVolumeCapacity reads, per device class (TopoLVM's convention).
LVM_CAPACITY_ANNOTATION_PREFIX: Final = "capacity.topolvm.io/"


def validate_lvm_volume_capacity(path: FieldPath, args: a.LvmVolumeCapacityArgs) -> _Errs:
    errs: _Errs = []
    for i, provisioner in enumerate(args.provisioners):
        if not provisioner:
            errs.append(field_error(path.child("provisioners").index(i), "must not be empty"))
    device_class = args.default_device_class or ""
    key = LVM_CAPACITY_ANNOTATION_PREFIX + device_class
    errs += [
        field_error(
            path.child("defaultDeviceClass"),
            f"{quote(device_class)}: not usable in the node annotation {quote(key)}: {m}",
        )
        for m in check_qualified_name(key)
    ]
    return errs


# --- scheduler-plugins (apis/config/validation/validation_pluginargs.go) ------------------------
# SP validates these in each plugin's New; Corral validates them where it validates every args
# block (config load, SchedulerProfile admission), with SP's messages.

SP_ALLOCATABLE_MODES: Final = ("Least", "Most")
SP_METADATA_SOURCES: Final = ("Label", "Annotation")
SP_METADATA_TYPES: Final = ("Number", "Timestamp")
SP_METADATA_STRATEGIES: Final = ("Highest", "Lowest", "Newest", "Oldest")


def validate_node_resources_allocatable(
    path: FieldPath, args: a.NodeResourcesAllocatableArgs
) -> _Errs:
    errs: _Errs = []
    for i, r in enumerate(args.resources):
        w = r.weight or 0
        if w <= 0:
            msg = f"{w}: resource weight of {r.name} should be a positive value, got :{w}"
            errs.append(field_error(path.child("resources").index(i).child("weight"), msg))
    if args.mode not in SP_ALLOCATABLE_MODES:
        errs.append(
            field_error(path.child("mode"), f"{quote(args.mode)}: invalid support ModeType")
        )
    return errs


def validate_preemption_toleration(path: FieldPath, args: a.PreemptionTolerationArgs) -> _Errs:
    """SP validates these as upstream's DefaultPreemptionArgs."""
    return validate_default_preemption(
        path,
        a.DefaultPreemptionArgs(
            args.min_candidate_nodes_percentage, args.min_candidate_nodes_absolute
        ),
    )


def validate_coscheduling(path: FieldPath, args: a.CoschedulingArgs) -> _Errs:
    errs: _Errs = []
    # SP's wording: a negative value "must be greater than 0" (0 itself is accepted).
    for name, value in (
        ("permitWaitingTimeSeconds", args.permit_waiting_time_seconds or 0),
        ("podGroupBackoffSeconds", args.pod_group_backoff_seconds or 0),
    ):
        if value < 0:
            errs.append(field_error(path.child(name), f"{value}: must be greater than 0"))
    pct = args.pod_group_reject_percentage or 0
    if not 0 <= pct <= 100:
        errs.append(
            field_error(path.child("podGroupRejectPercentage"), f"{pct}: must be between 0 and 100")
        )
    return errs


NRT_SCORING_STRATEGIES: Final = (
    "MostAllocated",
    "BalancedAllocation",
    "LeastAllocated",
    "LeastNUMANodes",
)
NRT_PREEMPTION_MODES: Final = ("Disabled", "Enabled")


def validate_node_resource_topology_match(
    path: FieldPath, args: a.NodeResourceTopologyMatchArgs
) -> _Errs:
    """SP ``ValidateNodeResourceTopologyMatchArgs``: the strategy type and the preemption mode
    (SP checks neither the weights nor the cache settings)."""
    errs: _Errs = []
    kind = args.scoring_strategy.type if args.scoring_strategy is not None else ""
    if kind not in NRT_SCORING_STRATEGIES:
        errs.append(
            field_error(
                path.child("scoringStrategy").child("type"),
                f"{quote(kind or '')}: invalid ScoringStrategyType",
            )
        )
    if args.preemption_mode is not None and args.preemption_mode not in NRT_PREEMPTION_MODES:
        errs.append(
            field_error(
                path.child("preemptionMode"),
                f"{quote(args.preemption_mode)}: invalid PreemptionMode",
            )
        )
    return errs


def validate_node_metadata(path: FieldPath, args: a.NodeMetadataArgs) -> _Errs:
    errs: _Errs = []
    key, source = args.metadata_key or "", args.metadata_source or ""
    kind, strategy = args.metadata_type or "", args.scoring_strategy or ""
    if not key:
        errs.append(
            field_error(path.child("metadataKey"), f"{quote(key)}: metadataKey cannot be empty")
        )
    if source not in SP_METADATA_SOURCES:
        errs.append(
            field_error(
                path.child("metadataSource"),
                f'{quote(source)}: metadataSource must be either "Label" or "Annotation"',
            )
        )
    if kind not in SP_METADATA_TYPES:
        errs.append(
            field_error(
                path.child("metadataType"),
                f'{quote(kind)}: metadataType must be either "Number" or "Timestamp"',
            )
        )
    sp = path.child("scoringStrategy")
    if strategy not in SP_METADATA_STRATEGIES:
        errs.append(
            field_error(
                sp,
                f"{quote(strategy)}: scoringStrategy must be one of "
                '"Highest", "Lowest", "Newest", or "Oldest"',
            )
        )
    if kind == "Number" and strategy in ("Newest", "Oldest"):
        errs.append(
            field_error(
                sp,
                f'{quote(strategy)}: scoringStrategy "Newest" and "Oldest" are only valid for '
                'metadataType "Timestamp"',
            )
        )
    if kind == "Timestamp" and strategy in ("Highest", "Lowest"):
        errs.append(
            field_error(
                sp,
                f'{quote(strategy)}: scoringStrategy "Highest" and "Lowest" are only valid for '
                'metadataType "Number"',
            )
        )
    return errs
