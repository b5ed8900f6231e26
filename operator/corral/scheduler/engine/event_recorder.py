"""Kubernetes Events for scheduling decisions, in upstream kube-scheduler's shape.

Events are ``events.k8s.io/v1`` objects named ``<pod>.<hex nanoseconds>`` with
``reportingController`` = the profile's schedulerName and ``reportingInstance`` =
``<controller>-<hostname>``, as client-go's event recorder makes them. They are sent from
bounded queues by background senders: scheduling never waits for an Event, and when a queue is
full new Events are dropped (and counted), as client-go does. One sender writing one Event at a
time sent about 30 a second in the benchmark, so most Scheduled Events of a burst were dropped; the
``SENDERS`` senders write concurrently, each Event going to the sender its identifying fields
pick, so that the Events of one series stay in order.

Repeated Events are aggregated into a series as client-go's ``tools/events`` broadcaster does
(``SeriesCache``): the second Event with the same identifying fields PATCHes the first one's
``series`` (count 2), later ones only count in memory; a series' count reaches the API server
when it is refreshed (every 30 minutes), when it finishes (no repeat for 6 minutes) and, unlike
upstream, which loses the tail, at shutdown.
"""

from __future__ import annotations

import asyncio
import logging
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

from corral.k8s import CONTENT_STRATEGIC_MERGE_PATCH, JSON, ApiError
from corral.k8s.aio import AsyncClient
from corral.scheduler.engine.leaderelection import micro_time

QUEUE_SIZE: Final = 1000  # client-go's, over all senders' queues together
SENDERS: Final = 8
NOTE_LIMIT: Final = 1024  # the API rejects longer notes
FINISH_SECONDS: Final = 6 * 60.0  # client-go's finishTime: a series ends after this long quiet
REFRESH_SECONDS: Final = 30 * 60.0  # client-go's refreshTime: series rewritten (Event TTL)

REASON_SCHEDULED: Final = "Scheduled"
REASON_FAILED_SCHEDULING: Final = "FailedScheduling"
REASON_PREEMPTED: Final = "Preempted"

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class PodRef:
    namespace: str
    name: str
    uid: str
    resource_version: str = ""  # part of the reference, so of the series key, as upstream


# client-go's eventKey: type, action, reason, reporting controller and instance, regarding (with
# its resourceVersion) and related. The note is not part of it: a series keeps its first note.
EventKey = tuple[str, ...]


def event_key(event: JSON) -> EventKey:
    ref = event["regarding"]
    return (
        event["type"], event["action"], event["reason"],
        event["reportingController"], event["reportingInstance"],
        *(str(ref.get(f, "")) for f in ("apiVersion", "kind", "namespace", "name", "uid",
                                        "resourceVersion", "fieldPath")),
    )  # fmt: skip


@dataclass(slots=True)
class _Entry:
    event: JSON  # as first written; "series" is set from the second observation on
    observed: float  # eventTime, then the series' lastObservedTime (seconds since the epoch)


class SeriesCache:
    """client-go's cache of isomorphic Events, without I/O.

    ``observe`` returns the Event to write for a new one: the Event itself when its key is new,
    its series (count 2) on the second observation, None on later ones (only counted). ``finish``
    and ``refresh`` return the series to write periodically. Events are never changed in place
    but for the cached copy's top-level ``series``, so shallow copies keep the written ones apart.
    """

    def __init__(self, window: float = FINISH_SECONDS) -> None:
        self.window = window
        self._entries: dict[EventKey, _Entry] = {}

    def __len__(self) -> int:
        return len(self._entries)

    def observe(self, event: JSON, now: float) -> JSON | None:
        key = event_key(event)
        entry = self._entries.get(key)
        if entry is None:
            self._entries[key] = _Entry(dict(event), now)
            return event
        entry.observed = now
        series = entry.event.get("series")
        if series is not None:
            series["count"] += 1
            series["lastObservedTime"] = micro_time(now)
            return None
        entry.event["series"] = {"count": 2, "lastObservedTime": micro_time(now)}
        return _snapshot(entry.event)

    def finish(self, now: float) -> list[JSON]:
        """Forget Events quiet for the window; return the final state of the series among them."""
        ended = [k for k, e in self._entries.items() if e.observed < now - self.window]
        return [e.event for e in map(self._entries.pop, ended) if "series" in e.event]

    def refresh(self) -> list[JSON]:
        """Every open series, to write its current count."""
        return [_snapshot(e.event) for e in self._entries.values() if "series" in e.event]


