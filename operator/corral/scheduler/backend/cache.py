"""The scheduler's cache of nodes and bound/assumed pods, kept as NumPy columns.

Pod state machine (as upstream ``backend/cache/interface.go``)::

    (none) --assume--> Assumed --finish_binding--> Assumed+bound --expire (ttl)--> (none)
       |                  |  \\--forget-----------------------------------------> (none)
       |                  \\--add (bound event: confirm)--> Added
       \\--add (informer)------------------------------------> Added --remove--> (none)
                                                                 \\--update--> Added

An assumed pod counts on its node at once, so the next cycle sees its requests before the
binding is confirmed. ``ttl`` 0 (upstream's default since #106361) means assumed pods whose
binding finished never expire; the bound event confirms them.

Thread-safety: every public method takes the cache lock; snapshots are immutable (copy-on-write
columns), so a cycle can read one while informers and binders keep updating the cache.

Per-node views: a new snapshot inherits the previous one's built ``NodeInfo`` objects except
for the slots changed since (``_touched``): a pod placed or removed there, the node updated.
A change that reaches every node's view (a node added or removed, its images changed, a new
resource row) drops them all (``_touched`` is ``None``).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from corral.scheduler.backend.node_columns import NodeColumns
from corral.scheduler.backend.node_tree import NodeTree
from corral.scheduler.backend.pod_columns import PodColumns
from corral.scheduler.backend.podgroups import PodGroupStates
from corral.scheduler.backend.snapshot_fork import (
    SnapshotFork,
    fork_node_columns,
    fork_pod_columns,
)
from corral.scheduler.framework import snapshot as snap
from corral.scheduler.framework import types
from corral.scheduler.framework.podgroup import PodGroupRecord, PodGroupState


class CacheError(Exception):
    """An event that does not fit the pod's state (upstream returns these as errors)."""


@dataclass(slots=True)
class _PodState:
    pod: types.PodInfo
    assumed: bool = False
    binding_finished: bool = False
    deadline: float | None = None


