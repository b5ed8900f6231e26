"""Fixtures of the fault tests: a control plane of their own (they restart its components),
with kube-apiserver's audit log of every Binding (``support.bindings``), and engines to run
against it.

The long tests carry the ``faults`` marker and run with ``make faults``; ``make test`` runs the
rest, at :data:`FAST_SCALE` of their sizes (``fault_scale``; see docs/reliability.md).
"""

from __future__ import annotations

import signal
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from corral.k8s import JSON, ApiError, Client
from support.engine_process import EngineProcess
from support.faults import FaultCluster, start_fault_cluster

FAST_SCALE = 0.3  # of each test's pods and nodes, without --faults (make test)


@pytest.fixture(scope="session")
def fault_scale(request: pytest.FixtureRequest) -> float:
    """1 with ``--faults`` (make faults: the sizes the docs report), else :data:`FAST_SCALE`."""
    return 1.0 if request.config.getoption("--faults") else FAST_SCALE


@pytest.fixture(scope="session")
def fault_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[FaultCluster]:
    """The fault tests' control plane (not the session's shared one), started on first use.
    A test that leaves a component down fails the ones after it loudly (``healthy``)."""
    started = start_fault_cluster(tmp_path_factory.mktemp("faults"))
    try:
        yield started
    finally:
        started.cluster.down()


@pytest.fixture
def fault_kube(fault_cluster: FaultCluster) -> Client:
    assert fault_cluster.cluster.healthy(), "a fault test left the control plane broken"
    return fault_cluster.kube


@pytest.fixture
def fault_namespace(fault_kube: Client) -> Iterator[str]:
    name = f"f-{uuid.uuid4().hex[:10]}"
    fault_kube.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
    yield name
    fault_kube.delete("v1", "Namespace", name)


@pytest.fixture
def fault_nodes(fault_cluster: FaultCluster) -> Iterator[Callable[..., list[str]]]:
    """``fault_nodes(count, **options)``: kwok nodes (``nodes.add_nodes``), deleted after."""
    created: list[str] = []

    def add(count: int, **options: Any) -> list[str]:
        options.setdefault("prefix", f"f-{uuid.uuid4().hex[:6]}")
        names = fault_cluster.cluster.add_nodes(count, **options)
        created.extend(names)
        return names

    yield add
    for name in created:
        try:
            fault_cluster.kube.delete("v1", "Node", name)
        except ApiError as exc:
            if not exc.not_found:
                raise


@pytest.fixture
def fault_engines(tmp_path: Path) -> Iterator[Callable[..., EngineProcess]]:
    """``fault_engines(config, name=None, env=None, args=())``: ``corral scheduler`` processes,
    stopped after the test (SIGTERM; a killed one is already gone)."""
    started: list[EngineProcess] = []

    def start(
        config: JSON,
        name: str | None = None,
        env: dict[str, str] | None = None,
        args: tuple[str, ...] = (),
    ) -> EngineProcess:
        engine = EngineProcess(config, tmp_path, name or f"engine-{len(started)}", env, args)
        started.append(engine.start())
        return engine

    yield start
    for engine in started:
        engine.kill(signal.SIGTERM)
