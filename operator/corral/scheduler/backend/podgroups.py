"""The cache's pod-group states (upstream cache ``podGroupStates``), kept with GenericWorkload.

Contract:
- One :class:`~corral.scheduler.framework.podgroup.PodGroupState` per group key, created by the
  first member pod or by the PodGroup object, dropped when it has neither.
- Members enter as upstream's do: pending pods this scheduler serves through
  :meth:`PodGroupStates.add_member` (before the queue sees them), bound pods of any scheduler
  with the cache's own add; assume and forget move a member between unscheduled and assumed.
- :meth:`PodGroupStates.snapshot` gives immutable copies for a cycle: a state is copied again only
  after it changed (its generation), as upstream's UpdateSnapshot does.
- Used under the cache's lock (the cache calls it); reads from other threads go through the
  cache's locked accessors.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping

from corral.scheduler.framework.podgroup import PodGroupRecord, PodGroupState
from corral.scheduler.framework.types import PodInfo

_generations = itertools.count(1)


class PodGroupStates:
    def __init__(self) -> None:
        self._states: dict[str, PodGroupState] = {}
        self._dirty: set[str] = set()  # keys changed since the last snapshot
        self._last: Mapping[str, PodGroupState] = {}  # the last snapshot's copies, immutable

    def get(self, key: str) -> PodGroupState | None:
        return self._states.get(key)

    def _state(self, key: str) -> PodGroupState:
        state = self._states.get(key)
        if state is None:
            state = self._states[key] = PodGroupState()
        state.generation = next(_generations)
        self._dirty.add(key)
        return state

    def _drop_if_empty(self, key: str) -> None:
        state = self._states.get(key)
        if state is not None and state.empty():
            del self._states[key]
            self._dirty.add(key)

    # --- PodGroup objects -------------------------------------------------------------------

    def set_group(self, group: PodGroupRecord) -> None:
        self._state(group.key).group = group

    def remove_group(self, key: str) -> None:
        if key in self._states:
            self._state(key).group = None
            self._drop_if_empty(key)

    # --- member pods ------------------------------------------------------------------------

    def add_member(self, pod: PodInfo) -> None:
        if pod.pod_group_key:
            self._state(pod.pod_group_key).add_pod(pod)

    def update_member(self, old: PodInfo, new: PodInfo) -> None:
        key = new.pod_group_key
        if key and key in self._states:
            self._state(key).update_pod(old, new)

    def remove_member(self, pod: PodInfo) -> None:
        key = pod.pod_group_key
        if key and key in self._states:
            self._state(key).delete_pod(pod.uid)
            self._drop_if_empty(key)

    def assume_member(self, pod: PodInfo) -> None:
        """``pod`` on its assumed node; a pod the state does not know is counted from now on."""
        key = pod.pod_group_key
        if not key:
            return
        state = self._state(key)
        if pod.uid not in state.pods:
            state.pods[pod.uid] = pod
        state.assume_pod(pod)

    def forget_member(self, pod: PodInfo) -> None:
        key = pod.pod_group_key
        if key and key in self._states:
            self._state(key).forget_pod(pod.uid)

    # --- snapshot ---------------------------------------------------------------------------

    def snapshot(self) -> Mapping[str, PodGroupState]:
        """The states as of now; the same mapping again while nothing changed."""
        if not self._dirty:
            return self._last
        copies = dict(self._last)
        for key in self._dirty:
            state = self._states.get(key)
            if state is None:
                copies.pop(key, None)
            else:
                copies[key] = state.copy()
        self._dirty.clear()
        self._last = copies
        return copies
