"""unschedulablePods, indexed by what an event can concern.

Every cluster event asks the queue which waiting pods it may make schedulable. Upstream's queue
asks each waiting pod in turn, which is cheap in Go. Here, on SchedulingWithResourceClaim at 500
nodes, a claim's update or a bound pod's arrival met 290 waiting pods on average (589 at most),
each asked in Python: about 0.4 ms of the event loop per scheduled pod. So the waiting pods are
indexed by the two things that let the queue leave a pod without asking its hints:

- its rejectors (unschedulable and Pending plugins, a gating plugin among them), each under its
  profile's registrations: an event none of them registered leaves the pod where it waits;
- its keys for each :class:`~corral.scheduler.framework.cluster_events.Narrowing`: a narrowed
  event that names none of them leaves it too (``requeue.Narrowed.skips``).

A pod without rejectors (it failed on an error) is *open*: every event concerns it. So is, for
narrowed events, a pod whose keys could not be read.

Contract: :meth:`WaitingPods.candidates` returns, in the order the pods entered, every waiting
pod that is open or filed under one of the given index keys. The index follows each pod's
rejectors and pod object as of its last :meth:`WaitingPods.put`: the queue puts a pod again
whenever either changes while it waits. The queue still runs its per-pod checks on each
candidate, so a candidate too many costs a check, never a different outcome.
"""

from __future__ import annotations

import itertools
from collections.abc import Hashable, Iterable, Iterator, Sequence
from typing import Final

from corral.scheduler.backend import requeue
from corral.scheduler.backend.requeue import Registrations
from corral.scheduler.framework.cluster_events import Narrowing
from corral.scheduler.framework.types import PodInfo, QueuedPodInfo

_REJECTOR: Final = "rejector"
_KEY: Final = "key"


def rejector_key(registrations: Registrations, plugin: str) -> Hashable:
    """The index key of pods that ``plugin`` of the profile with ``registrations`` rejected."""
    return (_REJECTOR, id(registrations), plugin)


def narrowing_key(narrowing: Narrowing, key: Hashable) -> Hashable:
    """The index key of pods whose keys for ``narrowing`` include ``key``."""
    return (_KEY, id(narrowing), key)


class WaitingPods:
    """The pods in unschedulablePods by UID, in the order they entered, with the index above,
    for pods of profiles with ``maps``' registrations. Used under the queue's lock."""

    def __init__(self, maps: Sequence[Registrations]) -> None:
        # every narrowing some registration carries, once
        self._narrowings = tuple(
            {
                id(reg.narrowing): reg.narrowing
                for registrations in maps
                for regs in registrations.values()
                for reg in regs
                if reg.narrowing is not None
            }.values()
        )
        self._pods: dict[str, QueuedPodInfo] = {}
        self._order: dict[str, int] = {}
        self._count = itertools.count()
        # uid → what it is filed under, read from this pod object and these rejectors
        self._filed: dict[str, tuple[PodInfo, frozenset[str], tuple[Hashable, ...]]] = {}
        self._index: dict[Hashable, set[str]] = {}
        self._open: set[str] = set()  # no rejectors: every event concerns them
        self._unkeyed: set[str] = set()  # keys unreadable: every narrowed event concerns them

    def __len__(self) -> int:
        return len(self._pods)

    def __contains__(self, uid: object) -> bool:
        return uid in self._pods

    def get(self, uid: str) -> QueuedPodInfo | None:
        return self._pods.get(uid)

    def values(self) -> Iterator[QueuedPodInfo]:
        return iter(list(self._pods.values()))

    def put(self, qpi: QueuedPodInfo, registrations: Registrations) -> None:
        """Add the pod, or file it again (keeping its place) after its rejectors or its pod
        object changed; ``registrations`` are its profile's."""
        uid = qpi.pod.uid
        if uid not in self._pods:
            self._order[uid] = next(self._count)
        self._pods[uid] = qpi
        rejectors = qpi.unschedulable_plugins | qpi.pending_plugins
        filed = self._filed.get(uid)
        if filed is not None and filed[0] is qpi.pod and filed[1] == rejectors:
            return
        self._unfile(uid)
        if not rejectors:
            self._open.add(uid)
            self._filed[uid] = (qpi.pod, rejectors, ())
            return
        keys: list[Hashable] = [rejector_key(registrations, p) for p in sorted(rejectors)]
        for narrowing in self._narrowings:
            pod_keys = requeue.pod_keys_of(narrowing, qpi)
            if pod_keys is None:
                self._unkeyed.add(uid)
            else:
                keys.extend(narrowing_key(narrowing, k) for k in pod_keys)
        for key in keys:
            self._index.setdefault(key, set()).add(uid)
        self._filed[uid] = (qpi.pod, rejectors, tuple(keys))

    def pop(self, uid: str) -> QueuedPodInfo | None:
        qpi = self._pods.pop(uid, None)
        if qpi is not None:
            del self._order[uid]
            self._unfile(uid)
        return qpi

    def candidates(self, keys: Iterable[Hashable], *, narrowed: bool) -> list[QueuedPodInfo]:
        """The open pods (with the unkeyed ones when ``narrowed``) and those filed under any
        of ``keys``, in the order they entered."""
        uids = set(self._open)
        if narrowed:
            uids |= self._unkeyed
        for key in keys:
            filed = self._index.get(key)
            if filed:
                uids |= filed
        order = self._order
        return [self._pods[uid] for uid in sorted(uids, key=order.__getitem__)]

    def _unfile(self, uid: str) -> None:
        filed = self._filed.pop(uid, None)
        if filed is None:
            return
        self._open.discard(uid)
        self._unkeyed.discard(uid)
        for key in filed[2]:
            members = self._index.get(key)
            if members is not None:
                members.discard(uid)
                if not members:
                    del self._index[key]
