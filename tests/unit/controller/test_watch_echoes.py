"""Watch events of versions the operator already holds (the answers of its own applies and
status writes, which the watch sends back) queue no reconcile; anything newer, or a deletion,
does."""

from __future__ import annotations

import asyncio
from typing import Any, cast

import kopf
import pytest

from corral.controller.handlers import Operator
from corral.controller.queue import WorkQueue
from corral.controller.settings import Settings
from support.controller_fakes import FakeClient


def profile(rv: str, spec: dict[str, Any] | None = None) -> dict[str, Any]:
    meta = {"name": "p", "uid": "u", "generation": 1, "resourceVersion": rv}
    return {"apiVersion": "corral.dev/v1alpha1", "kind": "SchedulerProfile",
            "metadata": meta, "spec": spec or {}}  # fmt: skip


def child(rv: str) -> dict[str, Any]:
    labels = {"corral.dev/profile": "p", "app.kubernetes.io/managed-by": "corral"}
    meta = {"name": "c", "namespace": "ns", "resourceVersion": rv, "labels": labels}
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta}


def operator() -> Operator:
    op = Operator(Settings(), FakeClient())  # type: ignore[arg-type]
    op.queue = WorkQueue()
    return op


@pytest.mark.parametrize(
    ("kind", "rv", "queued"),
    [
        pytest.param("MODIFIED", "5", 0, id="the version held (own status write)"),
        pytest.param("MODIFIED", "6", 1, id="a newer version"),
        pytest.param("DELETED", "5", 1, id="deleted"),
    ],
)
def test_a_profile_event_of_a_held_version_queues_nothing(kind: str, rv: str, queued: int) -> None:
    op = operator()
    op.state.put_profile(profile("5"))  # as the reconcile stores its status write's answer
    op.profile_event(kind, profile(rv))
    assert op.queue is not None
    assert len(op.queue) == queued


@pytest.mark.parametrize(
    ("kind", "rv", "queued"),
    [
        pytest.param("ADDED", "7", 0, id="the version held (own apply)"),
        pytest.param("MODIFIED", "8", 1, id="a newer version"),
        pytest.param("DELETED", "7", 1, id="deleted"),
    ],
)
def test_a_child_event_of_a_held_version_queues_nothing(kind: str, rv: str, queued: int) -> None:
    op = operator()
    op.state.put_child(child("7"))  # as apply stores its answer
    event = cast("kopf.RawEvent", {"type": kind, "object": child(rv)})
    asyncio.run(op._on_child(event))
    assert op.queue is not None
    assert len(op.queue) == queued
