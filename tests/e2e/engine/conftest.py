"""Fixtures for the engine's end-to-end tests."""

from __future__ import annotations

import signal
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from corral.k8s import JSON, ApiError, Client
from support.engine_process import EngineProcess


@pytest.fixture
def engines(tmp_path: Path) -> Iterator[Callable[..., EngineProcess]]:
    started: list[EngineProcess] = []

    def start(
        config: JSON,
        name: str | None = None,
        env: dict[str, str] | None = None,
        args: tuple[str, ...] = (),
    ) -> EngineProcess:
        name = name or f"engine-{len(started)}"
        engine = EngineProcess(config, tmp_path, name, env, args).start()
        started.append(engine)
        return engine

    yield start
    for engine in started:
        engine.kill(signal.SIGTERM)


@pytest.fixture
def priorities(kube: Client) -> Iterator[tuple[str, str]]:
    """Two PriorityClasses, (low, high) = (10, 1000), removed afterwards."""
    low, high = (f"t-{p}-{uuid.uuid4().hex[:6]}" for p in ("low", "high"))
    for name, value in ((low, 10), (high, 1000)):
        kube.create({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
                     "metadata": {"name": name}, "value": value})  # fmt: skip
    yield low, high
    for name in (low, high):
        kube.delete("scheduling.k8s.io/v1", "PriorityClass", name)


@pytest.fixture
def cluster_scoped(kube: Client) -> Iterator[list[JSON]]:
    """Cluster-scoped objects a test creates (StorageClasses, PVs, CSIDrivers), deleted after it."""
    created: list[JSON] = []
    yield created
    for obj in reversed(created):
        try:
            kube.delete(obj["apiVersion"], obj["kind"], obj["metadata"]["name"])
        except ApiError as exc:
            if not exc.not_found:
                raise
