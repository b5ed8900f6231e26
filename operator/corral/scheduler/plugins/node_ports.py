"""NodePorts (PreFilter, Filter).

The pod's wanted ports are its containers' (and sidecars') ports with ``hostPort > 0``; PreFilter
returns Skip when there are none. A node conflicts when one of its pods uses the same
(protocol, port) on the same host IP, where 0.0.0.0 (an empty hostIP) overlaps every IP
(upstream ``HostPortInfo.CheckConflict``). Conflict → Unschedulable (preemption may free it).

Batch form: only pods that use host ports are visited (a bool column of the pod table), each
marking its node; pods without host ports cost nothing.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Final

import numpy as np

from corral.scheduler.framework import cluster_events as ev
from corral.scheduler.framework.cluster_events import (
    ASSIGNED_POD,
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
)
from corral.scheduler.framework.snapshot import Snapshot
from corral.scheduler.framework.status import Code, Status
from corral.scheduler.framework.types import HostPort, NodeInfo, PodInfo
from corral.scheduler.plugins import names

NAME: Final = names.NODE_PORTS
PRE_FILTER_STATE_KEY: Final = "PreFilter" + NAME
ERR_REASON: Final = "node(s) didn't have free ports for the requested pod ports"
BIND_ALL: Final = "0.0.0.0"

_CONFLICT: Final = Status.of(Code.UNSCHEDULABLE, ERR_REASON)


@dataclass(frozen=True, slots=True)
class _PreFilterState:
    wanted: tuple[HostPort, ...]

    def clone(self) -> _PreFilterState:
        return self


def conflicts(wanted: Iterable[HostPort], used: Iterable[HostPort]) -> bool:
    """Whether any wanted port collides with a used one (upstream ``CheckConflict``)."""
    used = tuple(used)
    for w in wanted:
        for u in used:
            same_port = u.port == w.port and u.protocol == w.protocol
            if same_port and (w.ip == BIND_ALL or u.ip in (BIND_ALL, w.ip)):
                return True
    return False


class NodePorts:
    name: str = NAME

    def _wanted(self, state: CycleState, pod: PodInfo) -> tuple[HostPort, ...]:
        s = state.read(PRE_FILTER_STATE_KEY, _PreFilterState)
        return s.wanted if s is not None else pod.host_ports

    def pre_filter(
        self, state: CycleState, pod: PodInfo, snapshot: Snapshot
    ) -> tuple[PreFilterResult | None, Status | None]:
        if not pod.host_ports:
            return None, Status(Code.SKIP)
        state.write(PRE_FILTER_STATE_KEY, _PreFilterState(pod.host_ports))
        return None, None

    def pre_filter_extensions(self) -> PreFilterExtensions | None:
        return None

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status | None:
        wanted = self._wanted(state, pod)
        if wanted and any(conflicts(wanted, p.host_ports) for p in node.pods):
            return _CONFLICT
        return None

    def filter_batch(self, state: CycleState, pod: PodInfo, snapshot: Snapshot) -> FilterVerdict:
        passed = np.ones(snapshot.capacity, dtype=np.bool_)
        wanted = self._wanted(state, pod)
        table = snapshot.pods
        if wanted and table.size:
            rows = np.flatnonzero(table.has_ports[: table.size] & table.live())
            infos, node_slot = table.infos, table.node_slot
            for row in rows.tolist():
                slot = int(node_slot[row])
                other = infos[row]
                if passed[slot] and other is not None and conflicts(wanted, other.host_ports):
                    passed[slot] = False
        return FilterVerdict.uniform(passed, _CONFLICT)

    # --- queueing hints ---------------------------------------------------------------------

    def events_to_register(self) -> Sequence[ClusterEventWithHint]:
        # Ports are immutable: pod updates cannot free one. An added node always may.
        return (
            ClusterEventWithHint(
                ClusterEvent(ASSIGNED_POD, ActionType.DELETE), self.hint_assigned_pod_deleted
            ),
            ClusterEventWithHint(ClusterEvent(NODE, ActionType.ADD)),
        )

    def hint_assigned_pod_deleted(self, pod: PodInfo, old: object, new: object) -> QueueingHint:
        """The deleted pod was bound or nominated and held a port the pod wants."""
        deleted, _ = ev.as_objects(old, None, PodInfo)
        assert deleted is not None
        if not deleted.node_name and not deleted.nominated_node_name:
            return QueueingHint.QUEUE_SKIP
        if deleted.host_ports and conflicts(pod.host_ports, deleted.host_ports):
            return QueueingHint.QUEUE
        return QueueingHint.QUEUE_SKIP


def new(args: object, handle: Handle) -> NodePorts:
    if args is not None:
        raise TypeError(f"{NAME} takes no args")
    return NodePorts()
