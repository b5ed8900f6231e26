"""DynamicResources: pods with ResourceClaims get devices from ResourceSlices, as upstream 1.37.

- PreEnqueue: the pod's claims exist (template claims created by the resourceclaim controller
  and owned by the pod), none is being deleted.
- PreFilter: gathers the claims; an allocated claim restricts the pod to its allocation's
  nodeSelector; an unallocated one needs its DeviceClasses, and the cycle gets an
  :class:`~.allocator.Allocator` over the cluster's slices and the devices in use (allocated
  claims' and in-flight allocations'). A claim another pod is allocating now makes the pod wait.
  The slices' devices carry the taints of the DeviceTaintRules matching them (:mod:`.taint_rules`).
- Filter: the allocated claims must be available on the node, and not failed or timed out
  waiting for binding conditions; the unallocated ones must all be allocated from the devices
  that node reaches ("cannot allocate all claims"), within ``filterTimeout`` (default 10s, 0:
  no limit; past it an Error "node N: timed out trying to allocate devices", so the pod backs
  off and retries).
- Score: prioritized lists: a subrequest chosen earlier scores higher (8 - index), normalized.
- Reserve/Unreserve: the node's allocations become in-flight, so no other pod gets their
  devices; Unreserve forgets them and takes back a reservation PreBind already wrote.
- PreBind: per claim, the finalizer, then status.allocation (with allocationTimestamp) and the
  pod in status.reservedFor, retried on conflicts as upstream; then, if a device has binding
  conditions, it waits for them up to ``bindingTimeout`` (default 10m; :mod:`.binding`). The
  API server caps status.reservedFor at 256 entries (ResourceClaimReservedForMaxSize): upstream
  does not check that itself (``CanBeReserved`` is always true), its PreBind gets the API
  server's refusal, and so does Corral's.
- PostFilter: the first claim unavailable on some node and reserved for no other pod is
  deallocated ("deallocation of ResourceClaim completed"), so the next attempt may allocate it
  elsewhere; otherwise plain Unschedulable. After an earlier PreFilter plugin rejected the pod
  there is no state: an Error "not found", as upstream (DefaultPreemption then does not run).
- PodGroupPostFilter (GenericWorkload; before DefaultPreemption's): every member the group's
  attempt got to PreFilter releases its claims as PostFilter would; the answer is Unschedulable
  "deallocation and deletion of ResourceClaims completed" (appended to the group's message)
  unless a write failed.
- Queueing: Node, ResourceClaim, the pod's own claim statuses, DeviceClass and ResourceSlice
  events, with upstream's hints for claims and the pod (:mod:`.hints`).

Extended resources backed by DRA (:mod:`.extended`): a pod requesting an extended resource a
DeviceClass provides gets one more, scheduler-owned claim, last in the state's claims. Filter
gives it, per node, requests for what that node leaves to DRA; Reserve keeps its devices in
flight; PreBind creates it (owned by the pod), allocates and reserves it, and records it in the
pod's ``status.extendedResourceClaimStatus``; Unreserve and PostFilter delete a created one
("deletion of ResourceClaim completed"), so the next attempt starts afresh.

Every rejection is UnschedulableAndUnresolvable (upstream's statusUnschedulable); a problem no
node can fix (bad CEL, a missing class name) is an Error.
"""

from __future__ import annotations

import contextlib
import copy
import threading
import time
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Final

import numpy as np
import numpy.typing as npt

