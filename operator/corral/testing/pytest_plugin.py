"""pytest fixtures over a real local control plane (also for users testing their own plugins).

Enable with ``pytest_plugins = ["corral.testing.pytest_plugin"]`` in a conftest.

- ``cluster`` (session): a :class:`LocalCluster` started once for the session (with upstream
  kube-scheduler as ``default-scheduler``, and the audit log of :mod:`corral.testing.audit`)
  and stopped at its end. Set
  ``CORRAL_TEST_CLUSTER_DIR`` to a directory where ``hack/dev-cluster up --with-kube-scheduler``
  runs to reuse that cluster instead (it is left running).
- ``kube``: an admin :class:`corral.k8s.Client`.
- ``kubectl``: ``kubectl(*args, input=None, check=True)`` as the admin user.
- ``namespace``: a fresh namespace per test, deleted afterwards.
- ``fake_nodes``: ``fake_nodes(count, **options)`` adds kwok nodes (see ``nodes.add_nodes``) and
  deletes them after the test.
- ``service_account_client``: ``(namespace, name) -> Client`` authenticated as that
  ServiceAccount (created if missing) with a TokenRequest token.
"""

from __future__ import annotations

import os
import tempfile
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from corral.k8s import ApiError, Client
from corral.testing import audit
from corral.testing.controlplane import LocalCluster

REUSE_ENV = "CORRAL_TEST_CLUSTER_DIR"


@pytest.fixture(scope="session")
def cluster() -> Iterator[LocalCluster]:
    reuse = os.environ.get(REUSE_ENV)
    if reuse:
        yield LocalCluster.attach(Path(reuse))
        return
    with tempfile.TemporaryDirectory(prefix="corral-e2e-") as tmp:
        started = LocalCluster.up(
            Path(tmp), with_kube_scheduler=True, apiserver_args=audit.args(Path(tmp))
        )
        try:
            yield started
        finally:
            started.down()


@pytest.fixture(scope="session")
def kube(cluster: LocalCluster) -> Client:
    return cluster.admin


@pytest.fixture(scope="session")
def kubectl(cluster: LocalCluster) -> Callable[..., Any]:
    return cluster.kubectl


@pytest.fixture
def namespace(kube: Client) -> Iterator[str]:
    name = f"t-{uuid.uuid4().hex[:10]}"
    kube.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
    try:
        yield name
    finally:
        kube.delete("v1", "Namespace", name)


@pytest.fixture
def fake_nodes(cluster: LocalCluster) -> Iterator[Callable[..., list[str]]]:
    created: list[str] = []

    def add(count: int, **options: Any) -> list[str]:
        options.setdefault("prefix", f"t-{uuid.uuid4().hex[:6]}")
        names = cluster.add_nodes(count, **options)
        created.extend(names)
        return names

    yield add
    for name in created:
        cluster.admin.delete("v1", "Node", name)


@pytest.fixture
def service_account_client(kube: Client) -> Callable[[str, str], Client]:
    def make(namespace: str, name: str) -> Client:
        account = {
            "apiVersion": "v1",
            "kind": "ServiceAccount",
            "metadata": {"name": name, "namespace": namespace},
        }
        try:
            kube.create(account)
        except ApiError as exc:
            if not exc.conflict:
                raise
        return kube.with_token(kube.request_token(namespace, name))

    return make
