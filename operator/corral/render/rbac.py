"""The least-privilege RBAC rules of a profile, as data.

Contract:
- Cluster-wide reads (get/list/watch): nodes and pods always (resource accounting needs every
  pod on a node, whoever placed it), plus what each enabled plugin declares in the catalog, plus
  what the engine itself needs for an enabled feature gate (``features.GATE_CLUSTER_READS``:
  PodGroups with GenericWorkload), plus namespaces when ``tenancy.namespaceSelector`` is used.
  The default plugin set is the one of the profile's gates (GangScheduling with GenericWorkload).
- Writes where the scheduler may act on pods — pods/binding create, pods/status patch/update,
  events, and what plugins and enabled gates declare (preemption deletes pods; GenericWorkload
  writes PodGroup status): cluster-wide for an ordinary
  profile; with ``tenancy.namespaces`` only in those namespaces, through a Role and RoleBinding
  in each, so a tenant scheduler cannot bind anywhere else. Writes to cluster-scoped objects
  that plugins declare (VolumeBinding's PersistentVolume updates) are granted only to a profile
  without tenancy: a tenant scheduler provisions volumes and uses PVs pre-bound to its claims,
  but cannot bind (so cannot take) an Available PV.
- Secure serving: ``tokenreviews`` and ``subjectaccessreviews`` create, cluster-wide (they are
  cluster-scoped), so the engine can authenticate and authorize who scrapes ``/metrics``.
- Leader election: in the profile's namespace, Lease ``create`` (which RBAC cannot restrict by
  name) separate from ``get``/``update`` restricted to the profile's own Lease, plus events for
  the election's own Events.
- A shadow (``spec.shadow``) writes nothing about pods: the same reads and secure serving, its
  Lease (without events), and ``get``/``patch`` of its own profile's ``status`` (where
  ``status.shadow`` goes), restricted to its name. No pod writes, no Events, none of the
  plugins' writes (preemption's pod deletes, claim status, volume binding), tenancy or not.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Final, TypedDict

from corral.api import Catalog, SchedulerProfile
from corral.api.catalog import Resource
from corral.api.types import GROUP, PLURAL
from corral.scheduler import config as cfg
from corral.scheduler.config import features

READ: Final = ("get", "list", "watch")
ALWAYS_READ: Final[tuple[Resource, ...]] = (("", "nodes"), ("", "pods"))
POD_WRITES: Final[tuple[tuple[str, str, tuple[str, ...]], ...]] = (
    ("", "pods/binding", ("create",)),
    ("", "pods/status", ("patch", "update")),
    ("", "events", ("create", "patch", "update")),
    ("events.k8s.io", "events", ("create", "patch", "update")),
)

# Secure serving: the engine asks the API server who calls /metrics and whether they may.
DELEGATED_AUTH: Final[tuple[tuple[str, str, tuple[str, ...]], ...]] = (
    ("authentication.k8s.io", "tokenreviews", ("create",)),
    ("authorization.k8s.io", "subjectaccessreviews", ("create",)),
)


class PolicyRule(TypedDict, total=False):
    """An rbac.authorization.k8s.io/v1 PolicyRule, as the Role templates render it."""

    apiGroups: list[str]
    resources: list[str]
    resourceNames: list[str]
    verbs: list[str]


@dataclass(frozen=True, slots=True)
class RbacPlan:
    cluster_rules: list[PolicyRule]
    # Rules granted only in tenant namespaces; empty when the profile acts cluster-wide.
    tenant_rules: list[PolicyRule]
    tenant_namespaces: list[str]
    leader_election_rules: list[PolicyRule]
    shadow: bool = False  # read-only: no write about pods anywhere


def enabled_plugins(profile: SchedulerProfile) -> list[str]:
    merged = cfg.merge_plugins(cfg.default_plugins(profile.gates), profile.spec.plugins)
    points = (cfg.MULTI_POINT, *cfg.EXTENSION_POINTS)
    return sorted({p.name for point in points for p in merged.point(point).enabled})


def _group_rules(entries: list[tuple[str, str, tuple[str, ...]]]) -> list[PolicyRule]:
    """Merge (group, resource, verbs) into one rule per (group, verbs), sorted, deterministic."""
    verbs_by: dict[tuple[str, str], set[str]] = defaultdict(set)
    for group, resource, verbs in entries:
        verbs_by[(group, resource)].update(verbs)
    by_verbs: dict[tuple[str, tuple[str, ...]], set[str]] = defaultdict(set)
    for (group, resource), verb_set in verbs_by.items():
        by_verbs[(group, tuple(sorted(verb_set)))].add(resource)
    return [
        {"apiGroups": [group], "resources": sorted(resources), "verbs": list(verbs)}
        for (group, verbs), resources in sorted(by_verbs.items())
    ]


def shadow_status_rule(profile: SchedulerProfile) -> PolicyRule:
    return {
        "apiGroups": [GROUP],
        "resources": [f"{PLURAL}/status"],
        "resourceNames": [profile.name],
        "verbs": ["get", "patch"],
    }


def plan(profile: SchedulerProfile, catalog: Catalog) -> RbacPlan:
    shadow = profile.spec.shadow is not None
    reads: list[tuple[str, str, tuple[str, ...]]] = [(g, r, READ) for g, r in ALWAYS_READ]
    writes = list(POD_WRITES)
    for name in enabled_plugins(profile):
        info = catalog.plugins.get(name)
        if info is None:
            continue
        reads += [(g, r, READ) for g, r in info.cluster_reads]
        writes += list(info.namespaced_writes)
        if profile.spec.tenancy is None and not shadow:
            # A tenant must not rewrite other tenants' cluster-scoped objects (a PV's claimRef
            # would hand it their data): cluster-scoped writes only for an untenanted profile.
            reads += list(info.cluster_writes)
    gates = profile.gates
    for gate, gate_reads in features.GATE_CLUSTER_READS.items():
        if gates.enabled(gate):
            reads += [(g, r, READ) for g, r in gate_reads]
    for gate, gate_writes in features.GATE_NAMESPACED_WRITES.items():
        if gates.enabled(gate):
            writes += list(gate_writes)
    tenancy = profile.spec.tenancy
    if tenancy is not None and tenancy.namespace_selector is not None:
        reads.append(("", "namespaces", READ))
    namespaces = sorted(tenancy.namespaces) if tenancy is not None else []
    le = profile.spec.leader_election
    lease_name = le.resource_name if le and le.resource_name else profile.name
    leader_rules: list[PolicyRule] = [
        {"apiGroups": ["coordination.k8s.io"], "resources": ["leases"], "verbs": ["create"]},
        {
            "apiGroups": ["coordination.k8s.io"],
            "resources": ["leases"],
            "resourceNames": [lease_name],
            "verbs": ["get", "update"],
        },
        *_group_rules([(g, r, v) for g, r, v in POD_WRITES if r == "events"]),
    ]
    cluster = reads + list(DELEGATED_AUTH)
    if shadow:
        lease_only = leader_rules[:2]
        rules = [*_group_rules(cluster), shadow_status_rule(profile)]
        return RbacPlan(rules, [], [], lease_only, shadow=True)
    if namespaces:
        return RbacPlan(_group_rules(cluster), _group_rules(writes), namespaces, leader_rules)
    return RbacPlan(_group_rules(cluster + writes), [], [], leader_rules)