from corral.scheduler.config import args as config_args
from corral.scheduler.config import parse_duration, plugin_args
from corral.scheduler.framework import listers
from corral.scheduler.framework import nodeselector as ns
from corral.scheduler.framework.api_types import (
    AllocationResult,
    PodExtendedResourceClaimStatus,
    RawObject,
    ResourceClaim,
    ResourceClaimStatus,
)
from corral.scheduler.framework.cluster_events import (
    NODE,
    TARGET_POD,
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    QueueingHint,
)
from corral.scheduler.framework.cycle_state import CycleState
from corral.scheduler.framework.diagnosis import NodeToStatus
from corral.scheduler.framework.interface import (
    FilterVerdict,
    Handle,
    MutableSnapshot,
    PodGroupSchedulingFunc,
    PostFilterResult,
    PreFilterExtensions,
    PreFilterResult,
    Scores,
    Slots,
)
from corral.scheduler.framework.podgroup import PodGroupRecord
from corral.scheduler.framework.snapshot import Snapshot
from corral.scheduler.framework.status import Code, Status
from corral.scheduler.framework.types import NodeInfo, PodInfo
from corral.scheduler.plugins import helper, names
from corral.scheduler.plugins.dynamic_resources import (
    binding,
    extended,
    hints,
    taint_rules,
    writes,
)
from corral.scheduler.plugins.dynamic_resources.allocator import (
    AllocationError,
    AllocationTimeoutError,
    Allocator,
    Found,
    MatchCache,
    SearchMemo,
    claim_key,
)
from corral.scheduler.plugins.dynamic_resources.assumed import AssumedClaims, version
from corral.scheduler.plugins.dynamic_resources.claims import (
    ClaimError,
    claim_named,
    claims_of,
    key_of,
    pod_claims,
    reserved_for,
    uid_of,
)
from corral.scheduler.plugins.dynamic_resources.extended import NodeClaim
from corral.scheduler.plugins.dynamic_resources.in_use import ByClaim, InUse, gather
from corral.scheduler.plugins.dynamic_resources.pools import Node, SliceIndex
from corral.scheduler.plugins.helper.dra_extended_resources import DeviceClassResolver

NAME: Final = names.DYNAMIC_RESOURCES
STATE_KEY: Final = "PreFilter" + NAME
ERR_CANNOT_ALLOCATE: Final = "cannot allocate all claims"
ERR_NOT_AVAILABLE: Final = "resourceclaim not available on the node"
MSG_DEALLOCATED: Final = "deallocation of ResourceClaim completed"
MSG_DELETED: Final = "deletion of ResourceClaim completed"
MSG_GROUP_RELEASED: Final = "deallocation and deletion of ResourceClaims completed"
ERR_NO_STATE: Final = "not found"  # upstream's CycleState.Read error (fwk.ErrNotFound)
FIRST_AVAILABLE_MAX: Final = 8  # resourceapi.FirstAvailableDeviceRequestMaxSize
_MATCH_CACHE_MAX: Final = 200_000
_WRITE_STRIPES: Final = 64  # PreBind's per-claim write locks (striped by uid: bounded memory)


@dataclass(slots=True)
class _State:
    claims: list[ResourceClaim]
    available_on: list[ns.NodeSelector | None]  # an allocated claim's nodes (None: any)
    to_allocate: list[int]  # indexes of the unallocated claims
    binding_failed: set[int] = field(default_factory=set)  # allocated, unusable (binding)
    allocator: Allocator | None = None
    found: dict[str, Found] = field(default_factory=dict)  # per node: where the claims fit
    unavailable: set[int] = field(default_factory=set)
    chosen: dict[int, AllocationResult] = field(
        default_factory=dict
    )  # index → allocation, from Reserve
    extended: int = -1  # index of the claim for extended resources (the last one), or -1
    node_claims: dict[str, NodeClaim] = field(default_factory=dict)  # its per node
    # From the batch Filter: per claim, the slots its allocation reaches (None: any node).
    available_masks: list[npt.NDArray[np.bool_] | None] | None = None
    # The claims to allocate, in ``to_allocate`` order: one list for every node's search (the
    # allocator keeps what it reads of them by the list), made by the first Filter.
    allocating: list[ResourceClaim] | None = None

    def clone(self) -> _State:
        return self  # as upstream's stateData: shared by the cycle's clones

    def allocations_on(self, node_name: str) -> list[AllocationResult] | None:
        """The allocations Filter found for the claims to allocate on the node (None: none)."""
        found = self.found.get(node_name)
        return None if found is None else found.allocations()


