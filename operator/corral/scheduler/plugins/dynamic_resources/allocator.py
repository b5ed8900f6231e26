"""The structured-parameters allocator: devices for a node's unallocated claims.

Upstream's ``k8s.io/dynamic-resource-allocation/structured`` (its ``incubating`` variant, which
the default gates select) with the features the pinned release turns on and this allocator
implements: admin access, prioritized lists (``firstAvailable``), partitionable devices (shared
counters), device taints and tolerations, consumable capacity, binding conditions (:mod:`.binding`:
such pools come last, results copy the conditions).

Consumable capacity (:mod:`.capacity` computes it): a device with ``allowMultipleAllocations``
is never "in use"; any number of claims, and requests of one claim, share it while each
request's consumption (its ``capacity.requests`` under the capacity's ``requestPolicy``) fits
beside what allocated claims (``shared``) and the current attempt hold. Each such result gets a
new ``shareID`` and its ``consumedCapacity``; its shared counters are charged once, by the
first share. Every device, shared or not, must have the capacities a request names and room
for them.

The search is upstream's depth-first backtracking, in the same order: claims, their requests,
each request's devices; within a request the pools in (driver, pool) order, their slices and
devices in order; a ``firstAvailable`` request tries its subrequests in order. ``All`` mode
takes every matching device of the node or fails. :meth:`Allocator.allocate` returns ``None``
when the claims do not fit the node and raises :class:`AllocationError` for what no node can
fix (a missing DeviceClass, a selector that does not compile or fails at run time): the
scheduler reports that as an error instead of trying other nodes. A search still running at its
``deadline`` (upstream's filterTimeout) raises :class:`AllocationTimeoutError`.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping, Sequence, Set
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Final, cast
from uuid import uuid4

from corral.scheduler.config import quantity as q
from corral.scheduler.framework.api_types import (
    AllocationResult,
    DeviceAllocationConfiguration,
    DeviceAllocationResult,
    DeviceRequestAllocationResult,
    DeviceSelector,
    DeviceSubRequest,
    DeviceToleration,
    ExactDeviceRequest,
    NodeSelector,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    RawObject,
    ResourceClaim,
)
from corral.scheduler.plugins.dynamic_resources import binding
from corral.scheduler.plugins.dynamic_resources import capacity as cap
from corral.scheduler.plugins.dynamic_resources.constraints import (
    Constraint,
    DistinctAttribute,
    MatchAttribute,
)
from corral.scheduler.plugins.dynamic_resources.memo import Memo, Miss, PoolUse, SearchInputs
from corral.scheduler.plugins.dynamic_resources.pools import (
    Candidate,
    DeviceID,
    Node,
    Pool,
    PoolID,
    SliceIndex,
    node_matches,
)

RESULTS_MAX_SIZE: Final = 32  # resourceapi.AllocationResultsMaxSize
EXACT_COUNT: Final = "ExactCount"
ALL: Final = "All"


DeviceKey = tuple[str, str, str]  # device ID, slice name, slice resourceVersion
MatchCache = dict[tuple[str, str, str, str], bool]  # (expression, *DeviceKey) → matches
_CAPACITY_FITS: Final = "\0capacity"  # a MatchCache key: not an expression, the capacity check


def _cel_modules() -> tuple[Any, Any]:
    """The CEL modules, imported on the first selector, not with the plugin: cel-python and
    its parser cost a scheduler about 12 MB of RSS, which a cluster without CEL selectors
    never needs."""
    if not _CEL:
        from corral.scheduler.plugins.dynamic_resources import cel, cel_fast  # noqa: PLC0415

        _CEL.extend((cel, cel_fast))
    return _CEL[0], _CEL[1]


_CEL: list[Any] = []


class AllocationError(Exception):
    """Allocation cannot succeed on any node; the message is upstream's."""


class AllocationTimeoutError(Exception):
    """The search for one node ran past its deadline (upstream: the Filter context's)."""


@dataclass(frozen=True, slots=True)
class Request:
    """A request with ``exactly``, or one subrequest of ``firstAvailable`` (``parent`` set)."""

    name: str
    parent: str
    class_name: str
    mode: str
    count: int
    admin_access: bool | None
    selectors: tuple[DeviceSelector, ...]
    tolerations: tuple[DeviceToleration, ...]
    capacity: Mapping[str, str] | None = None  # capacity.requests: name → quantity

    @property
    def full_name(self) -> str:
        return f"{self.parent}/{self.name}" if self.parent else self.name

    @property
    def base_name(self) -> str:
        return self.parent or self.name

    @property
    def sub_name(self) -> str:
        return self.name if self.parent else ""


