"""`kubectl apply -k config/default` installs the operator (after its namespace and config/crd);
its ServiceAccount can do the whole job (a profile goes Ready, with RBAC it grants) but nothing
else (403 on secrets); the aggregated roles give `view` and `edit` holders the profiles."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from corral.k8s import ApiError, Client
from corral.k8s.kubeconfig import write_token_kubeconfig
from corral.testing import LocalCluster
from corral_dev.install import prerequisites
from support.operator_process import ROOT, OperatorProcess, eventually, is_ready, profile

NS = "corral-system"
SA = "corral-operator"


@pytest.fixture
def installed(cluster: LocalCluster, kube: Client, crd: None) -> Any:
    prerequisites(cluster.kubectl, ROOT)
    out = cluster.kubectl("apply", "-k", str(ROOT / "config" / "default"))
    yield out.stdout
    cluster.kubectl("delete", "--ignore-not-found", "-k", str(ROOT / "config" / "rbac"))
    cluster.kubectl(
        "delete", "--ignore-not-found", "deployment/corral-operator", "-n", NS, check=False
    )


def test_install_then_operator_as_its_service_account(
    cluster: LocalCluster,
    kube: Client,
    installed: str,
    namespace: str,
    tmp_path: Path,
    profiles: Any,
) -> None:
    # The CRDs and the namespace are not the operator's: deleting it leaves them.
    assert "customresourcedefinition" not in installed
    assert "namespace/" not in installed
    assert "clusterrole.rbac.authorization.k8s.io/corral:operator" in installed
    assert "clusterrole.rbac.authorization.k8s.io/corral:schedulerprofiles:viewer" in installed
    assert "deployment.apps/corral-operator" in installed
    assert "cluster-admin" not in installed
    dep = kube.get("apps/v1", "Deployment", "corral-operator", NS)
    assert dep["spec"]["template"]["spec"]["serviceAccountName"] == SA

    token = kube.request_token(NS, SA)
    sa = kube.with_token(token)
    # Nothing beyond its job.
    for call in (
        lambda: sa.list_items("v1", "Secret", namespace),
        lambda: sa.list_items("v1", "Secret"),
        lambda: sa.create(
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "nope-corral"}}
        ),
    ):
        with pytest.raises(ApiError) as denied:
            call()
        assert denied.value.status == 403

    # The operator running with exactly that identity reconciles a tenant profile to Ready:
    # every child, including RBAC it may only grant because it holds it.
    kubeconfig = tmp_path / "operator.kubeconfig"
    write_token_kubeconfig(kubeconfig, kube, token, f"{NS}:{SA}")
    op = OperatorProcess(cluster, tmp_path / "op.log", ["--peering=corral-e2e"])
    op.cluster = _Shim(cluster, kubeconfig)  # type: ignore[assignment]
    op.start()
    try:
        name = profiles("install")
        kube.create(
            profile(
                name,
                namespace,
                tenancy={"namespaces": [namespace]},
                plugins={"multiPoint": {"enabled": [{"name": "DefaultPreemption"}]}},
            )
        )
        eventually(lambda: is_ready(kube, name), timeout=60, what=f"{name} Ready")
        assert "Forbidden" not in op.log()
    finally:
        op.stop()
        kube.delete("kopf.dev/v1", "ClusterKopfPeering", "corral-e2e")


class _Shim:
    """A LocalCluster look-alike whose kubeconfig is the ServiceAccount's."""

    def __init__(self, cluster: LocalCluster, kubeconfig: Path) -> None:
        self.binaries = cluster.binaries
        self.kubeconfig = kubeconfig
