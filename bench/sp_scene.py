"""scheduler-plugins' scene for a Coscheduling workload (bench.workloads ``sp_gang_sizes``) or a
CapacityScheduling one (``sp_quotas``: the ElasticQuota CRD and quotas instead): the PodGroup
CRD of ``crds/scheduler-plugins``, read rights on PodGroups for the schedulers'
identity (``system:kube-scheduler`` has no bootstrap role for them), and the PodGroups, all
before the scheduler starts (as scheduler-plugins' integration tests create them first)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any, Final

import yaml

from corral.k8s import ApiError, Client

CRD: Final = (
    Path(__file__).resolve().parents[1] / "crds" / "scheduler-plugins"
    / "podgroups.scheduling.x-k8s.io.yaml"
)  # fmt: skip
ELASTIC_QUOTA_CRD: Final = CRD.parent / "elasticquotas.scheduling.x-k8s.io.yaml"
SP_SCHEDULING: Final = "scheduling.x-k8s.io/v1alpha1"
POD_GROUPS_COLLECTION: Final = "/apis/scheduling.x-k8s.io/v1alpha1/namespaces/{namespace}/podgroups"
ELASTIC_QUOTAS_COLLECTION: Final = (
    "/apis/scheduling.x-k8s.io/v1alpha1/namespaces/{namespace}/elasticquotas"
)
ROLE: Final = "bench-sp-podgroups"
SCHEDULER_USER: Final = "system:kube-scheduler"
SERVED_TIMEOUT_S: Final = 60.0


def rbac() -> list[dict[str, Any]]:
    """A ClusterRole reading PodGroups and ElasticQuotas, bound to the schedulers' user."""
    role = {
        "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
        "metadata": {"name": ROLE},
        "rules": [{"apiGroups": ["scheduling.x-k8s.io"],
                   "resources": ["podgroups", "elasticquotas"],
                   "verbs": ["get", "list", "watch"]}],
    }  # fmt: skip
    binding = {
        "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
        "metadata": {"name": ROLE},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": ROLE},
        "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User",
                      "name": SCHEDULER_USER}],
    }  # fmt: skip
    return [role, binding]


def install(
    admin: Client, timeout: float = SERVED_TIMEOUT_S, crd: Path = CRD, kind: str = "PodGroup"
) -> None:
    """The CRD (PodGroup's, or ``crd`` of ``kind``), served (discovery lists the kind) before
    this returns, and the RBAC."""
    admin.create(yaml.safe_load(crd.read_text()))
    deadline = time.monotonic() + timeout
    while True:
        try:
            admin.resource(SP_SCHEDULING, kind)
            break
        except ApiError:
            if time.monotonic() > deadline:
                raise RuntimeError(f"the {kind} CRD was not served within {timeout:.0f}s") from None
            time.sleep(0.2)
    for obj in rbac():
        admin.create(obj)
