"""NodeAffinity (PreFilter, Filter, PreScore, Score, NormalizeScore).

Required: ``nodeSelector`` AND required node affinity AND the scheduler-enforced
``addedAffinity`` (checked first, with its own reason). PreFilter narrows the cycle to the
node names of ``matchFields metadata.name In`` terms. Score: the summed weights of matching
preferred terms, the pod's and ``addedAffinity``'s; normalized by the maximum.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

import numpy as np

from corral.scheduler.config import plugin_args
from corral.scheduler.config.args import NodeAffinityArgs
from corral.scheduler.config.decode import encode
from corral.scheduler.framework import cluster_events as ev
from corral.scheduler.framework import nodeselector as ns
from corral.scheduler.framework.cluster_events import (
    NODE,
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    QueueingHint,
)
from corral.scheduler.framework.cycle_state import CycleState
from corral.scheduler.framework.interface import (
    FilterVerdict,
    Handle,
    PreFilterExtensions,
    PreFilterResult,
    Scores,
    Slots,
)
from corral.scheduler.framework.snapshot import Snapshot
from corral.scheduler.framework.status import Code, Status
from corral.scheduler.framework.types import NodeInfo, NodeRecord, PodInfo
from corral.scheduler.plugins import helper, names

NAME: Final = names.NODE_AFFINITY
ERR_REASON_POD: Final = "node(s) didn't match Pod's node affinity/selector"
ERR_REASON_ENFORCED: Final = "node(s) didn't match scheduler-enforced node affinity"
ERR_REASON_CONFLICT: Final = "pod affinity terms conflict"

_ENFORCED: Final = Status.of(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_ENFORCED)
_POD: Final = Status.of(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_POD)
_CODE_ENFORCED, _CODE_POD = 0, 1


class NodeAffinity:
    name: str = NAME

    def __init__(self, args: NodeAffinityArgs) -> None:
        # Validated by plugin_args; compiled here from its JSON form, as a pod's own affinity.
        added: Mapping[str, Any] = encode(args.added_affinity) if args.added_affinity else {}
        required = added.get("requiredDuringSchedulingIgnoredDuringExecution")
        self.added_selector = ns.parse_node_selector(required) if required is not None else None
        if self.added_selector is not None:
            errors = [t.error for t in self.added_selector.terms if t.error]
            if errors:
                raise ValueError(
                    "parsing addedAffinity.requiredDuringSchedulingIgnoredDuringExecution: "
                    + "; ".join(errors)
                )
        preferred = added.get("preferredDuringSchedulingIgnoredDuringExecution") or []
        self.added_preferred = ns.parse_preferred(preferred) if preferred else None
        if self.added_preferred is not None and self.added_preferred.error:
            raise ValueError(
                "parsing addedAffinity.preferredDuringSchedulingIgnoredDuringExecution: "
                + self.added_preferred.error
            )

    # --- filter -----------------------------------------------------------------------------

    def pre_filter(
        self, state: CycleState, pod: PodInfo, snapshot: Snapshot
    ) -> tuple[PreFilterResult | None, Status | None]:
        required = pod.required_affinity
        if required is None and self.added_selector is None and pod.node_selector is None:
            return None, Status(Code.SKIP)
        if required is None or required.empty_terms or not required.terms:
            return None, None
        names_: frozenset[str] = frozenset()
        for term in required.terms:
            term_names: frozenset[str] | None = None
            for req in term.fields:
                if req.key == ns.OBJECT_NAME_FIELD and req.operator == ns.IN:
                    values = frozenset(req.values)
                    term_names = values if term_names is None else term_names & values
            if term_names is None:
                return None, None  # this term admits every node name
            names_ |= term_names
        if not names_:
            return None, Status.of(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_CONFLICT)
        return PreFilterResult(names_), None

    def pre_filter_extensions(self) -> PreFilterExtensions | None:
        return None

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status | None:
        if not self._enforced_matches(node.labels, node.name):
            return _ENFORCED
        if not _required_matches(pod, node.labels, node.name):
            return _POD
        return None

    def _enforced_matches(self, labels: Mapping[str, str], name: str) -> bool:
        return self.added_selector is None or ns.selector_matches(self.added_selector, labels, name)

    def filter_batch(self, state: CycleState, pod: PodInfo, snapshot: Snapshot) -> FilterVerdict:
        passed = np.ones(snapshot.capacity, dtype=np.bool_)
        if pod.node_selector:
            passed &= ns.map_mask(pod.node_selector, snapshot)
        if pod.required_affinity is not None:
            passed &= ns.selector_mask(pod.required_affinity, snapshot)
        if self.added_selector is None:
            return FilterVerdict.uniform(passed, _POD)
        enforced = ns.selector_mask(self.added_selector, snapshot)
        reasons = np.where(enforced, _CODE_POD, _CODE_ENFORCED).astype(np.int64)
        return FilterVerdict(
            enforced & passed, reasons, lambda c: _ENFORCED if c == _CODE_ENFORCED else _POD
        )

    # --- score ------------------------------------------------------------------------------

    def pre_score(
        self, state: CycleState, pod: PodInfo, snapshot: Snapshot, slots: Slots
    ) -> Status | None:
        preferred = pod.preferred_affinity
        if preferred is not None and preferred.error:
            return Status.error(preferred.error)
        if preferred is None and self.added_preferred is None:
            return Status(Code.SKIP)
        return None

    def score(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> tuple[int, Status | None]:
        total = 0
        for terms in (self.added_preferred, pod.preferred_affinity):
            if terms is not None:
                total += ns.preferred_score(terms, node.labels, node.name)
        return total, None

    def score_batch(
        self, state: CycleState, pod: PodInfo, snapshot: Snapshot, slots: Slots
    ) -> tuple[Scores, Status | None]:
        total = np.zeros(len(slots), dtype=np.int64)
        for terms in (self.added_preferred, pod.preferred_affinity):
            if terms is not None and terms.terms:
                total += ns.preferred_scores(terms, snapshot)[slots]
        return total, None

    def normalize_score(self, state: CycleState, pod: PodInfo, scores: Scores) -> Status | None:
        helper.default_normalize_score(scores, reverse=False)
        return None

    # --- queueing hints ---------------------------------------------------------------------

    def events_to_register(self) -> Sequence[ClusterEventWithHint]:
        action = ActionType.ADD | ActionType.UPDATE_NODE_LABEL
        return (ClusterEventWithHint(ClusterEvent(NODE, action), self.hint_node_change),)

    def hint_node_change(self, pod: PodInfo, old: object, new: object) -> QueueingHint:
        """An added node the pod's required affinity (and addedAffinity) matches, or an updated
        one it matches now but did not before."""
        original, modified = ev.as_objects(old, new, NodeRecord)
        assert modified is not None
        if not self._enforced_matches(modified.labels, modified.name):
            return QueueingHint.QUEUE_SKIP
        if not _required_matches(pod, modified.labels, modified.name):
            return QueueingHint.QUEUE_SKIP
        if original is not None and _required_matches(pod, original.labels, original.name):
            return QueueingHint.QUEUE_SKIP
        return QueueingHint.QUEUE


def _required_matches(pod: PodInfo, labels: Mapping[str, str], name: str) -> bool:
    """The pod's nodeSelector and required node affinity (upstream ``GetRequiredNodeAffinity``)."""
    if pod.node_selector and not ns.map_matches(pod.node_selector, labels):
        return False
    required = pod.required_affinity
    return required is None or ns.selector_matches(required, labels, name)


def new(args: object, handle: Handle) -> NodeAffinity:
    return NodeAffinity(plugin_args(NAME, args))
