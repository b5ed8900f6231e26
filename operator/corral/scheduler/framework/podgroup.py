"""PodGroups (``scheduling.k8s.io/v1beta1``) as the scheduler sees them, and their pods' state.

Contract (upstream ``backend/cache/podgroupstate.go``, ``framework/types.go``):
- :class:`PodGroupRecord` is a PodGroup object reduced to what scheduling reads: its policy
  (``basic`` or ``gang`` with ``minCount``), priority (``spec.priority``, nil is 0), disruption
  mode, generation and conditions; ``raw`` keeps the object for its status patch.
- :class:`PodGroupState` tracks one group's pods known to the scheduler, by UID: every member
  (``all``), the unscheduled ones, the assumed ones (reserved in this scheduler, not yet bound)
  and the assigned ones (bound). ``all_count`` is what GangScheduling's PreEnqueue compares
  with ``minCount``; ``scheduled_count`` (assumed + assigned) what its Permit and the pod-group
  cycle's PlacementFeasible compare. A state exists while it has pods or its PodGroup.
- A group's key is ``namespace/name``, as :attr:`PodInfo.pod_group_key`.
- :func:`member_order` is upstream's PodGroupMemberPodsOrderingFunc: priority desc, attempts
  desc, queue timestamp asc, name asc.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from corral.scheduler.framework.types import PodInfo, QueuedPodInfo

POLICY_BASIC: Final = "basic"
POLICY_GANG: Final = "gang"
CONDITION_INITIALLY_SCHEDULED: Final = "PodGroupInitiallyScheduled"
REASON_SCHEDULED: Final = "Scheduled"
REASON_UNSCHEDULABLE: Final = "Unschedulable"
REASON_SCHEDULER_ERROR: Final = "SchedulerError"


class MalformedPodGroupError(ValueError):
    """A PodGroup object the scheduler cannot read (no name, no policy)."""


def group_key(namespace: str, name: str) -> str:
    return f"{namespace}/{name}"


@dataclass(frozen=True, slots=True, eq=False)
class PodGroupRecord:
    namespace: str
    name: str
    uid: str = ""
    generation: int = 0
    resource_version: str = ""
    policy: str = POLICY_BASIC
    min_count: int = 1  # gang.minCount; 1 for the basic policy (upstream getMinCount)
    priority: int = 0
    disruption_all: bool = False  # spec.disruptionMode.all
    preemption_policy: str = ""  # spec.preemptionPolicy (alpha field), "" when unset
    conditions: tuple[Mapping[str, Any], ...] = ()
    raw: Mapping[str, Any] = field(default_factory=dict)

    @property
    def key(self) -> str:
        return group_key(self.namespace, self.name)

    @property
    def is_gang(self) -> bool:
        return self.policy == POLICY_GANG

    def condition(self, kind: str) -> Mapping[str, Any] | None:
        return next((c for c in self.conditions if c.get("type") == kind), None)


def pod_group_from_json(raw: Mapping[str, Any]) -> PodGroupRecord:
    meta = raw.get("metadata")
    spec = raw.get("spec")
    if not isinstance(meta, Mapping) or not isinstance(meta.get("name"), str):
        raise MalformedPodGroupError("PodGroup without metadata.name")
    spec = spec if isinstance(spec, Mapping) else {}
    policy = spec.get("schedulingPolicy")
    policy = policy if isinstance(policy, Mapping) else {}
    gang = policy.get("gang")
    min_count = 1
    kind = POLICY_BASIC
    if isinstance(gang, Mapping):
        kind = POLICY_GANG
        value = gang.get("minCount")
        min_count = value if isinstance(value, int) and not isinstance(value, bool) else 0
    priority = spec.get("priority")
    disruption = spec.get("disruptionMode")
    status = raw.get("status")
    conditions = status.get("conditions") if isinstance(status, Mapping) else None
    generation = meta.get("generation")
    return PodGroupRecord(
        namespace=str(meta.get("namespace") or "default"),
        name=meta["name"],
        uid=str(meta.get("uid") or ""),
        generation=generation if isinstance(generation, int) else 0,
        resource_version=str(meta.get("resourceVersion") or ""),
        policy=kind,
        min_count=min_count,
        priority=priority if isinstance(priority, int) and not isinstance(priority, bool) else 0,
        disruption_all=isinstance(disruption, Mapping) and disruption.get("all") is not None,
        preemption_policy=str(spec.get("preemptionPolicy") or ""),
        conditions=tuple(c for c in conditions or () if isinstance(c, Mapping)),
        raw=raw,
    )


@dataclass(slots=True)
class PodGroupState:
    """One group's pods (see the module contract). Not thread-safe: its owner locks."""

    pods: dict[str, PodInfo] = field(default_factory=dict)
    unscheduled: set[str] = field(default_factory=set)
    assumed: dict[str, PodInfo] = field(default_factory=dict)
    assigned: set[str] = field(default_factory=set)
    group: PodGroupRecord | None = None
    generation: int = 0

    # --- reads --------------------------------------------------------------------------------

    @property
    def all_count(self) -> int:
        return len(self.pods)

    @property
    def scheduled_count(self) -> int:
        return len(self.assumed) + len(self.assigned)

    def unscheduled_pods(self) -> list[PodInfo]:
        return [self.pods[uid] for uid in sorted(self.unscheduled)]

    def scheduled_pods(self) -> list[PodInfo]:
        """Assigned pods (as last seen), then assumed ones (on their assumed node)."""
        return [self.pods[uid] for uid in sorted(self.assigned)] + [
            self.assumed[uid] for uid in sorted(self.assumed)
        ]

    def empty(self) -> bool:
        return not self.pods and self.group is None

    def copy(self) -> PodGroupState:
        return PodGroupState(
            dict(self.pods), set(self.unscheduled), dict(self.assumed), set(self.assigned),
            self.group, self.generation,
        )  # fmt: skip

    # --- writes (upstream podGroupStateData) ------------------------------------------------

    def add_pod(self, pod: PodInfo) -> None:
        self.pods[pod.uid] = pod
        if pod.node_name:
            self.assigned.add(pod.uid)
            self.unscheduled.discard(pod.uid)
            self.assumed.pop(pod.uid, None)
        else:
            self.unscheduled.add(pod.uid)

    def update_pod(self, old: PodInfo, new: PodInfo) -> None:
        self.pods[new.uid] = new
        if not old.node_name and new.node_name:
            self.assigned.add(new.uid)
            self.unscheduled.discard(new.uid)
            self.assumed.pop(new.uid, None)

    def delete_pod(self, uid: str) -> None:
        self.pods.pop(uid, None)
        self.unscheduled.discard(uid)
        self.assumed.pop(uid, None)
        self.assigned.discard(uid)

    def assume_pod(self, pod: PodInfo) -> None:
        """``pod`` carries its assumed node. A pod the state does not know is ignored."""
        stored = self.pods.get(pod.uid)
        if stored is None:
            return
        if stored.node_name:
            self.assigned.add(pod.uid)
        else:
            self.assumed[pod.uid] = pod
        self.unscheduled.discard(pod.uid)

    def forget_pod(self, uid: str) -> None:
        stored = self.pods.get(uid)
        if stored is None:
            return
        self.assumed.pop(uid, None)
        if stored.node_name:
            self.assigned.add(uid)
        else:
            self.unscheduled.add(uid)