def _snapshot(event: JSON) -> JSON:
    return {**event, "series": dict(event["series"])}


def truncate_note(message: str) -> str:
    """Upstream ``truncateMessage`` for FailedScheduling: a cut note ends in `` ...``."""
    if len(message) <= NOTE_LIMIT:
        return message
    return message[: NOTE_LIMIT - len(" ...")] + " ..."


def scheduled_note(pod: PodRef, node: str) -> str:
    return f"Successfully assigned {pod.namespace}/{pod.name} to {node}"


class EventRecorder:
    def __init__(
        self, client: AsyncClient, controller: str, clock: Callable[[], float] = time.time
    ) -> None:
        self.client = client
        self.controller = controller
        self.instance = f"{controller}-{socket.gethostname()}"[:128]
        self.dropped = 0
        self.series = SeriesCache()
        self._clock = clock
        self._queues: list[asyncio.Queue[JSON]] = [
            asyncio.Queue(QUEUE_SIZE // SENDERS) for _ in range(SENDERS)
        ]

    def event(self, pod: PodRef, event_type: str, reason: str, action: str, note: str) -> None:
        now = self._clock()
        body: JSON = {
            "apiVersion": "events.k8s.io/v1",
            "kind": "Event",
            "metadata": {"name": f"{pod.name}.{int(now * 1e9):x}", "namespace": pod.namespace},
            "eventTime": micro_time(now),
            "reportingController": self.controller,
            "reportingInstance": self.instance,
            "action": action,
            "reason": reason,
            "type": event_type,
            "note": note[:NOTE_LIMIT],
            "regarding": {
                "apiVersion": "v1",
                "kind": "Pod",
                "namespace": pod.namespace,
                "name": pod.name,
                "uid": pod.uid,
                **({"resourceVersion": pod.resource_version} if pod.resource_version else {}),
            },
        }
        write = self.series.observe(body, now)
        if write is not None:
            self._enqueue(write)

    def _enqueue(self, body: JSON) -> None:
        queue = self._queues[hash(event_key(body)) % SENDERS]
        try:
            queue.put_nowait(body)
        except asyncio.QueueFull:
            self.dropped += 1

    def scheduled(self, pod: PodRef, node: str) -> None:
        self.event(pod, "Normal", REASON_SCHEDULED, "Binding", scheduled_note(pod, node))

    def failed_scheduling(self, pod: PodRef, message: str) -> None:
        self.event(pod, "Warning", REASON_FAILED_SCHEDULING, "Scheduling", truncate_note(message))

    async def run(self) -> None:
        """Send queued Events until cancelled; failures are logged, never retried forever."""
        await asyncio.gather(*(self._send(queue) for queue in self._queues))

    async def _send(self, queue: asyncio.Queue[JSON]) -> None:
        while True:
            body = await queue.get()
            try:
                await self._write(body)
            except ApiError as exc:
                if exc.status != 404:  # the namespace went away with the pod
                    log.warning("event %s of %s not recorded: %s",
                                body["reason"], body["metadata"]["name"], exc)  # fmt: skip

    async def _write(self, body: JSON) -> None:
        """POST a new Event; PATCH a series' count onto its first Event (POST if that is gone)."""
        path = f"/apis/events.k8s.io/v1/namespaces/{body['metadata']['namespace']}/events"
        if "series" in body:
            try:
                await self.client.request(
                    "PATCH", f"{path}/{body['metadata']['name']}",
                    body={"series": body["series"]}, content_type=CONTENT_STRATEGIC_MERGE_PATCH,
                )  # fmt: skip
                return
            except ApiError as exc:
                if exc.status != 404:
                    raise
        await self.client.request("POST", path, body=body)

    async def maintain(self) -> None:
        """Finish quiet series and refresh open ones, on client-go's periods, until cancelled."""
        since_refresh = 0.0
        while True:
            await asyncio.sleep(FINISH_SECONDS)
            for body in self.series.finish(self._clock()):
                self._enqueue(body)
            since_refresh += FINISH_SECONDS
            if since_refresh >= REFRESH_SECONDS:
                since_refresh = 0.0
                for body in self.series.refresh():
                    self._enqueue(body)

    async def flush(self, timeout: float = 5.0) -> None:
        """Write every open series' count, then wait (up to ``timeout``) until the queue is
        empty; for graceful shutdown and tests."""
        for body in self.series.refresh():
            self._enqueue(body)
        deadline = time.monotonic() + timeout
        while not all(q.empty() for q in self._queues) and time.monotonic() < deadline:
            await asyncio.sleep(0.01)
