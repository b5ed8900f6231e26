"""Tenancy is a boundary, end to end with the operator running the engines locally (the
rendered config, RBAC and ServiceAccount token as a pod would have them):

- whatever plugins a tenancy profile configures, its pods land only on the pool's nodes: the
  configs that would drop the pool are refused (Stalled, with the field path, nothing rendered);
  the others bind inside the pool;
- a tenant pod that needs preemption never evicts another tenant's pod, even where that pod
  would be upstream's best victim; a pod of its own namespace is evicted instead."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from test_operator_pending import pod

from corral.k8s import JSON, Client
from support.operator_process import API, KIND, condition, eventually, is_ready, profile

STAR_THEN_FILTER = {
    "multiPoint": {"disabled": [{"name": "*"}]},
    "queueSort": {"enabled": [{"name": "PrioritySort"}]},
    "filter": {"enabled": [{"name": "NodeAffinity"}]},
    "bind": {"enabled": [{"name": "DefaultBinder"}]},
}


def tenant_profile(name: str, tenant: str, pool: str, **spec: Any) -> JSON:
    return profile(
        name,
        tenant,
        replicas=1,
        tenancy={"namespaces": [tenant], "nodeSelector": {"pool": pool}},
        **spec,
    )


@pytest.mark.parametrize(
    "plugins",
    [
        pytest.param(None, id="defaults"),
        pytest.param({"preFilter": {"disabled": [{"name": "NodeAffinity"}]}}, id="no preFilter"),
        pytest.param(STAR_THEN_FILTER, id="only NodeAffinity filters"),
    ],
)
def test_accepted_configs_bind_only_inside_the_pool(
    kube: Client,
    kube_namespaces: list[str],
    fake_nodes: Any,
    start_operator: Any,
    profiles: Any,
    tmp_path: Any,
    plugins: JSON | None,
) -> None:
    tenant, _ = kube_namespaces
    name = profiles("pool")
    pool = f"pool-{name}"
    inside = fake_nodes(1, cpu="2", labels={"pool": pool})
    fake_nodes(3, cpu="64")  # roomier, and outside the pool
    op = start_operator("--local-engines", f"--engine-dir={tmp_path}")
    extra = {"plugins": plugins} if plugins else {}
    kube.create(tenant_profile(name, tenant, pool, **extra))
    eventually(lambda: is_ready(kube, name), timeout=60, what=f"{name} Ready")
    for i in range(3):
        kube.create(pod(f"w{i}", tenant, name))

    def placed() -> list[str]:
        got = [kube.get("v1", "Pod", f"w{i}", tenant)["spec"].get("nodeName") for i in range(3)]
        return got if all(got) else []

    assert set(eventually(placed, timeout=60, what="tenant pods bound")) == set(inside), op.log()


@pytest.mark.parametrize(
    ("plugins", "path"),
    [
        pytest.param(
            {"filter": {"disabled": [{"name": "NodeAffinity"}]}},
            "spec.plugins.filter.disabled[0].name",
            id="NodeAffinity off at filter",
        ),
        pytest.param(
            {"multiPoint": {"disabled": [{"name": "*"}]}, "filter": {"enabled": []}},
            "spec.plugins.multiPoint.disabled[0].name",
            id="everything off",
        ),
    ],
)
def test_configs_dropping_the_pool_are_refused(
    kube: Client,
    kube_namespaces: list[str],
    operator: Any,
    profiles: Any,
    plugins: JSON,
    path: str,
) -> None:
    tenant, _ = kube_namespaces
    name = profiles("nopool")
    kube.create(tenant_profile(name, tenant, "p", plugins=plugins))

    def stalled() -> JSON | None:
        obj = kube.get(API, KIND, name)
        return obj if condition(obj, "Stalled").get("status") == "True" else None

    stall = condition(eventually(stalled, what="Stalled"), "Stalled")
    assert path in stall["message"], stall
    assert "NodeAffinity" in stall["message"]
    assert kube.list_items("apps/v1", "Deployment", tenant) == []


@pytest.fixture
def three_priorities(kube: Client) -> Iterator[dict[str, str]]:
    made = {k: f"t-{k}-{uuid.uuid4().hex[:6]}" for k in ("lowest", "low", "high")}
    for name, value in zip(made.values(), (5, 10, 1000), strict=True):
        kube.create({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
                     "metadata": {"name": name}, "value": value})  # fmt: skip
    yield made
    for name in made.values():
        kube.delete("scheduling.k8s.io/v1", "PriorityClass", name)


def sized(name: str, namespace: str, scheduler: str, cpu: str, **spec: Any) -> JSON:
    obj = pod(name, namespace, scheduler)
    obj["spec"]["containers"][0]["resources"] = {"requests": {"cpu": cpu}}
    obj["spec"].update(spec)
    return obj


def test_tenant_preemption_never_evicts_another_tenants_pod(
    kube: Client,
    kube_namespaces: list[str],
    fake_nodes: Callable[..., list[str]],
    start_operator: Any,
    profiles: Any,
    tmp_path: Any,
    three_priorities: dict[str, str],
) -> None:
    tenant, other = kube_namespaces
    name = profiles("preempt")
    pool = f"pool-{name}"
    theirs_node, ours_node = fake_nodes(2, cpu="2", labels={"pool": pool})
    # Another tenant's pod at the lowest priority: upstream's best victim (its highest victim
    # priority is the lowest). The tenant's own pod is a worse victim, but the only one allowed.
    kube.create(sized("theirs", other, "default-scheduler", "1500m", nodeName=theirs_node,
                      priorityClassName=three_priorities["lowest"]))  # fmt: skip
    kube.create(sized("ours", tenant, "default-scheduler", "1500m", nodeName=ours_node,
                      priorityClassName=three_priorities["low"]))  # fmt: skip
    op = start_operator("--local-engines", f"--engine-dir={tmp_path}")
    kube.create(tenant_profile(name, tenant, pool))
    eventually(lambda: is_ready(kube, name), timeout=60, what=f"{name} Ready")
    kube.create(sized("vip", tenant, name, "1500m", priorityClassName=three_priorities["high"]))

    def vip_node() -> str:
        return str(kube.get("v1", "Pod", "vip", tenant)["spec"].get("nodeName") or "")

    assert eventually(vip_node, timeout=90, what="the vip bound") == ours_node, op.log()
    assert kube.get("v1", "Pod", "theirs", other)["metadata"].get("deletionTimestamp") is None
    preempted = [
        e["involvedObject"]["name"]
        for ns in (tenant, other)
        for e in kube.list_items("v1", "Event", ns)
        if e["reason"] == "Preempted"
    ]
    assert preempted == ["ours"]
