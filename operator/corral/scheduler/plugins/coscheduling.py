"""Coscheduling (QueueSort, PreFilter, PostFilter, Permit, Reserve) — scheduler-plugins'
semantics (SP ``pkg/coscheduling``, ``core/core.go``, ``pkg/util/podgroup.go``; KEP 42).

A pod joins a gang with the label ``scheduling.x-k8s.io/pod-group: <name>``, naming a PodGroup
(``scheduling.x-k8s.io/v1alpha1``) in its namespace: ``minMember``, optional ``minResources``
and ``scheduleTimeoutSeconds``.

- QueueSort: higher priority first; then the earlier group time (the group's last failure, if
  one is recorded, else its ``creationTimestamp``; a pod without a group: its initial attempt);
  then ``namespace/name``.
- PreFilter (failures are UnschedulableAndUnresolvable: no preemption): a group backed off
  (``podGroupBackoffSeconds``) fails; fewer than ``minMember`` pods carrying the label in the
  namespace fail; scheduling-gated siblings beyond the slack fail; with ``minResources``, the
  cluster's free resources (this group's own pods not counted as using any) must cover them
  and ``minMember`` pods, node by node — a pass is remembered for ``permitWaitingTimeSeconds``.
- Permit: a labelled pod whose PodGroup is missing is Unschedulable. The pod counts as
  assigned; once ``minMember`` pods of the group are assigned (permitted here, or bound) every
  waiting sibling is allowed; until then the pod waits (``scheduleTimeoutSeconds``, else
  ``permitWaitingTimeSeconds`` when non-zero, else 60 s), and the first one assigned activates
  its siblings — and so does the first one permitted after members were lost (Corral's).
- PostFilter, after a member failed Filter: unless ``minMember`` are assigned already or the
  unassigned share is at most ``podGroupRejectPercentage``, every waiting sibling is rejected,
  the group is backed off (when enabled and ``minMember`` pods exist), its minResources pass is
  forgotten and its failure time recorded (which sorts it behind newer groups).
- Unreserve (Permit timed out, a sibling was rejected, the bind failed): the pod is no longer
  assigned, waiting siblings are rejected, the group's pass forgotten, its failure recorded.

Corral's differences: the siblings are those the engine's pod lister knows (every bound pod,
and the pending pods of its own profiles; SP's informer also lists other schedulers' pending
pods); "assigned" is kept by UID (SP keys it by pod name) and a deleted pod stops counting at
once, and so does a waiting pod once it is rejected (by any plugin) or its Permit timeout
passes, though no Unreserve ran for it: SP's set keeps a permitted pod until its Unreserve, which
runs only with Coscheduling enabled at Reserve (SP's integration test leaves it out), so there a
member rejected in PostFilter or timed out kept counting, and a later sibling completed a
"quorum" of pods that were not there and bound alone. The resource gap is printed as
quantities (``resource gap: map[cpu:4]``) rather than Go's ``Quantity`` structs. Times are
monotonic (the queue's clock): PodGroup creation times are moved onto it by the wall clock's
offset when the plugin starts.

A new pending member requeues the members of its group Coscheduling refused, once the group
has ``minMember`` pods. SP registers Pod/Add, but kube-scheduler queues a pending pod's add as
an event only with GenericWorkload, so there members refused for want of siblings wait for a
bound pod, Permit's activation (which needs a member that fits) or the 5-minute flush: with
one member that fits nowhere or is gated, arriving after the others were refused, the group
stalls for those 5 minutes (SP #397's siblings that miss each other).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from fractions import Fraction
from typing import Any, Final

from corral.scheduler.config import plugin_args, quantity
from corral.scheduler.config.args import CoschedulingArgs
from corral.scheduler.config.object_fields import object_field
from corral.scheduler.framework import listers
from corral.scheduler.framework.cluster_events import (
    ASSIGNED_POD,
    UNSCHEDULED_POD,
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    Narrowing,
    QueueingHint,
)
from corral.scheduler.framework.cycle_state import CycleState
from corral.scheduler.framework.diagnosis import NodeToStatus
from corral.scheduler.framework.interface import Handle, PostFilterResult, PreFilterResult
from corral.scheduler.framework.snapshot import Snapshot
from corral.scheduler.framework.status import Code, Status
from corral.scheduler.framework.types import NodeInfo, PodInfo, QueuedPodInfo
from corral.scheduler.plugins import names

NAME: Final = names.COSCHEDULING
POD_GROUP_LABEL: Final = "scheduling.x-k8s.io/pod-group"
DEFAULT_WAIT_SECONDS: Final = 60.0  # SP util.DefaultWaitTime

ERR_POD_GROUP_NOT_FOUND: Final = "PodGroup not found"
ERR_NO_POD_GROUP: Final = "can not find pod group"
REJECTED_IN_POST_FILTER: Final = "optimistic rejection in PostFilter"
REJECTED_IN_UNRESERVE: Final = "rejection in Unreserve"

_CPU: Final = "cpu"
_PODS: Final = "pods"
_BASE: Final = ("cpu", "memory", "ephemeral-storage", "pods")


def failed_recently(group: str) -> str:
    return f"podGroup {group} failed recently"


def not_enough_siblings(pod: str, count: int, min_member: int) -> str:
    return (
        f"pre-filter pod {pod} cannot find enough sibling pods, current pods number: {count}, "
        f"minMember of group: {min_member}"
    )


def gated_siblings(pod: str) -> str:
    return f"pre-filter pod {pod} cannot proceed due to gated pods in the same PodGroup"


def group_rejected(group: str, pod: str) -> str:
    return f"PodGroup {group} gets rejected due to Pod {pod} is unschedulable even after PostFilter"


def resource_gap(gap: Mapping[str, Fraction]) -> str:
    shown = " ".join(f"{name}:{_show(gap[name])}" for name in sorted(gap))
    return f"resource gap: map[{shown}]"


def _show(amount: Fraction) -> str:
    return str(amount.numerator) if amount.denominator == 1 else f"{float(amount):g}"


# --- PodGroup objects -------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class PodGroup:
    """What Coscheduling reads of a ``scheduling.x-k8s.io/v1alpha1`` PodGroup."""

    namespace: str
    name: str
    min_member: int
    min_resources: Mapping[str, Fraction] | None
    schedule_timeout_seconds: int | None
    created: float | None  # creationTimestamp, seconds since the epoch

    @property
    def full_name(self) -> str:
        return f"{self.namespace}/{self.name}"


def pod_group_from_json(obj: Mapping[str, Any]) -> PodGroup:
    """Raises ValueError (or TypeError) on a field the CRD's schema would have refused (the
    engine's informer refuses such objects first; others may reach here)."""
    meta, spec = object_field(obj, "metadata"), object_field(obj, "spec")
    raw_resources = spec.get("minResources")
    resources = (
        {str(k): quantity.exact(v) for k, v in raw_resources.items()}  # compared exactly
        if isinstance(raw_resources, Mapping)
        else None
    )
    timeout = spec.get("scheduleTimeoutSeconds")
    return PodGroup(
        namespace=str(meta.get("namespace") or ""),
        name=str(meta.get("name") or ""),
        min_member=int(spec.get("minMember") or 0),
        min_resources=resources,
        schedule_timeout_seconds=None if timeout is None else int(timeout),
        created=_timestamp(meta.get("creationTimestamp")),
    )


