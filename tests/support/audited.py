"""Identities whose every write the session cluster's audit log records
(:mod:`corral.testing.audit`): ServiceAccounts of ``corral.testing.audit.NAMESPACE``."""

from __future__ import annotations

from collections.abc import Callable

from corral.k8s import ApiError, Client
from corral.testing import LocalCluster, audit


def ensure_namespace(kube: Client) -> str:
    """The audited namespace, created on first use and kept (tests share it)."""
    try:
        kube.create({"apiVersion": "v1", "kind": "Namespace",
                     "metadata": {"name": audit.NAMESPACE}})  # fmt: skip
    except ApiError as exc:
        if not exc.conflict:
            raise
    return audit.NAMESPACE


def writes(cluster: LocalCluster, user: str) -> list[audit.Write]:
    """Every request but a read ``user`` made so far. Fails when the cluster keeps no audit
    log (e.g. one reused with ``CORRAL_TEST_CLUSTER_DIR`` that was not started by
    ``hack/dev-cluster up``): then nothing could be proved."""
    log = cluster.audit_log
    assert log is not None, "kube-apiserver runs without an audit log (corral.testing.audit)"
    return audit.writes(log, user)


def account_client(
    kube: Client, service_account_client: Callable[[str, str], Client], name: str
) -> tuple[Client, str]:
    """A client as the audited ServiceAccount ``name`` (created if missing) and its user name."""
    namespace = ensure_namespace(kube)
    return service_account_client(namespace, name), audit.username(name)