def _request(
    name: str, body: ExactDeviceRequest | DeviceSubRequest, admin_access: bool | None, parent: str
) -> Request:
    """A request's ``exactly`` (``parent`` ""), or a subrequest of request ``parent``."""
    return Request(
        name=name,
        parent=parent,
        class_name=body.get("deviceClassName") or "",
        mode=body.get("allocationMode") or EXACT_COUNT,
        count=int(body.get("count") or 1),
        admin_access=admin_access,
        selectors=tuple(body.get("selectors") or ()),
        tolerations=tuple(body.get("tolerations") or ()),
        capacity=(body.get("capacity") or {}).get("requests"),
    )


def claim_key(claim: ResourceClaim) -> str:
    """``namespace/name`` (``name`` alone without a namespace), as upstream's klog.KObj."""
    meta = claim.get("metadata") or {}
    namespace, name = meta.get("namespace") or "", meta.get("name") or ""
    return f"{namespace}/{name}" if namespace else name


@dataclass(slots=True)
class _RequestData:
    request: Request
    cls: RawObject | None
    num_devices: int
    all_devices: list[Candidate] = field(default_factory=list)
    selected_sub: int = 0


@dataclass(slots=True)
class _Result:
    request: Request
    candidate: Candidate
    consumed: dict[str, cap.Consumed] | None = None  # set for a shared device


class _MaxSizeExceededError(Exception):
    """A claim's results would exceed RESULTS_MAX_SIZE: backtrack to another subrequest."""


class Allocator:
    """One scheduling cycle's allocator: the cluster's classes, slices and allocated devices.

    ``allocated`` are the devices other claims hold (in-flight allocations included), ``shared``
    the devices other claims share (results with a ``shareID``) and what they consume. Device
    variables and selector results are cached per (expression, slice name and
    resourceVersion, device) across nodes and :meth:`allocate` calls; ``match_cache`` may be
    shared between cycles (a slice's update changes its resourceVersion), and so may ``memo``
    (each node's last search: :class:`SearchMemo`).
    """

    def __init__(
        self,
        classes: Mapping[str, RawObject],
        slices: Sequence[RawObject] | SliceIndex,
        allocated: Set[DeviceID],
        match_cache: MatchCache | None = None,
        shared: Mapping[DeviceID, cap.Amounts] | None = None,
        *,
        memo: SearchMemo | None = None,
    ) -> None:
        self.classes = classes
        self.slices = slices if isinstance(slices, SliceIndex) else SliceIndex(slices)
        self.allocated = allocated
        self.shared: Mapping[DeviceID, cap.Amounts] = shared or {}
        self.matches = match_cache if match_cache is not None else {}
        self.variables: dict[DeviceKey, dict[str, Any]] = {}
        self.views: dict[DeviceKey, Any] = {}  # cel_fast.DeviceView, imported with cel
        self.available: dict[PoolID, dict[str, dict[str, Fraction]]] = {}
        # By the claim object: the cycle hands every node the same object for a claim (but a
        # claim for extended resources is made anew per node, with that node's requests).
        self._parsed: dict[int, tuple[ResourceClaim, list[tuple[str, tuple[Request, ...]]]]] = {}
        self.memo = memo
        self._specs: dict[int, tuple[ResourceClaim, str]] = {}  # by claim object, as ``_parsed``
        self._use: dict[PoolID, PoolUse] = {}
        # The specs of the claims last searched for, by that sequence's identity: a cycle
        # searches every node for the same claims. Holds the sequence: its id is not reused.
        self._last_specs: tuple[Sequence[ResourceClaim] | None, tuple[str, ...]] = (None, ())

    def requests_of(self, claim: ResourceClaim) -> list[tuple[str, tuple[Request, ...]]]:
        """The claim's requests, each as (name, its subrequests or itself): parsed once per
        claim object, the same for every node it is searched on."""
        entry = self._parsed.get(id(claim))
        if entry is not None and entry[0] is claim:
            return entry[1]
        parsed = []
        devices = (claim.get("spec") or {}).get("devices") or {}
        for raw in devices.get("requests") or ():
            name = raw.get("name") or ""
            subs = raw.get("firstAvailable") or ()
            if subs:
                parsed.append(
                    (name, tuple(_request(s.get("name") or "", s, None, name) for s in subs))
                )
                continue
            exactly = raw.get("exactly") or {}
            parsed.append((name, (_request(name, exactly, exactly.get("adminAccess"), ""),)))
        self._parsed[id(claim)] = (claim, parsed)  # holds the claim: its id is not reused
        return parsed

    def allocate(
        self, node: Node, claims: Sequence[ResourceClaim], deadline: float | None = None
    ) -> list[AllocationResult] | None:
        """``deadline``: a :func:`time.monotonic` instant the search may not run past."""
        found = self.search(node, claims, deadline)
        return None if found is None else found.allocations()

    def search(
        self, node: Node, claims: Sequence[ResourceClaim], deadline: float | None = None
    ) -> Found | None:
        """:meth:`allocate`, with the allocations left to build: the same verdict and the
        same errors, raised here. With a ``memo``, a node whose search inputs are those of its
        last search answers from that search. ``claims`` is read as of its first search: a
        caller searching several nodes for the same claims passes the same sequence, unchanged
        (a new sequence for other claims)."""
        memo = self.memo
        if memo is None:
            kept = self._search(node, claims, deadline)
            return None if kept is None else kept.found(claims)
        pools = self.slices.pools_for(node)
        specs = self._last_specs
        if specs[0] is not claims:
            specs = self._last_specs = (claims, tuple(self.spec_of(c) for c in claims))
        inputs = SearchInputs(self.classes, pools, specs[1], tuple(self.use_of(p) for p in pools))
        hit = memo.lookup(self.slices, node.name, inputs)
        if not isinstance(hit, Miss):
            return None if hit is None else hit.found(claims)
        kept = self._search(node, claims, deadline)  # a search that raises leaves no entry
        memo.record(node.name, inputs, kept)
        return None if kept is None else kept.found(claims)

    def _search(
        self, node: Node, claims: Sequence[ResourceClaim], deadline: float | None
    ) -> _Kept | None:
        run = _Run(self, node, claims, deadline)
        if not run.run():
            return None
        selected = [run.selected(ci) for ci in range(len(claims))]
        return _Kept(run.results, selected, run.node_selectors)

    def spec_of(self, claim: ResourceClaim) -> str:
        """What a search reads of a claim (``spec.devices``: requests, constraints, config) as
        canonical JSON, so that claims asking alike compare equal; once per claim object."""
        entry = self._specs.get(id(claim))
        if entry is not None and entry[0] is claim:
            return entry[1]
        devices = (claim.get("spec") or {}).get("devices") or {}
        text = json.dumps(devices, sort_keys=True, separators=(",", ":"), default=repr)
        self._specs[id(claim)] = (claim, text)  # holds the claim: its id is not reused
        return text

    def use_of(self, pool: Pool) -> PoolUse:
        """Which of the pool's devices other claims hold, and what the shared ones hold of
        them: once per pool (a pool reaching every node is looked at once)."""
        use = self._use.get(pool.id)
        if use is None:
            ids = pool.device_ids()
            allocated = self.allocated
            if isinstance(allocated, (set, frozenset)):
                dedicated = ids.intersection(allocated)
            else:
                dedicated = frozenset(d for d in ids if d in allocated)
            shared = (
                tuple(sorted((d, tuple(sorted(self.shared[d].items())))
                             for d in ids if d in self.shared))
                if self.shared else ()
            )  # fmt: skip
            use = self._use[pool.id] = (dedicated, shared)
        return use