def _timestamp(value: object) -> float | None:
    if not isinstance(value, str) or not value:
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def wait_seconds(group: PodGroup | None, permit_waiting_time_seconds: int) -> float:
    """SP ``GetWaitTimeDuration``: the group's ``scheduleTimeoutSeconds``, else the args'
    ``permitWaitingTimeSeconds`` when non-zero, else 60 s."""
    if group is not None and group.schedule_timeout_seconds is not None:
        return float(group.schedule_timeout_seconds)
    if permit_waiting_time_seconds:
        return float(permit_waiting_time_seconds)
    return DEFAULT_WAIT_SECONDS


def group_name(pod: PodInfo) -> str:
    return pod.labels.get(POD_GROUP_LABEL, "")


def full_group_name(pod: PodInfo) -> str:
    name = group_name(pod)
    return f"{pod.namespace}/{name}" if name else ""


# --- the minResources check (SP CheckClusterResource) -----------------------------------------


def free_resources(node: NodeInfo, group: str) -> dict[str, Fraction]:
    """What ``node`` has left, in quantity units (cpu in cores), with the pods of ``group``
    (``namespace/name``) taken off it (SP ``getNodeResource``)."""
    own = [p for p in node.pods if full_group_name(p) == group]
    alloc, req = node.allocatable, node.requested
    cpu = req.milli_cpu - sum(p.requests.milli_cpu for p in own)
    memory = req.memory - sum(p.requests.memory for p in own)
    storage = req.ephemeral_storage - sum(p.requests.ephemeral_storage for p in own)
    free = {
        "cpu": Fraction(alloc.milli_cpu - cpu, 1000),
        "memory": Fraction(alloc.memory - memory),
        "ephemeral-storage": Fraction(alloc.ephemeral_storage - storage),
        "pods": Fraction(alloc.allowed_pods - (len(node.pods) - len(own))),
    }
    for name, amount in alloc.scalar.items():
        used = req.scalar.get(name, 0) - sum(p.requests.scalar.get(name, 0) for p in own)
        free[name] = Fraction(amount - used)
    return free


