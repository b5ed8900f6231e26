"""Protobuf writes against a real API server: what the server stores from a protobuf Binding or
Event is what the same object sent as JSON gives, and its protobuf errors read as the JSON ones
(reason, message, details), from both clients."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest

from corral.k8s import CONTENT_JSON, JSON, ApiError, Client
from corral.k8s.aio import AsyncClient
from corral.k8s.protobuf import CONTENT_PROTOBUF, encode

WIRES = [pytest.param(CONTENT_JSON, id="json"), pytest.param(CONTENT_PROTOBUF, id="protobuf")]
Send = Callable[[Client, str, JSON, str], None]


def send_sync(kube: Client, path: str, body: JSON, content_type: str) -> None:
    kube.send(path, body, content_type=content_type)


def send_async(kube: Client, path: str, body: JSON, content_type: str) -> None:
    async def main() -> None:
        client = AsyncClient(kube)
        try:
            await client.send(path, body, content_type=content_type)
        finally:
            await client.close()

    asyncio.run(main())


CLIENTS = [pytest.param(send_sync, id="sync"), pytest.param(send_async, id="async")]


def _pod(name: str, namespace: str) -> JSON:
    return {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace},
        # No scheduler serves this name: the shared cluster's own would bind it first.
        "spec": {"schedulerName": "nobody", "containers": [{"name": "c", "image": "pause"}]},
    }  # fmt: skip


def _binding(pod: JSON, node: str) -> JSON:
    meta = pod["metadata"]
    return {
        "apiVersion": "v1", "kind": "Binding",
        "metadata": {"name": meta["name"], "namespace": meta["namespace"], "uid": meta["uid"]},
        "target": {"apiVersion": "v1", "kind": "Node", "name": node},
    }  # fmt: skip


def _event(name: str, pod: JSON) -> JSON:
    """An Event with every field the schema carries, as the engine's recorder makes them."""
    meta = pod["metadata"]
    return {
        "apiVersion": "events.k8s.io/v1", "kind": "Event",
        "metadata": {"name": name, "namespace": meta["namespace"],
                     "labels": {"b": "2", "a": "1"}, "annotations": {"note": "é ✓"}},
        "eventTime": "2026-11-25T04:18:48.123456Z",
        "series": {"count": 2, "lastObservedTime": "2026-11-25T04:19:00.000001Z"},
        "reportingController": "corral-e2e", "reportingInstance": "corral-e2e-host",
        "action": "Binding", "reason": "Scheduled", "type": "Normal",
        "note": "Successfully assigned it — ünïcode",
        "regarding": {"apiVersion": "v1", "kind": "Pod", "namespace": meta["namespace"],
                      "name": meta["name"], "uid": meta["uid"],
                      "resourceVersion": meta["resourceVersion"]},
        "related": {"apiVersion": "v1", "kind": "Node", "name": "n1", "fieldPath": "spec"},
    }  # fmt: skip


def _stored(obj: JSON) -> JSON:
    """What the server keeps of an object we sent, without what it adds itself (its own
    metadata, and the deprecated fields it writes empty)."""
    added = ("uid", "resourceVersion", "creationTimestamp", "managedFields")
    meta = {k: v for k, v in obj["metadata"].items() if k not in added}
    return {**{k: v for k, v in obj.items() if v not in (None, {})}, "metadata": meta}


@pytest.mark.parametrize("send", CLIENTS)
@pytest.mark.parametrize("content_type", WIRES)
def test_binding(kube: Client, namespace: str, send: Send, content_type: str) -> None:
    pod = kube.create(_pod("p", namespace))
    binding = _binding(pod, "n1")
    if content_type == CONTENT_PROTOBUF:
        assert encode(binding) is not None  # it really goes as protobuf
    send(kube, f"/api/v1/namespaces/{namespace}/pods/p/binding", binding, content_type)
    assert kube.get("v1", "Pod", "p", namespace)["spec"]["nodeName"] == "n1"


@pytest.mark.parametrize("send", CLIENTS)
@pytest.mark.parametrize("content_type", WIRES)
def test_event(kube: Client, namespace: str, send: Send, content_type: str) -> None:
    pod = kube.create(_pod("p", namespace))
    event = _event("p.1", pod)
    if content_type == CONTENT_PROTOBUF:
        assert encode(event) is not None
    send(kube, f"/apis/events.k8s.io/v1/namespaces/{namespace}/events", event, content_type)
    stored = kube.get("events.k8s.io/v1", "Event", "p.1", namespace)
    assert _stored(stored) == event


def _error(send: Send, kube: Client, path: str, body: JSON, content_type: str) -> ApiError:
    with pytest.raises(ApiError) as raised:
        send(kube, path, body, content_type)
    return raised.value


def _facts(err: ApiError) -> tuple[Any, ...]:
    return err.status, err.reason, err.message, err.body.get("details")


@pytest.mark.parametrize("send", CLIENTS)
def test_errors_read_alike(kube: Client, namespace: str, send: Send) -> None:
    pod = kube.create(_pod("p", namespace))
    gone = _binding({"metadata": {**pod["metadata"], "name": "gone"}}, "n1")
    event = _event("p.2", pod)
    events = f"/apis/events.k8s.io/v1/namespaces/{namespace}/events"
    send(kube, events, event, CONTENT_JSON)
    cases = [
        (f"/api/v1/namespaces/{namespace}/pods/gone/binding", gone, 404, "NotFound"),
        (events, event, 409, "AlreadyExists"),
        (events, {**event, "reason": ""}, 422, "Invalid"),
    ]
    for path, body, status, reason in cases:
        as_json = _error(send, kube, path, body, CONTENT_JSON)
        as_protobuf = _error(send, kube, path, body, CONTENT_PROTOBUF)
        assert (as_protobuf.status, as_protobuf.reason) == (status, reason)
        assert _facts(as_protobuf) == _facts(as_json)
