"""scheduler-plugins' plugins (NodeMetadata, NodeResourcesAllocatable, PreemptionToleration,
Coscheduling) enabled in profiles of `corral scheduler`, end to end on the local control
plane."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator

import pytest

from corral.k8s import JSON, Client
from corral.scheduler.plugins.coscheduling import POD_GROUP_LABEL
from corral.scheduler.plugins.preemption_toleration import (
    MINIMUM_PREEMPTABLE_PRIORITY,
    TOLERATION_SECONDS,
)
from corral.testing import LocalCluster
from support import sp_crds
from support.engine_process import (
    EngineProcess,
    all_bound,
    create_all,
    engine_config,
    pod,
    pods_in,
    scheduler_name,
    wait_until,
)

HOSTNAME = "kubernetes.io/hostname"
SP_SCHEDULING = sp_crds.SP_SCHEDULING


def test_sp_score_plugins_pull_pods_to_the_node_they_prefer(
    kube: Client,
    cluster: LocalCluster,
    namespace: str,
    fake_nodes: Callable[..., list[str]],
    engines: Callable[..., EngineProcess],
) -> None:
    pool = {"pool": namespace}
    # Upstream's default scorers (LeastAllocated, BalancedAllocation) prefer the big, emptier
    # node; each SP plugin, weighted over them, prefers the small one.
    (small,) = fake_nodes(1, cpu="4", memory="8Gi", labels={**pool, "rank": "10"})
    (big,) = fake_nodes(1, cpu="16", memory="32Gi", labels={**pool, "rank": "2"})
    plain, metadata, allocatable = scheduler_name(), scheduler_name(), scheduler_name()
    config = engine_config(cluster.kubeconfig, plain)
    config["profiles"] += [
        {
            "schedulerName": metadata,
            "plugins": {"score": {"enabled": [{"name": "NodeMetadata", "weight": 10}]}},
            "pluginConfig": [
                {
                    "name": "NodeMetadata",
                    "args": {
                        "metadataKey": "rank",
                        "metadataSource": "Label",
                        "metadataType": "Number",
                        "scoringStrategy": "Highest",
                    },
                }
            ],
        },
        # No pluginConfig: SP's defaults (cpu 1<<20, memory 1, mode Least).
        {
            "schedulerName": allocatable,
            "plugins": {"score": {"enabled": [{"name": "NodeResourcesAllocatable", "weight": 10}]}},
        },
    ]
    engines(config)
    profiles = (("plain", plain), ("metadata", metadata), ("allocatable", allocatable))
    create_all(kube, [pod(f"{kind}-{i}", namespace, sched, nodeSelector=pool)
                      for kind, sched in profiles for i in range(4)])  # fmt: skip

    wait_until("all bound", lambda: all_bound(kube, namespace), timeout=60)
    placed: dict[str, set[str]] = {}
    for p in pods_in(kube, namespace):
        placed.setdefault(p["metadata"]["name"].split("-")[0], set()).add(p["spec"]["nodeName"])
    assert placed["metadata"] == {small}
    assert placed["allocatable"] == {small}
    assert big in placed["plain"]


def test_preemption_toleration_spares_the_tolerating_victim(
    kube: Client,
    cluster: LocalCluster,
    namespace: str,
    fake_nodes: Callable[..., list[str]],
    engines: Callable[..., EngineProcess],
) -> None:
    pool = {"pool": namespace}
    tolerant_node, plain_node = fake_nodes(2, cpu="1", memory="4Gi", labels=pool)
    suffix = namespace[-6:]
    tolerant, plain, vip = (f"t-{kind}-{suffix}" for kind in ("tolerant", "plain", "vip"))
    classes = {
        # Tolerates every preemptor below 2000, forever.
        tolerant: (10, {MINIMUM_PREEMPTABLE_PRIORITY: "2000", TOLERATION_SECONDS: "-1"}),
        plain: (10, {}),
        vip: (1000, {}),
    }
    for klass, (value, notes) in classes.items():
        meta = {"name": klass, "annotations": notes}
        kube.create(
            {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": meta,
             "value": value}
        )  # fmt: skip
    try:
        name = scheduler_name()
        config = engine_config(cluster.kubeconfig, name)
        config["profiles"][0]["plugins"] = {
            "multiPoint": {"disabled": [{"name": "DefaultPreemption"}]},
            "postFilter": {"enabled": [{"name": "PreemptionToleration"}]},
        }
        engines(config)
        for pod_name, klass, on in (
            ("tolerant", tolerant, tolerant_node),
            ("plain", plain, plain_node),
        ):
            selector = {**pool, HOSTNAME: on}
            kube.create(pod(pod_name, namespace, name, priorityClassName=klass,
                            nodeSelector=selector, requests={"cpu": "1"}))  # fmt: skip
        wait_until("the victims bound", lambda: all_bound(kube, namespace))
        kube.create(pod("vip", namespace, name, priorityClassName=vip, nodeSelector=pool,
                        requests={"cpu": "1"}))  # fmt: skip

        # Only the plain victim's node is a candidate: the tolerant one keeps its node.
        def vip_node() -> str:
            return str(kube.get("v1", "Pod", "vip", namespace)["spec"].get("nodeName") or "")

        wait_until("vip bound", lambda: vip_node() == plain_node, timeout=60)
        names = {p["metadata"]["name"] for p in pods_in(kube, namespace)}
        assert names == {"tolerant", "vip"}
    finally:
        for klass in classes:
            kube.delete("scheduling.k8s.io/v1", "PriorityClass", klass)


@pytest.fixture
def pod_group_crd(kube: Client) -> Iterator[None]:
    with sp_crds.pod_group_crd(kube):
        yield


def _pod_group(name: str, namespace: str, min_member: int, **spec: object) -> JSON:
    return {"apiVersion": SP_SCHEDULING, "kind": "PodGroup",
            "metadata": {"name": name, "namespace": namespace},
            "spec": {"minMember": min_member, **spec}}  # fmt: skip


def test_coscheduling_binds_whole_gangs_or_none(
    kube: Client,
    cluster: LocalCluster,
    namespace: str,
    fake_nodes: Callable[..., list[str]],
    engines: Callable[..., EngineProcess],
    pod_group_crd: None,
) -> None:
    """A gang that fits binds whole; one that cannot fit binds no member: PostFilter rejects
    its waiting members (default podGroupRejectPercentage), or, where PostFilter never rejects
    (100), they wait at Permit until scheduleTimeoutSeconds and are released, their room free
    for a pod that needs it."""
    pool_a, pool_b = {"pool": f"{namespace}-a"}, {"pool": f"{namespace}-b"}
    fake_nodes(2, cpu="2", memory="8Gi", labels=pool_a)
    fake_nodes(1, cpu="2", memory="8Gi", labels=pool_b)
    gangs, patient = scheduler_name(), scheduler_name()
    config = engine_config(cluster.kubeconfig, gangs)
    config["profiles"] += [{"schedulerName": patient}]
    for profile in config["profiles"]:
        profile["plugins"] = {
            "multiPoint": {"enabled": [{"name": "Coscheduling"}],
                           "disabled": [{"name": "PrioritySort"}]},
        }  # fmt: skip
    config["profiles"][1]["pluginConfig"] = [
        {"name": "Coscheduling", "args": {"podGroupRejectPercentage": 100}}
    ]
    engines(config)

    def members(
        group: str, sched: str, pool: dict[str, str], count: int
    ) -> list[dict[str, object]]:
        return [pod(f"{group}-{i}", namespace, sched, nodeSelector=pool,
                    labels={POD_GROUP_LABEL: group}, requests={"cpu": "1"})
                for i in range(count)]  # fmt: skip

    def bound(group: str) -> list[str]:
        names = [
            p["metadata"]["name"] for p in pods_in(kube, namespace) if p["spec"].get("nodeName")
        ]
        return [n for n in names if n.startswith(f"{group}-")]

    # 3 of pool A's 4 cpus: binds whole.
    kube.create(_pod_group("fits", namespace, 3))
    create_all(kube, members("fits", gangs, pool_a, 3))
    wait_until("the gang that fits bound", lambda: len(bound("fits")) == 3, timeout=60)

    # 3 more cpus on pool A's last one, and 3 on pool B's 2: neither can complete.
    kube.create(_pod_group("big", namespace, 3))
    kube.create(_pod_group("slow", namespace, 3, scheduleTimeoutSeconds=3))
    create_all(kube, members("big", gangs, pool_a, 3) + members("slow", patient, pool_b, 3))

    def said(group: str, text: str) -> bool:
        events = kube.list_items("v1", "Event", namespace, field_selector="reason=FailedScheduling")
        return any(e["involvedObject"]["name"].startswith(f"{group}-") and text in e["message"]
                   for e in events)  # fmt: skip

    deadline = time.monotonic() + 60
    seen = {"big": False, "slow": False}
    timeout = "rejected due to timeout after waiting 3s at plugin Coscheduling"
    texts = {"big": ("gets rejected due to Pod", "optimistic rejection in PostFilter"),
             "slow": (timeout,)}  # fmt: skip
    while not all(seen.values()):
        assert time.monotonic() < deadline, f"no rejection seen for {seen}"
        # No member of a gang that cannot complete is ever bound.
        assert bound("big") == []
        assert bound("slow") == []
        for group, wanted in texts.items():
            seen[group] = seen[group] or any(said(group, text) for text in wanted)
        time.sleep(0.5)
    # The timeout released what slow's waiting members held: a pod that needs pool B's whole
    # node binds (members held at Permit past their timeout, or not forgotten, keep it out).
    kube.create(pod("whole-b", namespace, patient, nodeSelector=pool_b, requests={"cpu": "2"}))
    wait_until("whole-b bound on pool B's node", lambda: "whole-b" in [
        p["metadata"]["name"] for p in pods_in(kube, namespace) if p["spec"].get("nodeName")
    ], timeout=30)  # fmt: skip
    time.sleep(4)  # past another timeout: still none bound
    assert bound("big") == []
    assert bound("slow") == []
    assert len(bound("fits")) == 3
