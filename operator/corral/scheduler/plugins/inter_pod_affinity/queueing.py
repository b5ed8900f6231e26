"""InterPodAffinity's queueing hints (upstream ``isSchedulableAfter...`` in ``plugin.go``).

- A bound (or nominated) pod added, relabelled or deleted: Queue when it now matches all the
  pod's required affinity terms (and did not), or stopped matching one of its anti-affinity
  terms; for a deletion, when the deleted pod matched an anti-affinity term of the pod or the
  pod matched one of the deleted pod's.
- The pod's own labels changed: always Queue (another pod's anti-affinity may stop matching).
- A node added or relabelled: Queue when a topology key of the pod's affinity appears or
  changes value; for anti-affinity, on any added node and when a key disappears or changes.

Terms are matched without namespace labels, as upstream's hints do.
"""

from __future__ import annotations

from collections.abc import Sequence

from corral.scheduler.framework import cluster_events as ev
from corral.scheduler.framework.cluster_events import QueueingHint
from corral.scheduler.framework.podaffinity import EMPTY, AffinityTerm, PodAffinity
from corral.scheduler.framework.types import NodeRecord, PodInfo

Q, SKIP = QueueingHint.QUEUE, QueueingHint.QUEUE_SKIP


def _matches_all(terms: Sequence[AffinityTerm], pod: PodInfo) -> bool:
    return bool(terms) and all(t.matches(pod.namespace, pod.labels, {}) for t in terms)


def _matches_any(terms: Sequence[AffinityTerm], pod: PodInfo) -> bool:
    return any(t.matches(pod.namespace, pod.labels, {}) for t in terms)


def _spec(pod: PodInfo) -> PodAffinity:
    return pod.affinity or EMPTY


def after_assigned_pod_change(pod: PodInfo, old: object, new: object) -> QueueingHint:
    original, modified = ev.as_objects(old, new, PodInfo)
    for other in (modified, original):
        if other is not None and not other.node_name and not other.nominated_node_name:
            return SKIP  # placement changes arrive as adds and deletes
    spec = _spec(pod)
    terms, anti = spec.required_affinity, spec.required_anti_affinity
    if original is not None and modified is not None:
        if not _matches_all(terms, original) and _matches_all(terms, modified):
            return Q
        if _matches_any(anti, original) and not _matches_any(anti, modified):
            return Q
        return SKIP
    if modified is not None:
        return Q if _matches_all(terms, modified) else SKIP
    assert original is not None
    if _matches_any(anti, original):
        return Q
    return Q if _matches_any(_spec(original).required_anti_affinity, pod) else SKIP


def after_target_pod_label_update(pod: PodInfo, old: object, new: object) -> QueueingHint:
    return Q


def after_node_change(pod: PodInfo, old: object, new: object) -> QueueingHint:
    original, modified = ev.as_objects(old, new, NodeRecord)
    assert modified is not None
    spec = _spec(pod)
    for term in spec.required_affinity:
        key = term.topology_key
        if original is None:
            if key in modified.labels:
                return Q
            continue
        if key in modified.labels and original.labels.get(key) != modified.labels[key]:
            return Q  # the key appeared, or its value changed
    for term in spec.required_anti_affinity:
        if original is None:
            return Q  # a node without the key always takes the pod; with it, maybe
        key = term.topology_key
        if key in original.labels and original.labels[key] != modified.labels.get(key):
            return Q  # the key disappeared, or its value changed
    return SKIP
