"""NodeResourcesFit (PreFilter, Filter, PreScore, Score).

Filter (upstream ``fitsRequest``) collects every shortage: ``Too many pods`` when the node's pod
count + 1 exceeds its allowed pods; then, unless the pod requests nothing,
``Insufficient cpu|memory|ephemeral-storage|<scalar>`` when a positive request exceeds
allocatable - requested. Ignored extended resources (by name or by group prefix) are skipped.
The status is UnschedulableAndUnresolvable when some request exceeds the node's whole
allocatable (preemption cannot help), else Unschedulable. An extended resource a DeviceClass
provides (:mod:`.dra_extended_resources`) is not checked on a node whose allocatable lacks it
(0 or absent): DynamicResources allocates devices for it there (upstream
``shouldDelegateResourceToDRA``); a node advertising it is checked the classic way.

Score uses the configured strategy (``resource_scoring``) over the configured resources, with
non-zero requests (100m / 200Mi defaults) for cpu and memory.

Batch reason codes: bit 0 pods, bits 1-3 cpu/memory/ephemeral-storage, bits 4.. the pod's
scalar resources in request order, bit 62 unresolvable.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

import numpy as np

from corral.scheduler.config import plugin_args
from corral.scheduler.config.args import NodeResourcesFitArgs, ScoringStrategy
from corral.scheduler.framework import cluster_events as ev
from corral.scheduler.framework import listers, types
from corral.scheduler.framework import snapshot as snap
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
from corral.scheduler.framework.types import NodeInfo, NodeRecord, PodInfo, Resources
from corral.scheduler.plugins import names
from corral.scheduler.plugins.helper import resource_scoring as rs
from corral.scheduler.plugins.helper.dra_extended_resources import (
    DEVICE_CLASS_PREFIX,
    DeviceClassResolver,
)

NAME: Final = names.NODE_RESOURCES_FIT
PRE_SCORE_STATE_KEY: Final = "PreScore" + NAME
REASON_TOO_MANY_PODS: Final = "Too many pods"

_UNRESOLVABLE_BIT: Final = 1 << 62
_MAX_BATCH_SCALARS: Final = 58
_FIXED_REASONS: Final = (
    REASON_TOO_MANY_PODS,
    "Insufficient cpu",
    "Insufficient memory",
    "Insufficient ephemeral-storage",
)


def insufficient(resource: str) -> str:
    return f"Insufficient {resource}"


class NodeResourcesFit:
    name: str = NAME

    def __init__(
        self, args: NodeResourcesFitArgs, objects: listers.ObjectLister | None = None
    ) -> None:
        self.classes = DeviceClassResolver(objects)
        # Defaulted and validated by plugin_args: a strategy type and weighted resources.
        self.ignored = frozenset(args.ignored_resources)
        self.ignored_groups = frozenset(args.ignored_resource_groups)
        strategy = args.scoring_strategy or ScoringStrategy()
        self.strategy = strategy.type or rs.LEAST_ALLOCATED
        self.resources = tuple(r.name for r in strategy.resources)
        self.weights = tuple(r.weight or 1 for r in strategy.resources)
        ratio = strategy.requested_to_capacity_ratio
        points = ratio.shape if ratio is not None else []
        self.shape = tuple((p.utilization, p.score * rs.SHAPE_SCORE_SCALE) for p in points)

    def _checked_scalars(self, pod: PodInfo) -> list[tuple[str, int]]:
        """The pod's positive scalar requests that the filter checks, in request order."""
        out = []
        for name, amount in pod.requests.scalar.items():
            if amount == 0:
                continue
            if types.is_extended_resource(name) and (
                name in self.ignored or name.split("/", 1)[0] in self.ignored_groups
            ):
                continue
            out.append((name, amount))
        return out

    def _delegated(self, pod: PodInfo) -> frozenset[str]:
        """The pod's requested resources a DeviceClass provides: DynamicResources' on every
        node whose allocatable lacks them."""
        if not pod.requests.scalar:
            return frozenset()
        mapping = self.classes.mapping()
        return frozenset(name for name in pod.requests.scalar if name in mapping)

    # --- filter -----------------------------------------------------------------------------

    def pre_filter(
        self, state: CycleState, pod: PodInfo, snapshot: Snapshot
    ) -> tuple[PreFilterResult | None, Status | None]:
        # Requests were computed once when the pod record was parsed (PodInfo.requests).
        return None, None

    def pre_filter_extensions(self) -> PreFilterExtensions | None:
        return None

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status | None:
        reasons: list[str] = []
        unresolvable = False
        alloc, used, req = node.allocatable, node.requested, pod.requests
        if node.num_pods + 1 > alloc.allowed_pods:
            reasons.append(REASON_TOO_MANY_PODS)
        if not req.is_zero():
            for resource, want, have, total in (
                (types.CPU, req.milli_cpu, used.milli_cpu, alloc.milli_cpu),
                (types.MEMORY, req.memory, used.memory, alloc.memory),
                (
                    types.EPHEMERAL_STORAGE,
                    req.ephemeral_storage,
                    used.ephemeral_storage,
                    alloc.ephemeral_storage,
                ),
            ):
                if want > 0 and want > total - have:
                    reasons.append(insufficient(resource))
                    unresolvable |= want > total
            delegated = self._delegated(pod)
            for name, want in self._checked_scalars(pod):
                total = alloc.scalar.get(name, 0)
                if total <= 0 and name in delegated:
                    continue
                if want > total - used.scalar.get(name, 0):
                    reasons.append(insufficient(name))
                    unresolvable |= want > total
        if not reasons:
            return None
        code = Code.UNSCHEDULABLE_AND_UNRESOLVABLE if unresolvable else Code.UNSCHEDULABLE
        return Status(code, tuple(reasons))

    def filter_batch(self, state: CycleState, pod: PodInfo, snapshot: Snapshot) -> FilterVerdict:
        alloc, used, req = snapshot.allocatable, snapshot.requested, pod.requests
        codes = (used[snap.ROW_PODS] + 1 > alloc[snap.ROW_PODS]).astype(np.int64)
        scalars = self._checked_scalars(pod) if not req.is_zero() else []
        if len(scalars) > _MAX_BATCH_SCALARS:
            return self._filter_by_node(state, pod, snapshot)
        if not req.is_zero():
            checks = [
                (1, snap.ROW_CPU, req.milli_cpu),
                (2, snap.ROW_MEMORY, req.memory),
                (3, snap.ROW_EPHEMERAL, req.ephemeral_storage),
            ]
            zeros = np.zeros(snapshot.capacity, dtype=np.int64)
            delegated = self._delegated(pod)
            for bit, row, want in checks:
                if want > 0:
                    short = want > alloc[row] - used[row]
                    codes |= short.astype(np.int64) << bit
                    codes |= (short & (want > alloc[row])).astype(np.int64) * _UNRESOLVABLE_BIT
            for j, (name, want) in enumerate(scalars):
                found = snapshot.resource_row(name)
                total = alloc[found] if found is not None else zeros
                have = used[found] if found is not None else zeros
                short = want > total - have
                if name in delegated:
                    short &= total > 0
                codes |= short.astype(np.int64) << (4 + j)
                codes |= (short & (want > total)).astype(np.int64) * _UNRESOLVABLE_BIT
        labels = list(_FIXED_REASONS) + [insufficient(n) for n, _ in scalars]

        def describe(code: int) -> Status:
            reasons = tuple(r for bit, r in enumerate(labels) if code >> bit & 1)
            unresolvable = code & _UNRESOLVABLE_BIT
            return Status(
                Code.UNSCHEDULABLE_AND_UNRESOLVABLE if unresolvable else Code.UNSCHEDULABLE, reasons
            )

        return FilterVerdict(codes == 0, codes, describe)

    def _filter_by_node(self, state: CycleState, pod: PodInfo, snapshot: Snapshot) -> FilterVerdict:
        statuses: list[Status] = []
        passed = np.ones(snapshot.capacity, dtype=np.bool_)
        codes = np.zeros(snapshot.capacity, dtype=np.int64)
        for slot in snapshot.order.tolist():
            s = self.filter(state, pod, snapshot.node_info(slot))
            if s is not None:
                passed[slot] = False
                codes[slot] = len(statuses)
                statuses.append(s)
        return FilterVerdict(passed, codes, statuses.__getitem__)

    # --- score ------------------------------------------------------------------------------

    def _pod_requests(self, pod: PodInfo) -> list[int]:
        out = []
        for name in self.resources:
            if name == types.CPU:
                cpu = pod.scored_milli_cpu
                out.append(pod.non_zero_milli_cpu if cpu is None else cpu)
            elif name == types.MEMORY:
                memory = pod.scored_memory
                out.append(pod.non_zero_memory if memory is None else memory)
            else:
                out.append(pod.requests.get(name) if name != types.PODS else 0)
        return out

    def pre_score(
        self, state: CycleState, pod: PodInfo, snapshot: Snapshot, slots: Slots
    ) -> Status | None:
        state.write(PRE_SCORE_STATE_KEY, _PreScoreState(tuple(self._pod_requests(pod))))
        return None

    def _requests(self, state: CycleState, pod: PodInfo) -> Sequence[int]:
        s = state.read(PRE_SCORE_STATE_KEY, _PreScoreState)
        return s.pod_requests if s is not None else self._pod_requests(pod)

    def score(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> tuple[int, Status | None]:
        requested: list[int] = []
        allocatable: list[int] = []
        for name, want in zip(self.resources, self._requests(state, pod), strict=True):
            if name == types.CPU:
                alloc, used = node.allocatable.milli_cpu, node.non_zero_milli_cpu
            elif name == types.MEMORY:
                alloc, used = node.allocatable.memory, node.non_zero_memory
            elif name == types.EPHEMERAL_STORAGE:
                alloc, used = node.allocatable.ephemeral_storage, node.requested.ephemeral_storage
            elif types.is_scalar_resource(name) and want != 0 and name in node.allocatable.scalar:
                alloc, used = node.allocatable.scalar[name], node.requested.scalar.get(name, 0)
            else:
                alloc = used = 0
            requested.append(used + want if alloc else 0)
            allocatable.append(alloc)
        return rs.score(self.strategy, requested, allocatable, self.weights, self.shape), None

    def score_batch(
        self, state: CycleState, pod: PodInfo, snapshot: Snapshot, slots: Slots
    ) -> tuple[Scores, Status | None]:
        zeros = np.zeros(len(slots), dtype=np.int64)
        requested: list[Scores] = []
        allocatable: list[Scores] = []
        for name, want in zip(self.resources, self._requests(state, pod), strict=True):
            if name == types.CPU:
                alloc = snapshot.allocatable[snap.ROW_CPU, slots]
                used = snapshot.non_zero_requested[0, slots]
            elif name == types.MEMORY:
                alloc = snapshot.allocatable[snap.ROW_MEMORY, slots]
                used = snapshot.non_zero_requested[1, slots]
            elif name == types.EPHEMERAL_STORAGE:
                alloc = snapshot.allocatable[snap.ROW_EPHEMERAL, slots]
                used = snapshot.requested[snap.ROW_EPHEMERAL, slots]
            elif (
                types.is_scalar_resource(name)
                and want != 0
                and (row := snapshot.resource_row(name)) is not None
            ):
                # A node without the resource has allocatable 0 here and is skipped, as upstream.
                alloc = snapshot.allocatable[row, slots]
                used = snapshot.requested[row, slots]
            else:
                alloc = used = zeros
            requested.append(used + want)  # nodes with allocatable 0 are left out by the scorer
            allocatable.append(alloc)
        return rs.score_vec(self.strategy, requested, allocatable, self.weights, self.shape), None

    # --- queueing hints ---------------------------------------------------------------------

    def events_to_register(self) -> Sequence[ClusterEventWithHint]:
        # Upstream 1.37 with InPlacePodVerticalScaling (GA) and DRAExtendedResource (GA); the
        # alpha in-place scale-up preemption is not implemented, so not registered.
        scale_down = ActionType.UPDATE_POD_SCALE_DOWN
        return (
            ClusterEventWithHint(
                ClusterEvent(listers.DEVICE_CLASS, ActionType.ADD | ActionType.UPDATE),
                self.hint_device_class,
            ),
            ClusterEventWithHint(
                ClusterEvent(ASSIGNED_POD, ActionType.DELETE), self.hint_assigned_pod_delete
            ),
            ClusterEventWithHint(
                ClusterEvent(NODE, ActionType.ADD | ActionType.UPDATE_NODE_ALLOCATABLE),
                self.hint_node_change,
            ),
            ClusterEventWithHint(
                ClusterEvent(ASSIGNED_POD, scale_down), self.hint_assigned_pod_scale_down
            ),
            ClusterEventWithHint(ClusterEvent(TARGET_POD, scale_down), _queue),
        )

    def hint_device_class(self, pod: PodInfo, old: object, new: object) -> QueueingHint:
        """A class now provides an extended resource the pod requests (upstream
        ``isSchedulableAfterDeviceClassEvent``)."""
        original, modified = ev.as_objects(old, new, dict)
        assert modified is not None
        wanted = (modified.get("spec") or {}).get("extendedResourceName")
        if original is not None:
            if (original.get("spec") or {}).get("extendedResourceName") == wanted:
                return QueueingHint.QUEUE_SKIP
        else:
            implicit = DEVICE_CLASS_PREFIX + ((modified.get("metadata") or {}).get("name") or "")
            if implicit in pod.requests.scalar:
                return QueueingHint.QUEUE
        if wanted and wanted in pod.requests.scalar:
            return QueueingHint.QUEUE
        return QueueingHint.QUEUE_SKIP

    def hint_assigned_pod_delete(self, pod: PodInfo, old: object, new: object) -> QueueingHint:
        """A deleted pod frees room only if it was bound or nominated somewhere."""
        deleted, _ = ev.as_objects(old, new, PodInfo)
        assert deleted is not None
        if not deleted.node_name and not deleted.nominated_node_name:
            return QueueingHint.QUEUE_SKIP
        return QueueingHint.QUEUE

    def hint_node_change(self, pod: PodInfo, old: object, new: object) -> QueueingHint:
        """An added node the pod fits when empty, or an updated one that now fits it and grew
        in something the pod requests (upstream ``isSchedulableAfterNodeChange``)."""
        original, modified = ev.as_objects(old, new, NodeRecord)
        assert modified is not None
        if self.filter(CycleState(), pod, _empty(modified)) is not None:
            return QueueingHint.QUEUE_SKIP
        if original is None:
            return QueueingHint.QUEUE
        grew = _requested_resources_increased(
            pod.requests, original.allocatable, modified.allocatable, self._delegated(pod)
        )
        return QueueingHint.QUEUE if grew else QueueingHint.QUEUE_SKIP

    def hint_assigned_pod_scale_down(self, pod: PodInfo, old: object, new: object) -> QueueingHint:
        """A bound pod lowered a request the pod makes (upstream
        ``haveEnoughRelevantResourcesDecreased``)."""
        original, modified = ev.as_objects(old, new, PodInfo)
        assert original is not None
        assert modified is not None
        if not modified.node_name:
            return QueueingHint.QUEUE_SKIP
        was, now, want = original.requests, modified.requests, pod.requests
        for name, amount in _named(want):
            if amount and was.get(name) > now.get(name) and _counts_as_scalar(name):
                return QueueingHint.QUEUE
        return QueueingHint.QUEUE_SKIP


def _queue(pod: PodInfo, old: object, new: object) -> QueueingHint:
    return QueueingHint.QUEUE


def _named(r: Resources) -> list[tuple[str, int]]:
    fixed = [(types.CPU, r.milli_cpu), (types.MEMORY, r.memory)]
    return [*fixed, (types.EPHEMERAL_STORAGE, r.ephemeral_storage), *r.scalar.items()]


def _counts_as_scalar(name: str) -> bool:
    return name in (types.CPU, types.MEMORY, types.EPHEMERAL_STORAGE) or types.is_scalar_resource(
        name
    )


def _empty(node: NodeRecord) -> NodeInfo:
    """The node without any pod (upstream ``isFit`` builds a fresh NodeInfo)."""
    return NodeInfo(
        name=node.name,
        labels=node.labels,
        taints=node.taints,
        unschedulable=node.unschedulable,
        allocatable=node.allocatable,
        requested=Resources(),
        non_zero_milli_cpu=0,
        non_zero_memory=0,
        num_pods=0,
    )


def _requested_resources_increased(
    want: Resources, was: Resources, now: Resources, delegated: frozenset[str] = frozenset()
) -> bool:
    """Upstream ``haveAnyRequestedResourcesIncreased``: more allowed pods, or more of a
    resource the pod requests, or a requested resource the node leaves to DRA."""
    if now.allowed_pods > was.allowed_pods:
        return True
    return not want.is_zero() and any(
        amount
        and (now.get(name) > was.get(name) or (name in delegated and now.scalar.get(name, 0) <= 0))
        for name, amount in _named(want)
    )


@dataclass(frozen=True, slots=True)
class _PreScoreState:
    pod_requests: tuple[int, ...]

    def clone(self) -> _PreScoreState:
        return self


def new(args: object, handle: Handle) -> NodeResourcesFit:
    # Without informers (a handle that has none) no resource is left to DRA.
    return NodeResourcesFit(plugin_args(NAME, args), getattr(handle, "objects", None))
