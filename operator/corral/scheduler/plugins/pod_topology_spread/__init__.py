"""PodTopologySpread (PreFilter with Add/RemovePod, Filter, PreScore, Score, NormalizeScore).

maxSkew, minDomains, whenUnsatisfiable, nodeAffinityPolicy, nodeTaintsPolicy, matchLabelKeys,
and default constraints (System: hostname maxSkew 3 and zone maxSkew 5, ScheduleAnyway; or the
configured List) with selectors from Services, ReplicationControllers, ReplicaSets and
StatefulSets. Filtering is in ``filtering.py`` (DoNotSchedule), scoring in ``scoring.py``
(ScheduleAnyway); both count pods per domain with ``bincount`` over the snapshot's pod table.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

import numpy as np

from corral.scheduler.config import plugin_args
from corral.scheduler.config.args import PodTopologySpreadArgs
from corral.scheduler.config.decode import encode
from corral.scheduler.framework import cluster_events as ev
from corral.scheduler.framework.cluster_events import (
    ASSIGNED_POD,
    NODE,
    TARGET_POD,
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
from corral.scheduler.plugins.pod_topology_spread import common, filtering, queueing, scoring
from corral.scheduler.plugins.pod_topology_spread.filtering import (
    ERR_REASON_CONSTRAINTS_NOT_MATCH,
    ERR_REASON_NODE_LABEL_NOT_MATCH,
)

NAME: Final = names.POD_TOPOLOGY_SPREAD
PRE_FILTER_STATE_KEY: Final = "PreFilter" + NAME
PRE_SCORE_STATE_KEY: Final = "PreScore" + NAME

__all__ = [
    "ERR_REASON_CONSTRAINTS_NOT_MATCH",
    "ERR_REASON_NODE_LABEL_NOT_MATCH",
    "NAME",
    "PodTopologySpread",
    "PodTopologySpreadArgs",
    "new",
]


class PodTopologySpread:
    name: str = NAME

    def __init__(self, args: PodTopologySpreadArgs, handle: Handle | None) -> None:
        self.handle = handle  # args: defaulted and validated by plugin_args
        self.system_defaulted = args.defaulting_type == common.SYSTEM
        listed = tuple(dict(encode(c)) for c in args.default_constraints)
        self.defaults: tuple[Mapping[str, Any], ...] = (
            common.SYSTEM_DEFAULT_CONSTRAINTS if self.system_defaulted else listed
        )
        self._parsed_defaults: dict[str, tuple[common.Constraint, ...]] = {}
        if not any(d.get("matchLabelKeys") for d in self.defaults):
            for action in (common.DO_NOT_SCHEDULE, common.SCHEDULE_ANYWAY):
                self._parsed_defaults[action] = common.parse_constraints(self.defaults, {}, action)

    def _constraints(self, pod: PodInfo, action: str) -> tuple[common.Constraint, ...]:
        own = (pod.raw.get("spec") or {}).get("topologySpreadConstraints")
        if not own and not any(d.get("whenUnsatisfiable") == action for d in self.defaults):
            return ()  # no constraints of its own and no default ones for this action
        return common.pod_constraints(
            self.handle, pod, action, self.defaults, self._parsed_defaults.get(action)
        )

    # --- filter -----------------------------------------------------------------------------

    def pre_filter(
        self, state: CycleState, pod: PodInfo, snapshot: Snapshot
    ) -> tuple[PreFilterResult | None, Status | None]:
        constraints = self._constraints(pod, common.DO_NOT_SCHEDULE)
        if not constraints:
            return None, Status(Code.SKIP)
        state.write(PRE_FILTER_STATE_KEY, filtering.compute(pod, snapshot, constraints))
        return None, None

    def pre_filter_extensions(self) -> PreFilterExtensions | None:
        return self

    def _state(
        self, state: CycleState, pod: PodInfo, snapshot: Snapshot | None
    ) -> filtering.PreFilterState | None:
        s = state.read(PRE_FILTER_STATE_KEY, filtering.PreFilterState)
        if s is None and snapshot is not None:
            s = filtering.compute(pod, snapshot, self._constraints(pod, common.DO_NOT_SCHEDULE))
        return s

    def add_pod(
        self, state: CycleState, pod: PodInfo, pod_to_add: PodInfo, node: NodeInfo
    ) -> Status | None:
        s = state.read(PRE_FILTER_STATE_KEY, filtering.PreFilterState)
        if s is not None:
            s.update_with_pod(pod_to_add, node, 1)
        return None

    def remove_pod(
        self, state: CycleState, pod: PodInfo, pod_to_remove: PodInfo, node: NodeInfo
    ) -> Status | None:
        s = state.read(PRE_FILTER_STATE_KEY, filtering.PreFilterState)
        if s is not None:
            s.update_with_pod(pod_to_remove, node, -1)
        return None

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status | None:
        s = state.read(PRE_FILTER_STATE_KEY, filtering.PreFilterState)
        if s is None:
            return helper.missing_state(PRE_FILTER_STATE_KEY)
        return filtering.filter_node(s, pod, node)

    def filter_batch(self, state: CycleState, pod: PodInfo, snapshot: Snapshot) -> FilterVerdict:
        s = self._state(state, pod, snapshot)
        assert s is not None
        return filtering.filter_batch(s, pod, snapshot)

    # --- score ------------------------------------------------------------------------------

    def pre_score(
        self, state: CycleState, pod: PodInfo, snapshot: Snapshot, slots: Slots
    ) -> Status | None:
        if snapshot.num_nodes == 0:
            return Status(Code.SKIP)
        constraints = self._constraints(pod, common.SCHEDULE_ANYWAY)
        if not constraints:
            return Status(Code.SKIP)
        own = bool((pod.raw.get("spec") or {}).get("topologySpreadConstraints"))
        require_all = own or not self.system_defaulted
        s = scoring.compute(pod, snapshot, slots, constraints, require_all=require_all)
        state.write(PRE_SCORE_STATE_KEY, s)
        return None

    def _score_state(self, state: CycleState) -> scoring.PreScoreState | None:
        return state.read(PRE_SCORE_STATE_KEY, scoring.PreScoreState)

    def score(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> tuple[int, Status | None]:
        s = self._score_state(state)
        if s is None:
            return 0, helper.missing_state(PRE_SCORE_STATE_KEY)
        return scoring.score_node(s, node), None

    def score_batch(
        self, state: CycleState, pod: PodInfo, snapshot: Snapshot, slots: Slots
    ) -> tuple[Scores, Status | None]:
        s = self._score_state(state)
        if s is None:
            return np.zeros(len(slots), dtype=np.int64), helper.missing_state(PRE_SCORE_STATE_KEY)
        return scoring.score_batch(s, snapshot, slots), None

    def normalize_score(self, state: CycleState, pod: PodInfo, scores: Scores) -> Status | None:
        s = self._score_state(state)
        if s is not None:
            scoring.normalize(s, scores)
        return None

    # --- queueing hints (see queueing.py) ---------------------------------------------------

    def events_to_register(self) -> Sequence[ClusterEventWithHint]:
        pod_actions = ActionType.ADD | ActionType.UPDATE_POD_LABEL | ActionType.DELETE
        own = ActionType.UPDATE_POD_TOLERATION | ActionType.UPDATE_POD_LABEL
        node_actions = (
            ActionType.ADD
            | ActionType.DELETE
            | ActionType.UPDATE_NODE_LABEL
            | ActionType.UPDATE_NODE_TAINT
        )
        return (
            ClusterEventWithHint(
                ClusterEvent(ASSIGNED_POD, pod_actions), self.hint_assigned_pod_change
            ),
            ClusterEventWithHint(ClusterEvent(TARGET_POD, own), self.hint_target_pod_change),
            ClusterEventWithHint(ClusterEvent(NODE, node_actions), self.hint_node_change),
        )

    def hint_assigned_pod_change(self, pod: PodInfo, old: object, new: object) -> QueueingHint:
        original, modified = ev.as_objects(old, new, PodInfo)
        constraints = self._constraints(pod, common.DO_NOT_SCHEDULE)
        return queueing.after_assigned_pod_change(constraints, pod, original, modified)

    def hint_target_pod_change(self, pod: PodInfo, old: object, new: object) -> QueueingHint:
        original, modified = ev.as_objects(old, new, PodInfo)
        assert original is not None
        assert modified is not None
        constraints = self._constraints(pod, common.DO_NOT_SCHEDULE)
        return queueing.after_target_pod_change(constraints, original, modified)

    def hint_node_change(self, pod: PodInfo, old: object, new: object) -> QueueingHint:
        original, modified = ev.as_objects(old, new, NodeRecord)
        constraints = self._constraints(pod, common.DO_NOT_SCHEDULE)
        return queueing.after_node_change(constraints, original, modified)


def new(args: object, handle: Handle) -> PodTopologySpread:
    return PodTopologySpread(plugin_args(NAME, args), handle)
