"""The cache's mutable pod rows (bound and assumed pods), copy-on-write against snapshots.

Contract:
- :meth:`PodColumns.snapshot` is O(number of columns): the view covers rows ``[0, size)`` and
  every column becomes shared. Writing a row below the shared size copies that column first;
  rows at or beyond it are invisible to the outstanding snapshots and are written in place.
- New pods are therefore *appended* while capacity lasts (an assume costs no copy); freed rows
  are reused only when the arrays are full, and the arrays double when nothing is free.
- Vocabularies (label values, namespaces, affinity specs) grow by appending, so ids stay valid
  in every snapshot. Once one holds twice the entries it kept at the last rebuild, plus
  :data:`VOCABULARY_SLACK`, they are rebuilt from the rows that still use them
  (:meth:`PodColumns.compact`; amortized O(1) per pod): new objects throughout (vocabularies,
  re-encoded columns), never a change to ones a snapshot holds.
  Without it, every value ever seen stayed for the process's life: each Job's
  ``controller-uid`` and ``job-name``, each pod's own label, each Job's anti-affinity spec (an
  hour of churn at 50 pods/s grew them by hundreds of thousands; docs/reliability.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final, TypeVar

import numpy as np

from corral.scheduler.framework import pod_table, podaffinity, types

_INITIAL_CAPACITY = 256
VOCABULARY_SLACK: Final = 1024
_T = TypeVar("_T")
_ARRAYS = (
    "node_slot", "namespace", "deleting", "affinity_id", "has_ports", "scheduler", "terminal",
    "req_milli_cpu", "req_memory", "req_ephemeral", "req_scalar",
)  # fmt: skip


class PodColumns:
    def __init__(self) -> None:
        self.capacity = _INITIAL_CAPACITY
        self.size = 0
        self.infos: list[types.PodInfo | None] = []
        self.row_of: dict[str, int] = {}
        self._free: list[int] = []
        self.node_slot = np.full(self.capacity, -1, dtype=np.int32)
        self.namespace = np.full(self.capacity, -1, dtype=np.int32)
        self.deleting = np.zeros(self.capacity, dtype=np.bool_)
        self.affinity_id = np.full(self.capacity, -1, dtype=np.int32)
        self.has_ports = np.zeros(self.capacity, dtype=np.bool_)
        self.scheduler = np.full(self.capacity, -1, dtype=np.int32)
        self.terminal = np.zeros(self.capacity, dtype=np.bool_)
        self.req_milli_cpu = np.zeros(self.capacity, dtype=np.int64)
        self.req_memory = np.zeros(self.capacity, dtype=np.int64)
        self.req_ephemeral = np.zeros(self.capacity, dtype=np.int64)
        self.req_scalar = np.zeros(self.capacity, dtype=np.bool_)
        self.labels: dict[str, np.ndarray[Any, np.dtype[np.int32]]] = {}
        self.label_ids: dict[str, dict[str, int]] = {}
        self.namespace_ids: dict[str, int] = {}
        self.scheduler_ids: dict[str, int] = {}
        self.affinity_specs: list[podaffinity.PodAffinity] = []
        self._spec_ids: dict[podaffinity.PodAffinity, int] = {}
        self._shared: set[str] = set()
        self._shared_size = 0
        self._label_entries = 0  # keys and values in label_ids
        self._compact_at = VOCABULARY_SLACK  # the largest vocabulary's size that rebuilds them
        self.compactions = 0  # vocabulary rebuilds so far (for tests and the soak)
        self.num_affinity = 0  # rows whose pod has pod (anti-)affinity

    # --- copy-on-write ----------------------------------------------------------------------

    def _own(self, name: str, row: int) -> None:
        if row < self._shared_size and name in self._shared:
            self._shared.discard(name)
            setattr(self, name, getattr(self, name).copy())

    def _own_label(self, key: str, row: int) -> None:
        if "labels" in self._shared:
            self._shared.discard("labels")
            self.labels = dict(self.labels)
        shared_key = f"label:{key}"
        if row < self._shared_size and shared_key in self._shared:
            self._shared.discard(shared_key)
            self.labels[key] = self.labels[key].copy()

    def snapshot(self) -> pod_table.PodTable:
        self._shared = {"infos", "labels", *_ARRAYS} | {f"label:{k}" for k in self.labels}
        self._shared_size = self.size
        return pod_table.PodTable(
            size=self.size,
            infos=self.infos,
            node_slot=self.node_slot,
            namespace=self.namespace,
            deleting=self.deleting,
            affinity_id=self.affinity_id,
            has_ports=self.has_ports,
            scheduler=self.scheduler,
            terminal=self.terminal,
            req_milli_cpu=self.req_milli_cpu,
            req_memory=self.req_memory,
            req_ephemeral=self.req_ephemeral,
            req_scalar=self.req_scalar,
            scheduler_ids=self.scheduler_ids,
            label_columns=self.labels,
            label_ids=self.label_ids,
            namespace_ids=self.namespace_ids,
            affinity_specs=self.affinity_specs,
            num_affinity=self.num_affinity,
        )

    def sizes(self) -> dict[str, int]:
        """Rows, capacity and every vocabulary's entries (they grow with what was ever seen)."""
        return {
            "rows": len(self.row_of),
            "capacity": self.capacity,
            "free_rows": len(self._free),
            "label_keys": len(self.labels),
            "label_values": sum(len(ids) for ids in self.label_ids.values()),
            "namespaces": len(self.namespace_ids),
            "affinity_specs": len(self.affinity_specs),
        }

    # --- rows -------------------------------------------------------------------------------

    def _grow(self) -> None:
        extra = self.capacity
        self.capacity *= 2
        self.node_slot = np.pad(self.node_slot, (0, extra), constant_values=-1)
        self.namespace = np.pad(self.namespace, (0, extra), constant_values=-1)
        self.deleting = np.pad(self.deleting, (0, extra))
        self.affinity_id = np.pad(self.affinity_id, (0, extra), constant_values=-1)
        self.has_ports = np.pad(self.has_ports, (0, extra))
        self.scheduler = np.pad(self.scheduler, (0, extra), constant_values=-1)
        self.terminal = np.pad(self.terminal, (0, extra))
        self.req_milli_cpu = np.pad(self.req_milli_cpu, (0, extra))
        self.req_memory = np.pad(self.req_memory, (0, extra))
        self.req_ephemeral = np.pad(self.req_ephemeral, (0, extra))
        self.req_scalar = np.pad(self.req_scalar, (0, extra))
        self.labels = {k: np.pad(v, (0, extra), constant_values=-1) for k, v in self.labels.items()}
        self._shared -= {*_ARRAYS, "labels"}
        self._shared -= {f"label:{k}" for k in self.labels}

    def _new_row(self) -> int:
        if self.size < self.capacity:
            row = self.size
            self.size += 1
            self.infos.append(None)  # beyond every snapshot's size: no copy needed
            return row
        if self._free:
            return self._free.pop()
        self._grow()
        return self._new_row()

    def _id(self, vocab: dict[str, int], value: str) -> int:
        found = vocab.get(value)
        if found is None:
            found = vocab[value] = len(vocab)
        return found

    def _label_id(self, key: str, value: str) -> int:
        ids = self.label_ids.get(key)
        if ids is None:
            ids = self.label_ids[key] = {}
            self._label_entries += 1
        found = ids.get(value)
        if found is None:
            found = ids[value] = len(ids)
            self._label_entries += 1
        return found

    def add(self, pod: types.PodInfo, slot: int) -> None:
        """Add ``pod`` (not yet present) on the node at ``slot`` (-1: node not in the cache)."""
        row = self._new_row()
        self.row_of[pod.uid] = row
        self.num_affinity += pod.affinity is not None
        self._own("infos", row)
        self.infos[row] = pod
        columns: tuple[tuple[str, int | bool], ...] = (
            ("node_slot", slot),
            ("namespace", self._id(self.namespace_ids, pod.namespace)),
            ("deleting", pod.deleting),
            ("affinity_id", self._spec_id(pod.affinity)),
            ("has_ports", bool(pod.host_ports)),
            ("scheduler", self._id(self.scheduler_ids, pod.scheduler_name)),
            ("terminal", pod.terminal),
            ("req_milli_cpu", pod.requests.milli_cpu),
            ("req_memory", pod.requests.memory),
            ("req_ephemeral", pod.requests.ephemeral_storage),
            ("req_scalar", bool(pod.requests.scalar)),
        )
        for name, value in columns:
            self._own(name, row)
            getattr(self, name)[row] = value
        for key, label in pod.labels.items():
            vid = self._label_id(key, label)
            if key not in self.labels:
                if "labels" in self._shared:
                    self._shared.discard("labels")
                    self.labels = dict(self.labels)
                self.labels[key] = np.full(self.capacity, -1, dtype=np.int32)
            else:
                self._own_label(key, row)
            self.labels[key][row] = vid
        if self._largest_vocabulary() > self._compact_at:
            self.compact()

    def remove(self, uid: str) -> None:
        row = self.row_of.pop(uid, None)
        if row is None:
            return
        pod = self.infos[row]
        self.num_affinity -= pod is not None and pod.affinity is not None
        self._own("infos", row)
        self.infos[row] = None
        for name, value in (
            ("node_slot", -1),
            ("namespace", -1),
            ("deleting", False),
            ("affinity_id", -1),
            ("has_ports", False),
            ("scheduler", -1),
            ("terminal", False),
            ("req_milli_cpu", 0),
            ("req_memory", 0),
            ("req_ephemeral", 0),
            ("req_scalar", False),
        ):
            self._own(name, row)
            getattr(self, name)[row] = value
        for key in pod.labels if pod is not None else ():
            self._own_label(key, row)
            self.labels[key][row] = -1
        self._free.append(row)

    def move(self, uids: list[str], slot: int) -> None:
        """Point the rows of ``uids`` at ``slot`` (a node appeared, or -1: it went away)."""
        for uid in uids:
            row = self.row_of.get(uid)
            if row is not None:
                self._own("node_slot", row)
                self.node_slot[row] = slot

    def _spec_id(self, spec: podaffinity.PodAffinity | None) -> int:
        if spec is None:
            return -1
        found = self._spec_ids.get(spec)
        if found is None:
            found = self._spec_ids[spec] = len(self.affinity_specs)
            self.affinity_specs.append(spec)
        return found

    # --- vocabularies -----------------------------------------------------------------------

    def _largest_vocabulary(self) -> int:
        return max(self._label_entries, len(self.affinity_specs), len(self.namespace_ids))

    def compact(self) -> None:
        """Rebuild the vocabularies from the rows that use them: label keys no row has are
        dropped, values and specs renumbered densely, the columns that hold their ids
        re-encoded. Every object replaced is a new one: outstanding snapshots keep theirs."""
        size = self.size
        labels: dict[str, np.ndarray[Any, np.dtype[np.int32]]] = {}
        label_ids: dict[str, dict[str, int]] = {}
        for key, column in self.labels.items():
            values = self.label_ids.get(key, {})
            encoded, kept = _renumber(column, size, list(values))
            if kept:
                labels[key], label_ids[key] = encoded, {v: i for i, v in enumerate(kept)}
        self.labels, self.label_ids = labels, label_ids
        self._label_entries = len(label_ids) + sum(len(ids) for ids in label_ids.values())
        self.namespace, names = _renumber(self.namespace, size, list(self.namespace_ids))
        self.namespace_ids = {name: i for i, name in enumerate(names)}
        self.affinity_id, specs = _renumber(self.affinity_id, size, self.affinity_specs)
        self.affinity_specs = list(specs)
        self._spec_ids = {spec: i for i, spec in enumerate(self.affinity_specs)}
        self._shared -= {"labels", "namespace", "affinity_id", *(f"label:{k}" for k in labels)}
        self._compact_at = 2 * self._largest_vocabulary() + VOCABULARY_SLACK
        self.compactions += 1


def _renumber(
    column: np.ndarray[Any, np.dtype[np.int32]], size: int, vocabulary: Sequence[_T]
) -> tuple[np.ndarray[Any, np.dtype[np.int32]], list[_T]]:
    """``column`` (ids into ``vocabulary``, -1 for none) as a new array whose ids index the
    returned vocabulary: only the entries rows ``[0, size)`` use, in their old order."""
    rows = column[:size]
    present = rows >= 0
    used = np.unique(rows[present])
    remap = np.full(len(vocabulary), -1, dtype=np.int32)
    remap[used] = np.arange(len(used), dtype=np.int32)
    encoded = np.full(len(column), -1, dtype=np.int32)
    encoded[:size][present] = remap[rows[present]]
    return encoded, [vocabulary[i] for i in used.tolist()]
