"""InterPodAffinity (PreFilter with Add/RemovePod, Filter, PreScore, Score, NormalizeScore).

Required and preferred pod affinity and anti-affinity, the existing pods' anti-affinity, term
namespaces and namespaceSelector (resolved through the Namespace lister), the first-pod rule and
``hardPodAffinityWeight``. Filtering lives in ``filtering.py``, scoring in ``scoring.py``; both
count pods per topology domain with ``bincount`` over the snapshot's pod table. PreFilter returns
Skip when the pod has no required terms and no existing pod's anti-affinity matches it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from corral.scheduler.config import plugin_args
from corral.scheduler.config.args import InterPodAffinityArgs
from corral.scheduler.framework.cluster_events import (
    ASSIGNED_POD,
    NODE,
    TARGET_POD,
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
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
from corral.scheduler.framework.types import NodeInfo, PodInfo
from corral.scheduler.plugins import helper, names
from corral.scheduler.plugins.inter_pod_affinity import filtering, queueing, scoring
from corral.scheduler.plugins.inter_pod_affinity.filtering import (
    ERR_REASON_AFFINITY,
    ERR_REASON_ANTI_AFFINITY,
    ERR_REASON_EXISTING_ANTI_AFFINITY,
)

NAME: Final = names.INTER_POD_AFFINITY
PRE_FILTER_STATE_KEY: Final = "PreFilter" + NAME
PRE_SCORE_STATE_KEY: Final = "PreScore" + NAME

__all__ = [
    "ERR_REASON_AFFINITY",
    "ERR_REASON_ANTI_AFFINITY",
    "ERR_REASON_EXISTING_ANTI_AFFINITY",
    "NAME",
    "InterPodAffinity",
    "InterPodAffinityArgs",
    "new",
]


class InterPodAffinity:
    name: str = NAME

    def __init__(self, args: InterPodAffinityArgs, handle: Handle | None) -> None:
        self.args = args  # defaulted and validated by plugin_args
        self.handle = handle

    # --- filter -----------------------------------------------------------------------------

    def pre_filter(
        self, state: CycleState, pod: PodInfo, snapshot: Snapshot
    ) -> tuple[PreFilterResult | None, Status | None]:
        if pod.affinity is not None and pod.affinity.error:
            msg = f"parsing pod: {pod.affinity.error}"
            return None, Status.of(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, msg)
        s = filtering.compute(self.handle, pod, snapshot)
        if not s.existing_anti_affinity_counts and not (s.affinity_terms or s.anti_affinity_terms):
            return None, Status(Code.SKIP)
        state.write(PRE_FILTER_STATE_KEY, s)
        return None, None

    def pre_filter_extensions(self) -> PreFilterExtensions | None:
        return self

    def _state(self, state: CycleState) -> filtering.PreFilterState | None:
        return state.read(PRE_FILTER_STATE_KEY, filtering.PreFilterState)

    def add_pod(
        self, state: CycleState, pod: PodInfo, pod_to_add: PodInfo, node: NodeInfo
    ) -> Status | None:
        s = self._state(state)
        if s is None:
            return helper.missing_state(PRE_FILTER_STATE_KEY)
        s.update_with_pod(pod_to_add, node, 1)
        return None

    def remove_pod(
        self, state: CycleState, pod: PodInfo, pod_to_remove: PodInfo, node: NodeInfo
    ) -> Status | None:
        s = self._state(state)
        if s is None:
            return helper.missing_state(PRE_FILTER_STATE_KEY)
        s.update_with_pod(pod_to_remove, node, -1)
        return None

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status | None:
        s = self._state(state)
        if s is None:
            return helper.missing_state(PRE_FILTER_STATE_KEY)
        return filtering.filter_node(s, node)

    def filter_batch(self, state: CycleState, pod: PodInfo, snapshot: Snapshot) -> FilterVerdict:
        s = self._state(state)
        if s is None:
            s = filtering.compute(self.handle, pod, snapshot)
        return filtering.filter_batch(s, snapshot)

    # --- score ------------------------------------------------------------------------------

    def pre_score(
        self, state: CycleState, pod: PodInfo, snapshot: Snapshot, slots: Slots
    ) -> Status | None:
        if not len(slots):
            return None
        s = scoring.compute(
            self.handle,
            pod,
            snapshot,
            hard_weight=self.args.hard_pod_affinity_weight or 0,
            ignore_existing_preferred=bool(self.args.ignore_preferred_terms_of_existing_pods),
        )
        if s is None:
            return Status(Code.SKIP)
        state.write(PRE_SCORE_STATE_KEY, s)
        return None

    def score(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> tuple[int, Status | None]:
        s = state.read(PRE_SCORE_STATE_KEY, scoring.PreScoreState)
        if s is None:
            return 0, helper.missing_state(PRE_SCORE_STATE_KEY)
        return scoring.score_node(s, node.labels), None

    def score_batch(
        self, state: CycleState, pod: PodInfo, snapshot: Snapshot, slots: Slots
    ) -> tuple[Scores, Status | None]:
        s = state.read(PRE_SCORE_STATE_KEY, scoring.PreScoreState)
        if s is None:
            return scoring.score_batch(
                scoring.PreScoreState(), snapshot, slots
            ), helper.missing_state(PRE_SCORE_STATE_KEY)
        return scoring.score_batch(s, snapshot, slots), None

    def normalize_score(self, state: CycleState, pod: PodInfo, scores: Scores) -> Status | None:
        s = state.read(PRE_SCORE_STATE_KEY, scoring.PreScoreState)
        if s is None or s.empty:
            return None
        scoring.normalize(scores)
        return None

    def events_to_register(self) -> Sequence[ClusterEventWithHint]:
        pod_actions = ActionType.ADD | ActionType.UPDATE_POD_LABEL | ActionType.DELETE
        return (
            ClusterEventWithHint(
                ClusterEvent(ASSIGNED_POD, pod_actions), queueing.after_assigned_pod_change
            ),
            ClusterEventWithHint(
                ClusterEvent(TARGET_POD, ActionType.UPDATE_POD_LABEL),
                queueing.after_target_pod_label_update,
            ),
            ClusterEventWithHint(
                ClusterEvent(NODE, ActionType.ADD | ActionType.UPDATE_NODE_LABEL),
                queueing.after_node_change,
            ),
        )


def new(args: object, handle: Handle) -> InterPodAffinity:
    return InterPodAffinity(plugin_args(NAME, args), handle)
