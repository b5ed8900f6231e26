"""Kubernetes Events for scheduling decisions, in upstream kube-scheduler's shape.

Events are ``events.k8s.io/v1`` objects named ``<pod>.<hex nanoseconds>`` with
``reportingController`` = the profile's schedulerName and ``reportingInstance`` =
``<controller>-<hostname>``, as client-go's event recorder makes them. Scheduling never waits
for an Event: it lands in a bounded intake queue (new Events are dropped, and counted, when it is
full, as client-go's broadcaster drops them), and a dispatcher starts one write per Event, as
client-go starts one goroutine per Event. Up to ``IN_FLIGHT`` writes run at once: a write waits
about 100 ms on an API server under a 300 pods/s burst, so a fixed few senders (one, then eight)
wrote only a third of the burst's Scheduled Events and dropped the rest. A write that fails in
transport, or a series' write that raced its first Event (PATCH 404, then POST 409), is tried
again after about 10 s, up to 12 tries, as client-go does; any other rejection is logged and
abandoned.

Repeated Events are aggregated into a series as client-go's ``tools/events`` broadcaster does
(``SeriesCache``): the second Event with the same identifying fields PATCHes the first one's
``series`` (count 2), later ones only count in memory; a series' count reaches the API server
when it is refreshed (every 30 minutes), when it finishes (no repeat for 6 minutes) and, unlike
upstream, which loses the tail, at shutdown.
"""

from __future__ import annotations

import asyncio
import logging
import random
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

from corral.k8s import CONTENT_JSON, CONTENT_STRATEGIC_MERGE_PATCH, JSON, ApiError
from corral.k8s.aio import AsyncClient
from corral.scheduler.engine.leaderelection import micro_time

QUEUE_SIZE: Final = 1000  # client-go's broadcaster queue (maxQueuedEvents)
# client-go's writes are unbounded goroutines; a cap keeps the client's connections (one per write
# in flight) and tasks bounded: 64 writes at the ~100 ms a loaded API server takes is 640 a second.
IN_FLIGHT: Final = 64
MAX_TRIES: Final = 12  # client-go's maxTriesPerEvent
RETRY_SECONDS: Final = 10.0  # client-go's sleepDuration, jittered up to 25% longer
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


def worth_retrying(status: int, *, series: bool) -> bool:
    """client-go's recordEvent: a transport failure (status 0) is tried again, and so is a series'
    POST refused as AlreadyExists (its PATCH found no Event, which another write then created);
    every other answer from the API server is final."""
    return status == 0 or (series and status == 409)


def truncate_note(message: str) -> str:
    """Upstream ``truncateMessage`` for FailedScheduling: a cut note ends in `` ...``."""
    if len(message) <= NOTE_LIMIT:
        return message
    return message[: NOTE_LIMIT - len(" ...")] + " ..."


def scheduled_note(pod: PodRef, node: str) -> str:
    return f"Successfully assigned {pod.namespace}/{pod.name} to {node}"


class EventRecorder:
    def __init__(
        self,
        client: AsyncClient,
        controller: str,
        clock: Callable[[], float] = time.time,
        *,
        content_type: str = CONTENT_JSON,
    ) -> None:
        self.client = client
        self.controller = controller
        self.content_type = content_type  # for new Events; a series' PATCH is JSON
        self.instance = f"{controller}-{socket.gethostname()}"[:128]
        self.dropped = 0
        self.series = SeriesCache()
        self._clock = clock
        self._queue: asyncio.Queue[JSON] = asyncio.Queue(QUEUE_SIZE)
        self._writes: set[asyncio.Task[None]] = set()

    def sizes(self) -> dict[str, int]:
        """The series cache, queued Events and writes in flight."""
        return {"series": len(self.series), "queued": self._queue.qsize(),
                "writes": len(self._writes)}  # fmt: skip

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
        try:
            self._queue.put_nowait(body)
        except asyncio.QueueFull:
            self.dropped += 1

    def scheduled(self, pod: PodRef, node: str) -> None:
        self.event(pod, "Normal", REASON_SCHEDULED, "Binding", scheduled_note(pod, node))

    def failed_scheduling(self, pod: PodRef, message: str) -> None:
        self.event(pod, "Warning", REASON_FAILED_SCHEDULING, "Scheduling", truncate_note(message))

    async def run(self) -> None:
        """Start a write for each queued Event, up to ``IN_FLIGHT`` at once, until cancelled
        (writes in flight are cancelled with it)."""
        slots = asyncio.Semaphore(IN_FLIGHT)

        def done(task: asyncio.Task[None]) -> None:
            self._writes.discard(task)
            slots.release()

        try:
            while True:
                body = await self._queue.get()
                await slots.acquire()
                task = asyncio.create_task(self._record(body))
                self._writes.add(task)
                task.add_done_callback(done)
        finally:
            for task in list(self._writes):
                task.cancel()

    async def _record(self, body: JSON) -> None:
        """client-go's attemptRecording: try again what may succeed later, abandon the rest."""
        for tries in range(1, MAX_TRIES + 1):
            try:
                await self._write(body)
                return
            except ApiError as exc:
                again = worth_retrying(exc.status, series="series" in body)
                if not again or tries == MAX_TRIES:
                    if exc.status != 404:  # 404: the namespace went away with the pod
                        log.warning("event %s of %s not recorded (try %d): %s", body["reason"],
                                    body["metadata"]["name"], tries, exc)  # fmt: skip
                    return
            await asyncio.sleep(RETRY_SECONDS * random.uniform(1.0, 1.25))

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
        await self.client.send(path, body, content_type=self.content_type)

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
        """Write every open series' count, then wait (up to ``timeout``) until every queued
        Event is written; for graceful shutdown and tests."""
        for body in self.series.refresh():
            self._enqueue(body)
        deadline = time.monotonic() + timeout
        while (not self._queue.empty() or self._writes) and time.monotonic() < deadline:
            await asyncio.sleep(0.01)