@dataclass(frozen=True, slots=True)
class _Kept:
    """A search's outcome on a node, for any claims with the same specs."""

    results: list[list[_Result]]
    selected: list[list[_RequestData]]
    node_selectors: list[NodeSelector | None]

    def found(self, claims: Sequence[ResourceClaim]) -> Found:
        return Found(claims, self.results, self.selected, self.node_selectors)


class SearchMemo(Memo[_Kept]):
    """Each node's last search, kept across cycles by the plugin (:mod:`.memo`)."""


class Found:
    """The devices one node can give the claims. Filter finds them on every node, but a cycle
    needs the allocations (JSON) of the node it reserves and, with prioritized lists, of the
    nodes it scores: they are built on first use, once. It keeps only what they are built from
    (the search's state goes with the search)."""

    __slots__ = ("_allocations", "_claims", "_node_selectors", "_results", "_selected")

    def __init__(
        self,
        claims: Sequence[ResourceClaim],
        results: list[list[_Result]],
        selected: list[list[_RequestData]],
        node_selectors: list[NodeSelector | None],
    ) -> None:
        self._claims = claims
        self._results = results
        self._selected = selected
        self._node_selectors = node_selectors
        self._allocations: list[AllocationResult] | None = None

    def allocations(self) -> list[AllocationResult]:
        if self._allocations is None:
            self._allocations = [
                _allocation(results, selected, claim, selector)
                for claim, results, selected, selector in zip(
                    self._claims, self._results, self._selected, self._node_selectors, strict=True
                )
            ]
        return self._allocations


