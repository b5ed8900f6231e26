"""GangScheduling (PreEnqueue, Permit, PlacementFeasible): upstream's all-or-nothing scheduling of
PodGroups (``framework/plugins/gangscheduling``), in the default set with GenericWorkload.

- PreEnqueue: a pod in a scheduling group waits until its PodGroup is observed, and, for a gang,
  until ``minCount`` of its pods are known to the scheduler (pending, assumed or bound).
- PlacementFeasible, after each member of the pod-group cycle: Unschedulable once ``minCount``
  can no longer be reached, Wait until it is, then Success (the basic policy's minCount is 1).
- Permit: an assumed member of a gang waits (5 minutes at most) until ``minCount`` members are
  assumed or bound, then every waiting member is allowed; a waiting member activates the
  group's unscheduled pods.
- Its events: a pod of the same group added (pending or bound), its PodGroup added, or updated
  with a smaller ``minCount``.

With GenericWorkload off the API server drops ``spec.schedulingGroup`` and upstream's plugin
lets every pod through; a pod that still carries one (an API server with the gate on, a
scheduler without it) is refused at PreEnqueue rather than placed without its gang.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from corral.scheduler.framework.cluster_events import (
    ASSIGNED_POD,
    POD_GROUP,
    UNSCHEDULED_POD,
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    QueueingHint,
)
from corral.scheduler.framework.cycle_state import CycleState
from corral.scheduler.framework.interface import Handle
from corral.scheduler.framework.podgroup import (
    MalformedPodGroupError,
    PodGroupRecord,
    pod_group_from_json,
)
from corral.scheduler.framework.status import Code, Status
from corral.scheduler.framework.types import PodInfo
from corral.scheduler.plugins import names

NAME: Final = names.GANG_SCHEDULING
PERMIT_TIMEOUT: Final = 300.0  # upstream permitTimeoutDuration, 5 minutes
ERR_REASON_NOT_SUPPORTED: Final = (
    "pod is in a scheduling group: this scheduler runs without the GenericWorkload gate"
)
ERR_REASON_MIN_COUNT_NOT_QUEUED: Final = (
    "waiting for minCount pods from a gang to appear in scheduling queue"
)
ERR_REASON_MIN_COUNT_NOT_SCHEDULED: Final = "waiting for minCount pods from a gang to be scheduled"

_REFUSED: Final = Status.of(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_NOT_SUPPORTED)
_NOT_QUEUED: Final = Status.of(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_MIN_COUNT_NOT_QUEUED)


def waiting_for_pod_group(name: str) -> str:
    return f'waiting for pods\'s pod group "{name}" to appear in scheduling queue'


class GangScheduling:
    name: str = NAME

    def __init__(self, handle: Handle) -> None:
        self._handle = handle

    # --- queue ------------------------------------------------------------------------------

    def pre_enqueue(self, pod: PodInfo) -> Status | None:
        if not pod.scheduling_group:
            return None
        manager = self._handle.pod_groups
        if not self._handle.generic_workload or manager is None:
            return _REFUSED
        counts = manager.pod_group_counts(pod.pod_group_key)
        group = counts[0] if counts is not None else None
        if counts is None or group is None:
            return Status.of(
                Code.UNSCHEDULABLE_AND_UNRESOLVABLE, waiting_for_pod_group(pod.scheduling_group)
            )
        if not group.is_gang:
            return None
        if counts[1] < group.min_count:
            return _NOT_QUEUED
        return None

    def events_to_register(self) -> Sequence[ClusterEventWithHint]:
        return (
            ClusterEventWithHint(ClusterEvent(UNSCHEDULED_POD, ActionType.ADD), _after_pod_added),
            ClusterEventWithHint(ClusterEvent(ASSIGNED_POD, ActionType.ADD), _after_pod_added),
            ClusterEventWithHint(ClusterEvent(POD_GROUP, ActionType.ADD), _after_group_added),
            ClusterEventWithHint(ClusterEvent(POD_GROUP, ActionType.UPDATE), _after_group_updated),
        )

    # --- pod-group cycle --------------------------------------------------------------------

    def placement_feasible(
        self, group: PodGroupRecord, remaining: int, scheduled: int
    ) -> Status | None:
        wanted = group.min_count if group.is_gang else 1
        if remaining + scheduled < wanted:
            return Status.of(
                Code.UNSCHEDULABLE,
                f"minCount ({wanted}) cannot be satisfied: {scheduled} scheduled, "
                f"{remaining} remaining",
            )
        if scheduled < wanted:
            return Status.of(
                Code.WAIT,
                f"minCount ({wanted}) is not yet satisfied: {scheduled} scheduled, "
                f"{remaining} remaining",
            )
        return None

    # --- binding cycle ----------------------------------------------------------------------

    def permit(
        self, state: CycleState, pod: PodInfo, node_name: str
    ) -> tuple[Status | None, float]:
        if not pod.scheduling_group or not self._handle.generic_workload:
            return None, 0.0
        manager = self._handle.pod_groups
        snapshot = self._handle.snapshot()
        key = pod.pod_group_key
        cycle_state = snapshot.pod_groups.get(key) if snapshot is not None else None
        group = cycle_state.group if cycle_state is not None else None
        if group is None or manager is None:
            return Status.error(
                f"failed to get podGroup {key}: podgroup.scheduling.k8s.io "
                f'"{pod.scheduling_group}" not found'
            ), 0.0
        if not group.is_gang:
            return None, 0.0
        live = manager.pod_group_state(key)
        if live is None:
            return Status.error(
                f"pod group state not found for pod group {pod.namespace}/{pod.scheduling_group}"
            ), 0.0
        if live.scheduled_count < group.min_count:
            self._handle.activate([p.uid for p in live.unscheduled_pods()])
            return Status.of(Code.WAIT, ERR_REASON_MIN_COUNT_NOT_SCHEDULED), PERMIT_TIMEOUT
        for uid in sorted(live.assumed):
            waiting = self._handle.get_waiting_pod(uid)
            if waiting is not None:
                waiting.allow(NAME)
        return None, 0.0


def _group_of(obj: object) -> PodGroupRecord | None:
    if not isinstance(obj, dict):
        return None
    try:
        return pod_group_from_json(obj)
    except MalformedPodGroupError:
        return None


def _after_pod_added(pod: PodInfo, old: object, new: object) -> QueueingHint:
    """A pod of the same PodGroup was added (pending or bound)."""
    if not isinstance(new, PodInfo):
        return QueueingHint.QUEUE
    if not pod.scheduling_group or not new.scheduling_group:
        return QueueingHint.QUEUE_SKIP
    same = new.pod_group_key == pod.pod_group_key
    return QueueingHint.QUEUE if same else QueueingHint.QUEUE_SKIP


def _after_group_added(pod: PodInfo, old: object, new: object) -> QueueingHint:
    group = _group_of(new)
    if group is None:
        return QueueingHint.QUEUE
    if not pod.scheduling_group:
        return QueueingHint.QUEUE_SKIP
    return QueueingHint.QUEUE if group.key == pod.pod_group_key else QueueingHint.QUEUE_SKIP


def _after_group_updated(pod: PodInfo, old: object, new: object) -> QueueingHint:
    """Its PodGroup's gang minCount went down."""
    before, after = _group_of(old), _group_of(new)
    if before is None or after is None:
        return QueueingHint.QUEUE
    if not pod.scheduling_group or after.key != pod.pod_group_key:
        return QueueingHint.QUEUE_SKIP
    if not (before.is_gang and after.is_gang) or after.min_count >= before.min_count:
        return QueueingHint.QUEUE_SKIP
    return QueueingHint.QUEUE


def new(args: object, handle: Handle) -> GangScheduling:
    if args is not None:
        raise TypeError(f"{NAME} takes no args")
    return GangScheduling(handle)
