"""Pending pods nominated to a node (upstream's nominator in the scheduling queue).

A nomination comes from two places: this scheduler's own PostFilter (preemption made room on a
node: recorded at once, before the status patch round-trips) and ``status.nominatedNodeName``
seen on a pending pod. An informer update without a nomination keeps the local one, since the
patch may not have landed yet, unless the pod's previous version had one (the API cleared it).
A pod leaves when it is bound, deleted or its nomination is cleared. Filters count nominated
pods of equal or higher priority as if already on the node.
"""

from __future__ import annotations

import threading
from collections.abc import Collection, Sequence

from corral.scheduler.framework.types import PodInfo


class Nominator:
    """Implements :class:`corral.scheduler.framework.listers.PodNominator`. Thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._node_of: dict[str, str] = {}
        self._by_node: dict[str, dict[str, PodInfo]] = {}

    def __len__(self) -> int:
        with self._lock:
            return len(self._node_of)

    def nominate(self, pod: PodInfo, node_name: str) -> None:
        with self._lock:
            self._remove(pod.uid)
            if node_name:
                self._node_of[pod.uid] = node_name
                self._by_node.setdefault(node_name, {})[pod.uid] = pod

    def observe(self, pod: PodInfo, old: PodInfo | None = None) -> None:
        """A pending pod from the informer: its own nomination wins; none keeps ours, unless
        ``old`` (the pod as last seen) had one: then the API cleared it, and it goes (upstream
        UpdateNominatedPod). Kept, a gang member rejected at Permit whose announced node came
        back after its forget, and then was cleared, held that node for good."""
        if pod.nominated_node_name:
            self.nominate(pod, pod.nominated_node_name)
            return
        if old is not None and old.nominated_node_name:
            self.forget(pod.uid)
            return
        with self._lock:
            node = self._node_of.get(pod.uid)
            if node is not None:  # refresh the pod's data under the nomination we made
                self._by_node[node][pod.uid] = pod

    def forget(self, uid: str) -> None:
        with self._lock:
            self._remove(uid)

    def _remove(self, uid: str) -> None:
        node = self._node_of.pop(uid, None)
        if node is not None:
            pods = self._by_node[node]
            pods.pop(uid, None)
            if not pods:
                del self._by_node[node]

    def nominated_pods_for_node(self, node_name: str) -> Sequence[PodInfo]:
        with self._lock:
            return list(self._by_node.get(node_name, {}).values())

    def nominated_node_names(self) -> Collection[str]:
        with self._lock:
            return list(self._by_node)
