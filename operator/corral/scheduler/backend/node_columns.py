"""The cache's mutable node columns, with copy-on-write against the snapshots it hands out.

Contract: :meth:`NodeColumns.snapshot` is O(number of columns): the snapshot references the
current arrays and every array becomes *shared*; the first write to a shared array after that
copies it (``_own``). A steady stream of pod assumes thus copies only the requested-resource
columns once per cycle, and node updates copy only the columns they touch.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from corral.scheduler.framework import pod_table, types
from corral.scheduler.framework import snapshot as snap
from corral.scheduler.framework.podgroup import PodGroupState
from corral.scheduler.framework.taints import Taint

_INITIAL_CAPACITY = 64
_NON_ZERO_ROWS = 2
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1


class NodeColumns:
    def __init__(self) -> None:
        self.resources = snap.ResourceIndex()
        self.label_vocab: dict[str, snap.LabelVocab] = {}
        self.taint_vocab = snap.TaintVocab()
        self.capacity = _INITIAL_CAPACITY
        self.names: list[str] = [""] * self.capacity
        self.records: list[types.NodeRecord | None] = [None] * self.capacity
        self.slot_of: dict[str, int] = {}
        self._free: list[int] = list(range(self.capacity - 1, -1, -1))
        rows = len(self.resources.names)
        self.allocatable = np.zeros((rows, self.capacity), dtype=np.int64)
        self.requested = np.zeros((rows, self.capacity), dtype=np.int64)
        # Per resource row: the pods' limits, or requests where no limit is set.
        self.limits = np.zeros((rows, self.capacity), dtype=np.int64)
        self.non_zero = np.zeros((_NON_ZERO_ROWS, self.capacity), dtype=np.int64)
        self.unschedulable = np.zeros(self.capacity, dtype=np.bool_)
        self.taints = np.full((self.capacity, 0), -1, dtype=np.int32)
        self.labels: dict[str, np.ndarray[Any, np.dtype[np.int32]]] = {}
        # Image name → slot → size. Inner dicts are replaced, never changed in place.
        self.images: dict[str, dict[int, int]] = {}
        self._shared: set[str] = set()
        # (array, row, slot) → the exact sum of a cell saturated at the int64 bounds.
        self._beyond: dict[tuple[str, int, int], int] = {}

    def sizes(self) -> dict[str, int]:
        """Slots, capacity and vocabularies (label values, taints, images ever seen)."""
        return {
            "slots": len(self.slot_of),
            "capacity": self.capacity,
            "label_keys": len(self.labels),
            "images": len(self.images),
        }

    # --- copy-on-write ----------------------------------------------------------------------

    def _own(self, name: str) -> None:
        """Copy attribute ``name`` (an array, list or dict) if a snapshot still shares it."""
        if name in self._shared:
            self._shared.discard(name)
            setattr(self, name, getattr(self, name).copy())

    def _own_label(self, key: str) -> None:
        self._own("labels")
        shared_key = f"label:{key}"
        if shared_key in self._shared:
            self._shared.discard(shared_key)
            self.labels[key] = self.labels[key].copy()

    def snapshot(
        self,
        generation: int,
        order: npt.NDArray[np.intp],
        pods: pod_table.PodTable = pod_table.EMPTY,
        *,
        pod_groups: Mapping[str, PodGroupState] | None = None,
    ) -> snap.Snapshot:
        self._shared = {
            "names", "records", "slot_of", "allocatable", "requested", "non_zero",
            "unschedulable", "taints", "labels", "images", "limits",
        } | {f"label:{k}" for k in self.labels}  # fmt: skip
        return snap.Snapshot(
            generation=generation,
            order=order,
            names=self.names,
            slot_of=self.slot_of,
            records=self.records,
            allocatable=self.allocatable,
            requested=self.requested,
            non_zero_requested=self.non_zero,
            unschedulable=self.unschedulable,
            taints=self.taints,
            label_columns=self.labels,
            resources=self.resources,
            label_vocab=self.label_vocab,
            taint_vocab=self.taint_vocab,
            pods=pods,
            images=self.images,
            limits=self.limits,
            pod_groups=pod_groups if pod_groups is not None else {},
        )

    # --- growth -----------------------------------------------------------------------------

    def _grow_slots(self) -> None:
        old, new = self.capacity, self.capacity * 2
        extra = new - old
        self.names = self.names + [""] * extra
        self.records = self.records + [None] * extra
        self.allocatable = np.pad(self.allocatable, ((0, 0), (0, extra)))
        self.requested = np.pad(self.requested, ((0, 0), (0, extra)))
        self.limits = np.pad(self.limits, ((0, 0), (0, extra)))
        self.non_zero = np.pad(self.non_zero, ((0, 0), (0, extra)))
        self.unschedulable = np.pad(self.unschedulable, (0, extra))
        self.taints = np.pad(self.taints, ((0, extra), (0, 0)), constant_values=-1)
        self.labels = {k: np.pad(v, (0, extra), constant_values=-1) for k, v in self.labels.items()}
        self._free.extend(range(new - 1, old - 1, -1))
        self.capacity = new
        self._shared.clear()  # everything above is a fresh object

    def _ensure_rows(self, row: int) -> None:
        have = self.allocatable.shape[0]
        if row >= have:
            extra = row + 1 - have
            self.allocatable = np.pad(self.allocatable, ((0, extra), (0, 0)))
            self.requested = np.pad(self.requested, ((0, extra), (0, 0)))
            self.limits = np.pad(self.limits, ((0, extra), (0, 0)))
            self._shared -= {"allocatable", "requested", "limits"}

    def row(self, name: str) -> int:
        row = self.resources.ensure(name)
        self._ensure_rows(row)
        return row

    # --- nodes ------------------------------------------------------------------------------

    def set_node(self, record: types.NodeRecord) -> int:
        """Add or update a node's own columns (allocatable, labels, taints, flags)."""
        slot = self.slot_of.get(record.name)
        if slot is None:
            if not self._free:
                self._grow_slots()
            slot = self._free.pop()
            for name in ("names", "slot_of"):
                self._own(name)
            self.names[slot] = record.name
            self.slot_of[record.name] = slot
            previous: types.NodeRecord | None = None
        else:
            previous = self.records[slot]
        self._own("records")
        self.records[slot] = record
        if previous is None or previous.allocatable != record.allocatable:
            self._write_allocatable(slot, record.allocatable)
        if previous is None or previous.unschedulable != record.unschedulable:
            self._own("unschedulable")
            self.unschedulable[slot] = record.unschedulable
        if previous is None or previous.taints != record.taints:
            self._write_taints(slot, record.taints)
        if previous is None or previous.labels != record.labels:
            self._write_labels(slot, record.labels, previous.labels if previous else {})
        if previous is None or previous.images != record.images:
            self._write_images(slot, record.images, previous.images if previous else ())
        return slot

    def remove_node(self, name: str) -> int | None:
        slot = self.slot_of.get(name)
        if slot is None:
            return None
        previous = self.records[slot]
        for attr in (
            "names", "slot_of", "records", "allocatable", "requested", "non_zero", "limits",
        ):  # fmt: skip
            self._own(attr)
        del self.slot_of[name]
        self.names[slot] = ""
        self.records[slot] = None
        self.allocatable[:, slot] = 0
        self.requested[:, slot] = 0
        self.limits[:, slot] = 0
        self.non_zero[:, slot] = 0
        self._beyond = {k: v for k, v in self._beyond.items() if k[2] != slot}
        if previous is not None:
            self._write_labels(slot, {}, previous.labels)
            self._write_images(slot, (), previous.images)
            if previous.taints:
                self._write_taints(slot, ())
            if previous.unschedulable:
                self._own("unschedulable")
                self.unschedulable[slot] = False
        self._free.append(slot)
        return slot

    def _write_allocatable(self, slot: int, alloc: types.Resources) -> None:
        rows = [self.row(n) for n in alloc.scalar]  # may grow the arrays first
        self._own("allocatable")
        column = self.allocatable[:, slot]
        column[:] = 0
        column[snap.ROW_CPU] = alloc.milli_cpu
        column[snap.ROW_MEMORY] = alloc.memory
        column[snap.ROW_EPHEMERAL] = alloc.ephemeral_storage
        column[snap.ROW_PODS] = alloc.allowed_pods
        for row, amount in zip(rows, alloc.scalar.values(), strict=True):
            column[row] = amount

    def _write_taints(self, slot: int, taints: Sequence[Taint]) -> None:
        ids = [self.taint_vocab.ensure(t) for t in taints]
        if len(ids) > self.taints.shape[1]:
            extra = len(ids) - self.taints.shape[1]
            self.taints = np.pad(self.taints, ((0, 0), (0, extra)), constant_values=-1)
            self._shared.discard("taints")
        self._own("taints")
        self.taints[slot, :] = -1
        self.taints[slot, : len(ids)] = ids

    def _write_labels(
        self, slot: int, labels: Mapping[str, str], previous: Mapping[str, str]
    ) -> None:
        for key in previous.keys() - labels.keys():
            self._own_label(key)
            self.labels[key][slot] = -1
        for key, value in labels.items():
            if previous.get(key) == value:
                continue
            vocab = self.label_vocab.get(key)
            if vocab is None:
                vocab = self.label_vocab[key] = snap.LabelVocab()
            vid = vocab.ensure(value)
            if key not in self.labels:
                self._own("labels")
                self.labels[key] = np.full(self.capacity, -1, dtype=np.int32)
            else:
                self._own_label(key)
            self.labels[key][slot] = vid

    def _write_images(
        self,
        slot: int,
        images: Sequence[tuple[tuple[str, ...], int]],
        previous: Sequence[tuple[tuple[str, ...], int]],
    ) -> None:
        self._own("images")
        for names, _size in previous:
            for name in names:
                holders = self.images.get(name)
                if holders is not None and slot in holders:
                    rest = {s: v for s, v in holders.items() if s != slot}
                    if rest:
                        self.images[name] = rest
                    else:
                        del self.images[name]
        for names, size in images:
            for name in names:
                self.images[name] = {**self.images.get(name, {}), slot: size}

    # --- pods -------------------------------------------------------------------------------

    def add_usage(self, slot: int, pod: types.PodInfo, sign: int) -> None:
        """Add (sign=1) or subtract (sign=-1) a pod's requests on the node at ``slot``.

        The sums saturate at the int64 bounds instead of wrapping (upstream's int64 ``+=``
        wraps: two pods of 5 EiB would make a node look empty, and NumPy warns on stderr); the
        exact sum of a saturated cell is kept aside, so subtracting later is exact again."""
        req = pod.requests
        scalar_rows = [(self.row(n), v) for n, v in req.scalar.items() if v]
        self._own("requested")
        self._own("non_zero")
        add = self._add
        add("requested", snap.ROW_CPU, slot, sign * req.milli_cpu)
        add("requested", snap.ROW_MEMORY, slot, sign * req.memory)
        add("requested", snap.ROW_EPHEMERAL, slot, sign * req.ephemeral_storage)
        add("requested", snap.ROW_PODS, slot, sign)
        for row, amount in scalar_rows:
            add("requested", row, slot, sign * amount)
        add("non_zero", 0, slot, sign * pod.non_zero_milli_cpu)
        add("non_zero", 1, slot, sign * pod.non_zero_memory)
        lim = pod.limits
        limit_rows = [(self.row(n), v) for n, v in lim.scalar.items() if v]
        self._own("limits")
        add("limits", snap.ROW_CPU, slot, sign * lim.milli_cpu)
        add("limits", snap.ROW_MEMORY, slot, sign * lim.memory)
        add("limits", snap.ROW_EPHEMERAL, slot, sign * lim.ephemeral_storage)
        for row, amount in limit_rows:
            add("limits", row, slot, sign * amount)

    def _add(self, name: str, row: int, slot: int, delta: int) -> None:
        if not delta:
            return
        array = getattr(self, name)
        key = (name, row, slot)
        exact = self._beyond.get(key)
        value = (int(array[row, slot]) if exact is None else exact) + delta
        if _INT64_MIN <= value <= _INT64_MAX:
            if exact is not None:
                del self._beyond[key]
            array[row, slot] = value
        else:
            self._beyond[key] = value
            array[row, slot] = _INT64_MAX if value > 0 else _INT64_MIN