class _Run:
    """One :meth:`Allocator.allocate` call: the search state for one node."""

    def __init__(
        self,
        alloc: Allocator,
        node: Node,
        claims: Sequence[ResourceClaim],
        deadline: float | None,
    ) -> None:
        self.a = alloc
        self.node = node
        self.claims = claims
        self.deadline = deadline
        self.pools = binding.pools_last(alloc.slices.pools_for(node))
        self.requests: list[list[list[_RequestData]]] = []  # claim → request → subrequests
        self.constraints: list[list[Constraint]] = []
        self.results: list[list[_Result]] = [[] for _ in claims]
        self.allocating: dict[DeviceID, set[int]] = {}
        self.consumed: dict[PoolID, dict[str, dict[str, Fraction]]] = {}
        # Shared devices in this attempt: how many shares, and what they consume.
        self.shares: dict[DeviceID, int] = {}
        self.allocating_capacity: dict[DeviceID, dict[str, Fraction]] = {}
        self.node_selectors: list[NodeSelector | None] = []  # per claim, once found

    def run(self) -> bool:
        """Whether the claims fit the node; the node selectors are made here (they can fail),
        the rest of each allocation by :meth:`result`."""
        for ci, claim in enumerate(self.claims):
            self._prepare(ci, claim)
        try:
            done = self._allocate_one(0, 0, 0, 0, sub=False)
        except _MaxSizeExceededError:
            done = False
        if not done:
            if any(p.invalid for p in self.pools):
                raise AllocationError("invalid resource pools were encountered")
            return False
        self.node_selectors = [
            _node_selector([r.candidate for r in results], self.node.name)
            for results in self.results
        ]
        return True

    # --- preparation ---------------------------------------------------------------------

    def _prepare(self, ci: int, claim: ResourceClaim) -> None:
        devices = (claim.get("spec") or {}).get("devices") or {}
        per_claim = 0
        requests: list[list[_RequestData]] = []
        for name, subs in self.a.requests_of(claim):
            data = [self._request_data(ci, claim, sub) for sub in subs]
            least = min(d.num_devices for d in data)
            if least > RESULTS_MAX_SIZE - per_claim:
                raise AllocationError(
                    f"claim {claim_key(claim)}, request {name}: adding {least}"
                    f" devices exceeds the claim limit of {RESULTS_MAX_SIZE}, with {per_claim}"
                    " already accounted for"
                )
            per_claim += least
            requests.append(data)
        self.requests.append(requests)
        constraints: list[Constraint] = []
        for i, raw in enumerate(devices.get("constraints") or ()):
            names = frozenset(raw.get("requests") or ())
            if match := raw.get("matchAttribute"):
                constraints.append(MatchAttribute(names, match))
            elif distinct := raw.get("distinctAttribute"):
                constraints.append(DistinctAttribute(names, distinct))
            else:
                raise AllocationError(
                    f"claim {claim_key(claim)}, constraint #{i}: empty constraint"
                    " (unsupported constraint type?)"
                )
        self.constraints.append(constraints)

    def _request_data(self, ci: int, claim: ResourceClaim, request: Request) -> _RequestData:
        def where() -> str:
            return f"claim {claim_key(claim)}, request {request.name}"

        for i, selector in enumerate(request.selectors):
            if not (selector.get("cel") or {}).get("expression"):
                raise AllocationError(
                    f"{where()}, selector #{i}: CEL expression empty (unsupported selector type?)"
                )
        if not request.class_name:
            raise AllocationError(
                f"{where()}: missing device class name (unsupported request type?)"
            )
        cls = self.a.classes.get(request.class_name)
        if cls is None:
            raise AllocationError(
                f"{where()}: could not retrieve device class {request.class_name}:"
                f' deviceclass.resource.k8s.io "{request.class_name}" not found'
            )
        data = _RequestData(request, cls, request.count)
        if request.mode == ALL:
            for pool in self.pools:
                if pool.incomplete:
                    raise AllocationError(
                        f"{where()}: asks for all devices, but resource pool {pool.id} is"
                        " currently being updated"
                    )
                if pool.invalid:
                    raise AllocationError(
                        f"{where()}: asks for all devices, but resource pool {pool.id} is"
                        " currently invalid"
                    )
                for candidate in pool.candidates():
                    if self._selectable(ci, data, candidate) and self._capacity_fits(
                        ci, data, candidate, static=True
                    ):
                        data.all_devices.append(candidate)
            data.num_devices = len(data.all_devices)
        elif request.mode != EXACT_COUNT:
            raise AllocationError(f"{where()}: unsupported count mode {request.mode}")
        return data

    # --- the search ----------------------------------------------------------------------

    def _allocate_one(self, ci: int, ri: int, si: int, di: int, *, sub: bool) -> bool:
        if self.deadline is not None and time.monotonic() > self.deadline:
            raise AllocationTimeoutError
        if ci >= len(self.claims):
            return True
        if ri >= len(self.requests[ci]):
            try:
                return self._allocate_one(ci + 1, 0, 0, 0, sub=False)
            except _MaxSizeExceededError:
                return False
        subs = self.requests[ci][ri]
        if not sub and subs[0].request.parent:
            all_exceeded = True
            for index in range(len(subs)):
                try:
                    success = self._allocate_one(ci, ri, index, di, sub=True)
                except _MaxSizeExceededError:
                    continue
                all_exceeded = False
                if success:
                    subs[0].selected_sub = index
                    return True
            if all_exceeded:
                raise _MaxSizeExceededError
            return False
        data = subs[si]
        request = data.request
        if request.mode == ALL and not data.all_devices:
            return False
        if di >= data.num_devices:
            return self._allocate_one(ci, ri + 1, 0, 0, sub=False)
        if data.num_devices - di > RESULTS_MAX_SIZE - len(self.results[ci]):
            raise _MaxSizeExceededError
        # One device: the loop below is the same walk as _enough's, in the same order.
        if di == 0 and request.mode != ALL and data.num_devices > 1 and not self._enough(ci, data):
            return False
        if request.mode == ALL:
            candidate = data.all_devices[di]
            undo = self._allocate_device(ci, data, candidate, must=True)
            if undo is None:
                return False
            if self._allocate_one(ci, ri, si, di + 1, sub=sub):
                return True
            undo()
            return False
        for pool in self.pools:
            if pool.incomplete or pool.invalid:
                continue
            for candidate in pool.candidates():
                if request.admin_access and ci in self.allocating.get(candidate.id, ()):
                    continue
                if not request.admin_access and self._in_use(candidate.id):
                    continue
                if not self._selectable(ci, data, candidate):
                    continue
                if not self._capacity_fits(ci, data, candidate):
                    continue
                undo = self._allocate_device(ci, data, candidate, must=False)
                if undo is None:
                    continue
                try:
                    if self._allocate_one(ci, ri, si, di + 1, sub=sub):
                        return True
                except _MaxSizeExceededError:
                    undo()
                    raise
                undo()
        return False

    def _enough(self, ci: int, data: _RequestData) -> bool:
        """Whether the node has as many free devices matching the request as it asks for: an
        upper bound that only prunes searches bound to fail (upstream's search would try every
        order of the devices first). After a selector error it does not prune: the search
        reports the error as upstream's does."""
        wanted, found = data.num_devices, 0
        for pool in self.pools:
            if pool.incomplete or pool.invalid:
                continue
            for candidate in pool.candidates():
                if data.request.admin_access:
                    if ci in self.allocating.get(candidate.id, ()):
                        continue
                elif self._in_use(candidate.id):
                    continue
                try:
                    if not self._selectable(ci, data, candidate):
                        continue
                    if candidate.device.get("capacity"):
                        self._capacity_fits(ci, data, candidate)
                except AllocationError:
                    return True
                found += 1
                if found >= wanted:
                    return True
        return False

    def _in_use(self, device: DeviceID) -> bool:
        return device in self.a.allocated or bool(self.allocating.get(device))

    def _allocate_device(
        self, ci: int, data: _RequestData, candidate: Candidate, *, must: bool
    ) -> Any:
        request = data.request
        if request.admin_access and ci in self.allocating.get(candidate.id, ()):
            return None
        if not request.admin_access and self._in_use(candidate.id):
            return None
        multi = bool(candidate.device.get("allowMultipleAllocations"))
        # A shared device's counters are charged by its first share only.
        counters = bool(candidate.device.get("consumesCounters")) and not (
            multi and self._shared(candidate.id)
        )
        if counters and not self._reserve_counters(candidate):
            return None
        added = 0

        def rollback() -> None:
            for constraint in reversed(self.constraints[ci][:added]):
                constraint.remove(request.base_name, request.sub_name)
            if counters:
                self._release_counters(candidate)

        if _taint_prevents(candidate.device, request):
            rollback()
            return None
        for constraint in self.constraints[ci]:
            if not constraint.add(
                request.base_name, request.sub_name, candidate.device, candidate.id.driver
            ):
                rollback()
                if must:
                    raise AllocationError(
                        f"claim {claim_key(self.claims[ci])}, request {request.name}: cannot add"
                        f" device {candidate.id} because a claim constraint would not be satisfied"
                    )
                return None
            added += 1
        if not self._capacity_fits(ci, data, candidate, action="rechecking"):
            rollback()
            return None
        consumed: dict[str, cap.Consumed] = {}
        held: dict[str, Fraction] = {}
        if not multi:
            self.allocating.setdefault(candidate.id, set()).add(ci)
            self.results[ci].append(_Result(request, candidate))
        else:
            try:
                consumed = self._consumed(ci, data, candidate)
            except AllocationError:
                rollback()
                raise
            self.shares[candidate.id] = self.shares.get(candidate.id, 0) + 1
            held = self.allocating_capacity.setdefault(candidate.id, {})
            for name, value in consumed.items():
                held[name] = held.get(name, Fraction(0)) + value.amount
            self.results[ci].append(_Result(request, candidate, consumed))

        def undo() -> None:
            self.results[ci].pop()
            if not multi:
                self.allocating[candidate.id].discard(ci)
            else:
                self.shares[candidate.id] -= 1
                for name, value in consumed.items():
                    held[name] -= value.amount
            rollback()

        return undo

    # --- consumable capacity -------------------------------------------------------------

    def _shared(self, device: DeviceID) -> bool:
        """Whether other claims or this attempt already share the device."""
        return device in self.a.shared or self.shares.get(device, 0) > 0

    def _capacity_fits(
        self,
        ci: int,
        data: _RequestData,
        candidate: Candidate,
        *,
        static: bool = False,
        action: str = "checking",
    ) -> bool:
        """Whether the device has room for the request; ``static``: ignoring what other
        allocations hold (``All`` mode's candidate list)."""
        capacities = candidate.device.get("capacity") or {}
        requests = data.request.capacity
        if not capacities and not requests:
            return True
        # A dedicated device nobody shares, asked for no capacity: the answer depends on the
        # slice alone, cached as selector results are (errors are not cached).
        fixed = not requests and not candidate.device.get("allowMultipleAllocations")
        fixed = fixed and candidate.id not in self.a.shared
        key = (_CAPACITY_FITS, *candidate.key)
        if fixed and key in self.a.matches:
            return self.a.matches[key]
        none: dict[str, Fraction] = {}
        in_use = none if static else self.a.shared.get(candidate.id, none)
        allocating = none if static else self.allocating_capacity.get(candidate.id, none)
        try:
            fits = cap.fits(requests, capacities, in_use, allocating)
        except cap.CapacityError as err:
            device = candidate.id.device if static else str(candidate.id)
            raise AllocationError(
                f"claim {claim_key(self.claims[ci])}, request {data.request.name}: {action}"
                f" capacity for device {device}: {err}"
            ) from err
        if fixed:
            self.a.matches[key] = fits
        return fits

    def _consumed(
        self, ci: int, data: _RequestData, candidate: Candidate
    ) -> dict[str, cap.Consumed]:
        try:
            return cap.for_request(data.request.capacity, candidate.device.get("capacity") or {})
        except cap.CapacityError as err:
            raise AllocationError(
                f"claim {claim_key(self.claims[ci])}, request {data.request.name}: computing"
                f" consumed capacity for device {candidate.id}: {err}"
            ) from err

    # --- selection -----------------------------------------------------------------------

    def _selectable(self, ci: int, data: _RequestData, candidate: Candidate) -> bool:
        device = candidate.device
        if data.cls is not None:
            selectors = (data.cls.get("spec") or {}).get("selectors") or ()
            if selectors and not self._selectors_match(ci, data.cls, selectors, candidate):
                return False
        if data.request.selectors and not self._selectors_match(
            ci, None, data.request.selectors, candidate
        ):
            return False
        if (candidate.slice.get("spec") or {}).get("perDeviceNodeSelection"):
            return node_matches(
                self.node,
                device.get("nodeName") or "",
                bool(device.get("allNodes")),
                device.get("nodeSelector"),
            )
        return True

    def _selectors_match(
        self,
        ci: int,
        cls: RawObject | None,
        selectors: Sequence[RawObject],
        candidate: Candidate,
    ) -> bool:
        """``cls``: these are that DeviceClass's selectors (None: the claim's)."""
        for i, selector in enumerate(selectors):
            expression = (selector.get("cel") or {}).get("expression") or ""
            key = (expression, *candidate.key)
            cached = self.a.matches.get(key)
            if cached is None:
                cached = self._evaluate(ci, cls, i, expression, candidate)
                self.a.matches[key] = cached
            if not cached:
                return False
        return True

    def _evaluate(
        self, ci: int, cls: RawObject | None, index: int, expression: str, candidate: Candidate
    ) -> bool:
        cel, cel_fast = _cel_modules()
        compiled = cel.compile_selector(expression)
        if isinstance(compiled, cel.SelectorError):
            where = self._where(ci, cls)
            raise AllocationError(f"{where}: selector #{index}: CEL compile error: {compiled}")
        if compiled.fast is not None:  # most selectors: answered from the device's JSON
            view = (
                self.a.views.get(candidate.key)
                if compiled.fast.reads_attributes
                else cel_fast.DeviceView.of_driver(candidate.id.driver)
            )
            if view is None:
                attributes = candidate.device.get("attributes") or {}
                view = cel_fast.DeviceView.of(candidate.id.driver, attributes)
                self.a.views[candidate.key] = view
            answer = compiled.fast.evaluate(view)
            if answer is not None:
                return bool(answer)
        variables = self.a.variables.get(candidate.key)
        if variables is None:
            device = candidate.device
            variables = cel.activation(
                cel.Device(
                    candidate.id.driver,
                    device.get("attributes") or {},
                    device.get("capacity") or {},
                    bool(device.get("allowMultipleAllocations")),
                )
            )
            self.a.variables[candidate.key] = variables
        try:  # the deadline holds inside the evaluation too, not only between devices
            return bool(compiled.matches(variables, deadline=self.deadline))
        except cel.SelectorInterruptedError:
            raise AllocationTimeoutError from None
        except cel.SelectorError as err:
            where = self._where(ci, cls)
            raise AllocationError(
                f"{where}: selector #{index} on device {candidate.id}: CEL runtime error: {err}"
            ) from err

    def _where(self, ci: int, cls: RawObject | None) -> str:
        """The selectors' owner, as upstream's messages name it."""
        if cls is not None:
            return f"class {(cls.get('metadata') or {}).get('name') or ''}"
        return f"claim {claim_key(self.claims[ci])}"

    # --- counters (partitionable devices) ------------------------------------------------

    def _available(self, pool: Pool) -> dict[str, dict[str, Fraction]]:
        cache = self.a.available
        if pool.id not in cache:
            available = {name: dict(counters) for name, counters in pool.counter_sets.items()}
            for slice_ in pool.slices + pool.other_slices:
                for device in (slice_.get("spec") or {}).get("devices") or ():
                    device_id = DeviceID(pool.id.driver, pool.id.pool, device.get("name") or "")
                    if device_id not in self.a.allocated and device_id not in self.a.shared:
                        continue
                    _add_consumption(available, device, -1, only_known=True)
            cache[pool.id] = available
        return cache[pool.id]

    def _reserve_counters(self, candidate: Candidate) -> bool:
        available = self._available(candidate.pool)
        consumed = self.consumed.setdefault(candidate.pool.id, {})
        _add_consumption(consumed, candidate.device, +1, only_known=False)
        for set_name, counters in available.items():
            for name, value in counters.items():
                if value < consumed.get(set_name, {}).get(name, Fraction(0)):
                    self._release_counters(candidate)
                    return False
        return True

    def _release_counters(self, candidate: Candidate) -> None:
        _add_consumption(self.consumed[candidate.pool.id], candidate.device, -1, only_known=False)

    # --- the result ----------------------------------------------------------------------

    def selected(self, ci: int) -> list[_RequestData]:
        """Per request of claim ``ci``, the (sub)request the search settled on."""
        return [subs[subs[0].selected_sub] for subs in self.requests[ci]]