def check_cluster_resource(
    nodes: Sequence[NodeInfo], request: Mapping[str, Fraction], group: str
) -> str | None:
    """None when the nodes' free resources, summed in order, cover ``request``; else the
    resource gap's message."""
    needed = dict(request)
    for node in nodes:
        free = free_resources(node, group)
        for name in list(needed):
            left = needed[name] - free.get(name, Fraction(0))
            if left <= 0:
                del needed[name]
            else:
                needed[name] = left
        if not needed:
            return None
    return resource_gap(needed)


# --- the plugin --------------------------------------------------------------------------------


class _Expiring:
    """Keys with a deadline (SP's go-cache TTL entries)."""

    def __init__(self) -> None:
        self._until: dict[str, float] = {}

    def add(self, key: str, ttl: float, now: float) -> None:
        self._until[key] = now + ttl

    def has(self, key: str, now: float) -> bool:
        until = self._until.get(key)
        if until is None:
            return False
        if until <= now:
            del self._until[key]
            return False
        return True

    def delete(self, key: str) -> None:
        self._until.pop(key, None)


class Coscheduling:
    name: str = NAME

    def __init__(
        self,
        args: CoschedulingArgs,
        handle: Handle,
        *,
        clock: Callable[[], float] = time.monotonic,
        wall_offset: float | None = None,
    ) -> None:
        wait, backoff = args.permit_waiting_time_seconds, args.pod_group_backoff_seconds
        pct = args.pod_group_reject_percentage
        assert wait is not None, "defaulted by plugin_args"
        assert backoff is not None, "defaulted by plugin_args"
        assert pct is not None, "defaulted by plugin_args"
        self.handle = handle
        self.permit_waiting_time_seconds = wait
        self.backoff_seconds = backoff
        self.reject_threshold = float(pct) / 100.0
        self.clock = clock
        # Wall time minus the monotonic clock: PodGroup creation times onto the queue's clock.
        self.wall_offset = time.time() - clock() if wall_offset is None else wall_offset
        self._lock = threading.Lock()
        self._permitted: dict[str, set[str]] = {}  # group -> UIDs assigned at Permit
        self._allowed: dict[str, set[str]] = {}  # group -> those of them let through
        self._resources_ok = _Expiring()  # SP permittedPG
        self._backed_off = _Expiring()  # SP backedOffPG
        self._failed_at: dict[str, float] = {}  # SP lastFailedSchedulePG
        self._parsed: dict[str, tuple[Mapping[str, Any], PodGroup | None]] = {}

    # --- lookups ----------------------------------------------------------------------------

    def pod_group(self, pod: PodInfo) -> tuple[str, PodGroup | None]:
        """(``namespace/name`` or "", the PodGroup or None) — SP ``GetPodGroup``."""
        name = group_name(pod)
        if not name:
            return "", None
        full = f"{pod.namespace}/{name}"
        objects = self.handle.objects
        raw = (
            objects.get(listers.SP_POD_GROUP, pod.namespace, name) if objects is not None else None
        )
        if raw is None:
            return full, None
        # QueueSort asks for every comparison: an object is parsed once (the store replaces
        # an object on each change, so its identity tells a change).
        cached = self._parsed.get(full)
        if cached is not None and cached[0] is raw:
            return full, cached[1]
        try:
            group: PodGroup | None = pod_group_from_json(raw)
        except (ValueError, TypeError):
            group = None
        self._parsed[full] = (raw, group)
        return full, group

    def siblings(self, pod: PodInfo) -> Sequence[PodInfo]:
        """The pods carrying the pod's group label in its namespace (the pod too, once the
        engine knows it)."""
        lister = self.handle.pod_lister
        if lister is None:
            return ()
        return lister.labelled(pod.namespace, POD_GROUP_LABEL, group_name(pod))

    def assigned_count(
        self, full: str, siblings: Sequence[PodInfo] | None, current: str = ""
    ) -> int:
        """Pods of the group bound, or permitted here and still on their way: the pod being
        permitted (``current``), one waiting at Permit that no plugin rejected and whose
        timeout has not passed, one this plugin let through. Without a lister: every pod
        permitted here. A permitted pod that left Permit otherwise (rejected, timed out), or
        that the lister no longer knows (deleted), does not count."""
        return self._count(full, siblings, current)[0]

    def _count(
        self, full: str, siblings: Sequence[PodInfo] | None, current: str
    ) -> tuple[int, set[str]]:
        """``assigned_count`` and the permitted pods that no longer count."""
        with self._lock:
            permitted = set(self._permitted.get(full, ()))
            allowed = set(self._allowed.get(full, ()))
        if siblings is None:
            return len(permitted), set()
        known = {p.uid for p in siblings}
        bound = {p.uid for p in siblings if p.node_name}
        gone = {
            uid
            for uid in permitted
            if uid != current
            and uid not in bound
            and (uid not in known or not (uid in allowed or self._waiting(uid)))
        }
        return len(((permitted & known) - gone) | bound), gone

    def _drop(self, full: str, gone: set[str]) -> None:
        """Forget permitted pods that no longer count (the scheduling thread's Permit only:
        the pod it permits is not waiting yet)."""
        with self._lock:
            self._permitted.get(full, set()).difference_update(gone)
            self._allowed.get(full, set()).difference_update(gone)

    def _waiting(self, uid: str) -> bool:
        """Whether ``uid`` waits at Permit and no plugin rejected it nor let its timeout pass."""
        waiting = self.handle.get_waiting_pod(uid)
        return waiting is not None and not waiting.rejected()

    def _siblings_or_none(self, pod: PodInfo) -> Sequence[PodInfo] | None:
        return None if self.handle.pod_lister is None else self.siblings(pod)

    def mark_failure(self, full: str) -> None:
        with self._lock:
            self._failed_at[full] = self.clock()

    def clear_failure(self, full: str) -> None:
        with self._lock:
            self._failed_at.pop(full, None)

    # --- QueueSort --------------------------------------------------------------------------

    def less(self, a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
        pa, pb = a.pod.priority, b.pod.priority
        if pa != pb:
            return pa > pb
        ta, tb = self._group_time(a), self._group_time(b)
        if ta == tb:
            return f"{a.pod.namespace}/{a.pod.name}" < f"{b.pod.namespace}/{b.pod.name}"
        return ta < tb

    def _group_time(self, qpi: QueuedPodInfo) -> float:
        initial = qpi.initial_attempt_timestamp
        ts = qpi.timestamp if initial is None else initial
        full, group = self.pod_group(qpi.pod)
        if not full:
            return ts
        failed = self._failed_at.get(full)
        if failed is not None:
            return failed
        if group is None or group.created is None:
            return ts
        return group.created - self.wall_offset

    # --- PreFilter --------------------------------------------------------------------------

    def pre_filter(
        self, state: CycleState, pod: PodInfo, snapshot: Snapshot
    ) -> tuple[PreFilterResult | None, Status | None]:
        message = self._pre_filter(pod, snapshot)
        if message is None:
            return None, None
        return None, Status.of(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, message)

    def _pre_filter(self, pod: PodInfo, snapshot: Snapshot) -> str | None:
        full, group = self.pod_group(pod)
        if group is None:
            return None
        now = self.clock()
        with self._lock:
            if self._backed_off.has(full, now):
                return failed_recently(full)
        siblings = self.siblings(pod)
        gap = group.min_member - len(siblings)
        if gap > 0:
            return not_enough_siblings(pod.name, len(siblings), group.min_member)
        # minMember below the replicas leaves slack for that many gated siblings.
        for sibling in siblings:
            if sibling.scheduling_gates:
                gap += 1
            if gap > 0:
                return gated_siblings(pod.name)
        if group.min_resources is None:
            return None
        with self._lock:
            if self._resources_ok.has(full, now):
                return None
        request = {**group.min_resources, _PODS: Fraction(group.min_member)}
        gap_message = check_cluster_resource(snapshot.node_infos(), request, full)
        if gap_message is not None:
            return gap_message
        with self._lock:
            self._resources_ok.add(full, float(self.permit_waiting_time_seconds), now)
        return None

    def pre_filter_extensions(self) -> None:
        return None

    # --- PostFilter -------------------------------------------------------------------------

    def post_filter(
        self, state: CycleState, pod: PodInfo, statuses: NodeToStatus
    ) -> tuple[PostFilterResult | None, Status | None]:
        full, group = self.pod_group(pod)
        if group is None:
            return None, Status.of(Code.UNSCHEDULABLE, ERR_NO_POD_GROUP)
        siblings = self._siblings_or_none(pod)
        assigned = self.assigned_count(full, siblings)
        if assigned >= group.min_member:
            return None, Status.of(Code.UNSCHEDULABLE)
        unassigned = float(group.min_member - assigned) / float(group.min_member)
        if unassigned <= self.reject_threshold:
            return None, Status.of(Code.UNSCHEDULABLE)
        self._reject_waiting(pod.namespace, group.name, REJECTED_IN_POST_FILTER)
        if self.backoff_seconds > 0 and len(siblings or ()) >= group.min_member:
            with self._lock:
                self._backed_off.add(full, float(self.backoff_seconds), self.clock())
        with self._lock:
            self._resources_ok.delete(full)
        self.mark_failure(full)
        return None, Status.of(Code.UNSCHEDULABLE, group_rejected(full, pod.name))

    def _reject_waiting(self, namespace: str, name: str, message: str) -> None:
        for waiting in self.handle.iterate_waiting_pods():
            other = waiting.pod
            if other.namespace == namespace and group_name(other) == name:
                waiting.reject(NAME, message)

    # --- Permit -----------------------------------------------------------------------------

    def permit(
        self, state: CycleState, pod: PodInfo, node_name: str
    ) -> tuple[Status | None, float]:
        full, group = self.pod_group(pod)
        if not full:
            return None, 0.0
        if group is None:
            return Status.of(Code.UNSCHEDULABLE, ERR_POD_GROUP_NOT_FOUND), 0.0
        with self._lock:
            self._permitted.setdefault(full, set()).add(pod.uid)
            self._allowed.get(full, set()).discard(pod.uid)  # back at Permit: not through
        siblings = self._siblings_or_none(pod)
        assigned, lost = self._count(full, siblings, pod.uid)
        if lost:
            self._drop(full, lost)
        if assigned >= group.min_member:
            self.clear_failure(full)
            through = {pod.uid}
            for waiting in self.handle.iterate_waiting_pods():
                if full_group_name(waiting.pod) == full and not waiting.rejected():
                    waiting.allow(NAME)
                    through.add(waiting.pod.uid)
            with self._lock:
                self._allowed.setdefault(full, set()).update(through)
            return None, 0.0
        if assigned == 1 or lost:
            # Only the first assigned pod activates its siblings (SP #682); and the first
            # after members were lost: rejected or timed out at Permit, they wait in
            # unschedulablePods for an event their group will not send.
            self.handle.activate(
                [p.uid for p in siblings or () if p.uid != pod.uid and not p.node_name]
            )
        wait = wait_seconds(group, self.permit_waiting_time_seconds)
        return Status.of(Code.WAIT), wait

    # --- Reserve ----------------------------------------------------------------------------

    def reserve(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        return None

    def unreserve(self, state: CycleState, pod: PodInfo, node_name: str) -> None:
        full, group = self.pod_group(pod)
        if group is None:
            return
        with self._lock:
            permitted = self._permitted.get(full)
            if permitted is not None:
                permitted.discard(pod.uid)
                if not permitted:
                    del self._permitted[full]
            allowed = self._allowed.get(full)
            if allowed is not None:
                allowed.discard(pod.uid)
                if not allowed:
                    del self._allowed[full]
        self._reject_waiting(pod.namespace, group.name, REJECTED_IN_UNRESERVE)
        with self._lock:
            self._resources_ok.delete(full)
        self.mark_failure(full)

    # --- events -----------------------------------------------------------------------------

    def events_to_register(self) -> Sequence[ClusterEvent | ClusterEventWithHint]:
        # SP's Pod/Add and PodGroup Add/Update, without SP's hints (added, then reverted: #972,
        # #983). A new pending pod requeues only the members of its own group, once it has
        # minMember pods.
        return (
            ClusterEvent(ASSIGNED_POD, ActionType.ADD),
            ClusterEventWithHint(
                ClusterEvent(UNSCHEDULED_POD, ActionType.ADD), self.sibling_added, SIBLINGS
            ),
            ClusterEvent(listers.SP_POD_GROUP, ActionType.ADD | ActionType.UPDATE),
        )

    def sibling_added(self, pod: PodInfo, old: object, new: object) -> QueueingHint:
        """A pending pod was added: the sibling a member refused for want of siblings waited
        for once the group has ``minMember`` pods (the pod lister has the new one already);
        a pod of another group (or of none), or one short of ``minMember``, is not. A member
        whose PodGroup is missing waits for the PodGroup's Add."""
        if not isinstance(new, PodInfo):
            return QueueingHint.QUEUE
        name = group_name(pod)
        if not name or new.namespace != pod.namespace or group_name(new) != name:
            return QueueingHint.QUEUE_SKIP
        _, group = self.pod_group(pod)
        if group is None or len(self.siblings(pod)) < group.min_member:
            return QueueingHint.QUEUE_SKIP
        return QueueingHint.QUEUE


def _group_keys(pod: PodInfo) -> frozenset[Hashable]:
    name = group_name(pod)
    return frozenset({(pod.namespace, name)}) if name else frozenset()


def _added_group_keys(old: object, new: object) -> frozenset[Hashable] | None:
    return _group_keys(new) if isinstance(new, PodInfo) else None


# The pods sibling_added may queue: those of the added pod's group.
SIBLINGS: Final = Narrowing(_group_keys, _added_group_keys)


def new(args: object, handle: Handle) -> Coscheduling:
    return Coscheduling(plugin_args(NAME, args), handle)