class Cache:
    def __init__(
        self,
        *,
        ttl: float = 0.0,
        clock: Callable[[], float] = time.monotonic,
        generic_workload: bool = False,
    ) -> None:
        self._ttl = ttl
        # GenericWorkload: members of scheduling groups are tracked per PodGroup (podgroups.py).
        self._groups = PodGroupStates() if generic_workload else None
        self._clock = clock
        self._lock = threading.RLock()
        self._columns = NodeColumns()
        self._pod_rows = PodColumns()
        self._tree = NodeTree()
        self._pods: dict[str, _PodState] = {}
        self._expiring: set[str] = set()  # assumed, binding finished, with a deadline
        # Pods by node name, also for nodes not (yet) in the cache, as upstream keeps them.
        self._node_pods: dict[str, dict[str, types.PodInfo]] = {}
        self._generation = 0
        self._order = np.zeros(0, dtype=np.intp)
        self._order_dirty = False
        self._last: snap.Snapshot | None = None
        self._touched: set[int] | None = set()  # slots changed since ``_last``; None: all

    # --- nodes ------------------------------------------------------------------------------

    def add_node(self, node: types.NodeRecord) -> None:
        """Add or update (informer add and update both land here)."""
        with self._lock:
            known = node.name in self._columns.slot_of
            before = self._columns.records[self._columns.slot_of[node.name]] if known else None
            slot = self._columns.set_node(node)
            # A new node, or new images (other nodes' image holder counts), reach every view.
            self._touch(slot if before is not None and before.images == node.images else None)
            if not known:
                on_node = self._node_pods.get(node.name, {})
                for pod in on_node.values():
                    self._columns.add_usage(slot, pod, 1)
                self._pod_rows.move(list(on_node), slot)
            if self._tree.add(node.name, node.labels):
                self._order_dirty = True  # a new node, or one whose zone changed
            self._bump()

    update_node = add_node

    def remove_node(self, name: str) -> None:
        with self._lock:
            if self._columns.remove_node(name) is None:
                return
            self._pod_rows.move(list(self._node_pods.get(name, {})), -1)
            self._touch(None)
            self._tree.remove(name)
            self._order_dirty = True
            self._bump()

    def has_node(self, name: str) -> bool:
        with self._lock:
            return name in self._columns.slot_of

    def node_names(self) -> list[str]:
        with self._lock:
            return list(self._columns.slot_of)

    # --- pods -------------------------------------------------------------------------------

    def _place(self, pod: types.PodInfo) -> None:
        self._node_pods.setdefault(pod.node_name, {})[pod.uid] = pod
        slot = self._columns.slot_of.get(pod.node_name)
        self._pod_rows.add(pod, -1 if slot is None else slot)
        if slot is not None:
            self._columns.add_usage(slot, pod, 1)
            self._touch(slot)

    def _unplace(self, pod: types.PodInfo) -> None:
        on_node = self._node_pods.get(pod.node_name)
        if on_node is not None:
            on_node.pop(pod.uid, None)
            if not on_node:
                del self._node_pods[pod.node_name]
        self._pod_rows.remove(pod.uid)
        slot = self._columns.slot_of.get(pod.node_name)
        if slot is not None:
            self._columns.add_usage(slot, pod, -1)
            self._touch(slot)

    def assume_pod(self, pod: types.PodInfo, node_name: str) -> None:
        """Count ``pod`` on ``node_name`` before its binding is confirmed."""
        with self._lock:
            if pod.uid in self._pods:
                raise CacheError(f"pod {pod.key} is in the cache, so can't be assumed")
            assumed = types.on_node(pod, node_name)
            self._place(assumed)
            self._pods[pod.uid] = _PodState(assumed, assumed=True)
            if self._groups is not None:
                self._groups.assume_member(assumed)
            self._bump()

    def finish_binding(self, pod: types.PodInfo) -> None:
        """The binding was posted; start the expiry clock (if a ttl is set)."""
        with self._lock:
            state = self._pods.get(pod.uid)
            if state is not None and state.assumed:
                state.binding_finished = True
                state.deadline = self._clock() + self._ttl if self._ttl > 0 else None
                if state.deadline is not None:
                    self._expiring.add(pod.uid)

    def forget_pod(self, pod: types.PodInfo) -> None:
        """Undo an assume (the binding failed or was rejected)."""
        with self._lock:
            state = self._pods.get(pod.uid)
            if state is None or not state.assumed:
                raise CacheError(f"pod {pod.key} wasn't assumed so cannot be forgotten")
            if pod.node_name and pod.node_name != state.pod.node_name:
                raise CacheError(
                    f"pod {pod.key} was assumed on {state.pod.node_name} "
                    f"but assigned to {pod.node_name}"
                )
            self._unplace(state.pod)
            del self._pods[pod.uid]
            self._expiring.discard(pod.uid)
            if self._groups is not None:
                self._groups.forget_member(state.pod)
            self._bump()

    def add_pod(self, pod: types.PodInfo) -> None:
        """A bound pod seen by the informer: confirms an assumed pod, or adds a new one."""
        with self._lock:
            state = self._pods.get(pod.uid)
            if state is not None and not state.assumed:
                raise CacheError(f"pod {pod.key} was already in added state")
            if state is not None:
                self._unplace(state.pod)  # it may have landed elsewhere than assumed
            self._place(pod)
            self._pods[pod.uid] = _PodState(pod)
            self._expiring.discard(pod.uid)
            if self._groups is not None:  # upstream: remove the member, add it bound
                if state is not None:
                    self._groups.remove_member(state.pod)
                self._groups.add_member(pod)
            self._bump()

    def update_pod(self, old: types.PodInfo, new: types.PodInfo) -> None:
        with self._lock:
            state = self._pods.get(old.uid)
            if state is None or state.assumed:
                raise CacheError(
                    f"pod {old.key} is not added to scheduler cache, so cannot be updated"
                )
            self._unplace(state.pod)
            self._place(new)
            if self._groups is not None:
                self._groups.remove_member(state.pod)
                self._groups.add_member(new)
            state.pod = new
            self._bump()

    def remove_pod(self, pod: types.PodInfo) -> None:
        with self._lock:
            state = self._pods.pop(pod.uid, None)
            if state is None:
                raise CacheError(
                    f"pod {pod.key} is not found in scheduler cache, so cannot be removed from it"
                )
            self._expiring.discard(pod.uid)
            self._unplace(state.pod)
            if self._groups is not None:
                self._groups.remove_member(state.pod)
            self._bump()

    def cleanup_assumed_pods(self, now: float | None = None) -> list[types.PodInfo]:
        """Expire assumed pods whose binding finished more than ``ttl`` ago; returns them."""
        now = self._clock() if now is None else now
        expired: list[types.PodInfo] = []
        with self._lock:
            # Only assumed pods whose binding finished (with a ttl) can expire: walk just those,
            # never every pod in the cluster, since this holds the lock the scheduler needs.
            for uid in list(self._expiring):
                state = self._pods[uid]
                assert state.deadline is not None
                if now > state.deadline:
                    self._unplace(state.pod)
                    if self._groups is not None:
                        self._groups.forget_member(state.pod)
                    del self._pods[uid]
                    self._expiring.discard(uid)
                    expired.append(state.pod)
            if expired:
                self._bump()
        return expired

    def sizes(self) -> dict[str, int]:
        """Entries of every structure that grows with the cluster (for the soak's leak watch
        and ``scheduler_scheduler_cache_size``)."""
        with self._lock:
            return {
                "pods": len(self._pods),
                "assumed_pods": sum(state.assumed for state in self._pods.values()),
                "nodes": len(self._columns.slot_of),
                "expiring": len(self._expiring),
                "node_pod_lists": len(self._node_pods),
                **{f"nodes.{k}": v for k, v in self._columns.sizes().items()},
                **{f"pods.{k}": v for k, v in self._pod_rows.sizes().items()},
            }

    def is_assumed(self, uid: str) -> bool:
        with self._lock:
            state = self._pods.get(uid)
            return state is not None and state.assumed

    def get_pod(self, uid: str) -> types.PodInfo | None:
        with self._lock:
            state = self._pods.get(uid)
            return state.pod if state is not None else None

    def pods_on(self, node_name: str) -> list[types.PodInfo]:
        with self._lock:
            return list(self._node_pods.get(node_name, {}).values())

    # --- pod groups (GenericWorkload) ---------------------------------------------------------

    def set_pod_group(self, group: PodGroupRecord) -> None:
        """A PodGroup object was added or updated."""
        if self._groups is not None:
            with self._lock:
                self._groups.set_group(group)
                self._bump()

    def remove_pod_group(self, key: str) -> None:
        if self._groups is not None:
            with self._lock:
                self._groups.remove_group(key)
                self._bump()

    def add_pod_group_member(self, pod: types.PodInfo) -> None:
        """A pending member this scheduler serves (upstream AddPodGroupMember)."""
        if self._groups is not None and pod.scheduling_group:
            with self._lock:
                self._groups.add_member(pod)
                self._bump()

    def update_pod_group_member(self, old: types.PodInfo, new: types.PodInfo) -> None:
        if self._groups is not None and new.scheduling_group:
            with self._lock:
                self._groups.update_member(old, new)
                self._bump()

    def remove_pod_group_member(self, pod: types.PodInfo) -> None:
        """A pending member left (deleted, or no longer this scheduler's)."""
        if self._groups is not None and pod.scheduling_group:
            with self._lock:
                self._groups.remove_member(pod)
                self._bump()

    def pod_group(self, key: str) -> PodGroupRecord | None:
        """The PodGroup object the cache holds for ``key`` (None: not observed)."""
        if self._groups is None:
            return None
        with self._lock:
            state = self._groups.get(key)
            return state.group if state is not None else None

    def pod_group_state(self, key: str) -> PodGroupState | None:
        """A copy of the live state of ``key`` (its members as of now)."""
        if self._groups is None:
            return None
        with self._lock:
            state = self._groups.get(key)
            return state.copy() if state is not None else None

    def pod_group_counts(self, key: str) -> tuple[PodGroupRecord | None, int, int] | None:
        """(PodGroup, all members, scheduled members) of the live state, without copying it;
        None when the cache has no state for ``key``."""
        if self._groups is None:
            return None
        with self._lock:
            state = self._groups.get(key)
            if state is None:
                return None
            return state.group, state.all_count, state.scheduled_count

    # --- snapshot ---------------------------------------------------------------------------

    def _bump(self) -> None:
        self._generation += 1

    def _touch(self, slot: int | None) -> None:
        """``slot``'s view must be rebuilt (``None``: every view)."""
        if slot is None:
            self._touched = None
        elif self._touched is not None:
            self._touched.add(slot)

    def snapshot(self) -> snap.Snapshot:
        """A consistent, immutable view; reused while nothing changed."""
        with self._lock:
            last = self._last
            if last is not None and last.generation == self._generation:
                return last
            if self._order_dirty:
                slot_of = self._columns.slot_of
                order = [slot_of[n] for n in self._tree.list()]
                self._order = np.array(order, dtype=np.intp)
                self._order_dirty = False
            groups = self._groups.snapshot() if self._groups is not None else None
            taken = self._columns.snapshot(
                self._generation, self._order, self._pod_rows.snapshot(), pod_groups=groups
            )
            touched, self._touched = self._touched, set()
            if (
                last is not None
                and touched is not None
                and last.allocatable.shape[0] == taken.allocatable.shape[0]
            ):
                # dict() copies in one step, safe against a cycle still filling last's memo.
                carried = dict(last.built_views)
                for slot in touched:
                    carried.pop(slot, None)
                taken.built_views.update(carried)
            self._last = taken
            return taken

    def fork(self) -> SnapshotFork:
        """A snapshot and a private continuation of it, taken together (``snapshot_fork``); the
        pod-group cycle places a group's pods there."""
        with self._lock:
            base = self.snapshot()
            return SnapshotFork(
                base, fork_node_columns(self._columns), fork_pod_columns(self._pod_rows), self._lock
            )