def _allocation(
    found: list[_Result],
    selected: list[_RequestData],
    claim: ResourceClaim,
    selector: NodeSelector | None,
) -> AllocationResult:
    """One claim's AllocationResult from what the search chose for it on a node."""
    results: list[DeviceRequestAllocationResult] = []
    for r in found:
        entry: DeviceRequestAllocationResult = {
            "request": r.request.full_name,
            "driver": r.candidate.id.driver,
            "pool": r.candidate.id.pool,
            "device": r.candidate.id.device,
        }
        if r.consumed is not None:  # a share of a device
            entry["shareID"] = str(uuid4())
            if r.consumed:
                entry["consumedCapacity"] = {k: v.text for k, v in r.consumed.items()}
        if r.request.admin_access:
            entry["adminAccess"] = True
        if r.request.tolerations:
            entry["tolerations"] = [{**t} for t in r.request.tolerations]
        entry.update(binding.result_fields(r.candidate.device))
        results.append(entry)
    devices: DeviceAllocationResult = {"results": results}
    allocation: AllocationResult = {"devices": devices}
    config = _config(selected, claim)
    if config:
        devices["config"] = cast("list[DeviceAllocationConfiguration]", config)
    if selector is not None:
        allocation["nodeSelector"] = selector
    return allocation