def member_order(qpi: QueuedPodInfo) -> tuple[int, int, float, str]:
    """Sort key of a group's queued members (upstream PodGroupMemberPodsOrderingFunc)."""
    return (-qpi.pod.priority, -qpi.attempts, qpi.timestamp, qpi.pod.name)


def entity_pod(group: PodGroupRecord, scheduler_name: str) -> PodInfo:
    """The stand-in a group entity shows QueueSort and the queue's bookkeeping: the group's key as
    UID, its priority, its members' scheduler."""
    return PodInfo(
        uid=f"podgroup:{group.key}",
        namespace=group.namespace,
        name=group.name,
        scheduler_name=scheduler_name,
        priority=group.priority,
    )


def with_condition(
    raw: Mapping[str, Any], condition: Mapping[str, Any]
) -> tuple[dict[str, Any], bool]:
    """The PodGroup's status with ``condition`` set as upstream's meta.SetStatusCondition sets it
    (lastTransitionTime kept unless the status changes), and whether anything changed."""
    status = copy.deepcopy(dict(raw.get("status") or {}))
    conditions: list[dict[str, Any]] = [dict(c) for c in status.get("conditions") or ()]
    for i, existing in enumerate(conditions):
        if existing.get("type") != condition["type"]:
            continue
        changed = any(
            existing.get(k) != condition[k] for k in condition if k != "lastTransitionTime"
        )
        if not changed:
            return status, False
        merged = {**existing, **condition}
        if existing.get("status") == condition["status"]:
            merged["lastTransitionTime"] = existing.get("lastTransitionTime")
        conditions[i] = merged
        break
    else:
        conditions.append(dict(condition))
    status["conditions"] = conditions
    return status, True


