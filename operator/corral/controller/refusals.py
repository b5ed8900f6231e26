"""Why a profile cannot be served: one function for the admission webhook and the reconcile.

Contract: :func:`check` returns the validated profile, or the refusal that stalls it (and that
the webhook answers with): every field-path error of ``corral validate`` (the same
:func:`corral.api.check_profile`), a schedulerName the operator reserves, a schedulerName or a
Lease (namespace/name) an earlier profile holds, a namespace an earlier profile assigns pods in.
Pure over the bodies given. :func:`advisories` are what admission warns about but admits
(``kubectl apply`` prints them as ``Warning:`` lines).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Final

from corral.api import Catalog, SchedulerProfile, check_profile
from corral.controller import guards
from corral.controller.settings import Settings


@dataclass(frozen=True, slots=True)
class Refusal:
    reason: str  # the Stalled condition's reason
    message: str


SELECTOR_ONLY: Final = (
    "spec.tenancy.namespaceSelector without spec.tenancy.namespaces narrows the pods this "
    "scheduler serves, but it may still bind pods in every namespace (its binding rights are "
    "cluster-wide): list the namespaces too for a security boundary"
)


def advisories(body: Mapping[str, Any]) -> list[str]:
    spec = body.get("spec") or {}
    tenancy = spec.get("tenancy") if isinstance(spec, Mapping) else None
    if not isinstance(tenancy, Mapping):
        return []
    if tenancy.get("namespaceSelector") is not None and not tenancy.get("namespaces"):
        return [SELECTOR_ONLY]
    return []


def check(
    body: Mapping[str, Any],
    *,
    settings: Settings,
    catalog: Catalog,
    claims: Iterable[guards.Claim],
) -> tuple[SchedulerProfile | None, Refusal | None]:
    profile, errors = check_profile(body, operator=settings.operator_defaults, catalog=catalog)
    if profile is None:
        listed = "; ".join(str(e) for e in errors)
        return None, Refusal("InvalidSpec", f"the profile is invalid: {listed}")
    sched = profile.spec.scheduler_name or profile.name
    if sched in settings.reserved_scheduler_names:
        return profile, Refusal(
            "SchedulerNameReserved",
            f"spec.schedulerName: {sched!r} belongs to a scheduler already running in the "
            "cluster; choose another name",
        )
    claim = guards.claim_of(body)
    others = list(claims)
    holder = guards.name_holder(claim, others)
    if holder is not None:
        return profile, Refusal(
            "SchedulerNameConflict",
            f"spec.schedulerName: {sched!r} is already served by SchedulerProfile {holder!r} "
            "(created earlier); choose another schedulerName",
        )
    holder = guards.lease_holder(claim, others, settings.namespace)
    if holder is not None:
        le = profile.spec.leader_election
        lease = f"{profile.spec.namespace}/{le.resource_name if le else profile.name}"
        return profile, Refusal(
            "LeaseConflict",
            f"spec.leaderElection.resourceName: Lease {lease!r} is already used by "
            f"SchedulerProfile {holder!r} (created earlier); two schedulers on one Lease would "
            "leave one of them idle: choose another resourceName or namespace",
        )
    assigned = guards.assign_holder(claim, others)
    if assigned is not None:
        holder, namespace = assigned
        return profile, Refusal(
            "AssignPodsConflict",
            f"spec.tenancy.assignPods: SchedulerProfile {holder!r} (created earlier) already "
            f"assigns the pods of namespace {namespace!r}; a pod there can get only one "
            "scheduler: drop the namespace or assignPods",
        )
    return profile, None
