"""ResourceSlices gathered into the pools one node can reach (upstream ``GatherPools``).

A slice reaches a node through ``nodeName``, ``allNodes``, ``nodeSelector`` or, with
``perDeviceNodeSelection``, through any of its devices' own node fields; a slice with
``sharedCounters`` belongs to every node (it only carries counters). Slices of one pool count
at the pool's newest ``generation`` only. A pool is *incomplete* while fewer slices than
``resourceSliceCount`` exist at that generation, *invalid* when two of its devices share a name,
a counter set is declared twice, or a device consumes a counter that no set declares.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import NamedTuple

from corral.scheduler.config import quantity as q
from corral.scheduler.framework import api_types, nodeselector
from corral.scheduler.framework.api_types import RawObject


# IDs are named tuples, not dataclasses: the allocator hashes and compares them in every
# search (sets of devices in use, each node's memo), and a tuple's hash and equality run in C.
class PoolID(NamedTuple):
    driver: str
    pool: str

    def __str__(self) -> str:
        return f"{self.driver}/{self.pool}"


class DeviceID(NamedTuple):
    driver: str
    pool: str
    device: str

    def __str__(self) -> str:
        return f"{self.driver}/{self.pool}/{self.device}"


@dataclass(frozen=True, slots=True)
class Candidate:
    """A device of a pool as the allocator tries it: its ID, itself, its slice, its pool."""

    id: DeviceID
    device: RawObject
    slice: RawObject
    pool: Pool
    # (device ID, slice name, slice resourceVersion): this device in this version of its slice,
    # the key of the allocator's caches of selector and capacity results.
    key: tuple[str, str, str]


@dataclass(slots=True)
class Pool:
    """Read-only once gathered: :meth:`SliceIndex.pools_for` hands the same pools out again."""

    id: PoolID
    slices: list[RawObject] = field(default_factory=list)  # device slices reaching the node
    # the pool's device slices elsewhere
    other_slices: list[RawObject] = field(default_factory=list)
    counter_sets: dict[str, dict[str, Fraction]] = field(default_factory=dict)
    incomplete: bool = False
    invalid: bool = False
    invalid_reason: str = ""
    _candidates: list[Candidate] | None = field(default=None, repr=False, compare=False)
    # Whether a device publishes binding conditions (binding.pools_last), found on first use.
    with_binding_conditions: bool | None = field(default=None, repr=False, compare=False)
    _device_ids: frozenset[DeviceID] | None = field(default=None, repr=False, compare=False)

    def device_ids(self) -> frozenset[DeviceID]:
        """Every device of the pool at its generation, on the slices reaching the node and on
        the others: a search on the node sees their use (the counters of partitionable devices
        count the whole pool)."""
        if self._device_ids is None:
            self._device_ids = frozenset(
                DeviceID(self.id.driver, self.id.pool, d.get("name") or "")
                for s in self.slices + self.other_slices
                for d in _spec(s).get("devices") or ()
            )
        return self._device_ids

    def candidates(self) -> list[Candidate]:
        """The devices of ``slices`` in order (slice by slice), built on first use."""
        if self._candidates is None:
            self._candidates = [
                _candidate(self, s, d) for s in self.slices for d in _spec(s).get("devices") or ()
            ]
        return self._candidates


def _candidate(pool: Pool, slice_: RawObject, device: RawObject) -> Candidate:
    device_id = DeviceID(pool.id.driver, pool.id.pool, device.get("name") or "")
    meta = slice_.get("metadata") or {}
    key = (str(device_id), meta.get("name") or "", meta.get("resourceVersion") or "")
    return Candidate(device_id, device, slice_, pool, key)


@dataclass(frozen=True, slots=True)
class Node:
    """What node selection needs of a Node: its name and labels."""

    name: str
    labels: Mapping[str, str]


def node_matches(
    node: Node, node_name: str, all_nodes: bool, selector: api_types.NodeSelector | None
) -> bool:
    if node_name:
        return node.name == node_name
    if all_nodes:
        return True
    if selector is not None:
        parsed = nodeselector.parse_node_selector(selector)
        return nodeselector.selector_matches(parsed, node.labels, node.name)
    return False


def _spec(slice_: RawObject) -> RawObject:
    spec: RawObject = slice_.get("spec") or {}
    return spec


def pool_id(slice_: RawObject) -> PoolID:
    spec = _spec(slice_)
    return PoolID(spec.get("driver") or "", (spec.get("pool") or {}).get("name") or "")


def _generation(slice_: RawObject) -> int:
    return int((_spec(slice_).get("pool") or {}).get("generation") or 0)


def _slice_count(slice_: RawObject) -> int:
    return int((_spec(slice_).get("pool") or {}).get("resourceSliceCount") or 0)


def _reaches(slice_: RawObject, node: Node) -> bool:
    spec = _spec(slice_)
    if spec.get("sharedCounters"):
        return True
    name, all_nodes = spec.get("nodeName") or "", bool(spec.get("allNodes"))
    selector = spec.get("nodeSelector")
    if name or all_nodes or selector is not None:
        return node_matches(node, name, all_nodes, selector)
    if spec.get("perDeviceNodeSelection"):
        return any(
            node_matches(
                node, d.get("nodeName") or "", bool(d.get("allNodes")), d.get("nodeSelector")
            )
            for d in spec.get("devices") or ()
        )
    return False


class SliceIndex:
    """The slices by the node they name and by pool, built once per cycle: gathering one node's
    pools then touches that node's slices and the few that select nodes otherwise."""

    def __init__(self, slices: Sequence[RawObject]) -> None:
        self.by_node: dict[str, list[RawObject]] = {}
        self.selecting: list[RawObject] = []  # allNodes, nodeSelector, per device, counters only
        self.by_pool: dict[PoolID, list[RawObject]] = {}
        for slice_ in slices:
            name = _spec(slice_).get("nodeName") or ""
            if name and not _spec(slice_).get("sharedCounters"):
                self.by_node.setdefault(name, []).append(slice_)
            else:
                self.selecting.append(slice_)
            self.by_pool.setdefault(pool_id(slice_), []).append(slice_)
        # gather_pools per node (and labels, when some slice selects nodes by them): the index
        # never changes, so neither do the pools (rebuilt with the index when slices change).
        self._pools: dict[tuple[str, frozenset[tuple[str, str]]], list[Pool]] = {}

    def pools_for(self, node: Node) -> list[Pool]:
        """:func:`gather_pools` for ``node``, computed once per node; never to be changed."""
        labels = frozenset(node.labels.items()) if self.selecting else frozenset()
        key = (node.name, labels)
        pools = self._pools.get(key)
        if pools is None:
            pools = self._pools[key] = gather_pools(self, node)
        return pools


