"""TaintToleration (PreFilter, Filter, PreScore, Score, NormalizeScore).

PreFilter (1.37) does nothing: upstream's skips the plugin only for a pod whose resize is deferred
(InPlacePodVerticalScalingSchedulerPreemption, alpha and off).

Filter: the first NoSchedule/NoExecute taint (in node order) no toleration tolerates rejects the
node. Score: the number of PreferNoSchedule taints not tolerated by the pod's tolerations with
effect "" or PreferNoSchedule; normalized reversed (fewest such taints → 100).

Batch form: a boolean table over the cluster's distinct taints, gathered over the snapshot's
taint-id matrix; the first untolerated taint's id is the reason code.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

import numpy as np

from corral.scheduler.framework import cluster_events as ev
from corral.scheduler.framework.cluster_events import (
    NODE,
    TARGET_POD,
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    QueueingHint,
)
from corral.scheduler.framework.cycle_state import CycleState
from corral.scheduler.framework.interface import FilterVerdict, Handle, Scores, Slots
from corral.scheduler.framework.snapshot import Snapshot
from corral.scheduler.framework.status import Code, Status
from corral.scheduler.framework.taints import (
    DO_NOT_SCHEDULE_EFFECTS,
    PREFER_NO_SCHEDULE,
    Toleration,
    find_untolerated,
    tolerations_tolerate,
)
from corral.scheduler.framework.types import NodeInfo, NodeRecord, PodInfo
from corral.scheduler.plugins import helper, names

NAME: Final = names.TAINT_TOLERATION
PRE_SCORE_STATE_KEY: Final = "PreScore" + NAME

_NONE: Final = Status(Code.SUCCESS)  # describes nothing: every node passes


# One reason for every taint, as kube-scheduler 1.36 words it (older releases named the taint,
# which split the FailedScheduling counts per taint).
ERR_REASON_UNTOLERATED: Final = "node(s) had untolerated taint(s)"


@dataclass(frozen=True, slots=True)
class _PreScoreState:
    tolerations_prefer_no_schedule: tuple[Toleration, ...]

    def clone(self) -> _PreScoreState:
        return self


def _prefer_no_schedule(tolerations: Sequence[Toleration]) -> tuple[Toleration, ...]:
    return tuple(t for t in tolerations if t.effect in ("", PREFER_NO_SCHEDULE))


class TaintToleration(helper.NoOpPreFilter):
    name: str = NAME

    # --- filter -----------------------------------------------------------------------------

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status | None:
        taint = find_untolerated(node.taints, pod.tolerations, DO_NOT_SCHEDULE_EFFECTS)
        if taint is None:
            return None
        return Status.of(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_UNTOLERATED)

    def filter_batch(self, state: CycleState, pod: PodInfo, snapshot: Snapshot) -> FilterVerdict:
        matrix = snapshot.taints
        vocab = snapshot.taint_vocab
        tolerations = pod.tolerations
        table = vocab.table(
            lambda t: (
                t.effect in DO_NOT_SCHEDULE_EFFECTS and not tolerations_tolerate(tolerations, t)
            )
        )
        if matrix.shape[1] == 0 or not table.any():
            return FilterVerdict.uniform(np.ones(snapshot.capacity, dtype=np.bool_), _NONE)
        # Column by column (nodes carry few taints): the first untolerated taint is the reason.
        failed = np.zeros(snapshot.capacity, dtype=np.bool_)
        reasons = np.full(snapshot.capacity, -1, dtype=np.int64)
        for j in range(matrix.shape[1]):
            column = matrix[:, j]
            bad = table[column]
            newly = bad & ~failed
            np.copyto(reasons, column, where=newly)
            failed |= bad

        def describe(code: int) -> Status:  # one reason for every taint (see above)
            return Status.of(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_UNTOLERATED)

        return FilterVerdict(~failed, reasons, describe)

    # --- score ------------------------------------------------------------------------------

    def pre_score(
        self, state: CycleState, pod: PodInfo, snapshot: Snapshot, slots: Slots
    ) -> Status | None:
        state.write(PRE_SCORE_STATE_KEY, _PreScoreState(_prefer_no_schedule(pod.tolerations)))
        return None

    def _tolerations(self, state: CycleState, pod: PodInfo) -> tuple[Toleration, ...]:
        s = state.read(PRE_SCORE_STATE_KEY, _PreScoreState)
        return s.tolerations_prefer_no_schedule if s else _prefer_no_schedule(pod.tolerations)

    def score(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> tuple[int, Status | None]:
        tolerations = self._tolerations(state, pod)
        count = sum(
            1
            for t in node.taints
            if t.effect == PREFER_NO_SCHEDULE and not tolerations_tolerate(tolerations, t)
        )
        return count, None

    def score_batch(
        self, state: CycleState, pod: PodInfo, snapshot: Snapshot, slots: Slots
    ) -> tuple[Scores, Status | None]:
        matrix = snapshot.taints
        if matrix.shape[1] == 0:
            return np.zeros(len(slots), dtype=np.int64), None
        tolerations = self._tolerations(state, pod)
        table = snapshot.taint_vocab.table(
            lambda t: t.effect == PREFER_NO_SCHEDULE and not tolerations_tolerate(tolerations, t)
        )
        if not table.any():
            return np.zeros(len(slots), dtype=np.int64), None
        return table[matrix[slots]].sum(axis=1, dtype=np.int64), None

    def normalize_score(self, state: CycleState, pod: PodInfo, scores: Scores) -> Status | None:
        helper.default_normalize_score(scores, reverse=True)
        return None

    # --- queueing hints ---------------------------------------------------------------------

    def events_to_register(self) -> Sequence[ClusterEventWithHint]:
        return (
            ClusterEventWithHint(
                ClusterEvent(NODE, ActionType.ADD | ActionType.UPDATE_NODE_TAINT),
                self.hint_node_change,
            ),
            # The pod itself got a toleration: always worth a retry.
            ClusterEventWithHint(ClusterEvent(TARGET_POD, ActionType.UPDATE_POD_TOLERATION)),
        )

    def hint_node_change(self, pod: PodInfo, old: object, new: object) -> QueueingHint:
        """The node now has no NoSchedule/NoExecute taint the pod does not tolerate, and had
        one before (an added node: had one by definition)."""
        original, modified = ev.as_objects(old, new, NodeRecord)
        assert modified is not None
        tolerations = pod.tolerations
        was = original is None or (
            find_untolerated(original.taints, tolerations, DO_NOT_SCHEDULE_EFFECTS) is not None
        )
        now = find_untolerated(modified.taints, tolerations, DO_NOT_SCHEDULE_EFFECTS) is not None
        return QueueingHint.QUEUE if was and not now else QueueingHint.QUEUE_SKIP


def new(args: object, handle: Handle) -> TaintToleration:
    if args is not None:
        raise TypeError(f"{NAME} takes no args")
    return TaintToleration()
