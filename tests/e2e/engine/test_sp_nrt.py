"""NodeResourceTopologyMatch end to end on the local control plane: NodeResourceTopology objects
published through the API after the engine started (as NFD's topology-updater or RTE would),
Guaranteed pods placed only where one NUMA zone fits them under single-numa-node, and the
scoring strategies choosing the node they say."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from corral.k8s import JSON, ApiError, Client
from corral.testing import LocalCluster
from support import sp_crds
from support.engine_process import (
    EngineProcess,
    create_all,
    engine_config,
    pods_in,
    scheduler_name,
    wait_until,
)

NRT = "NodeResourceTopologyMatch"
SINGLE_NUMA_POD = {"topologyManagerPolicy": "single-numa-node", "topologyManagerScope": "pod"}


@pytest.fixture
def publish(kube: Client) -> Iterator[Callable[..., JSON]]:
    """Publish (create or update, by server-side apply as an exporter) a node's NRT object;
    every object published is deleted after the test."""
    names: set[str] = set()
    with sp_crds.node_resource_topology_crd(kube):

        def put(
            node: str, cpus: list[str], attributes: dict[str, str], memory: str = "16Gi"
        ) -> JSON:
            zones = [
                {"name": f"node-{i}", "type": "Node",
                 "resources": [
                     {"name": "cpu", "capacity": "16", "allocatable": "16", "available": c},
                     {"name": "memory", "capacity": memory, "allocatable": memory,
                      "available": memory},
                 ]}
                for i, c in enumerate(cpus)
            ]  # fmt: skip
            obj = {"apiVersion": sp_crds.NRT_API, "kind": "NodeResourceTopology",
                   "metadata": {"name": node},
                   "attributes": [{"name": k, "value": v} for k, v in attributes.items()],
                   "zones": zones}  # fmt: skip
            names.add(node)
            return kube.apply(obj, field_manager="topology-exporter")

        yield put
        for name in names:
            try:
                kube.delete(sp_crds.NRT_API, "NodeResourceTopology", name)
            except ApiError as exc:
                if not exc.not_found:
                    raise


def _pod(name: str, namespace: str, sched: str, pool: dict[str, str], cpu: str,
         *, guaranteed: bool = True) -> JSON:  # fmt: skip
    amounts = {"cpu": cpu, "memory": "1Gi"}
    resources: dict[str, Any] = {"requests": amounts}
    if guaranteed:
        resources["limits"] = amounts
    container = {"name": "c", "image": "pause", "resources": resources}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"schedulerName": sched, "nodeSelector": pool, "containers": [container]},
    }


def _node_of(kube: Client, namespace: str, name: str) -> str:
    return str(kube.get("v1", "Pod", name, namespace)["spec"].get("nodeName") or "")


def _said(kube: Client, namespace: str, pod: str, text: str) -> bool:
    events = kube.list_items("v1", "Event", namespace, field_selector="reason=FailedScheduling")
    return any(e["involvedObject"]["name"] == pod and text in e["message"] for e in events)


def test_nrt_guaranteed_pods_go_only_where_one_numa_zone_fits(
    kube: Client,
    cluster: LocalCluster,
    namespace: str,
    fake_nodes: Callable[..., list[str]],
    engines: Callable[..., EngineProcess],
    publish: Callable[..., JSON],
) -> None:
    """Two big nodes whose NUMA zones each have 4 free cpus, one small node with a zone of 6.
    Upstream's scorers prefer the big ones (a Burstable pod goes there); a Guaranteed pod of 6
    cpus goes to the small node only; the next one fits no zone (`cannot align pod`) until the
    exporter publishes a zone with room on a big node."""
    pool = {"pool": namespace}
    big_a, big_b = fake_nodes(2, cpu="32", memory="64Gi", labels=pool)
    (small,) = fake_nodes(1, cpu="8", memory="32Gi", labels=pool)
    name = scheduler_name()
    config = engine_config(cluster.kubeconfig, name)
    config["profiles"][0]["plugins"] = {"multiPoint": {"enabled": [{"name": NRT}]}}
    engines(config)
    # Published after the engine started (scheduler-plugins #967: there only a restart helps).
    for big in (big_a, big_b):
        publish(big, ["4", "4", "4", "4"], SINGLE_NUMA_POD)
    publish(small, ["2", "6"], SINGLE_NUMA_POD)

    kube.create(_pod("burstable", namespace, name, pool, "6", guaranteed=False))
    wait_until("burstable bound", lambda: _node_of(kube, namespace, "burstable") != "")
    assert _node_of(kube, namespace, "burstable") in (big_a, big_b)

    kube.create(_pod("g1", namespace, name, pool, "6"))
    wait_until("g1 bound", lambda: _node_of(kube, namespace, "g1") != "")
    assert _node_of(kube, namespace, "g1") == small

    # The small node's 8 cpus cannot take another 6; no zone of the big nodes has 6.
    kube.create(_pod("g2", namespace, name, pool, "6"))
    wait_until("g2 refused: no NUMA zone fits it",
               lambda: _said(kube, namespace, "g2", "cannot align pod"))  # fmt: skip
    time.sleep(2)
    assert _node_of(kube, namespace, "g2") == ""

    publish(big_b, ["8", "4", "4", "4"], SINGLE_NUMA_POD)  # the exporter saw pods go
    wait_until("g2 bound once a zone has room", lambda: _node_of(kube, namespace, "g2") != "")
    assert _node_of(kube, namespace, "g2") == big_b


RESTRICTED_POD = {"topologyManagerPolicy": "restricted", "topologyManagerScope": "pod"}


@pytest.mark.parametrize(
    ("strategy", "cpu", "attributes", "memory", "want"),
    [
        # Zones of 8 free cpus on the roomy node, 4 on the tight one; 2 cpus asked for.
        pytest.param("LeastAllocated", "2", SINGLE_NUMA_POD, "16Gi", "roomy", id="LeastAllocated"),
        pytest.param("MostAllocated", "2", SINGLE_NUMA_POD, "16Gi", "tight", id="MostAllocated"),
        # 2 of 4 cpus and 1Gi of 2Gi is balanced (100); 2 of 8 and 1Gi of 2Gi is not (96).
        pytest.param(
            "BalancedAllocation", "2", SINGLE_NUMA_POD, "2Gi", "tight", id="BalancedAllocation"
        ),
        # 6 cpus: one zone of the roomy node (94), two of the tight one (82); any policy.
        pytest.param("LeastNUMANodes", "6", RESTRICTED_POD, "16Gi", "roomy", id="LeastNUMANodes"),
    ],
)
def test_nrt_scoring_strategy_chooses_the_node(
    kube: Client,
    cluster: LocalCluster,
    namespace: str,
    fake_nodes: Callable[..., list[str]],
    engines: Callable[..., EngineProcess],
    publish: Callable[..., JSON],
    strategy: str,
    cpu: str,
    attributes: dict[str, str],
    memory: str,
    want: str,
) -> None:
    """Only NodeResourceTopologyMatch scores (upstream's scorers are off), nodes equal at node
    level: five Guaranteed pods all go to the node the strategy prefers (a strategy that did not
    tell the nodes apart would split them)."""
    pool = {"pool": namespace}
    roomy, tight = fake_nodes(2, cpu="64", memory="64Gi", labels=pool)
    name = scheduler_name()
    config = engine_config(cluster.kubeconfig, name)
    config["profiles"][0]["plugins"] = {
        "multiPoint": {"enabled": [{"name": NRT}]},
        "score": {"disabled": [{"name": "*"}], "enabled": [{"name": NRT, "weight": 1}]},
    }
    config["profiles"][0]["pluginConfig"] = [
        {"name": NRT, "args": {"scoringStrategy": {"type": strategy}}}
    ]
    publish(roomy, ["8", "8"], attributes, memory=memory)
    publish(tight, ["4", "4"], attributes, memory=memory)
    engines(config)
    create_all(kube, [_pod(f"p{i}", namespace, name, pool, cpu) for i in range(5)])
    wait_until(
        "all bound", lambda: all(p["spec"].get("nodeName") for p in pods_in(kube, namespace))
    )
    placed = {p["spec"]["nodeName"] for p in pods_in(kube, namespace)}
    assert placed == {roomy if want == "roomy" else tight}
