"""scheduler-plugins' CapacityScheduling in a profile of `corral scheduler`, end to end on the
local control plane, with ElasticQuotas published through the API: a quota's max refuses a pod
with SP's message; a namespace borrows past its min what another quota leaves unused; a
namespace within its min reclaims what was borrowed by preemption (SP's
test/integration/capacity_scheduling_test.go "cross-namespace preemption", on one node)."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator

import pytest

from corral.k8s import JSON, Client
from corral.scheduler.framework.types import PodInfo
from corral.scheduler.plugins.capacity_scheduling import NAME, over_max, over_min
from corral.testing import LocalCluster
from support import sp_crds
from support.engine_process import (
    EngineProcess,
    create_all,
    engine_config,
    pod,
    pods_in,
    scheduler_name,
    wait_until,
)

CPU = {"cpu": "1"}  # every pod's request; the quotas name cpu only, so they ask for nothing else


@pytest.fixture
def tenants(kube: Client) -> Iterator[tuple[str, str]]:
    """Two namespaces of their own (the sum of mins is over every quota of the cluster)."""
    names = tuple(f"t-eq-{uuid.uuid4().hex[:8]}" for _ in range(2))
    with sp_crds.elastic_quota_crd(kube):
        for name in names:
            kube.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
        try:
            yield names[0], names[1]
        finally:
            for name in names:
                kube.delete("v1", "Namespace", name)


def _quota(namespace: str, min_cpu: str, max_cpu: str) -> JSON:
    return {"apiVersion": sp_crds.SP_SCHEDULING, "kind": "ElasticQuota",
            "metadata": {"name": "quota", "namespace": namespace},
            "spec": {"min": {"cpu": min_cpu}, "max": {"cpu": max_cpu}}}  # fmt: skip


def _start(
    kube: Client,
    cluster: LocalCluster,
    fake_nodes: Callable[..., list[str]],
    engines: Callable[..., EngineProcess],
    quotas: list[JSON],
) -> tuple[str, dict[str, str]]:
    """One 8-cpu node of its own (room is never what stops a pod: the quotas are), the quotas,
    then an engine whose profile runs CapacityScheduling in place of DefaultPreemption."""
    pool = {"pool": f"eq-{uuid.uuid4().hex[:6]}"}
    fake_nodes(1, cpu="8", memory="32Gi", labels=pool)
    create_all(kube, quotas)
    name = scheduler_name()
    config = engine_config(cluster.kubeconfig, name)
    config["profiles"][0]["plugins"] = {
        "multiPoint": {"enabled": [{"name": NAME}], "disabled": [{"name": "DefaultPreemption"}]}
    }
    engines(config)
    return name, pool


def _bound(kube: Client, namespace: str) -> list[str]:
    return sorted(p["metadata"]["name"] for p in pods_in(kube, namespace)
                  if p["spec"].get("nodeName"))  # fmt: skip


def _said(kube: Client, namespace: str, pod_name: str, text: str) -> bool:
    events = kube.list_items("v1", "Event", namespace, field_selector="reason=FailedScheduling")
    return any(e["involvedObject"]["name"] == pod_name and text in e["message"] for e in events)


def _ref(namespace: str, name: str) -> PodInfo:
    return PodInfo(uid="", namespace=namespace, name=name)


def test_a_quotas_max_refuses_the_pod_with_sps_message(
    kube: Client,
    cluster: LocalCluster,
    fake_nodes: Callable[..., list[str]],
    engines: Callable[..., EngineProcess],
    tenants: tuple[str, str],
) -> None:
    team, _ = tenants
    sched, pool = _start(kube, cluster, fake_nodes, engines, [_quota(team, "2", "2")])
    create_all(kube, [pod(f"p{i}", team, sched, nodeSelector=pool, requests=CPU)
                      for i in range(2)])  # fmt: skip
    wait_until("two pods bound", lambda: _bound(kube, team) == ["p0", "p1"])
    kube.create(pod("p2", team, sched, nodeSelector=pool, requests=CPU))
    # SP's words, written out (capacity_scheduling.go PreFilter): compared with over_max()
    # alone, a drift of that text would pass (make mutate's quota-max-message).
    sp_words = (
        f"Pod {team}/p2 is rejected in PreFilter because ElasticQuota {team} is more than Max"
    )
    wait_until("p2 refused past max, in SP's words", lambda: _said(kube, team, "p2", sp_words))
    assert _bound(kube, team) == ["p0", "p1"]  # the node has 6 cpus free


def test_a_namespace_borrows_past_its_min_what_another_quota_leaves_unused(
    kube: Client,
    cluster: LocalCluster,
    fake_nodes: Callable[..., list[str]],
    engines: Callable[..., EngineProcess],
    tenants: tuple[str, str],
) -> None:
    team, other = tenants
    # team is guaranteed 1 cpu and may use 3; other leaves its 2 unused: team uses 3.
    quotas = [_quota(team, "1", "3"), _quota(other, "2", "2")]
    sched, pool = _start(kube, cluster, fake_nodes, engines, quotas)
    create_all(kube, [pod(f"p{i}", team, sched, nodeSelector=pool, requests=CPU)
                      for i in range(3)])  # fmt: skip
    wait_until("three pods bound, two past the min", lambda: len(_bound(kube, team)) == 3)
    # The fourth would pass max (and the sum of mins, 3).
    kube.create(pod("p3", team, sched, nodeSelector=pool, requests=CPU))
    wait_until(
        "p3 refused past max", lambda: _said(kube, team, "p3", over_max(_ref(team, "p3"), team))
    )
    assert len(_bound(kube, team)) == 3


def test_a_namespace_within_its_min_reclaims_borrowed_capacity_by_preemption(
    kube: Client,
    cluster: LocalCluster,
    fake_nodes: Callable[..., list[str]],
    engines: Callable[..., EngineProcess],
    tenants: tuple[str, str],
) -> None:
    team, other = tenants
    quotas = [_quota(team, "1", "3"), _quota(other, "2", "2")]
    sched, pool = _start(kube, cluster, fake_nodes, engines, quotas)
    create_all(kube, [pod(f"p{i}", team, sched, nodeSelector=pool, requests=CPU)
                      for i in range(3)])  # fmt: skip
    wait_until("team borrows 2 cpus of other's min", lambda: len(_bound(kube, team)) == 3)
    # other asks for 1 cpu of its min: all quotas would use 4 of the 3 their mins add up to, so
    # PreFilter refuses it, and PostFilter takes one pod of team's (over its min), whatever
    # their priorities (team's are as important as other's).
    kube.create(pod("mine", other, sched, nodeSelector=pool, requests=CPU))
    wait_until("other's pod bound", lambda: _bound(kube, other) == ["mine"], timeout=90)
    assert _said(kube, other, "mine", over_min(_ref(other, "mine")))
    left = [p for p in pods_in(kube, team) if not p["metadata"].get("deletionTimestamp")]
    assert len(left) == 2, [p["metadata"]["name"] for p in left]  # one victim, no more
