"""PodTopologySpread's queueing hints (upstream ``isSchedulableAfter...`` in ``plugin.go``), over
the pod's DoNotSchedule constraints (its own, or the default ones).

- A bound (or nominated) pod of the same namespace added or deleted: Queue when its labels
  match a constraint's selector; relabelled: when that match changed for some constraint.
- The pod's own update: Queue when it got a toleration and a constraint honours taints, or when
  its label change flips a selector match.
- A node added (deleted): Queue when it has (had) every topology key; updated: when that
  changed, or it has them and a topology value or its taints changed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from corral.scheduler.framework.cluster_events import QueueingHint
from corral.scheduler.framework.types import NodeRecord, PodInfo
from corral.scheduler.plugins.pod_topology_spread.common import HONOR, Constraint

Q, SKIP = QueueingHint.QUEUE, QueueingHint.QUEUE_SKIP


def _involved(other: PodInfo, pod: PodInfo) -> bool:
    """Upstream ``involvedInTopologySpreading``: placed somewhere, in the pod's namespace."""
    placed = bool(other.node_name or other.nominated_node_name)
    return placed and other.namespace == pod.namespace


def _any_selects(constraints: Sequence[Constraint], labels: Mapping[str, str]) -> bool:
    return any(c.selector.matches(labels) for c in constraints)


def after_label_change(
    constraints: Sequence[Constraint], original: PodInfo, modified: PodInfo
) -> QueueingHint:
    if original.labels == modified.labels:
        return SKIP
    flipped = any(
        c.selector.matches(original.labels) != c.selector.matches(modified.labels)
        for c in constraints
    )
    return Q if flipped else SKIP


def after_assigned_pod_change(
    constraints: Sequence[Constraint],
    pod: PodInfo,
    original: PodInfo | None,
    modified: PodInfo | None,
) -> QueueingHint:
    for other in (modified, original):
        if other is not None and not _involved(other, pod):
            return SKIP
    if original is not None and modified is not None:
        return after_label_change(constraints, original, modified)
    other = modified if modified is not None else original
    assert other is not None
    return Q if _any_selects(constraints, other.labels) else SKIP


def after_target_pod_change(
    constraints: Sequence[Constraint], original: PodInfo, modified: PodInfo
) -> QueueingHint:
    honours_taints = any(c.node_taints_policy == HONOR for c in constraints)
    if honours_taints and original.tolerations != modified.tolerations:
        return Q
    return after_label_change(constraints, original, modified)


def _has_keys(constraints: Sequence[Constraint], labels: Mapping[str, str]) -> bool:
    return all(c.topology_key in labels for c in constraints)


def after_node_change(
    constraints: Sequence[Constraint], original: NodeRecord | None, modified: NodeRecord | None
) -> QueueingHint:
    was = original is not None and _has_keys(constraints, original.labels)
    now = modified is not None and _has_keys(constraints, modified.labels)
    if original is not None and modified is not None:
        if was != now:
            return Q
        moved = any(
            original.labels.get(c.topology_key) != modified.labels.get(c.topology_key)
            for c in constraints
        )
        return Q if now and (moved or original.taints != modified.taints) else SKIP
    return Q if (now if modified is not None else was) else SKIP
