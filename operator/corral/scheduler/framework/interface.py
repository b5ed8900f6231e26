"""One Protocol per extension point, the batch forms, and the handle plugins receive.

Contract for every plugin: a ``name`` attribute and only the methods of the points it
implements; the runtime discovers them structurally when the profile is built. Per-node forms
take a :class:`~corral.scheduler.framework.types.NodeInfo`; batch forms take the cycle's
:class:`~corral.scheduler.framework.snapshot.Snapshot` and work on whole columns. A plugin may
offer both (in-tree plugins do, with identical semantics); the runtime prefers the batch form.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from corral.scheduler.framework.cluster_events import ClusterEvent, ClusterEventWithHint
from corral.scheduler.framework.cycle_state import CycleState
from corral.scheduler.framework.diagnosis import NodeToStatus
from corral.scheduler.framework.extender import Extender
from corral.scheduler.framework.listers import (
    ObjectLister,
    ObjectUpdater,
    PodLister,
    PodNominator,
    PreemptionExecutor,
    ResourceClaimWriter,
)
from corral.scheduler.framework.podgroup import PodGroupRecord, PodGroupState
from corral.scheduler.framework.snapshot import Snapshot
from corral.scheduler.framework.status import Status
from corral.scheduler.framework.types import NodeInfo, PodInfo, QueuedPodInfo

Slots = npt.NDArray[np.intp]
Scores = npt.NDArray[np.int64]

MAX_NODE_SCORE = 100
MIN_NODE_SCORE = 0
MAX_TOTAL_SCORE = 2**63 - 1


@dataclass(frozen=True, slots=True)
class PreFilterResult:
    """Nodes a PreFilter restricts the cycle to; ``None`` means all nodes."""

    node_names: frozenset[str] | None = None

    def all_nodes(self) -> bool:
        return self.node_names is None

    def merge(self, other: PreFilterResult | None) -> PreFilterResult:
        if other is None or other.node_names is None:
            return self
        if self.node_names is None:
            return other
        return PreFilterResult(self.node_names & other.node_names)


@dataclass(frozen=True, slots=True)
class PostFilterResult:
    nominated_node_name: str = ""


@dataclass(frozen=True, slots=True, eq=False)
class FilterVerdict:
    """A batch Filter's answer over all snapshot slots.

    ``passed[slot]`` says whether the node passes. For failing slots, ``reasons[slot]`` is a
    plugin-defined code (``None``: every failing node has code 0) and ``describe(code)`` gives
    the Status for it; the runtime only calls ``describe`` for codes that occur, when it needs
    statuses (FailedScheduling message, PostFilter).
    """

    passed: npt.NDArray[np.bool_]
    reasons: npt.NDArray[np.int64] | None
    describe: Callable[[int], Status]

    @classmethod
    def uniform(cls, passed: npt.NDArray[np.bool_], status: Status) -> FilterVerdict:
        return cls(passed=passed, reasons=None, describe=lambda _code: status)


# --- plugins ------------------------------------------------------------------------------------


@runtime_checkable
class Plugin(Protocol):
    name: str


@runtime_checkable
class PreEnqueuePlugin(Plugin, Protocol):
    def pre_enqueue(self, pod: PodInfo) -> Status | None: ...


@runtime_checkable
class QueueSortPlugin(Plugin, Protocol):
    def less(self, a: QueuedPodInfo, b: QueuedPodInfo) -> bool: ...


@runtime_checkable
class EnqueueExtensions(Plugin, Protocol):
    """Events that may make a pod this plugin rejected schedulable, each optionally with the
    queueing hint that judges it (upstream EventsToRegister; see ``cluster_events``)."""

    def events_to_register(self) -> Sequence[ClusterEvent | ClusterEventWithHint]: ...


class PreFilterExtensions(Protocol):
    """Incremental updates of PreFilter state for pods added/removed in what-if evaluations."""

    def add_pod(
        self, state: CycleState, pod: PodInfo, pod_to_add: PodInfo, node: NodeInfo
    ) -> Status | None: ...

    def remove_pod(
        self, state: CycleState, pod: PodInfo, pod_to_remove: PodInfo, node: NodeInfo
    ) -> Status | None: ...


@runtime_checkable
class PreFilterPlugin(Plugin, Protocol):
    def pre_filter(
        self, state: CycleState, pod: PodInfo, snapshot: Snapshot
    ) -> tuple[PreFilterResult | None, Status | None]: ...

    def pre_filter_extensions(self) -> PreFilterExtensions | None: ...


@runtime_checkable
class FilterPlugin(Plugin, Protocol):
    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status | None: ...


@runtime_checkable
class BatchFilterPlugin(Plugin, Protocol):
    """``None``: this pod needs the plugin's per-node form (allowed only for a plugin that also
    implements ``filter``); the runtime then calls that on each node instead."""

    def filter_batch(
        self, state: CycleState, pod: PodInfo, snapshot: Snapshot
    ) -> FilterVerdict | None: ...


@runtime_checkable
class PostFilterPlugin(Plugin, Protocol):
    def post_filter(
        self, state: CycleState, pod: PodInfo, statuses: NodeToStatus
    ) -> tuple[PostFilterResult | None, Status | None]: ...


@runtime_checkable
class PreScorePlugin(Plugin, Protocol):
    def pre_score(
        self, state: CycleState, pod: PodInfo, snapshot: Snapshot, slots: Slots
    ) -> Status | None: ...


@runtime_checkable
class ScorePlugin(Plugin, Protocol):
    def score(
        self, state: CycleState, pod: PodInfo, node: NodeInfo
    ) -> tuple[int, Status | None]: ...


@runtime_checkable
class BatchScorePlugin(Plugin, Protocol):
    """Scores for ``slots`` (feasible nodes), aligned with them."""

    def score_batch(
        self, state: CycleState, pod: PodInfo, snapshot: Snapshot, slots: Slots
    ) -> tuple[Scores, Status | None]: ...


@runtime_checkable
class ScoreExtensions(Plugin, Protocol):
    """NormalizeScore: rewrite ``scores`` (aligned with the feasible nodes) in place."""

    def normalize_score(self, state: CycleState, pod: PodInfo, scores: Scores) -> Status | None: ...


@runtime_checkable
class ReservePlugin(Plugin, Protocol):
    def reserve(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None: ...

    def unreserve(self, state: CycleState, pod: PodInfo, node_name: str) -> None: ...


@runtime_checkable
class PermitPlugin(Plugin, Protocol):
    """Returns a status and, with Wait, how long (seconds) the pod may wait for approval."""

    def permit(
        self, state: CycleState, pod: PodInfo, node_name: str
    ) -> tuple[Status | None, float]: ...


@runtime_checkable
class PreBindPlugin(Plugin, Protocol):
    def pre_bind(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None: ...


@runtime_checkable
class PreBindPreFlightPlugin(Plugin, Protocol):
    """Will this PreBind plugin do anything for ``pod`` on ``node_name``? Success: it will;
    Skip: it will not (its PreBind is then not called); an error fails the binding cycle. Any
    other code is an error too. Upstream (1.34+) asks it of every PreBind plugin before Permit's
    wait; a PreBind plugin without it is taken to answer Success."""

    def pre_bind_pre_flight(
        self, state: CycleState, pod: PodInfo, node_name: str
    ) -> Status | None: ...


@runtime_checkable
class BindPlugin(Plugin, Protocol):
    """Bind the pod; return Skip to let the next bind plugin do it."""

    def bind(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None: ...


@runtime_checkable
class PostBindPlugin(Plugin, Protocol):
    def post_bind(self, state: CycleState, pod: PodInfo, node_name: str) -> None: ...


@runtime_checkable
class PlacementFeasiblePlugin(Plugin, Protocol):
    """The pod-group cycle's check after each member (upstream ``PlacementFeasiblePlugin``):
    Success when the group's constraints are met, Wait when more members may still meet them,
    Unschedulable when they cannot be met any more. ``remaining`` members are still to be
    tried; ``scheduled`` are placed (this cycle's and those assumed or bound before)."""

    def placement_feasible(
        self, group: PodGroupRecord, remaining: int, scheduled: int
    ) -> Status | None: ...


# --- what plugins get from the framework ---------------------------------------------------------


class PodBinder(Protocol):
    """Posts the binding of ``pod`` to ``node_name``; raises on failure (the engine's,
    ``engine/binding.py``, posts it through corral.k8s)."""

    def __call__(self, pod: PodInfo, node_name: str) -> None: ...


class WaitingPod(Protocol):
    @property
    def pod(self) -> PodInfo: ...

    def pending_plugins(self) -> list[str]: ...

    def rejected(self) -> bool: ...

    def allow(self, plugin: str) -> None: ...

    def reject(self, plugin: str, message: str) -> None: ...


class Handle(Protocol):
    """The framework as plugins see it."""

    @property
    def pod_binder(self) -> PodBinder | None: ...

    def get_waiting_pod(self, uid: str) -> WaitingPod | None: ...

    def iterate_waiting_pods(self) -> Iterator[WaitingPod]: ...

    def reject_waiting_pod(self, uid: str) -> bool: ...

    # --- cluster state beyond nodes and pods (None where the engine wires none, e.g. tests) ---

    @property
    def objects(self) -> ObjectLister | None: ...

    @property
    def pod_lister(self) -> PodLister | None: ...

    @property
    def nominator(self) -> PodNominator | None: ...

    @property
    def preemption_executor(self) -> PreemptionExecutor | None: ...

    @property
    def claim_writer(self) -> ResourceClaimWriter | None: ...

    @property
    def extenders(self) -> Sequence[Extender]: ...

    @property
    def object_updater(self) -> ObjectUpdater | None:
        """API writes for plugins that change objects before binding (VolumeBinding)."""
        ...

    def snapshot(self) -> Snapshot | None:
        """The snapshot of the cycle in progress (upstream ``SnapshotSharedLister``)."""
        ...

    # --- pod groups (GenericWorkload; upstream PodGroupManager) --------------------------------

    @property
    def generic_workload(self) -> bool:
        """Whether the engine runs with the GenericWorkload gate (pod groups are scheduled
        together); plugins that act on pod groups ask."""
        ...

    @property
    def pod_groups(self) -> PodGroupManager | None:
        """The live pod-group states (the cache's), None when the gate is off."""
        ...

    def activate(self, uids: Sequence[str]) -> None:
        """Move these waiting pods to activeQ (upstream ``Handle.Activate``)."""
        ...

    # --- what-if evaluation (preemption) -----------------------------------------------------

    def has_pre_filter_extensions(self, state: CycleState) -> bool:
        """Whether any PreFilter plugin that ran for this cycle (did not Skip) has extensions:
        if not, the AddPod/RemovePod runners below do nothing."""
        ...

    def run_pre_filter_extension_add_pod(
        self, state: CycleState, pod: PodInfo, pod_to_add: PodInfo, node: NodeInfo
    ) -> Status | None: ...

    def run_pre_filter_extension_remove_pod(
        self, state: CycleState, pod: PodInfo, pod_to_remove: PodInfo, node: NodeInfo
    ) -> Status | None: ...

    def run_filter_plugins_with_nominated_pods(
        self, state: CycleState, pod: PodInfo, node: NodeInfo
    ) -> Status | None: ...

    def set_snapshot(self, snapshot: Snapshot) -> None:
        """The snapshot per-node filter runs read (workload preemption moves it along)."""
        ...

    def run_reserve(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None: ...

    def run_unreserve(self, state: CycleState, pod: PodInfo, node_name: str) -> None: ...


@dataclass(frozen=True, slots=True)
class ProposedAssignment:
    """A member the pod-group algorithm placed: its node and the cycle state it was placed
    with (upstream ``ProposedAssignment``)."""

    pod: PodInfo
    node_name: str
    state: CycleState


# Runs the pod-group algorithm again on the cycle's snapshot as it is now (upstream
# ``PodGroupSchedulingFunc``): the members it placed, and the group's status.
PodGroupSchedulingFunc = Callable[[], tuple[list[ProposedAssignment], Status | None]]


class MutableSnapshot(Protocol):
    """The pod-group cycle's own continuation of its snapshot (upstream's mutable snapshot
    lister): pods taken off or put back are seen by the snapshots it gives, not by the cache."""

    def snapshot(self) -> Snapshot: ...

    def remove(self, pod: PodInfo) -> None: ...

    def restore(self, pod: PodInfo) -> None: ...

    def assume(self, pod: PodInfo, node_name: str) -> PodInfo: ...

    def forget(self, pod: PodInfo) -> None: ...


@runtime_checkable
class PodGroupPostFilterPlugin(Plugin, Protocol):
    """After an unschedulable pod-group cycle (upstream ``PodGroupPostFilterPlugin``): may make
    room (workload-aware preemption). ``states``: the cycle state of each member the attempt
    evaluated, by UID (upstream's PodGroupCycleState). Returns each member's nominated node by
    UID."""

    def pod_group_post_filter(
        self,
        group: PodGroupRecord,
        members: Sequence[PodInfo],
        snapshot: MutableSnapshot,
        schedule: PodGroupSchedulingFunc,
        states: Mapping[str, CycleState],
    ) -> tuple[Mapping[str, str] | None, Status | None]: ...


class PodGroupManager(Protocol):
    """Live pod-group state as the cache keeps it (upstream ``PodGroupManager``)."""

    def pod_group(self, key: str) -> PodGroupRecord | None: ...

    def pod_group_counts(self, key: str) -> tuple[PodGroupRecord | None, int, int] | None: ...

    def pod_group_state(self, key: str) -> PodGroupState | None: ...


# A plugin factory: validated args object (or None for defaults, or a raw mapping) → plugin.
PluginFactory = Callable[[object, Handle], Plugin]
