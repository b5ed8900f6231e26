"""``corral operator --local-engines`` on the kubelet-less cluster: the profile's engine runs as
local processes with the profile's own ServiceAccount token and rendered config (every default
plugin on: the tenant's least-privilege RBAC must serve all of their informers), and a tenant
pod naming it is bound to a node of the tenant pool; a pod in another namespace naming it gets
the detector's Event and stays Pending."""

from __future__ import annotations

import time
from typing import Any

from test_operator_pending import pod, pod_events

from corral.k8s import Client
from support.operator_process import eventually, is_ready, profile


def test_local_engine_binds_tenant_pods_only_to_the_tenant_pool(
    kube: Client,
    kube_namespaces: list[str],
    fake_nodes: Any,
    start_operator: Any,
    profiles: Any,
    tmp_path: Any,
) -> None:
    tenant, other = kube_namespaces
    name = profiles("local")
    pool = f"pool-{name}"
    nodes = fake_nodes(2, labels={"pool": pool})
    fake_nodes(2)  # not in the pool
    op = start_operator("--local-engines", f"--engine-dir={tmp_path}", "--pending-threshold=2")
    kube.create(
        profile(
            name,
            tenant,
            replicas=2,
            tenancy={"namespaces": [tenant], "nodeSelector": {"pool": pool}},
        )
    )
    eventually(lambda: is_ready(kube, name), timeout=60, what=f"{name} Ready")
    eventually(
        lambda: (
            kube.get("corral.dev/v1alpha1", "SchedulerProfile", name)["status"]
            .get("leader", "")
            .startswith(f"corral-{name}-local-")
        ),
        timeout=60,
        what="a local engine leads",
    )
    for i in range(3):
        kube.create(pod(f"w{i}", tenant, name))
    kube.create(pod("stray", other, name))

    def bound() -> list[str]:
        got = [kube.get("v1", "Pod", f"w{i}", tenant)["spec"].get("nodeName") for i in range(3)]
        return [n for n in got if n] if all(got) else []

    placed = eventually(bound, timeout=60, what="tenant pods bound")
    assert set(placed) <= set(nodes), (placed, op.log())
    eventually(
        lambda: "NamespaceNotServed" in [e["reason"] for e in pod_events(kube, other, "stray")],
        what="the stray pod's event",
    )
    time.sleep(2)
    assert not kube.get("v1", "Pod", "stray", other)["spec"].get("nodeName")
