"""A control plane with GenericWorkload for the gang tests: kube-apiserver serving
``scheduling.k8s.io/v1beta1`` (Workloads, PodGroups) and kube-controller-manager with the
Job controller's ``WorkloadWithJob``. It is its own session cluster (the shared one runs without
the gates, so that every other test sees the API as users do by default); engines started here
run with ``--feature-gates=GenericWorkload=true``.

Fixtures: ``gang_cluster``, ``gang_kube``, ``gang_namespace`` (a fresh namespace per test),
``gang_nodes(count, **options)`` (kwok nodes, removed after the test), ``gang_engines`` (local
``corral scheduler`` processes against this cluster), ``gang_scheduler`` (one such engine with
the default profile under a fresh scheduler name).
"""

from __future__ import annotations

import signal
import tempfile
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from corral.k8s import ApiError, Client
from corral.testing import nodes as fake
from corral.testing.controlplane import LocalCluster
from support.engine_process import EngineProcess, engine_config

GATES = {"GenericWorkload": True, "WorkloadWithJob": True}
ENGINE_GATES = "--feature-gates=GenericWorkload=true"


@pytest.fixture(scope="session")
def gang_cluster() -> Iterator[LocalCluster]:
    with tempfile.TemporaryDirectory(prefix="corral-e2e-gang-") as tmp:
        started = LocalCluster.up(Path(tmp), feature_gates=GATES)
        try:
            yield started
        finally:
            started.down()


@pytest.fixture(scope="session")
def gang_kube(gang_cluster: LocalCluster) -> Client:
    return gang_cluster.admin


@pytest.fixture
def gang_namespace(gang_kube: Client) -> Iterator[str]:
    name = f"gang-{uuid.uuid4().hex[:8]}"
    gang_kube.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
    yield name
    try:
        gang_kube.delete("v1", "Namespace", name)
    except ApiError as exc:
        if not exc.not_found:
            raise


@pytest.fixture
def gang_nodes(gang_kube: Client) -> Iterator[Callable[..., list[str]]]:
    created: list[str] = []

    def add(count: int, **options: Any) -> list[str]:
        options.setdefault("prefix", f"gang-{uuid.uuid4().hex[:5]}")
        names = fake.add_nodes(gang_kube, count, **options)
        created.extend(names)
        return names

    yield add
    for name in created:
        try:
            gang_kube.delete("v1", "Node", name)
        except ApiError as exc:
            if not exc.not_found:
                raise


@pytest.fixture
def gang_engines(
    gang_cluster: LocalCluster, tmp_path: Path
) -> Iterator[Callable[..., EngineProcess]]:
    started: list[EngineProcess] = []

    def start(
        scheduler: str, *, name: str | None = None, args: tuple[str, ...] = (), **top: Any
    ) -> EngineProcess:
        config = engine_config(gang_cluster.kubeconfig, scheduler, **top)
        engine = EngineProcess(config, tmp_path, name or f"engine-{len(started)}", None,
                               (ENGINE_GATES, *args))  # fmt: skip
        started.append(engine.start())
        return engine

    yield start
    for engine in started:
        engine.kill(signal.SIGTERM)


@pytest.fixture
def gang_scheduler(gang_engines: Callable[..., EngineProcess]) -> tuple[str, EngineProcess]:
    name = f"corral-{uuid.uuid4().hex[:6]}"
    return name, gang_engines(name)
