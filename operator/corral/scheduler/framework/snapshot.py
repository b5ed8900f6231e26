"""The columnar node snapshot a cycle reads: NumPy columns indexed by node slot.

Contract:
- A snapshot never changes after it is taken; the cache copies a column before writing to it
  when a snapshot still shares it (copy-on-write), so taking one is O(number of columns).
- Columns are indexed by *slot*; freed slots stay in the arrays (and are reused). ``order``
  lists the live slots in upstream's node-tree order (zones interleaved round-robin), which is
  the order the cycle walks for ``percentageOfNodesToScore``.
- The vocabularies (resource rows, label values, taints) are append-only and shared with the
  cache: an id in a snapshot's column always means the same thing.
- ``node_info(slot)`` builds a per-node view once per snapshot and keeps it (``built_views``);
  the cache hands the views of untouched nodes on to the next snapshot, so a node's view is
  built again only after something on it changed.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Final

import numpy as np
import numpy.typing as npt

from corral.scheduler.framework import nodeselector, pod_table, types
from corral.scheduler.framework.podgroup import PodGroupState
from corral.scheduler.framework.taints import Taint

# Fixed resource rows; scalar resources get rows from 4 on, in order of first sight.
ROW_CPU: Final = 0
ROW_MEMORY: Final = 1
ROW_EPHEMERAL: Final = 2
ROW_PODS: Final = 3  # allocatable: allowed pods; requested: number of pods on the node

Int64Array = npt.NDArray[np.int64]
Int32Array = npt.NDArray[np.int32]
BoolArray = npt.NDArray[np.bool_]


class ResourceIndex:
    """Resource name → row. Append-only."""

    def __init__(self) -> None:
        self.names: list[str] = [types.CPU, types.MEMORY, types.EPHEMERAL_STORAGE, types.PODS]
        self.rows: dict[str, int] = {n: i for i, n in enumerate(self.names)}
        self._lock = threading.Lock()

    def row(self, name: str) -> int | None:
        return self.rows.get(name)

    def ensure(self, name: str) -> int:
        row = self.rows.get(name)
        if row is None:
            with self._lock:
                row = self.rows.get(name)
                if row is None:
                    row = len(self.names)
                    self.names.append(name)
                    self.rows[name] = row
        return row


class LabelVocab:
    """One label key's values → small integer ids. Append-only."""

    def __init__(self) -> None:
        self.values: list[str] = []
        self.ids: dict[str, int] = {}
        self._ints: Int64Array = np.zeros(1, dtype=np.int64)
        self._valid: BoolArray = np.zeros(1, dtype=np.bool_)
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self.values)

    def ensure(self, value: str) -> int:
        vid = self.ids.get(value)
        if vid is None:
            with self._lock:
                vid = self.ids.get(value)
                if vid is None:
                    vid = len(self.values)
                    self.values.append(value)
                    self.ids[value] = vid
        return vid

    def int_table(self) -> tuple[Int64Array, BoolArray]:
        """Each value parsed as int64 (for Gt/Lt), plus a trailing invalid entry for id -1."""
        n = len(self.values)
        ints, valid = self._ints, self._valid
        if len(ints) != n + 1:
            known = len(ints) - 1
            extra = [nodeselector.parse_int64(v) for v in self.values[known:n]]
            ints = np.concatenate(
                [ints[:known], np.array([e or 0 for e in extra], dtype=np.int64), [0]]
            )
            valid = np.concatenate(
                [valid[:known], np.array([e is not None for e in extra], dtype=np.bool_), [False]]
            )
            self._ints, self._valid = ints, valid
        return ints, valid


class TaintVocab:
    """Distinct taints → ids. Append-only."""

    def __init__(self) -> None:
        self.taints: list[Taint] = []
        self.ids: dict[Taint, int] = {}
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self.taints)

    def ensure(self, taint: Taint) -> int:
        tid = self.ids.get(taint)
        if tid is None:
            with self._lock:
                tid = self.ids.get(taint)
                if tid is None:
                    tid = len(self.taints)
                    self.taints.append(taint)
                    self.ids[taint] = tid
        return tid

    def table(self, predicate: Callable[[Taint], bool]) -> BoolArray:
        """``predicate(taint)`` for every id, plus a trailing ``False`` for the padding id -1."""
        out = np.zeros(len(self.taints) + 1, dtype=np.bool_)
        for i, taint in enumerate(list(self.taints)):
            out[i] = predicate(taint)
        return out