class DynamicResources:
    name: str = NAME

    def __init__(
        self,
        handle: Handle,
        filter_timeout: float = 10.0,
        binding_timeout: float = binding.BINDING_TIMEOUT_DEFAULT,
    ) -> None:
        self._handle = handle
        # The claims as PreBind wrote them, over the informers' (upstream's assume cache).
        objects = getattr(handle, "objects", None)
        self._claims = AssumedClaims(objects) if objects is not None else None
        self.filter_timeout = filter_timeout  # seconds; 0: no limit
        self.binding_timeout = binding_timeout
        # PreBind's wait ends early when the engine stops (upstream cancels its context);
        # seams for tests of the wait (a fake clock, no real sleeping).
        self._closing = threading.Event()
        self.sleep: Callable[[float], object] = self._closing.wait
        self.clock: Callable[[], float] = time.monotonic
        self.now: Callable[[], datetime] = lambda: datetime.now(UTC)
        self._lock = threading.Lock()  # in-flight allocations: scheduling vs binding threads
        self._in_flight: dict[str, tuple[str, AllocationResult]] = {}  # uid → (key, allocation)
        # PreBind writes one claim from one binding thread at a time (see _write_base).
        self._write_locks = tuple(threading.Lock() for _ in range(_WRITE_STRIPES))
        self._matches: MatchCache = {}
        self._memo = SearchMemo()  # each node's last search, for the next claim asking alike
        # Derived from the informers' objects, rebuilt when their kind's generation moves.
        self._in_use: tuple[int, InUse] = (-1, InUse())
        self._by_claim = ByClaim()
        self._class_map: tuple[int, dict[str, RawObject]] = (-1, {})
        self._slices: tuple[tuple[int, int], SliceIndex] = ((-1, -1), SliceIndex(()))
        self._extended_classes = DeviceClassResolver(getattr(handle, "objects", None))

    # --- PreEnqueue / PreFilter ------------------------------------------------------------

    def pre_enqueue(self, pod: PodInfo) -> Status | None:
        objects = self._claims
        if not pod.has_resource_claims or objects is None:
            return None
        try:
            pod_claims(pod, objects)
        except ClaimError as err:
            return Status.of(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, str(err))
        return None

    def pre_filter(
        self, state: CycleState, pod: PodInfo, snapshot: Snapshot
    ) -> tuple[PreFilterResult | None, Status | None]:
        # Written first, as upstream's: PostFilter finds no state only when an earlier
        # PreFilter plugin rejected the pod (and then fails with upstream's "not found").
        state.write(STATE_KEY, _State([], [], []))
        objects = self._claims
        wants_extended = self._extended_classes.backs_any(pod.requests.scalar)
        if not pod.has_resource_claims and not wants_extended:
            return None, Status(Code.SKIP)
        if objects is None:
            return None, Status.error("DynamicResources: no informers for ResourceClaims")
        try:
            claims = pod_claims(pod, objects)
        except ClaimError as err:
            return None, Status.of(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, str(err))
        if wants_extended:
            in_namespace = claims_of(objects, pod.namespace)
            claims.append(extended.special_claim(pod, in_namespace))
        if not claims:
            return None, Status(Code.SKIP)
        s = _State(claims, [None] * len(claims), [])
        if wants_extended:
            s.extended = len(claims) - 1
        for index, claim in enumerate(claims):
            allocation = (claim.get("status") or {}).get("allocation")
            if allocation is not None:
                selector = allocation.get("nodeSelector")
                s.available_on[index] = ns.parse_node_selector(selector) if selector else None
                if binding.unusable(claim, self.binding_timeout, self.now()):
                    s.binding_failed.add(index)
                continue
            with self._lock:
                pending = uid_of(claim) in self._in_flight
            if pending:
                return None, _unschedulable(
                    f"resource claim {claim_key(claim)} is in the process of being allocated"
                )
            if index == s.extended:  # its requests come per node, in Filter
                s.to_allocate.append(index)
                continue
            status = _validate_classes(claim, objects)
            if status is not None:
                return None, status
            s.to_allocate.append(index)
        if s.to_allocate:
            if len(self._matches) > _MATCH_CACHE_MAX:
                self._matches.clear()
            in_use = self._devices_in_use(objects)
            s.allocator = Allocator(
                self._classes(objects),
                self._slice_index(objects),
                in_use.dedicated,
                self._matches,
                in_use.shared,
                memo=self._memo,
            )
        state.write(STATE_KEY, s)
        return None, None

    def pre_filter_extensions(self) -> PreFilterExtensions | None:
        return None

    def _classes(self, objects: listers.ObjectLister) -> dict[str, RawObject]:
        generation = objects.generation(listers.DEVICE_CLASS)
        if self._class_map[0] != generation:
            by_name = {
                (c.get("metadata") or {}).get("name") or "": c
                for c in objects.list(listers.DEVICE_CLASS)
            }
            self._class_map = (generation, by_name)
        return self._class_map[1]

    def _slice_index(self, objects: listers.ObjectLister) -> SliceIndex:
        """The slices with the taints of the DeviceTaintRules that match their devices."""
        generation = (
            objects.generation(listers.RESOURCE_SLICE),
            objects.generation(listers.DEVICE_TAINT_RULE),
        )
        if self._slices[0] != generation:
            slices = taint_rules.patch_all(
                objects.list(listers.RESOURCE_SLICE), objects.list(listers.DEVICE_TAINT_RULE)
            )
            self._slices = (generation, SliceIndex(slices))
        return self._slices[1]

    def _devices_in_use(self, objects: listers.ObjectLister) -> InUse:
        generation = objects.generation(listers.RESOURCE_CLAIM)
        if self._in_use[0] != generation:
            claims = claims_of(objects)
            self._in_use = (generation, self._by_claim.gather(claims))
        in_flight: list[AllocationResult] = []
        with self._lock:
            for uid, (key, allocation) in list(self._in_flight.items()):
                namespace, _, name = key.partition("/")
                if name == extended.SPECIAL_CLAIM_NAME:  # not created yet: PreBind re-keys it
                    in_flight.append(allocation)
                    continue
                current = claim_named(objects, namespace, name)
                if current is None or uid_of(current) != uid:
                    del self._in_flight[uid]  # the claim is gone
                elif not _allocation_of(current):
                    in_flight.append(allocation)
                # else written (PreBind may still wait for its binding conditions): the claim's
                # own status counts it; it stays in flight for PreFilter until PreBind ends.
        return self._in_use[1].plus(gather(in_flight))

    # --- Filter ----------------------------------------------------------------------------

    def filter_batch(
        self, state: CycleState, pod: PodInfo, snapshot: Snapshot
    ) -> FilterVerdict | None:
        """A pod whose claims are all allocated (four of the five pods sharing a claim) only
        needs the nodes their allocations reach: one mask over the snapshot. A pod with claims
        to allocate goes node by node (``None``): the allocator searches each node."""
        s = state.read(STATE_KEY, _State)
        if s is None or s.allocator is not None or s.extended >= 0:
            return None
        passed = np.full(snapshot.capacity, not s.binding_failed, dtype=np.bool_)
        masks: list[npt.NDArray[np.bool_] | None] = []
        for selector in s.available_on:
            mask = None if selector is None else ns.selector_mask(selector, snapshot)
            if mask is not None:
                passed &= mask
            masks.append(mask)
        s.available_masks = masks
        return FilterVerdict.uniform(passed, _unschedulable(ERR_NOT_AVAILABLE))

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status | None:
        s = state.read(STATE_KEY, _State)
        if s is None:
            return helper.missing_state(STATE_KEY)
        node_claim: NodeClaim | None = None
        if s.extended >= 0:
            try:
                node_claim = extended.node_claim(
                    s.claims[s.extended], pod, node, self._extended_classes, s.extended > 0
                )
            except extended.NodeRejectedError as err:
                return _unschedulable(str(err))
            if node_claim is None and s.extended == 0:
                return None  # device plugins provide it all here: nothing for DRA to do
        unavailable = [
            i
            for i, selector in enumerate(s.available_on)
            if (selector is not None and not ns.selector_matches(selector, node.labels, node.name))
            or i in s.binding_failed
        ]
        if s.allocator is not None:
            if node_claim is not None:  # the extended resources' claim is this node's own
                claims = [
                    node_claim.claim if i == s.extended else s.claims[i] for i in s.to_allocate
                ]
            else:
                if s.allocating is None:
                    s.allocating = [s.claims[i] for i in s.to_allocate]
                claims = s.allocating
            deadline = time.monotonic() + self.filter_timeout if self.filter_timeout > 0 else None
            try:
                found = s.allocator.search(Node(node.name, node.labels), claims, deadline)
            except AllocationError as err:
                return Status.error(str(err))
            except AllocationTimeoutError:
                return Status.error(f"node {node.name}: timed out trying to allocate devices")
            if found is None:
                return _unschedulable(ERR_CANNOT_ALLOCATE)
            s.found[node.name] = found
            if node_claim is not None:
                s.node_claims[node.name] = node_claim
        if unavailable:
            s.unavailable.update(unavailable)
            return _unschedulable(ERR_NOT_AVAILABLE)
        return None

    # --- PostFilter ------------------------------------------------------------------------

    def post_filter(
        self, state: CycleState, pod: PodInfo, statuses: NodeToStatus
    ) -> tuple[PostFilterResult | None, Status]:
        s = state.read(STATE_KEY, _State)
        if s is None:
            return None, Status.error(ERR_NO_STATE)
        return None, self._release(s, pod, s.unavailable | _unavailable_in_batch(s, statuses))

    def pod_group_post_filter(
        self,
        group: PodGroupRecord,
        members: Sequence[PodInfo],
        snapshot: MutableSnapshot,
        schedule: PodGroupSchedulingFunc,
        states: Mapping[str, CycleState],
    ) -> tuple[Mapping[str, str] | None, Status | None]:
        """Upstream PodGroupPostFilter (hierarchies, TopologyAwareWorkloadScheduling and
        DRAWorkloadResourceClaims off): each member this attempt got to PreFilter releases its
        unavailable claims as PostFilter would; only an error changes the answer, always
        Unschedulable ``deallocation and deletion of ResourceClaims completed``."""
        for pod in members:
            state = states.get(pod.uid)
            s = state.read(STATE_KEY, _State) if state is not None else None
            if s is None:
                continue
            status = self._release(s, pod, s.unavailable)
            if status.code is Code.ERROR:
                return None, status
        return None, Status.of(Code.UNSCHEDULABLE, MSG_GROUP_RELEASED)

    def _release(self, s: _State, pod: PodInfo, unavailable: Collection[int]) -> Status:
        """Upstream deallocateOrDeletePodClaims: deallocate one unavailable claim only this pod
        uses, or delete the pod's extended-resource claim from an earlier cycle."""
        writer = self._handle.claim_writer
        if writer is None:
            return Status(Code.UNSCHEDULABLE)
        for index in sorted(unavailable):
            claim = s.claims[index]
            if index == s.extended:
                if not extended.is_special(claim):
                    break
                continue
            consumers = (claim.get("status") or {}).get("reservedFor") or ()
            if len(consumers) > 1 or (consumers and consumers[0].get("uid") != pod.uid):
                continue
            update = copy.deepcopy(claim)
            status: ResourceClaimStatus = update.get("status") or {}
            status.pop("reservedFor", None)
            status.pop("allocation", None)
            status.pop("devices", None)
            update["status"] = status
            try:
                writer.update_status(update)
            except listers.WriteError as err:
                return Status.error(str(err))
            return Status.of(Code.UNSCHEDULABLE, MSG_DEALLOCATED)
        if s.extended >= 0 and not extended.is_special(s.claims[s.extended]):
            try:
                writes.delete_claim(writer, s.claims[s.extended])
            except listers.WriteError as err:
                return Status.error(str(err))
            return Status.of(Code.UNSCHEDULABLE, MSG_DELETED)
        return Status(Code.UNSCHEDULABLE)

    # --- Score -----------------------------------------------------------------------------

    def pre_score(
        self, state: CycleState, pod: PodInfo, snapshot: Snapshot, slots: Slots
    ) -> Status | None:
        """Skips unless a claim is being allocated and some claim has a prioritized list: only
        a chosen subrequest scores (upstream scores 0 everywhere then, which adds nothing)."""
        s = state.read(STATE_KEY, _State)
        if s is None or not s.to_allocate or not any(map(_prioritized, s.claims)):
            return Status(Code.SKIP)
        return None

    def score(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> tuple[int, Status | None]:
        s = state.read(STATE_KEY, _State)
        if s is None:
            return 0, None
        return _score(s, s.allocations_on(node.name)), None

    def score_batch(
        self, state: CycleState, pod: PodInfo, snapshot: Snapshot, slots: Slots
    ) -> tuple[Scores, Status | None]:
        s = state.read(STATE_KEY, _State)
        out = np.zeros(len(slots), dtype=np.int64)
        if s is not None:
            for i, slot in enumerate(slots):
                out[i] = _score(s, s.allocations_on(snapshot.names[int(slot)]))
        return out, None

    def normalize_score(self, state: CycleState, pod: PodInfo, scores: Scores) -> Status | None:
        helper.default_normalize_score(scores, reverse=False)
        return None

    # --- Reserve / Unreserve ---------------------------------------------------------------

    def reserve(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        s = state.read(STATE_KEY, _State)
        if s is None or s.allocator is None:
            return None
        allocations = s.allocations_on(node_name)
        # From here on the cycle needs only the chosen node's allocations, and its state lives
        # until the binding cycle ends: let the other nodes' and the allocator go now (with
        # pods sharing claims, a dozen cycles' worth were alive at once, all for the collector
        # to walk).
        s.found.clear()
        s.allocator = None
        if allocations is None:
            if s.to_allocate == [s.extended]:
                return None  # device plugins provide the extended resources on this node
            return Status.error("claim allocation not found for node")
        with self._lock:
            for index, allocation in zip(s.to_allocate, allocations, strict=True):
                claim = s.claims[index]
                s.chosen[index] = allocation
                self._in_flight[uid_of(claim)] = (key_of(claim), allocation)
        return None

    def unreserve(self, state: CycleState, pod: PodInfo, node_name: str) -> None:
        s = state.read(STATE_KEY, _State)
        if s is None:
            return
        with self._lock:
            undone = [i for i in s.chosen if self._in_flight.pop(uid_of(s.claims[i]), None)]
        if self._claims is not None:  # an allocation still in flight was never made
            for index in undone:
                self._claims.restore(*_namespace_name(s.claims[index]))
        writer = self._handle.claim_writer
        if writer is None:
            return
        for index, claim in enumerate(s.claims):
            if index == s.extended:
                continue
            meta = claim.get("metadata") or {}
            try:
                current = writer.get(meta.get("namespace") or "", meta.get("name") or "")
                if reserved_for(current, pod.uid):
                    update = copy.deepcopy(current)
                    status = update.get("status") or {}
                    status["reservedFor"] = [
                        r for r in status.get("reservedFor") or () if r.get("uid") != pod.uid
                    ]
                    update["status"] = status
                    writer.update_status(update)
            except listers.WriteError:
                continue  # upstream logs and goes on: the claim controller cleans up
        if s.extended >= 0 and not extended.is_special(s.claims[s.extended]):
            # Upstream logs a failure; the pod's garbage collection removes it at the latest.
            with contextlib.suppress(listers.WriteError):
                writes.delete_claim(writer, s.claims[s.extended])

    # --- PreBind ---------------------------------------------------------------------------

    def pre_bind_pre_flight(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        """PreBind acts (writes or waits) only for a pod with claims."""
        s = state.read(STATE_KEY, _State)
        return None if s is not None and s.claims else Status(Code.SKIP)

    def pre_bind(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        s = state.read(STATE_KEY, _State)
        writer = self._handle.claim_writer
        if s is None or writer is None:
            return None  # no claims, or no API to write to (corral simulate)
        for index, claim in enumerate(s.claims):
            if reserved_for(claim, pod.uid) and index not in s.chosen:
                continue
            try:
                if index == s.extended:
                    self._bind_extended(writer, s, pod, node_name)
                else:
                    with self._write_locks[hash(uid_of(claim)) % _WRITE_STRIPES]:
                        base = self._write_base(claim)
                        s.claims[index] = writes.bind_claim(writer, base, s.chosen.get(index), pod)
                        if self._claims is not None:
                            self._claims.assume(s.claims[index])
            except listers.WriteError as err:
                return Status.error(str(err))
        if binding.pending(s.claims):
            message = binding.wait(
                s.claims,
                self._current,
                self.binding_timeout,
                clock=self.clock,
                sleep=self.sleep,
                now=self.now,
                stopped=self._closing.is_set,
            )
            if message is not None:
                return Status.error(message)
        with self._lock:  # allocated for good: the claims' own status says so from now on
            for index in s.chosen:
                self._in_flight.pop(uid_of(s.claims[index]), None)
        return None

    def _write_base(self, claim: ResourceClaim) -> ResourceClaim:
        """What PreBind's first write of ``claim`` starts from: the cycle's copy, or the
        informers' or this scheduler's last written copy when that is newer.

        The pods sharing a claim reach PreBind together, each with the copy its PreFilter
        read. Written from those copies, all but one would fail on ``resourceVersion`` and
        retry with a GET (upstream's ``bindClaim`` does exactly that). Holding the claim's
        write lock and starting from the newest copy this process knows makes the writes
        queue instead of conflict: the same writes succeed, without the failed PUT and the
        GET of each retry. A write by anyone else still conflicts and is retried as before."""
        if self._claims is None:
            return claim
        meta = claim.get("metadata") or {}
        seen = claim_named(self._claims, meta.get("namespace") or "", meta.get("name") or "")
        if seen is None or uid_of(seen) != uid_of(claim) or version(seen) <= version(claim):
            return claim
        return seen

    def _current(self, claim: ResourceClaim) -> ResourceClaim | None:
        """The claim as the informers have it, or as PreBind wrote it if that is newer (upstream
        reads its assume cache)."""
        objects = self._handle.objects
        if objects is None:
            return claim
        meta = claim.get("metadata") or {}
        namespace, name = meta.get("namespace") or "", meta.get("name") or ""
        seen = claim_named(objects, namespace, name)
        if seen is None or uid_of(seen) != uid_of(claim):
            return seen
        return claim if version(claim) > version(seen) else seen

    def close(self) -> None:
        """Stop every PreBind wait at once (the engine is stopping or lost its lease)."""
        self._closing.set()

    def _bind_extended(
        self, writer: listers.ResourceClaimWriter, s: _State, pod: PodInfo, node_name: str
    ) -> None:
        """Upstream ``bindClaim`` for the extended resources' claim: created first when it
        is still the in-memory one, then allocated and reserved, then named in the pod's
        ``status.extendedResourceClaimStatus``."""
        claim = s.claims[s.extended]
        allocation = s.chosen.get(s.extended)
        requests = ((claim.get("spec") or {}).get("devices") or {}).get("requests")
        if allocation is None and requests is None:
            return  # device plugins provide them all on this node
        node_claim = s.node_claims.get(node_name)
        if extended.is_special(claim):
            if node_claim is None:
                raise listers.WriteError(f"extended resource claim not found for node {node_name}")
            created = writes.create_claim(writer, node_claim.claim)
            with self._lock:
                entry = self._in_flight.pop(uid_of(claim), None)
                if entry is not None:  # from now on the informer's copy settles it
                    self._in_flight[uid_of(created)] = (key_of(created), entry[1])
            s.claims[s.extended] = claim = created
        s.claims[s.extended] = claim = writes.bind_claim(writer, claim, allocation, pod)
        mappings = list(node_claim.mappings) if node_claim is not None else []
        if not mappings:
            raise listers.WriteError(
                f"nil or empty request mappings, no update of pod {pod.key}"
                " ExtendedResourceClaimStatus"
            )
        name = (claim.get("metadata") or {}).get("name") or ""
        status: PodExtendedResourceClaimStatus = {
            "requestMappings": mappings,
            "resourceClaimName": name,
        }
        try:
            writer.patch_pod_status(
                pod.namespace, pod.name, {"extendedResourceClaimStatus": status}
            )
        except listers.WriteError as err:
            raise listers.WriteError(
                f"update pod {pod.key} ExtendedResourceClaimStatus: {err}", conflict=err.conflict
            ) from err

    def events_to_register(self) -> Sequence[ClusterEventWithHint]:
        claim = ActionType.ADD | ActionType.UPDATE | ActionType.DELETE
        return (
            ClusterEventWithHint(
                ClusterEvent(
                    NODE,
                    ActionType.ADD
                    | ActionType.UPDATE_NODE_LABEL
                    | ActionType.UPDATE_NODE_ALLOCATABLE,
                )
            ),
            ClusterEventWithHint(
                ClusterEvent(listers.RESOURCE_CLAIM, claim),
                self.hint_claim_change,
                hints.CLAIM_NARROWING,
            ),
            # The pod's own update (upstream TargetPod): its generated claims got names.
            ClusterEventWithHint(
                ClusterEvent(TARGET_POD, ActionType.UPDATE_POD_GENERATED_RESOURCE_CLAIM),
                self.hint_target_pod_update,
            ),
            ClusterEventWithHint(
                ClusterEvent(listers.DEVICE_CLASS, ActionType.ADD | ActionType.UPDATE)
            ),
            # Also a DeviceTaintRule's change: the engine reports the slices it re-taints.
            ClusterEventWithHint(
                ClusterEvent(listers.RESOURCE_SLICE, ActionType.ADD | ActionType.UPDATE)
            ),
        )

    def hint_claim_change(self, pod: PodInfo, old: object, new: object) -> QueueingHint:
        objects = self._handle.objects
        if objects is None:
            return QueueingHint.QUEUE
        return hints.after_claim_change(objects, pod, old, new)

    def hint_target_pod_update(self, pod: PodInfo, old: object, new: object) -> QueueingHint:
        objects = self._handle.objects
        if objects is None:
            return QueueingHint.QUEUE
        return hints.after_target_pod_update(objects, pod, old, new)


def _unavailable_in_batch(s: _State, statuses: NodeToStatus) -> set[int]:
    """The claims unavailable on the nodes the batch Filter rejected: what ``filter`` records
    node by node (the nodes' statuses say which ones the cycle evaluated)."""
    if s.available_masks is None:
        return set()
    out: set[int] = set()
    for slot, status in statuses.items():
        if status.plugin != NAME or status.reasons != (ERR_NOT_AVAILABLE,):
            continue
        out.update(s.binding_failed)
        out.update(
            i for i, mask in enumerate(s.available_masks) if mask is not None and not mask[slot]
        )
    return out


def _unschedulable(message: str) -> Status:
    return Status.of(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, message)


def _validate_classes(claim: ResourceClaim, objects: listers.ObjectLister) -> Status | None:
    for request in ((claim.get("spec") or {}).get("devices") or {}).get("requests") or ():
        if (exactly := request.get("exactly")) is not None:
            wanted = [(request.get("name") or "", exactly.get("deviceClassName"))]
        elif subs := request.get("firstAvailable"):
            wanted = [
                (f"{request.get('name') or ''}/{sub.get('name') or ''}", sub.get("deviceClassName"))
                for sub in subs
            ]
        else:
            return Status.error(f"request {request.get('name') or ''}: unsupported request type")
        for name, cls in wanted:
            if not cls:
                return Status.error(f"request {name}: unsupported request type")
            if objects.get(listers.DEVICE_CLASS, "", cls) is None:
                return _unschedulable(f"request {name}: device class {cls} does not exist")
    return None


def _allocation_of(claim: ResourceClaim) -> AllocationResult | None:
    allocation: AllocationResult | None = (claim.get("status") or {}).get("allocation")
    return allocation


def _score(s: _State, allocations: list[AllocationResult] | None) -> int:
    """Upstream ``computeScore``: per claim, FIRST_AVAILABLE_MAX - index of the chosen
    subrequest of each prioritized-list request."""
    if allocations is None:
        return 0
    total = 0
    pending = iter(allocations)
    for index, claim in enumerate(s.claims):
        allocation = _allocation_of(claim)
        if allocation is None:
            allocation = next(pending, None) if index in s.to_allocate else None
        if allocation is None:
            continue
        chosen = {
            r.get("request")
            for r in (allocation.get("devices") or {}).get("results") or ()
            if "/" in (r.get("request") or "")
        }
        for request in ((claim.get("spec") or {}).get("devices") or {}).get("requests") or ():
            for i, sub in enumerate(request.get("firstAvailable") or ()):
                if f"{request.get('name')}/{sub.get('name')}" in chosen:
                    total += FIRST_AVAILABLE_MAX - i
    return total


def _prioritized(claim: ResourceClaim) -> bool:
    """Whether a request of ``claim`` is a prioritized list (``firstAvailable``)."""
    requests = ((claim.get("spec") or {}).get("devices") or {}).get("requests") or ()
    return any(r.get("firstAvailable") for r in requests)


def _namespace_name(claim: ResourceClaim) -> tuple[str, str]:
    meta = claim.get("metadata") or {}
    return str(meta.get("namespace") or ""), str(meta.get("name") or "")


def new(args: object, handle: Handle) -> DynamicResources:
    a: config_args.DynamicResourcesArgs = plugin_args(NAME, args)  # defaulted: both are set
    return DynamicResources(
        handle, parse_duration(a.filter_timeout or "0s"), parse_duration(a.binding_timeout or "0s")
    )
