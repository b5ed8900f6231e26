"""What the scheduling queue keeps beside its entities for pod groups (GenericWorkload).

Upstream's PriorityQueue invariants for a member pod (``scheduling_queue.go``):

1. *incomplete*: its PodGroup has not been observed → :attr:`GroupMembers.incomplete`;
2. *queued*: inside its group's entity in activeQ, backoffQ or unschedulable;
3. *pending*: its group is the entity last popped (its cycle runs) → :attr:`GroupMembers.pending`,
   until the cycle puts the group back.

:attr:`GroupMembers.where` maps every member the queue holds in any of the three to its group
key, so a delete, update or activate by UID finds it. Used under the queue's lock.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from corral.scheduler.framework.podgroup import PodGroupRecord
from corral.scheduler.framework.types import QueuedPodInfo


@dataclass
class GroupMembers:
    groups: dict[str, PodGroupRecord] = field(default_factory=dict)  # upstream workloadForest
    incomplete: dict[str, dict[str, QueuedPodInfo]] = field(default_factory=dict)
    pending: dict[str, dict[str, QueuedPodInfo]] = field(default_factory=dict)
    where: dict[str, str] = field(default_factory=dict)  # member uid -> group key
    last_popped: str = ""  # the group key of the entity in its cycle ("" when none)

    def put_incomplete(self, qpi: QueuedPodInfo) -> None:
        key = qpi.pod.pod_group_key
        self.incomplete.setdefault(key, {})[qpi.pod.uid] = qpi
        self.where[qpi.pod.uid] = key

    def put_pending(self, qpi: QueuedPodInfo) -> None:
        key = qpi.pod.pod_group_key
        self.pending.setdefault(key, {})[qpi.pod.uid] = qpi
        self.where[qpi.pod.uid] = key

    def take_incomplete(self, key: str) -> list[QueuedPodInfo]:
        return list(self.incomplete.pop(key, {}).values())

    def take_pending(self, key: str) -> list[QueuedPodInfo]:
        return list(self.pending.pop(key, {}).values())

    def drop(self, key: str, uid: str) -> QueuedPodInfo | None:
        """Remove ``uid`` from incomplete or pending (not from an entity)."""
        for where in (self.incomplete, self.pending):
            members = where.get(key)
            if members is not None and uid in members:
                qpi = members.pop(uid)
                if not members:
                    del where[key]
                return qpi
        return None

    def find(self, key: str, uid: str) -> QueuedPodInfo | None:
        for where in (self.incomplete, self.pending):
            qpi = where.get(key, {}).get(uid)
            if qpi is not None:
                return qpi
        return None

    def count(self, where: dict[str, dict[str, QueuedPodInfo]]) -> int:
        return sum(len(m) for m in where.values())
