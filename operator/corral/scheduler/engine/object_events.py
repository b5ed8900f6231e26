"""The watches of the objects plugins read (beyond pods and nodes): into the lister's
:class:`~corral.scheduler.backend.objects.ObjectStore`, and for the kinds plugins register
queueing hints for, a cluster event that moves unschedulable pods.

Queueing hints get the object as it was and as it is (raw JSON); a deletion's old object is the
deleted one, as upstream's. A DeviceTaintRule's change is also reported as upstream's
ResourceSlice tracker does: an update of every slice whose devices' taints it changed.

An added or modified object is checked against the Go types first (:func:`shapes.problems`, the
kinds it knows; for the CRD kinds, their CRD's openAPIV3Schema): one of the wrong shape is
ignored with one line naming the field, as a malformed pod or node event is, and never reaches
a plugin.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Final

from corral.k8s import JSON
from corral.k8s.informer import EventType, Handler
from corral.scheduler.backend import shapes
from corral.scheduler.backend.objects import QUEUEING_KINDS, ObjectStore
from corral.scheduler.backend.queue import SchedulingQueue
from corral.scheduler.framework.api_types import RawObject
from corral.scheduler.framework.cluster_events import ActionType, ClusterEvent
from corral.scheduler.framework.listers import DEVICE_TAINT_RULE, RESOURCE_SLICE
from corral.scheduler.plugins.dynamic_resources import taint_rules

log = logging.getLogger(__name__)
_OBJECT_ACTIONS: Final = {
    "ADDED": ActionType.ADD,
    "MODIFIED": ActionType.UPDATE,
    "DELETED": ActionType.DELETE,
}


class ObjectEvents:
    def __init__(self, objects: ObjectStore, queue: SchedulingQueue) -> None:
        self.objects = objects
        self.queue = queue

    def handler(self, kind: str) -> Handler:
        """The informer handler of ``kind``."""

        def handle(event: EventType, obj: JSON) -> None:
            meta = obj.get("metadata") or {}
            key = str(meta.get("namespace") or ""), str(meta.get("name") or "")
            if event != "DELETED" and (found := shapes.problems(obj, kind=kind)):
                # Plugins read these objects as they are: one of the wrong shape is refused
                # here, as a malformed pod or node is, and the one held before stays.
                name = "/".join(k for k in key if k) or "<unnamed>"
                shown = shapes.kind_name(kind)  # PodGroup, not podgroups.v1alpha1.scheduling...
                log.warning("ignoring a malformed %s event: %s %s: %s", shown, shown, name,
                            " ".join(found[0].split()))  # fmt: skip
                return
            old = obj if event == "DELETED" else self.objects.get(kind, *key)
            rules = self.objects.list(DEVICE_TAINT_RULE) if kind == DEVICE_TAINT_RULE else ()
            self.objects.apply(kind, event, obj)
            action = _OBJECT_ACTIONS.get(event)
            new = None if event == "DELETED" else obj
            if kind in QUEUEING_KINDS and action is not None:
                self.queue.move_all_to_active_or_backoff(ClusterEvent(kind, action), old, new)
            if kind == DEVICE_TAINT_RULE and action is not None:
                self._retainted_slices(rules, old, new)

        return handle

    def _retainted_slices(
        self,
        rules_before: Sequence[RawObject],
        old: RawObject | None,
        new: RawObject | None,
    ) -> None:
        event = ClusterEvent(RESOURCE_SLICE, ActionType.UPDATE)
        slices = self.objects.list(RESOURCE_SLICE)
        rules_after = self.objects.list(DEVICE_TAINT_RULE)
        for before, after in taint_rules.slice_updates(
            slices, rules_before, rules_after, (old, new)
        ):
            self.queue.move_all_to_active_or_backoff(event, before, after)