def gather_pools(slices: Sequence[RawObject] | SliceIndex, node: Node) -> list[Pool]:
    """The pools reaching ``node``, ordered by (driver, pool) so allocation is deterministic."""
    index = slices if isinstance(slices, SliceIndex) else SliceIndex(slices)
    candidates = index.by_node.get(node.name, []) + index.selecting
    reaching: dict[PoolID, list[RawObject]] = {}
    for slice_ in candidates:
        if not _reaches(slice_, node):
            continue
        pid = pool_id(slice_)
        current = reaching.get(pid)
        if current is None or _generation(slice_) > _generation(current[0]):
            reaching[pid] = [slice_]
        elif _generation(slice_) == _generation(current[0]):
            current.append(slice_)
    pools = []
    for pid in sorted(reaching):
        mine = reaching[pid]
        generation = _generation(mine[0])
        everywhere = index.by_pool.get(pid, [])
        if any(_generation(s) > generation for s in everywhere):
            continue  # obsolete: a newer generation exists that does not reach this node
        at_generation = [s for s in everywhere if _generation(s) == generation]
        if len(at_generation) != _slice_count(mine[0]):
            pools.append(Pool(pid, incomplete=True))
            continue
        pools.append(_build(pid, mine, at_generation))
    return pools


def _build(pid: PoolID, mine: list[RawObject], at_generation: list[RawObject]) -> Pool:
    device_slices = [s for s in mine if not _spec(s).get("sharedCounters")]
    counter_slices = [s for s in mine if _spec(s).get("sharedCounters")]
    mine_names = {id(s) for s in mine}
    others = [
        s for s in at_generation if id(s) not in mine_names and not _spec(s).get("sharedCounters")
    ]
    pool = Pool(pid, slices=device_slices, other_slices=others)
    reason = _duplicate_device(device_slices) or _counter_sets(counter_slices, pool)
    reason = reason or _unknown_counter(pool.counter_sets, device_slices + others)
    if reason:
        return Pool(pid, invalid=True, invalid_reason=reason)
    return pool


def _duplicate_device(slices: list[RawObject]) -> str:
    seen: set[str] = set()
    for slice_ in slices:
        for device in _spec(slice_).get("devices") or ():
            name = device.get("name") or ""
            if name in seen:
                return f"duplicate device name {name}"
            seen.add(name)
    return ""


def _counter_sets(slices: list[RawObject], pool: Pool) -> str:
    for slice_ in slices:
        for counter_set in _spec(slice_).get("sharedCounters") or ():
            name = counter_set.get("name") or ""
            if name in pool.counter_sets:
                return f"duplicate counter set name {name}"
            pool.counter_sets[name] = {
                k: q.parse(str((v or {}).get("value", "0")))
                for k, v in (counter_set.get("counters") or {}).items()
            }
    return ""


def _unknown_counter(counter_sets: dict[str, dict[str, Fraction]], slices: list[RawObject]) -> str:
    for slice_ in slices:
        for device in _spec(slice_).get("devices") or ():
            for consumption in device.get("consumesCounters") or ():
                set_name = consumption.get("counterSet") or ""
                counters = counter_sets.get(set_name)
                if counters is None:
                    return f"counter set {set_name} not found"
                for counter in consumption.get("counters") or {}:
                    if counter not in counters:
                        return f"counter {counter} not found in counter set {set_name}"
    return ""
