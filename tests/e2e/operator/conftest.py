"""Fixtures for the operator's end-to-end tests: the CRD, ``corral operator`` processes, unique
profile names and namespaces (helpers live in support.operator_process)."""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from corral.k8s import Client
from corral.testing import LocalCluster
from support.operator_process import API, KIND, ROOT, OperatorProcess, eventually


@pytest.fixture(scope="session", autouse=True)
def operator_hosts(cluster: LocalCluster) -> None:
    """Somewhere for the scheduler Deployments the operator renders to run: kwok nodes that
    upstream kube-scheduler binds their pods to and that kwok then reports Ready. (Other tests'
    nodes come and go with those tests.)"""
    role = {"corral-e2e/role": "operator-host"}
    have = cluster.admin.list_items("v1", "Node", label_selector="corral-e2e/role=operator-host")
    if len(have) < 3:
        cluster.add_nodes(3 - len(have), prefix="op-host", labels=role)


@pytest.fixture(scope="session")
def crd(kube: Client, cluster: LocalCluster) -> None:
    cluster.kubectl("apply", "-k", str(ROOT / "config" / "crd"))

    def established() -> bool:
        obj = kube.get(
            "apiextensions.k8s.io/v1", "CustomResourceDefinition", "schedulerprofiles.corral.dev"
        )
        conds = (obj.get("status") or {}).get("conditions") or []  # null until the API sets them
        return any(c["type"] == "Established" and c["status"] == "True" for c in conds)

    eventually(established, what="the CRD to be established")


@pytest.fixture
def start_operator(
    cluster: LocalCluster, crd: None, tmp_path: Path
) -> Iterator[Callable[..., OperatorProcess]]:
    started: list[OperatorProcess] = []

    def start(*args: str) -> OperatorProcess:
        op = OperatorProcess(
            cluster, tmp_path / f"operator-{len(started)}.log", ["--resync=5", *args]
        )
        started.append(op.start())
        return op

    yield start
    for op in started:
        op.stop()
        if os.environ.get("CORRAL_SHOW_OPERATOR_LOG"):
            print(op.log())


@pytest.fixture
def operator(start_operator: Callable[..., OperatorProcess]) -> OperatorProcess:
    return start_operator()


@pytest.fixture
def profiles(kube: Client) -> Iterator[Callable[[str], str]]:
    """``profiles(prefix) -> unique name``; every profile named this way is deleted after."""
    names: list[str] = []

    def make(prefix: str = "p") -> str:
        name = f"{prefix}-{uuid.uuid4().hex[:6]}"
        names.append(name)
        return name

    yield make
    for name in names:
        kube.delete(API, KIND, name)


@pytest.fixture
def kube_namespaces(kube: Client) -> Iterator[list[str]]:
    """Two fresh namespaces, deleted afterwards."""
    made = [f"t-{uuid.uuid4().hex[:10]}" for _ in range(2)]
    for name in made:
        kube.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
    yield made
    for name in made:
        kube.delete("v1", "Namespace", name)