def _config(selected: list[_RequestData], claim: ResourceClaim) -> list[dict[str, Any]]:
    config: list[dict[str, Any]] = []
    by_class: dict[str, list[dict[str, Any]]] = {}
    for data in selected:
        if data.cls is None:
            continue
        name = (data.cls.get("metadata") or {}).get("name") or ""
        if name in by_class:
            for entry in by_class[name]:
                entry["requests"].append(data.request.full_name)
            continue
        by_class[name] = []
        for raw in (data.cls.get("spec") or {}).get("config") or ():
            entry = {
                "source": "FromClass",
                "requests": [data.request.full_name],
                **_config_body(raw),
            }
            by_class[name].append(entry)
            config.append(entry)
    full_names = [d.request.full_name for d in selected]
    base_names = [d.request.base_name for d in selected]
    for raw in ((claim.get("spec") or {}).get("devices") or {}).get("config") or ():
        wanted = list(raw.get("requests") or ())
        if not wanted or any(n in wanted for n in base_names + full_names):
            config.append({"source": "FromClaim", "requests": wanted, **_config_body(raw)})
    for entry in config:
        wanted = entry.get("requests") or []
        if wanted and all(
            b in wanted or f in wanted for b, f in zip(base_names, full_names, strict=True)
        ):
            entry["requests"] = []
    for entry in config:
        if not entry["requests"]:
            del entry["requests"]
    return config


