"""A private continuation of one snapshot: pods assumed or removed in it, never in the cache.

The pod-group cycle (upstream ``Snapshot.AssumePod``/``ForgetPod``, ``RemovePod``/``AddPod`` of
workload preemption) places a group's pods one after another on *one* snapshot, each seeing the
ones before it, and reverts them all before the outcome. A :class:`SnapshotFork` is taken with
its snapshot, under the cache's lock (:meth:`~corral.scheduler.backend.cache.Cache.fork`), and
owns copies of the cache's columns from then on:

- node columns are copy-on-write (the cache copies a shared array before it writes, the fork
  too), so forking costs nothing until the fork writes;
- pod rows are copied at once: the cache appends rows in place beyond the snapshots' size, where
  a fork's own rows would be;
- pod-group states are the snapshot's, copied per group on the fork's first change to it.

:meth:`SnapshotFork.snapshot` is a new immutable Snapshot of the fork's present state, each
derived index fresh, the node views of untouched slots carried over. Writes to the shared
append-only vocabularies (label values, affinity specs) take the cache's lock, as the cache's
own writes do. A fork is used by one thread and dropped after its cycle.
"""

from __future__ import annotations

import copy
import threading

import numpy as np

from corral.scheduler.backend.node_columns import NodeColumns
from corral.scheduler.backend.pod_columns import _ARRAYS, PodColumns
from corral.scheduler.framework import snapshot as snap
from corral.scheduler.framework import types
from corral.scheduler.framework.podgroup import PodGroupState

_NODE_ARRAYS = (
    "names", "records", "slot_of", "allocatable", "requested", "non_zero", "unschedulable",
    "taints", "labels", "images", "limits",
)  # fmt: skip


def fork_node_columns(columns: NodeColumns) -> NodeColumns:
    """A copy-on-write twin: both sides copy a shared array before writing it."""
    everything = set(_NODE_ARRAYS) | {f"label:{k}" for k in columns.labels}
    columns._shared |= everything
    twin = copy.copy(columns)
    twin._shared = set(everything)
    twin._free = list(columns._free)
    twin._beyond = dict(columns._beyond)  # written in place by both sides
    return twin


def fork_pod_columns(rows: PodColumns) -> PodColumns:
    """A twin with its own rows (see the module doc: the cache writes rows in place)."""
    twin = copy.copy(rows)
    twin.infos = list(rows.infos)
    twin.row_of = dict(rows.row_of)
    twin._free = list(rows._free)
    for name in _ARRAYS:
        setattr(twin, name, np.copy(getattr(rows, name)))
    twin.labels = {k: np.copy(v) for k, v in rows.labels.items()}
    twin._shared = set()
    twin._shared_size = 0
    return twin


class SnapshotFork:
    def __init__(
        self,
        base: snap.Snapshot,
        columns: NodeColumns,
        rows: PodColumns,
        lock: threading.RLock,
    ) -> None:
        self._last = base
        self._columns = columns
        self._rows = rows
        self._lock = lock
        self._groups: dict[str, PodGroupState] = dict(base.pod_groups)
        self._owned: set[str] = set()  # group keys copied since the fork
        self._touched: set[int] = set()
        self._assumed: dict[str, types.PodInfo] = {}
        self._changed = False

    @property
    def base(self) -> snap.Snapshot:
        return self._last

    def _group(self, key: str) -> PodGroupState | None:
        state = self._groups.get(key)
        if state is None:
            return None
        if key not in self._owned:
            state = self._groups[key] = state.copy()
            self._owned.add(key)
        return state

    def _place(self, pod: types.PodInfo, sign: int) -> None:
        slot = self._columns.slot_of.get(pod.node_name)
        with self._lock:
            if sign > 0:
                self._rows.add(pod, -1 if slot is None else slot)
            else:
                self._rows.remove(pod.uid)
            if slot is not None:
                self._columns.add_usage(slot, pod, sign)
        if slot is not None:
            self._touched.add(slot)
        self._changed = True

    # --- the pod-group cycle's moves --------------------------------------------------------

    def assume(self, pod: types.PodInfo, node_name: str) -> types.PodInfo:
        """Count ``pod`` on ``node_name`` here (upstream snapshot AssumePod); returns it with its
        node set."""
        assumed = types.on_node(pod, node_name)
        self._place(assumed, 1)
        self._assumed[pod.uid] = assumed
        if pod.pod_group_key:
            state = self._group(pod.pod_group_key)
            if state is not None:
                state.assume_pod(assumed)
        return assumed

    def forget(self, pod: types.PodInfo) -> None:
        """Undo :meth:`assume` of ``pod``."""
        assumed = self._assumed.pop(pod.uid, None)
        if assumed is None:
            return
        self._place(assumed, -1)
        if pod.pod_group_key:
            state = self._group(pod.pod_group_key)
            if state is not None:
                state.forget_pod(pod.uid)

    def remove(self, pod: types.PodInfo) -> None:
        """Take a bound (or assumed) pod off its node here: a preemption victim."""
        self._place(pod, -1)

    def restore(self, pod: types.PodInfo) -> None:
        """Put back a pod :meth:`remove` took off."""
        self._place(pod, 1)

    def snapshot(self) -> snap.Snapshot:
        """The fork as it is now (the last snapshot again when nothing changed since)."""
        if not self._changed:
            return self._last
        last = self._last
        with self._lock:
            taken = self._columns.snapshot(
                last.generation, last.order, self._rows.snapshot(), pod_groups=dict(self._groups)
            )
        if last.allocatable.shape[0] == taken.allocatable.shape[0]:
            carried = dict(last.built_views)
            for slot in self._touched:
                carried.pop(slot, None)
            taken.built_views.update(carried)
        self._touched = set()
        self._changed = False
        self._last = taken
        return taken
