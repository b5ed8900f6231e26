"""scheduler-plugins' plugins (NodeMetadata, NodeResourcesAllocatable, PreemptionToleration)
enabled in profiles of `corral scheduler`, end to end on the local control plane."""

from __future__ import annotations

from collections.abc import Callable

from corral.k8s import Client
from corral.scheduler.plugins.preemption_toleration import (
    MINIMUM_PREEMPTABLE_PRIORITY,
    TOLERATION_SECONDS,
)
from corral.testing import LocalCluster
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
