"""PodTopologySpread's constraints: the pod's own, or the default ones with a selector built
from the Services, ReplicationController, ReplicaSet or StatefulSet that select the pod.

Contract (upstream ``filterTopologySpreadConstraints``, ``buildDefaultConstraints``,
``helper.DefaultSelector``): ``minDomains`` nil → 1, ``nodeAffinityPolicy`` nil → Honor,
``nodeTaintsPolicy`` nil → Ignore; ``matchLabelKeys`` values of the pod are ANDed into the
selector. Default constraints apply only to pods without constraints of their own; an empty
default selector means no constraints. Counted pods: same namespace as the incoming pod, not
terminating, matching the selector (an *empty* selector counts nothing).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from corral.scheduler.framework import labels, listers
from corral.scheduler.framework import nodeselector as ns
from corral.scheduler.framework.interface import Handle
from corral.scheduler.framework.snapshot import Snapshot
from corral.scheduler.framework.taints import (
    DO_NOT_SCHEDULE_EFFECTS,
    find_untolerated,
    tolerations_tolerate,
)
from corral.scheduler.framework.types import NodeInfo, PodInfo

HOSTNAME: Final = "kubernetes.io/hostname"
ZONE: Final = "topology.kubernetes.io/zone"
DO_NOT_SCHEDULE: Final = "DoNotSchedule"
SCHEDULE_ANYWAY: Final = "ScheduleAnyway"
HONOR: Final = "Honor"
IGNORE: Final = "Ignore"
SYSTEM: Final = "System"

Mask = npt.NDArray[np.bool_]


@dataclass(frozen=True, slots=True)
class Constraint:
    max_skew: int
    topology_key: str
    selector: labels.Selector
    min_domains: int = 1
    node_affinity_policy: str = HONOR
    node_taints_policy: str = IGNORE


# Raw (JSON-shaped) default constraints of defaultingType System (upstream plugin.go).
SYSTEM_DEFAULT_CONSTRAINTS: Final[tuple[Mapping[str, Any], ...]] = (
    {"topologyKey": HOSTNAME, "whenUnsatisfiable": SCHEDULE_ANYWAY, "maxSkew": 3},
    {"topologyKey": ZONE, "whenUnsatisfiable": SCHEDULE_ANYWAY, "maxSkew": 5},
)


def parse_constraints(
    raws: Sequence[Mapping[str, Any]], pod_labels: Mapping[str, str], action: str
) -> tuple[Constraint, ...]:
    out = []
    for raw in raws:
        if raw.get("whenUnsatisfiable") != action:
            continue
        selector = labels.parse(raw.get("labelSelector"))
        keys = raw.get("matchLabelKeys") or ()
        extra = {k: pod_labels[k] for k in keys if k in pod_labels}
        if extra:
            selector = selector.with_labels(extra)
        min_domains = raw.get("minDomains")
        out.append(
            Constraint(
                max_skew=int(raw.get("maxSkew") or 0),
                topology_key=str(raw.get("topologyKey", "")),
                selector=selector,
                min_domains=1 if min_domains is None else int(min_domains),
                node_affinity_policy=raw.get("nodeAffinityPolicy") or HONOR,
                node_taints_policy=raw.get("nodeTaintsPolicy") or IGNORE,
            )
        )
    return tuple(out)


def _get(handle: Handle | None, kind: str, namespace: str, name: str) -> Mapping[str, Any] | None:
    objects = handle.objects if handle is not None else None
    return objects.get(kind, namespace, name) if objects is not None else None


def default_selector(handle: Handle | None, pod: PodInfo) -> labels.Selector:
    """Upstream ``helper.DefaultSelector``."""
    objects = handle.objects if handle is not None else None
    merged: dict[str, str] = {}
    if objects is not None:
        for svc in objects.list(listers.SERVICE, pod.namespace):
            selector = (svc.get("spec") or {}).get("selector")
            if selector is None:
                continue  # a nil selector matches nothing
            if labels.from_map(selector).matches(pod.labels):
                merged.update(selector)
    selector = labels.from_map(merged)
    owner = next(
        (
            r
            for r in (pod.raw.get("metadata") or {}).get("ownerReferences") or ()
            if r.get("controller")
        ),
        None,
    )
    if owner is None:
        return selector
    kind, api_version, name = owner.get("kind"), owner.get("apiVersion"), owner.get("name", "")
    if (api_version, kind) == ("v1", "ReplicationController"):
        rc = _get(handle, listers.REPLICATION_CONTROLLER, pod.namespace, name)
        if rc is not None:
            merged.update((rc.get("spec") or {}).get("selector") or {})
            selector = labels.from_map(merged)
    elif (api_version, kind) in (("apps/v1", "ReplicaSet"), ("apps/v1", "StatefulSet")):
        lister_kind = listers.REPLICA_SET if kind == "ReplicaSet" else listers.STATEFUL_SET
        owner_obj = _get(handle, lister_kind, pod.namespace, name)
        if owner_obj is not None:
            other = labels.parse((owner_obj.get("spec") or {}).get("selector"))
            if not other.nothing:
                selector = labels.Selector(selector.requirements + other.requirements)
    return selector


def pod_constraints(
    handle: Handle | None,
    pod: PodInfo,
    action: str,
    defaults: Sequence[Mapping[str, Any]],
    parsed_defaults: tuple[Constraint, ...] | None = None,
) -> tuple[Constraint, ...]:
    """``parsed_defaults``: ``defaults`` already parsed for ``action`` (valid when they use no
    matchLabelKeys, i.e. do not depend on the pod)."""
    own = (pod.raw.get("spec") or {}).get("topologySpreadConstraints") or ()
    if own:
        return parse_constraints(own, pod.labels, action)
    if parsed_defaults is not None:
        constraints = parsed_defaults
    else:
        constraints = parse_constraints(defaults, pod.labels, action)
    if not constraints:
        return ()
    selector = default_selector(handle, pod)
    if selector.empty:
        return ()
    return tuple(
        Constraint(
            c.max_skew,
            c.topology_key,
            selector,
            c.min_domains,
            c.node_affinity_policy,
            c.node_taints_policy,
        )
        for c in constraints
    )


# --- node eligibility ---------------------------------------------------------------------------


def node_matches_policies(c: Constraint, pod: PodInfo, node: NodeInfo) -> bool:
    """Upstream ``matchNodeInclusionPolicies`` on one node."""
    if c.node_affinity_policy == HONOR:
        if pod.node_selector and not ns.map_matches(pod.node_selector, node.labels):
            return False
        if pod.required_affinity is not None and not ns.selector_matches(
            pod.required_affinity, node.labels, node.name
        ):
            return False
    untolerated = find_untolerated(node.taints, pod.tolerations, DO_NOT_SCHEDULE_EFFECTS)
    return c.node_taints_policy != HONOR or untolerated is None


class NodeMasks:
    """Batch eligibility of every snapshot slot, computed lazily once per cycle."""

    def __init__(self, snapshot: Snapshot, pod: PodInfo) -> None:
        self.snapshot = snapshot
        self.pod = pod
        self._affinity: Mask | None = None
        self._taints: Mask | None = None

    def affinity(self) -> Mask:
        if self._affinity is None:
            m = np.ones(self.snapshot.capacity, dtype=np.bool_)
            if self.pod.node_selector:
                m &= ns.map_mask(self.pod.node_selector, self.snapshot)
            if self.pod.required_affinity is not None:
                m &= ns.selector_mask(self.pod.required_affinity, self.snapshot)
            self._affinity = m
        return self._affinity

    def taints(self) -> Mask:
        if self._taints is not None:
            return self._taints
        tolerations = self.pod.tolerations
        table = self.snapshot.taint_vocab.table(
            lambda t: (
                t.effect in DO_NOT_SCHEDULE_EFFECTS and not tolerations_tolerate(tolerations, t)
            )
        )
        matrix = self.snapshot.taints
        bad = np.zeros(len(matrix), dtype=np.bool_)
        if matrix.shape[1]:
            bad = np.asarray(table[matrix].any(axis=1), dtype=np.bool_)
        ok: Mask = ~bad
        self._taints = ok
        return ok

    def eligible(self, c: Constraint) -> Mask:
        m = np.ones(self.snapshot.capacity, dtype=np.bool_)
        if c.node_affinity_policy == HONOR:
            m &= self.affinity()
        if c.node_taints_policy == HONOR:
            m &= self.taints()
        return m


def has_all_keys(snapshot: Snapshot, constraints: Sequence[Constraint]) -> Mask:
    m = np.zeros(snapshot.capacity, dtype=np.bool_)
    m[snapshot.order] = True
    for c in constraints:
        column = snapshot.label(c.topology_key)
        if column is None:
            return np.zeros(snapshot.capacity, dtype=np.bool_)
        m &= column >= 0
    return m


def matching_rows(snapshot: Snapshot, c: Constraint, namespace: str) -> Mask:
    """Pods counted by ``c``: same namespace, not terminating, selector matches (an empty
    selector counts nothing, as upstream's ``countPodsMatchSelector``)."""
    table = snapshot.pods
    if c.selector.empty or c.selector.nothing:
        return np.zeros(table.size, dtype=np.bool_)
    rows = table.namespace_mask(frozenset({namespace})) & ~table.deleting[: table.size]
    return rows & table.selector_mask(c.selector) & table.live()


def count_on_node(node: NodeInfo, c: Constraint, namespace: str) -> int:
    if c.selector.empty:
        return 0
    return sum(
        1
        for p in node.pods
        if not p.deleting and p.namespace == namespace and c.selector.matches(p.labels)
    )
