"""Validation of a defaulted SchedulerProfile, with field paths.

Contract: :func:`validate_profile` returns every problem of a profile that went through
:func:`corral.api.defaults.apply_defaults`, each as ``FieldError(path, message)`` where the
path points into the user's document and the message says what is allowed. The CRD's schema
and CEL rules refuse a subset of these at admission; this is the complete set.
"""

from __future__ import annotations

from typing import Final

from corral.api import validation_k8s as k8s
from corral.api.catalog import Catalog, default_catalog
from corral.api.image_reference import check_image_reference
from corral.api.types import DeploymentSpec, SchedulerProfile, Tenancy
from corral.api.validation_plugins import validate_extenders, validate_plugins
from corral.scheduler.config import FieldError, FieldPath, features, parse_duration
from corral.scheduler.config.errors import field_error, quote
from corral.scheduler.config.names import (
    check_dns1035_label,
    check_dns1123_label,
    check_dns1123_subdomain,
    check_qualified_name,
)
from corral.scheduler.config.validation import backoff_range_errors

# Children are named "corral-<name>-<suffix>" (at most 16 more characters) and a Service name
# is a DNS-1035 label of at most 63 characters.
MAX_PROFILE_NAME: Final = 40
RESERVED_SCHEDULER_NAMES: Final = ("default-scheduler",)
PULL_POLICIES: Final = ("Always", "IfNotPresent", "Never")
# client-go's NewLeaderElector requires renewDeadline > JitterFactor * retryPeriod.
LEADER_ELECTION_JITTER: Final = 1.2
_Errs = list[FieldError]


def validate_profile(
    profile: SchedulerProfile,
    catalog: Catalog | None = None,
    *,
    allow_system_leases: bool = False,
) -> _Errs:
    """Every rule's errors. ``allow_system_leases``: the operator's flag letting a profile's
    Lease live in kube-system or kube-node-lease (:func:`_validate_lease`)."""
    cat = catalog or default_catalog()
    errs: _Errs = []
    name = profile.metadata.name
    np = FieldPath.root("metadata", "name")
    errs += k8s.check_name(np, name, check_dns1035_label)
    if len(name) > MAX_PROFILE_NAME:
        errs.append(
            field_error(
                np,
                f"must be no more than {MAX_PROFILE_NAME} characters "
                "(child objects are named after it)",
            )
        )
    spec = profile.spec
    sp = FieldPath.root("spec")
    sched = spec.scheduler_name or ""
    errs += k8s.check_name(sp.child("schedulerName"), sched, check_dns1123_subdomain)
    if sched in RESERVED_SCHEDULER_NAMES:
        errs.append(
            field_error(
                sp.child("schedulerName"),
                f"{quote(sched)} is reserved for the cluster's own scheduler; choose another name",
            )
        )
    errs += k8s.check_name(sp.child("namespace"), spec.namespace or "", check_dns1123_label)
    errs += k8s.check_name(sp.child("image"), spec.image or "", check_image_reference)
    replicas = spec.replicas or 0
    if replicas < 1:
        errs.append(field_error(sp.child("replicas"), f"{replicas}: must be at least 1"))
    errs += _validate_leader_election(sp, profile)
    if not allow_system_leases:
        errs += _validate_lease(sp, profile)
    pct = spec.percentage_of_nodes_to_score
    if pct is not None and not 0 <= pct <= 100:
        errs.append(
            field_error(
                sp.child("percentageOfNodesToScore"),
                f"{pct}: must be between 0 and 100 (0 means adaptive)",
            )
        )
    initial = spec.pod_initial_backoff_seconds or 0
    if initial < 1:
        errs.append(
            field_error(sp.child("podInitialBackoffSeconds"), f"{initial}: must be at least 1")
        )
    errs += backoff_range_errors(sp, initial, spec.pod_max_backoff_seconds or 0)
    if (spec.pod_max_backoff_seconds or 0) < initial:
        errs.append(
            field_error(
                sp.child("podMaxBackoffSeconds"),
                f"{spec.pod_max_backoff_seconds}: must be at least "
                f"podInitialBackoffSeconds ({initial})",
            )
        )
    errs += validate_feature_gates(sp.child("featureGates"), spec.feature_gates)
    errs += validate_plugins(sp, spec, cat)
    errs += validate_extenders(sp.child("extenders"), spec.extenders)
    if spec.tenancy is not None:
        errs += _validate_tenancy(sp.child("tenancy"), spec.tenancy)
    if spec.deployment is not None:
        errs += _validate_deployment(sp.child("deployment"), spec.deployment)
    if spec.shadow is not None:
        errs += _validate_shadow(sp, spec.shadow.scheduler_name, sched, spec.tenancy)
    return errs


def _validate_shadow(sp: FieldPath, live: str, own: str, tenancy: Tenancy | None) -> _Errs:
    """The live scheduler's name: any valid schedulerName (``default-scheduler`` included),
    but not the shadow's own. A shadow never places a pod, so no pod may be given to it: not
    by naming it (its own name) and not by the pod webhook (``tenancy.assignPods``)."""
    path = sp.child("shadow", "schedulerName")
    errs = k8s.check_name(path, live, check_dns1123_subdomain)
    if live and live == own:
        errs.append(
            field_error(
                path,
                f"{quote(live)} is this profile's own spec.schedulerName; name the live "
                "scheduler to shadow",
            )
        )
    if tenancy is not None and tenancy.assign_pods:
        errs.append(
            field_error(
                sp.child("tenancy", "assignPods"),
                "must not be true for a shadow (spec.shadow): a shadow places no pod, so the "
                "pods given to it would stay Pending",
            )
        )
    return errs


