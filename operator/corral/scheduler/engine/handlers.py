"""Informer events -> the cache and the scheduling queue (upstream ``eventhandlers.go``).

- Assigned pods (``spec.nodeName`` set) live in the cache: adding one confirms an assumed pod.
  Their add, update and delete are queueing events (AssignedPod*), with the pods as objects.
- Pending pods this engine is responsible for live in the queue: a pod is ours when its
  ``schedulerName`` is one of our profiles' and its namespace is served (tenancy). A pending pod
  that becomes bound (by us or anyone else) or is deleted leaves the queue. A pending pod's
  update that drops or moves its nominatedNodeName is an AssignedPodDelete event for the pods
  of lower or equal priority (they counted it on that node), as upstream.
- Node changes go to the cache and are queueing events with the old and new node: one event
  per kind of change (label, taint, allocatable, condition...), as upstream.

These run on the event loop thread; the cache and the queue are thread-safe.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any

from corral.k8s import JSON
from corral.k8s.informer import EventType
from corral.scheduler.backend.cache import Cache, CacheError
from corral.scheduler.backend.pod_labels import PodLabelIndex
from corral.scheduler.backend.queue import SchedulingQueue
from corral.scheduler.backend.records import MalformedObjectError, node_from_json, pod_from_json
from corral.scheduler.engine.nominator import Nominator
from corral.scheduler.framework import cluster_events as events
from corral.scheduler.framework.cluster_events import ActionType, ClusterEvent
from corral.scheduler.framework.types import NodeRecord, PodInfo

log = logging.getLogger(__name__)

TERMINAL_PHASES = ("Succeeded", "Failed")


def node_extras(raw: Mapping[str, Any]) -> tuple[dict[str, str], dict[str, str]]:
    """What a NodeRecord leaves out but node updates are classified by: the status of each
    condition, and the annotations. Kept instead of the whole Node object."""
    conditions = _field(_field(raw, "status"), "conditions")
    annotations = _field(_field(raw, "metadata"), "annotations")
    return {
        str(c.get("type", "")): str(c.get("status", ""))
        for c in (conditions if isinstance(conditions, list) else ())
        if isinstance(c, Mapping)
    }, {
        str(k): str(v) for k, v in (annotations if isinstance(annotations, Mapping) else {}).items()
    }


def _field(obj: object, key: str) -> Any:
    """``obj[key]`` when ``obj`` is an object and the value one of its kind, else ``None``."""
    value = obj.get(key) if isinstance(obj, Mapping) else None
    return value if isinstance(value, Mapping | list | str) else None


NodeExtras = tuple[dict[str, str], dict[str, str]]


def node_changes(
    old: NodeRecord, new: NodeRecord, old_x: NodeExtras, new_x: NodeExtras
) -> list[ClusterEvent]:
    """One event per scheduling-relevant change, in upstream's order
    (``NodeSchedulingPropertiesChange``; spec.unschedulable is filed as a taint change)."""
    changes = (
        (old.unschedulable != new.unschedulable, ActionType.UPDATE_NODE_TAINT),
        (old.allocatable != new.allocatable, ActionType.UPDATE_NODE_ALLOCATABLE),
        (old.labels != new.labels, ActionType.UPDATE_NODE_LABEL),
        (old.taints != new.taints, ActionType.UPDATE_NODE_TAINT),
        (old_x[0] != new_x[0], ActionType.UPDATE_NODE_CONDITION),
        (old_x[1] != new_x[1], ActionType.UPDATE_NODE_ANNOTATION),
    )
    return [ClusterEvent(events.NODE, a, "NodeUpdate") for changed, a in changes if changed]


class ClusterState:
    """Routes informer events; knows which pending pods are ours."""

    def __init__(
        self,
        cache: Cache,
        queue: SchedulingQueue,
        scheduler_names: set[str],
        serves_namespace: Callable[[str], bool],
        nominator: Nominator | None = None,
        *,
        generic_workload: bool = False,
        labels: PodLabelIndex | None = None,
        reject_waiting: Callable[[PodInfo], bool] | None = None,
        keep_node_objects: bool = False,
    ) -> None:
        self.cache = cache
        # Node records keep their JSON: an extender is sent whole Nodes (sends_node_objects).
        self.keep_node_objects = keep_node_objects
        # Rejects the pod if it waits at Permit in its profile's framework (upstream
        # RejectWaitingPod); None: no pod ever waits.
        self.reject_waiting = reject_waiting
        # The pods plugins list by label (Handle.pod_lister): every pod kept below.
        self.labels = labels if labels is not None else PodLabelIndex()
        # GenericWorkload: pending members count in their PodGroup's state (the cache's) before
        # the queue sees them, and a new pending pod is a queueing event (UnscheduledPod/Add).
        self.generic_workload = generic_workload
        self.queue = queue
        # `is None`, never `or`: an empty Nominator is falsy (it has a length), and the loop's
        # and the handlers' must be one object.
        self.nominator = nominator if nominator is not None else Nominator()
        self.scheduler_names = scheduler_names
        self.serves_namespace = serves_namespace
        self._pending: dict[str, PodInfo] = {}
        self._assigned: dict[str, PodInfo] = {}
        self._nodes: dict[str, tuple[NodeRecord, NodeExtras]] = {}

    def responsible_for(self, pod: PodInfo) -> bool:
        return pod.scheduler_name in self.scheduler_names and self.serves_namespace(pod.namespace)

    # --- pods -------------------------------------------------------------------------------

    def on_pod(self, kind: EventType, raw: JSON) -> None:
        meta = raw.get("metadata")
        if isinstance(meta, dict):
            # Upstream's pod informer drops managedFields to save memory (newPodInformer's
            # transform): nothing schedules by them, and they are a pod's largest part, kept
            # for every pod in the cluster (the event's dict is ours alone).
            meta.pop("managedFields", None)
        uid = str(_field(_field(raw, "metadata"), "uid") or "")
        phase = _field(_field(raw, "status"), "phase")
        if kind == "DELETED" or phase in TERMINAL_PHASES:
            self._pod_gone(uid)
            return
        try:
            pod = pod_from_json(raw)
        except MalformedObjectError as exc:
            log.warning("ignoring a malformed pod event: %s", exc)
            return
        if pod.node_name:
            self._pod_assigned(pod)
        elif self.responsible_for(pod):
            old = self._pending.get(uid)
            self._pending[uid] = pod
            self.labels.put(pod)
            if self.cache.is_assumed(uid):
                # Assumed: its binding is under way. An update arriving now (say the
                # PodScheduled=False patch of an earlier attempt) must not queue it again, or
                # it would be scheduled twice; upstream's handler skips assumed pods too.
                return
            self.nominator.observe(pod, old)
            if old is None:
                self.cache.add_pod_group_member(pod)
                self.queue.add(pod)
                # Upstream sends it only with GenericWorkload, where no other in-tree plugin
                # registers for it; the queue drops an event no plugin registered for. Sent
                # always, it lets Coscheduling requeue a gang's refused members as a sibling
                # arrives (corral.scheduler.plugins.coscheduling).
                self.queue.move_all_to_active_or_backoff(events.UNSCHEDULED_POD_ADD, None, pod)
            else:
                self.cache.update_pod_group_member(old, pod)
                self.queue.update(old, pod)
                if old.nominated_node_name and old.nominated_node_name != pod.nominated_node_name:
                    # Its nomination dropped or moved: the node it held is free for the pods of
                    # lower or equal priority that counted it (upstream updatePodInSchedulingQueue,
                    # hasNominatedNodeNameChanged). Without it a pod refused for the nominated
                    # pod's room waited for the unschedulable flush.
                    priority = old.priority
                    self.queue.move_all_to_active_or_backoff(
                        events.ASSIGNED_POD_DELETE, old, None,
                        pre_check=lambda p: p.priority <= priority,
                    )  # fmt: skip
        elif uid in self._pending:  # e.g. its schedulerName or namespace no longer ours
            gone = self._pending.pop(uid)
            self.labels.remove(uid)
            self.queue.delete(uid)
            self.nominator.forget(uid)
            self.cache.remove_pod_group_member(gone)

    def _pod_assigned(self, pod: PodInfo) -> None:
        if self._pending.pop(pod.uid, None) is not None:
            self.queue.delete(pod.uid)  # bound: by us (confirmed below) or by someone else
            self.nominator.forget(pod.uid)
        old = self._assigned.get(pod.uid)
        self._assigned[pod.uid] = pod
        self.labels.put(pod)
        try:
            if old is None:
                self.cache.add_pod(pod)  # also confirms a pod we assumed
            else:
                self.cache.update_pod(old, pod)
        except CacheError as exc:
            log.warning("cache: pod %s: %s", pod.key, exc)
        if old is None:
            self.queue.move_all_to_active_or_backoff(events.ASSIGNED_POD_ADD, None, pod)
        elif old.resource_version != pod.resource_version:
            for event in events.pod_changes(old, pod, target=False):
                self.queue.move_all_to_active_or_backoff(event, old, pod)

    def _pod_gone(self, uid: str) -> None:
        self.labels.remove(uid)
        pending = self._pending.pop(uid, None)
        if pending is not None:
            self.queue.delete(uid)
            self.nominator.forget(uid)
            # An assumed member leaves its group's state too: its later forget finds nothing
            # (upstream keeps it counted until then, and then as a pending ghost).
            self.cache.remove_pod_group_member(pending)
            self._pending_gone(pending)
        old = self._assigned.pop(uid, None)
        if old is None:
            return
        try:
            self.cache.remove_pod(old)
        except CacheError as exc:
            log.warning("cache: pod %s: %s", old.key, exc)
        self.queue.move_all_to_active_or_backoff(events.ASSIGNED_POD_DELETE, old, None)

    def _pending_gone(self, pod: PodInfo) -> None:
        """What a deleted pending pod held is free (upstream deletePodFromSchedulingQueue and
        handleAssumedPodDeletion): an assumed pod waiting at Permit is rejected (its binding
        cycle forgets it), one past Permit leaves the cache at once; a nominated one no longer
        holds its node for pods of lower or equal priority."""
        assumed = self.cache.get_pod(pod.uid) if self.cache.is_assumed(pod.uid) else None
        if assumed is not None:
            if self.reject_waiting is None or not self.reject_waiting(assumed):
                try:
                    self.cache.remove_pod(assumed)
                except CacheError as exc:
                    log.warning("cache: pod %s: %s", assumed.key, exc)
            self.queue.move_all_to_active_or_backoff(events.ASSIGNED_POD_DELETE, assumed, None)
        elif pod.nominated_node_name:
            priority = pod.priority
            self.queue.move_all_to_active_or_backoff(
                events.ASSIGNED_POD_DELETE, pod, None, pre_check=lambda p: p.priority <= priority
            )

    # --- nodes ------------------------------------------------------------------------------

    def on_node(self, kind: EventType, raw: JSON) -> None:
        name = str(_field(_field(raw, "metadata"), "name") or "")
        if kind == "DELETED":
            gone = self._nodes.pop(name, None)
            if gone is not None:
                self.queue.move_all_to_active_or_backoff(events.NODE_DELETE, gone[0], None)
                self.cache.remove_node(name)
            return
        try:
            node = node_from_json(raw, keep_raw=self.keep_node_objects)
            extras = node_extras(raw)
        except MalformedObjectError as exc:
            log.warning("ignoring a malformed node event: %s", exc)
            return
        old = self._nodes.get(name)
        self._nodes[name] = (node, extras)
        self.cache.add_node(node)
        if old is None:
            self.queue.move_all_to_active_or_backoff(events.NODE_ADD, None, node)
            return
        for event in node_changes(old[0], node, old[1], extras):
            self.queue.move_all_to_active_or_backoff(event, old[0], node)

    @property
    def pending_count(self) -> int:
        return len(self._pending)

    def sizes(self) -> dict[str, int]:
        """Pods and nodes the event handlers remember (event loop thread)."""
        return {"pending": len(self._pending), "assigned": len(self._assigned),
                "nodes": len(self._nodes)}  # fmt: skip
