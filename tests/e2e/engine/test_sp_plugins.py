"""scheduler-plugins' score plugins (NodeMetadata, NodeResourcesAllocatable) enabled in profiles
of `corral scheduler`, end to end on the local control plane."""

from __future__ import annotations

from collections.abc import Callable

from corral.k8s import Client
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