@dataclass(frozen=True, slots=True, eq=False)
class Snapshot:
    generation: int
    order: npt.NDArray[np.intp]
    names: Sequence[str]  # per slot; "" for a free slot
    slot_of: Mapping[str, int]
    records: Sequence[types.NodeRecord | None]
    allocatable: Int64Array  # (rows, capacity)
    requested: Int64Array  # (rows, capacity)
    non_zero_requested: Int64Array  # (2, capacity): cpu millis, memory bytes
    unschedulable: BoolArray
    taints: Int32Array  # (capacity, width): taint ids in node order, -1 padding
    label_columns: Mapping[str, Int32Array]  # key → value id per slot, -1 when absent
    resources: ResourceIndex
    label_vocab: Mapping[str, LabelVocab]
    taint_vocab: TaintVocab
    # Bound and assumed pods as columns (InterPodAffinity, PodTopologySpread, ...).
    pods: pod_table.PodTable = pod_table.EMPTY
    # Image name (as in node.status.images[].names) → slot → size in bytes.
    images: Mapping[str, Mapping[int, int]] = field(default_factory=dict)
    # (rows, capacity): per resource the pods' limits, falling back to requests per container.
    limits: Int64Array = field(default_factory=lambda: np.zeros((4, 0), dtype=np.int64))
    # slot → the NodeInfo ``node_info`` built for it (or the cache carried over): a memo, not
    # state; every entry equals what ``node_info`` would build from this snapshot's columns.
    built_views: dict[int, types.NodeInfo] = field(default_factory=dict)
    # GenericWorkload: each PodGroup's members as of this snapshot (key ``namespace/name``);
    # empty with the gate off. Never changed after the snapshot is taken.
    pod_groups: Mapping[str, PodGroupState] = field(default_factory=dict)

    @property
    def num_nodes(self) -> int:
        return len(self.order)

    @property
    def capacity(self) -> int:
        return len(self.names)

    def label(self, key: str) -> Int32Array | None:
        """The key's value-id column, or ``None`` when no node carries the key."""
        return self.label_columns.get(key)

    def resource_row(self, name: str) -> int | None:
        """The row of a resource in this snapshot's arrays, ``None`` if no node declares it."""
        row = self.resources.row(name)
        return row if row is not None and row < self.allocatable.shape[0] else None

    def node_info(self, slot: int) -> types.NodeInfo:
        """A per-node view for per-node plugin forms (built on first use; NodeInfo is
        immutable, so one object serves every caller)."""
        known = self.built_views.get(slot)
        if known is not None:
            return known
        built = self._build_node_info(slot)
        self.built_views[slot] = built
        return built

    def _build_node_info(self, slot: int) -> types.NodeInfo:
        record = self.records[slot]
        if record is None:
            raise KeyError(f"slot {slot} holds no node")
        alloc, req = self.allocatable[:, slot], self.requested[:, slot]
        scalar_names = self.resources.names[4 : self.allocatable.shape[0]]
        return types.NodeInfo(
            name=record.name,
            labels=record.labels,
            taints=record.taints,
            unschedulable=record.unschedulable,
            declared_features=record.declared_features,
            allocatable=record.allocatable,
            requested=types.Resources(
                milli_cpu=int(req[ROW_CPU]),
                memory=int(req[ROW_MEMORY]),
                ephemeral_storage=int(req[ROW_EPHEMERAL]),
                scalar={
                    n: int(req[4 + i])
                    for i, n in enumerate(scalar_names)
                    if req[4 + i] or alloc[4 + i]
                },
            ),
            non_zero_milli_cpu=int(self.non_zero_requested[0, slot]),
            non_zero_memory=int(self.non_zero_requested[1, slot]),
            num_pods=int(req[ROW_PODS]),
            slot=slot,
            pods=self.pods.pods_on(slot),
            image_states=self.image_states(record),
            annotations=record.annotations,
        )

    def image_states(self, record: types.NodeRecord) -> dict[str, types.ImageState]:
        """Upstream ``NodeInfo.ImageStates``: every name of the node's images, with the number
        of nodes in the snapshot that have it."""
        out: dict[str, types.ImageState] = {}
        for names, size in record.images:
            for name in names:
                holders = len(self.images.get(name, ()))
                out[name] = types.ImageState(size, holders, self.num_nodes)
        return out

    def node_infos(self) -> list[types.NodeInfo]:
        return [self.node_info(int(s)) for s in self.order]
