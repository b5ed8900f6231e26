"""Guards between profiles: one scheduler per schedulerName, and node pools that overlap.

Contract (pure functions over raw profile bodies, so they work for invalid profiles too):
- Two profiles claiming the same schedulerName: the earlier one (creationTimestamp, then name)
  keeps it; every later one is refused. The earlier one is never affected by a later claim.
- Two profiles electing their leader on the same Lease (namespace/name): the same rule, the
  earlier one keeps it (sharing a Lease would leave one scheduler silently idle).
- Two profiles assigning pods (``tenancy.assignPods``) in the same listed namespace: the same
  rule, the earlier one keeps it (the pod webhook could not tell which scheduler a pod gets).
  Namespaces a selector matches can only be compared per pod: the webhook refuses those pods.
- Names the operator is configured to reserve (``default-scheduler`` and any scheduler running
  outside Corral) are refused.
- Two profiles whose ``tenancy.nodeSelector``s can match the same node (no shared key with
  different values) overlap: both get an informational condition, neither is refused.
  Schedulers sharing nodes can overcommit them, but that may be intended. A profile without a
  node selector serves every node; it is not reported, as that is the ordinary cluster-wide case.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

NOT_YET_CREATED = "~"  # sorts after every RFC 3339 timestamp


@dataclass(frozen=True, slots=True)
class Claim:
    profile: str
    scheduler_name: str
    created: str
    node_selector: Mapping[str, str] = field(default_factory=dict)
    deleting: bool = False
    # (spec.namespace, Lease name) when leader election is on; "" namespace: the operator's.
    lease: tuple[str, str] | None = None
    # tenancy.namespaces when tenancy.assignPods is on.
    assigns: frozenset[str] = frozenset()

    @property
    def order(self) -> tuple[str, str]:
        return (self.created, self.profile)


def claim_of(body: Mapping[str, Any]) -> Claim:
    meta = body.get("metadata") or {}
    spec = body.get("spec") or {}
    name = str(meta.get("name", ""))
    tenancy = spec.get("tenancy") if isinstance(spec, Mapping) else None
    selector = tenancy.get("nodeSelector") if isinstance(tenancy, Mapping) else None
    scheduler = spec.get("schedulerName") if isinstance(spec, Mapping) else None
    assigns: frozenset[str] = frozenset()
    if isinstance(tenancy, Mapping) and tenancy.get("assignPods") is True:
        listed = tenancy.get("namespaces")
        assigns = frozenset(str(n) for n in listed) if isinstance(listed, list) else frozenset()
    return Claim(
        assigns=assigns,
        lease=_lease_of(name, spec if isinstance(spec, Mapping) else {}),
        profile=name,
        scheduler_name=str(scheduler or name),
        # A profile not created yet (under admission) comes after every existing one.
        created=str(meta.get("creationTimestamp") or NOT_YET_CREATED),
        node_selector=dict(selector) if isinstance(selector, Mapping) else {},
        deleting=bool(meta.get("deletionTimestamp")),
    )


def _lease_of(name: str, spec: Mapping[str, Any]) -> tuple[str, str] | None:
    le = spec.get("leaderElection")
    le = le if isinstance(le, Mapping) else {}
    if le.get("leaderElect") is False:
        return None
    return (str(spec.get("namespace") or ""), str(le.get("resourceName") or name))


def _first_rival(claim: Claim, claims: Iterable[Claim], same: Any) -> str | None:
    rivals = [c for c in claims if c.profile != claim.profile and not c.deleting and same(c)]
    first = min(rivals, key=lambda c: c.order, default=None)
    if first is not None and first.order < claim.order:
        return first.profile
    return None


def name_holder(claim: Claim, claims: Iterable[Claim]) -> str | None:
    """The profile that holds ``claim``'s schedulerName when it is not ``claim`` itself."""
    return _first_rival(claim, claims, lambda c: c.scheduler_name == claim.scheduler_name)


def lease_holder(claim: Claim, claims: Iterable[Claim], default_namespace: str) -> str | None:
    """The profile that holds ``claim``'s Lease when it is not ``claim`` itself."""

    def where(c: Claim) -> tuple[str, str] | None:
        return None if c.lease is None else (c.lease[0] or default_namespace, c.lease[1])

    mine = where(claim)
    return None if mine is None else _first_rival(claim, claims, lambda c: where(c) == mine)


def assign_holder(claim: Claim, claims: Iterable[Claim]) -> tuple[str, str] | None:
    """``(profile, namespace)``: an earlier profile that assigns pods in one of the namespaces
    ``claim`` assigns, when there is one."""
    if not claim.assigns:
        return None
    others = list(claims)
    holder = _first_rival(claim, others, lambda c: bool(c.assigns & claim.assigns))
    if holder is None:
        return None
    theirs = next(c.assigns for c in others if c.profile == holder)
    return holder, min(theirs & claim.assigns)


def selectors_overlap(a: Mapping[str, str], b: Mapping[str, str]) -> bool:
    if not a or not b:
        return False
    return all(b[key] == value for key, value in a.items() if key in b)


def overlapping(claim: Claim, claims: Iterable[Claim]) -> list[str]:
    return sorted(
        c.profile
        for c in claims
        if c.profile != claim.profile
        and not c.deleting
        and selectors_overlap(claim.node_selector, c.node_selector)
    )


def related(changed: Iterable[Claim], claims: Iterable[Claim]) -> set[str]:
    """Profiles whose guard outcome may change when ``changed`` (old and new versions of one
    profile) changes: those sharing a schedulerName, a Lease name, a node pool or an assigned
    namespace with either version."""
    versions = list(changed)
    out: set[str] = set()
    for c in claims:
        for v in versions:
            if c.profile == v.profile:
                continue
            same_lease = c.lease is not None and c.lease[1:] == (v.lease or ("", ""))[1:]
            if (
                c.scheduler_name == v.scheduler_name
                or same_lease
                or selectors_overlap(c.node_selector, v.node_selector)
                or c.assigns & v.assigns
            ):
                out.add(c.profile)
    return out
