"""Kubernetes Events for scheduling decisions, in upstream kube-scheduler's shape.

Events are ``events.k8s.io/v1`` objects named ``<pod>.<hex nanoseconds>`` with
``reportingController`` = the profile's schedulerName and ``reportingInstance`` =
``<controller>-<hostname>``, as client-go's event recorder makes them. They are sent from a
bounded queue by a background task: scheduling never waits for an Event, and when the queue is
full new Events are dropped (and counted), as client-go does.
"""

from __future__ import annotations

import asyncio
import logging
import socket
import time
from dataclasses import dataclass
from typing import Final

from corral.k8s import JSON, ApiError
from corral.k8s.aio import AsyncClient
from corral.scheduler.engine.leaderelection import micro_time

QUEUE_SIZE: Final = 1000
NOTE_LIMIT: Final = 1024  # the API rejects longer notes

REASON_SCHEDULED: Final = "Scheduled"
REASON_FAILED_SCHEDULING: Final = "FailedScheduling"
REASON_PREEMPTED: Final = "Preempted"

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class PodRef:
    namespace: str
    name: str
    uid: str


def scheduled_note(pod: PodRef, node: str) -> str:
    return f"Successfully assigned {pod.namespace}/{pod.name} to {node}"


class EventRecorder:
    def __init__(self, client: AsyncClient, controller: str) -> None:
        self.client = client
        self.controller = controller
        self.instance = f"{controller}-{socket.gethostname()}"[:128]
        self.dropped = 0
        self._queue: asyncio.Queue[JSON] = asyncio.Queue(QUEUE_SIZE)

    def event(self, pod: PodRef, event_type: str, reason: str, action: str, note: str) -> None:
        body: JSON = {
            "apiVersion": "events.k8s.io/v1",
            "kind": "Event",
            "metadata": {"name": f"{pod.name}.{time.time_ns():x}", "namespace": pod.namespace},
            "eventTime": micro_time(),
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
            },
        }
        try:
            self._queue.put_nowait(body)
        except asyncio.QueueFull:
            self.dropped += 1

    def scheduled(self, pod: PodRef, node: str) -> None:
        self.event(pod, "Normal", REASON_SCHEDULED, "Binding", scheduled_note(pod, node))

    def failed_scheduling(self, pod: PodRef, message: str) -> None:
        self.event(pod, "Warning", REASON_FAILED_SCHEDULING, "Scheduling", message)

    async def run(self) -> None:
        """Send queued Events until cancelled; failures are logged, never retried forever."""
        while True:
            body = await self._queue.get()
            path = f"/apis/events.k8s.io/v1/namespaces/{body['metadata']['namespace']}/events"
            try:
                await self.client.request("POST", path, body=body)
            except ApiError as exc:
                if exc.status != 404:  # the namespace went away with the pod
                    log.warning("event %s/%s not recorded: %s", body["reason"], path, exc)

    async def flush(self, timeout: float = 5.0) -> None:
        """Wait (up to ``timeout``) until the queue is empty; for graceful shutdown and tests."""
        deadline = time.monotonic() + timeout
        while not self._queue.empty() and time.monotonic() < deadline:
            await asyncio.sleep(0.01)
