"""The Event recorder against a real API server: a burst far larger than the writes in flight all
lands (a leaked write slot would stop it at ``IN_FLIGHT``), a rejected Event is abandoned without
holding up the rest, and Events beyond the intake queue are dropped and counted, never queued
without bound."""

from __future__ import annotations

import asyncio

import pytest

from corral.k8s import CONTENT_JSON, Client
from corral.k8s.aio import AsyncClient
from corral.k8s.protobuf import CONTENT_PROTOBUF
from corral.scheduler.engine.event_recorder import IN_FLIGHT, QUEUE_SIZE, EventRecorder, PodRef

CONTROLLER = "recorder-e2e"


def scheduled_names(kube: Client, namespace: str) -> set[str]:
    events = kube.list_items("events.k8s.io/v1", "Event", namespace,
                             field_selector="reason=Scheduled")  # fmt: skip
    return {e["regarding"]["name"] for e in events if e["reportingController"] == CONTROLLER}


@pytest.mark.parametrize(
    ("emitted", "stray", "dropped"),
    [
        pytest.param(5 * IN_FLIGHT, 0, 0, id="a burst of five times the writes in flight"),
        pytest.param(IN_FLIGHT, 3, 0,
                     id="Events of a namespace that does not exist are abandoned alone"),
        pytest.param(QUEUE_SIZE + 150, 0, 150, id="beyond the intake queue: dropped and counted"),
    ],
)  # fmt: skip
@pytest.mark.parametrize("content_type", [CONTENT_JSON, CONTENT_PROTOBUF])
def test_every_queued_event_is_written(
    kube: Client, namespace: str, emitted: int, stray: int, dropped: int, content_type: str
) -> None:
    async def scenario() -> EventRecorder:
        client = AsyncClient(kube)
        recorder = EventRecorder(client, CONTROLLER, content_type=content_type)
        sending = asyncio.create_task(recorder.run())
        try:
            # All in one go, without yielding: nothing is written before the burst is queued.
            for i in range(stray):
                recorder.scheduled(PodRef("no-such-namespace", f"stray-{i}", f"s{i}"), "n1")
            for i in range(emitted):
                recorder.scheduled(PodRef(namespace, f"pod-{i}", f"u{i}"), "n1")
            await recorder.flush(timeout=60.0)
            return recorder
        finally:
            sending.cancel()
            await client.close()

    recorder = asyncio.run(scenario())
    assert recorder.dropped == dropped
    assert scheduled_names(kube, namespace) == {f"pod-{i}" for i in range(emitted - dropped)}
