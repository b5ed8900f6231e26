"""PodGroups in the engine (GenericWorkload): their watch, their status condition, their metrics.

- :class:`PodGroupEvents` routes the PodGroup watch as upstream's event handlers do: the cache
  first, then the queue (a new group takes in its waiting members), then the queueing event
  (``PodGroup/Add|Update|Delete``, objects as raw JSON). An update that keeps the
  resourceVersion is dropped.
- :class:`PodGroupReports` implements the pod-group cycle's reporter: the
  ``PodGroupInitiallyScheduled`` condition as upstream's strategic-merge patch of the status,
  the difference from the cycle's record of the group (``podgroup.condition_patch``; none when
  nothing changes; lastTransitionTime kept unless the status flips), sent on the event loop in
  the cycles' order; and the ``scheduler_podgroup_*`` metrics.
"""

from __future__ import annotations

import asyncio
import datetime
import logging
from collections.abc import Callable
from typing import Any, Final

from corral.k8s import JSON
from corral.k8s.aio import AsyncClient
from corral.k8s.informer import EventType
from corral.scheduler import metrics as m
from corral.scheduler.backend.cache import Cache
from corral.scheduler.backend.queue import SchedulingQueue
from corral.scheduler.framework import cluster_events as events
from corral.scheduler.framework.podgroup import (
    MalformedPodGroupError,
    PodGroupRecord,
    condition_patch,
    group_key,
    pod_group_from_json,
)
from corral.scheduler.framework.types import PodInfo

log = logging.getLogger("corral.scheduler")

POD_GROUPS_PATH: Final = "/apis/scheduling.k8s.io/v1beta1/podgroups"
CONTENT_STRATEGIC_MERGE_PATCH: Final = "application/strategic-merge-patch+json"


class PodGroupEvents:
    def __init__(self, cache: Cache, queue: SchedulingQueue) -> None:
        self.cache = cache
        self.queue = queue
        self._known: dict[str, JSON] = {}

    def on_pod_group(self, kind: EventType, raw: JSON) -> None:
        meta = raw.get("metadata") or {}
        key = group_key(str(meta.get("namespace") or ""), str(meta.get("name") or ""))
        old = self._known.get(key)
        if kind == "DELETED":
            gone = self._known.pop(key, raw)
            self.cache.remove_pod_group(key)
            self.queue.delete_pod_group(key)
            self.queue.move_all_to_active_or_backoff(events.POD_GROUP_DELETE, gone, None)
            return
        try:
            group = pod_group_from_json(raw)
        except MalformedPodGroupError as exc:
            log.warning("ignoring a malformed PodGroup event: %s", exc)
            return
        if old is not None and (old.get("metadata") or {}).get("resourceVersion") == meta.get(
            "resourceVersion"
        ):
            return
        self._known[key] = raw
        self.cache.set_pod_group(group)
        if old is None:
            self.queue.add_pod_group(group)
            self.queue.move_all_to_active_or_backoff(events.POD_GROUP_ADD, None, raw)
        else:
            self.queue.update_pod_group(group)
            self.queue.move_all_to_active_or_backoff(events.POD_GROUP_UPDATE, old, raw)


def _now() -> str:
    return datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


class PodGroupReports:
    """The pod-group cycle's reporter (``podgroup_cycle.PodGroupReporter``)."""

    def __init__(
        self,
        client: AsyncClient,
        metrics: m.Recorder,
        on_loop: Callable[..., None],
        spawn: Callable[[Any], object],
        skipped: Callable[[PodInfo], None],
    ) -> None:
        self._client = client
        self._metrics = metrics
        self._on_loop = on_loop
        self._spawn = spawn
        self._skipped = skipped
        self._locks: dict[str, tuple[asyncio.Lock, int]] = {}  # per group: (lock, users)

    def condition(self, group: PodGroupRecord, condition: dict[str, object]) -> None:
        # The difference from the record this cycle read, computed now (the record may change
        # before the loop sends it).
        body = condition_patch(group.raw, {**condition, "lastTransitionTime": _now()})
        if body is None:
            return
        self._on_loop(lambda: self._spawn(self._patch(group, body)))

    async def _patch(self, group: PodGroupRecord, body: dict[str, Any]) -> None:
        # One group's patches go in the order the cycles made them, as upstream's synchronous
        # ones do: a later cycle's condition must not be overtaken by an earlier one.
        lock, users = self._locks.get(group.key, (asyncio.Lock(), 0))
        self._locks[group.key] = (lock, users + 1)
        try:
            async with lock:
                await self._send(group, body)
        finally:
            lock, users = self._locks[group.key]
            if users == 1:
                del self._locks[group.key]
            else:
                self._locks[group.key] = (lock, users - 1)

    async def _send(self, group: PodGroupRecord, body: dict[str, Any]) -> None:
        path = (
            f"/apis/scheduling.k8s.io/v1beta1/namespaces/{group.namespace}/podgroups/"
            f"{group.name}/status"
        )
        try:
            await self._client.request(
                "PATCH",
                path,
                body=body,
                content_type=CONTENT_STRATEGIC_MERGE_PATCH,
            )
        except Exception as exc:  # the group may be gone; the next cycle writes it again
            log.warning("updating the status of PodGroup %s: %s", group.key, exc)

    def attempt(self, profile: str, result: str, duration: float) -> None:
        self._metrics.inc(m.PODGROUP_SCHEDULE_ATTEMPTS, (result, profile))
        self._metrics.observe(m.PODGROUP_SCHEDULING_ATTEMPT_DURATION, (result, profile), duration)

    def algorithm(self, duration: float) -> None:
        self._metrics.observe(m.PODGROUP_SCHEDULING_ALGORITHM_DURATION, (), duration)

    def skipped(self, pod: PodInfo) -> None:
        self._skipped(pod)