def _config_body(raw: Mapping[str, object]) -> dict[str, Any]:
    return {k: v for k, v in raw.items() if k not in ("requests", "source")}


def _add_consumption(
    counters: dict[str, dict[str, Fraction]], device: RawObject, sign: int, *, only_known: bool
) -> None:
    for consumption in device.get("consumesCounters") or ():
        set_name = consumption.get("counterSet") or ""
        target = counters.get(set_name) if only_known else counters.setdefault(set_name, {})
        if target is None:
            continue
        for name, value in (consumption.get("counters") or {}).items():
            if only_known and name not in target:
                continue
            amount = q.parse(str((value or {}).get("value", "0")))
            target[name] = target.get(name, Fraction(0)) + sign * amount


def _taint_prevents(device: RawObject, request: Request) -> bool:
    for taint in device.get("taints") or ():
        if taint.get("effect") in ("NoSchedule", "NoExecute") and not any(
            _tolerates(t, taint) for t in request.tolerations
        ):
            return True
    return False


def _tolerates(toleration: DeviceToleration, taint: RawObject) -> bool:
    effect = toleration.get("effect") or ""
    if effect and effect != taint.get("effect"):
        return False
    key = toleration.get("key") or ""
    if key and key != taint.get("key"):
        return False
    operator = toleration.get("operator") or "Equal"
    if operator == "Equal":
        return (toleration.get("value") or "") == (taint.get("value") or "")
    return operator == "Exists"