def validate_feature_gates(path: FieldPath, gates: dict[str, bool]) -> _Errs:
    """kube-scheduler's refusals, then Corral's (a gate its engine runs only at its default),
    each at the gate's own key (a dependency that is off: at the gate that needs it)."""
    return [
        field_error(path.key(p.gate) if p.gate in gates else path, p.message)
        for p in features.problems(gates)
    ]


# Namespaces whose Leases other components hold: the control plane's (kube-scheduler,
# kube-controller-manager, cloud-controller-manager) and every kubelet's heartbeat.
SYSTEM_LEASE_NAMESPACES: Final = ("kube-system", "kube-node-lease")
ALLOW_SYSTEM_LEASES_FLAG: Final = "--allow-system-leases"


def _validate_lease(sp: FieldPath, profile: SchedulerProfile) -> _Errs:
    """The scheduler's Lease lives in ``spec.namespace`` and its Role grants update on it
    (``corral.render.rbac``): not among other components' Leases, unless the operator allows
    it (``--allow-system-leases``: a Corral engine replacing kube-scheduler, say). A Lease of
    another profile is refused by the operator (``corral.controller.refusals``)."""
    namespace = profile.spec.namespace or ""
    if namespace not in SYSTEM_LEASE_NAMESPACES:
        return []
    le = profile.spec.leader_election
    name = (le.resource_name if le else None) or profile.metadata.name
    return [
        field_error(
            sp.child("namespace"),
            f"{quote(namespace)}: the scheduler's Lease {quote(namespace + '/' + name)}, and a "
            "Role granting update on it, would stand among the Leases other components hold "
            f"there; refused unless the operator runs with {ALLOW_SYSTEM_LEASES_FLAG}",
        )
    ]


def _validate_leader_election(sp: FieldPath, profile: SchedulerProfile) -> _Errs:
    spec = profile.spec
    le = spec.leader_election
    lp = sp.child("leaderElection")
    errs: _Errs = []
    if le is None:
        return errs
    if (spec.replicas or 0) > 1 and not le.leader_elect:
        errs.append(
            field_error(
                lp.child("leaderElect"),
                f"must be true when replicas is {spec.replicas}: without leader election "
                "several replicas would schedule the same pods",
            )
        )
    errs += k8s.check_name(
        lp.child("resourceName"), le.resource_name or "", check_dns1123_subdomain
    )
    lease, renew, retry = (
        parse_duration(d or "0s") for d in (le.lease_duration, le.renew_deadline, le.retry_period)
    )
    for key, seconds, text in (
        ("leaseDuration", lease, le.lease_duration),
        ("renewDeadline", renew, le.renew_deadline),
        ("retryPeriod", retry, le.retry_period),
    ):
        if seconds <= 0:
            errs.append(field_error(lp.child(key), f"{text}: must be greater than zero"))
    if lease <= renew:
        errs.append(
            field_error(
                lp.child("leaseDuration"),
                f"{le.lease_duration}: must be greater than renewDeadline ({le.renew_deadline})",
            )
        )
    if renew <= LEADER_ELECTION_JITTER * retry:
        errs.append(
            field_error(
                lp.child("renewDeadline"),
                f"{le.renew_deadline}: must be greater than 1.2 x retryPeriod ({le.retry_period})",
            )
        )
    return errs


def _validate_tenancy(path: FieldPath, t: Tenancy) -> _Errs:
    errs: _Errs = []
    seen: set[str] = set()
    for i, ns in enumerate(t.namespaces):
        errs += k8s.check_name(path.child("namespaces").index(i), ns, check_dns1123_label)
        if ns in seen:
            errs.append(
                field_error(path.child("namespaces").index(i), f"duplicate value {quote(ns)}")
            )
        seen.add(ns)
    if t.namespace_selector is not None:
        errs += k8s.check_label_selector(path.child("namespaceSelector"), t.namespace_selector)
    errs += k8s.check_labels(path.child("nodeSelector"), t.node_selector)
    if not (t.namespaces or t.namespace_selector or t.node_selector):
        errs.append(
            field_error(
                path,
                "sets nothing: give namespaces, namespaceSelector and/or nodeSelector, "
                "or remove tenancy",
            )
        )
    elif t.assign_pods and not (t.namespaces or t.namespace_selector):
        errs.append(
            field_error(
                path.child("assignPods"),
                "needs namespaces or namespaceSelector: it gives this scheduler to the pods "
                "created there",
            )
        )
    return errs


def _validate_deployment(path: FieldPath, d: DeploymentSpec) -> _Errs:
    errs: _Errs = []
    if d.resources is not None:
        errs += k8s.check_resources(path.child("resources"), d.resources)
    errs += k8s.check_labels(path.child("nodeSelector"), d.node_selector)
    errs += k8s.check_tolerations(path.child("tolerations"), d.tolerations)
    if d.priority_class_name is not None:
        errs += k8s.check_name(
            path.child("priorityClassName"), d.priority_class_name, check_dns1123_subdomain
        )
    if d.image_pull_policy is not None and d.image_pull_policy not in PULL_POLICIES:
        errs.append(
            field_error(
                path.child("imagePullPolicy"),
                f"{quote(d.image_pull_policy)}: must be one of " + ", ".join(PULL_POLICIES),
            )
        )
    for i, ref in enumerate(d.image_pull_secrets):
        errs += k8s.check_name(
            path.child("imagePullSecrets").index(i).child("name"), ref.name, check_dns1123_subdomain
        )
    for key in d.pod_annotations:
        errs += k8s.check_name(path.child("podAnnotations").key(key), key, check_qualified_name)
    return errs
