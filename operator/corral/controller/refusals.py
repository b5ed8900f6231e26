"""Why a profile cannot be served: one function for the admission webhook and the reconcile.

Contract: :func:`check` returns the validated profile, or the refusal that stalls it (and that
the webhook answers with): every field-path error of ``corral validate`` (the same
:func:`corral.api.check_profile`), a schedulerName the operator reserves, a schedulerName or a
Lease (namespace/name) an earlier profile holds. Pure over the bodies given.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from corral.api import Catalog, SchedulerProfile, check_profile
from corral.controller import guards
from corral.controller.settings import Settings


@dataclass(frozen=True, slots=True)
class Refusal:
    reason: str  # the Stalled condition's reason
    message: str


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
    return profile, None