def _node_selector(candidates: list[Candidate], node_name: str) -> NodeSelector | None:
    """The allocation's nodeSelector: the node's name when a device is local to it or binds to
    it (``bindsToNode``), else the slices' selectors combined."""
    fields: list[NodeSelectorRequirement] = []
    expressions: list[NodeSelectorRequirement] = []
    for candidate in candidates:
        spec = candidate.slice.get("spec") or {}
        source = candidate.device if spec.get("perDeviceNodeSelection") else spec
        if source.get("nodeName") or candidate.device.get("bindsToNode"):
            return {
                "nodeSelectorTerms": [
                    {
                        "matchFields": [
                            {"key": "metadata.name", "operator": "In", "values": [node_name]}
                        ]
                    }
                ]
            }
        terms = (source.get("nodeSelector") or {}).get("nodeSelectorTerms")
        if terms is None or not terms:
            continue
        if len(terms) > 1:
            raise AllocationError(f"unsupported ResourceSlice.NodeSelector with {len(terms)} terms")
        _add_requirements(terms[0].get("matchFields") or (), fields)
        _add_requirements(terms[0].get("matchExpressions") or (), expressions)
    if not fields and not expressions:
        return None
    term: NodeSelectorTerm = {}
    if expressions:
        term["matchExpressions"] = expressions
    if fields:
        term["matchFields"] = fields
    return {"nodeSelectorTerms": [term]}


def _add_requirements(
    source: Sequence[NodeSelectorRequirement], target: list[NodeSelectorRequirement]
) -> None:
    for requirement in source:
        if not any(
            r.get("key") == requirement.get("key")
            and r.get("operator") == requirement.get("operator")
            and set(r.get("values") or ()) == set(requirement.get("values") or ())
            for r in target
        ):
            target.append(requirement)
