"""Fixtures for the engine's end-to-end tests."""

from __future__ import annotations

import signal
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from corral.k8s import JSON
from engine.support import EngineProcess


@pytest.fixture
def engines(tmp_path: Path) -> Iterator[Callable[..., EngineProcess]]:
    started: list[EngineProcess] = []

    def start(
        config: JSON, name: str | None = None, env: dict[str, str] | None = None
    ) -> EngineProcess:
        engine = EngineProcess(config, tmp_path, name or f"engine-{len(started)}", env).start()
        started.append(engine)
        return engine

    yield start
    for engine in started:
        engine.kill(signal.SIGTERM)