SET_ELEMENT_ORDER: Final = "$setElementOrder/conditions"


def condition_patch(raw: Mapping[str, Any], condition: Mapping[str, Any]) -> dict[str, Any] | None:
    """The strategic-merge patch upstream's updatePodGroupCondition sends, or None for a no-op.

    Upstream (util.PatchPodGroupStatus) sends CreateTwoWayMergePatch(the status *as the
    scheduler's cache shows it*, that status with the condition set): of a condition the record
    already has, only the fields that differ from the record's (with the merge key ``type``, and
    ``$setElementOrder/conditions``); a condition the record lacks goes whole. So when the
    record is stale the server keeps what the patch leaves out: a partly placed group's retry
    that fails right after its True was written, its record still showing an earlier
    False/Unschedulable, sends only the new message, and the server's condition stays True
    (reason Scheduled) with that message (gang conformance kind, seed 2). A record without the
    condition sends it whole, False over the True the watch has not brought back yet."""
    status, changed = with_condition(raw, condition)
    if not changed:
        return None
    before = {c.get("type"): c for c in (raw.get("status") or {}).get("conditions") or ()}
    entry = next(c for c in status["conditions"] if c.get("type") == condition["type"])
    old = before.get(condition["type"])
    if old is None:
        element = dict(entry)
    else:
        element = {k: v for k, v in entry.items() if old.get(k) != v}
        element["type"] = entry["type"]
    body: dict[str, Any] = {"conditions": [element]}
    if before:  # the record has a conditions list: a merge of lists, not a new key
        body[SET_ELEMENT_ORDER] = [{"type": c.get("type")} for c in status["conditions"]]
    return {"status": body}


@dataclass(slots=True, eq=False)
class QueuedPodGroupInfo(QueuedPodInfo):
    """A pod group in the scheduling queue (upstream ``QueuedPodGroupInfo``): one entity for all
    its queued members. ``pod`` is :func:`entity_pod` (the group's key as UID, its priority), so
    QueueSort and the queue's indexes treat it as one item; its own rejector sets stay empty:
    the members carry theirs, and the queue asks each member's hints. ``timestamp`` and
    ``attempts`` are the group's; the counts drive its backoff (upstream's
    ``UnschedulableCount`` and ``ConsecutiveErrorsCount``)."""

    group: PodGroupRecord | None = None
    members: list[QueuedPodInfo] = field(default_factory=list)
    unschedulable_count: int = 0
    consecutive_errors: int = 0

    @property
    def key(self) -> str:
        assert self.group is not None
        return self.group.key

    def add_member(self, qpi: QueuedPodInfo) -> None:
        """Insert in member order (upstream AddPod's binary search)."""
        order = member_order(qpi)
        i = 0
        while i < len(self.members) and member_order(self.members[i]) <= order:
            i += 1
        self.members.insert(i, qpi)

    def remove_member(self, uid: str) -> QueuedPodInfo | None:
        for i, m in enumerate(self.members):
            if m.pod.uid == uid:
                return self.members.pop(i)
        return None

    def member(self, uid: str) -> QueuedPodInfo | None:
        return next((m for m in self.members if m.pod.uid == uid), None)


def new_group_entity(group: PodGroupRecord, first: QueuedPodInfo) -> QueuedPodGroupInfo:
    """A group's entity created by its first queued member: the member's timestamps."""
    return QueuedPodGroupInfo(
        pod=entity_pod(group, first.pod.scheduler_name),
        timestamp=first.timestamp,
        initial_attempt_timestamp=first.initial_attempt_timestamp,
        group=group,
        members=[first],
    )
