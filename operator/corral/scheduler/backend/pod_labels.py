"""Pods by the value of a few label keys (``framework.listers.PodLister``), for plugins that ask
for a pod's siblings the way scheduler-plugins asks its pod lister (Coscheduling's
``scheduling.x-k8s.io/pod-group``).

Contract: only the keys given at construction are indexed (the plugins' declared
``indexed_pod_labels``); every pod is also kept by name (:meth:`PodLabelIndex.get`, VolumeBinding's
check that the pod it binds still exists), two dict writes per event. The event
handlers :meth:`PodLabelIndex.put` every pod they keep (bound, or pending and served) and
:meth:`PodLabelIndex.remove` it when they drop it (deleted, terminal, no longer served). One
lock; readers get copies.
"""

from __future__ import annotations

import threading
from collections.abc import Collection, Iterable, Sequence

from corral.scheduler.config import PluginDeclaration
from corral.scheduler.framework.types import PodInfo

_Key = tuple[str, str, str]  # (namespace, label key, label value)


class PodLabelIndex:
    def __init__(self, keys: Iterable[str] = ()) -> None:
        self.keys = tuple(sorted(set(keys)))
        self._lock = threading.Lock()
        self._pods: dict[_Key, dict[str, PodInfo]] = {}
        self._filed: dict[str, tuple[_Key, ...]] = {}  # uid -> where it is filed
        self._by_name: dict[tuple[str, str], PodInfo] = {}
        self._name_of: dict[str, tuple[str, str]] = {}  # uid -> (namespace, name)

    @classmethod
    def for_plugins(
        cls, declarations: Iterable[PluginDeclaration], enabled: Collection[str]
    ) -> PodLabelIndex:
        """The index of the label keys the enabled plugins declare."""
        return cls(k for d in declarations if d.name in enabled for k in d.indexed_pod_labels)

    def put(self, pod: PodInfo) -> None:
        where = tuple((pod.namespace, k, pod.labels[k]) for k in self.keys if k in pod.labels)
        name = (pod.namespace, pod.name)
        with self._lock:
            self._forget_name(pod.uid)
            self._by_name[name] = pod
            self._name_of[pod.uid] = name
            if not where and pod.uid not in self._filed:
                return
            self._unfile(pod.uid)
            for key in where:
                self._pods.setdefault(key, {})[pod.uid] = pod
            if where:
                self._filed[pod.uid] = where

    def remove(self, uid: str) -> None:
        with self._lock:
            self._forget_name(uid)
            self._unfile(uid)

    def _forget_name(self, uid: str) -> None:
        name = self._name_of.pop(uid, None)
        if name is not None and (kept := self._by_name.get(name)) is not None and kept.uid == uid:
            del self._by_name[name]

    def _unfile(self, uid: str) -> None:
        for key in self._filed.pop(uid, ()):
            pods = self._pods.get(key)
            if pods is not None:
                pods.pop(uid, None)
                if not pods:
                    del self._pods[key]

    # --- PodLister --------------------------------------------------------------------------

    def labelled(self, namespace: str, key: str, value: str) -> Sequence[PodInfo]:
        with self._lock:
            return list(self._pods.get((namespace, key, value), {}).values())

    def get(self, namespace: str, name: str) -> PodInfo | None:
        with self._lock:
            return self._by_name.get((namespace, name))

    def __len__(self) -> int:
        with self._lock:
            return len(self._filed)
