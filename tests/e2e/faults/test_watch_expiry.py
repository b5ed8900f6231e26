"""Watches expiring: the engine's watches break, etcd is compacted past their resourceVersion,
and the informers get 410 Gone and relist. What changed meanwhile (pods deleted, pods added, a
node replaced) must be seen: the nodes are exactly full, so the new pods fit only in the room
the deleted ones left, and only if the engine saw them go.

The control plane is one of this module's own, with the API server's watch cache off for pods
and nodes: a watch from an old resourceVersion then reads etcd, as a watch cache's own relist
does after etcd compaction, and gets 410 (the watch cache would otherwise serve it from its
window). The engine reaches the API server through a proxy that is severed for the gap.
Afterwards its cache holds the new node and not the replaced one; new pods its pod informer
placed on the replaced node before its node informer relisted are counted (the window of
test_node_deleted).
"""

from __future__ import annotations

import time
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from support.bindings import engine_claims_agree, log_line, verdict, wait_bound
from support.engine_process import EngineProcess, engine_config, pod, scheduler_name
from support.faults import (
    FaultCluster,
    api_target,
    create_pods,
    force_delete_pod,
    proxied_kubeconfig,
    start_fault_cluster,
)
from support.tcpproxy import TcpProxy

NODES = 4  # 2 CPUs each, 100 m per pod: 80 pods fill them
FIRST = 80
REPLACED = 40


@pytest.fixture(scope="module")
def uncached(tmp_path_factory: pytest.TempPathFactory) -> Iterator[FaultCluster]:
    started = start_fault_cluster(
        tmp_path_factory.mktemp("uncached"), "--watch-cache-sizes=pods#0,nodes#0"
    )
    try:
        yield started
    finally:
        started.cluster.down()


def cache_nodes(engine: EngineProcess) -> float:
    """The engine's ``scheduler_scheduler_cache_size{type="nodes"}`` (-1 until it answers)."""
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{engine.port}/metrics", timeout=5) as r:
            text = r.read().decode()
    except OSError:
        return -1
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name == "scheduler_scheduler_cache_size" and sample.labels["type"] == "nodes":
                return sample.value
    return -1


def test_watches_expire_and_relist_what_changed(
    uncached: FaultCluster,
    fault_engines: Callable[..., EngineProcess],
    tmp_path: Path,
) -> None:
    kube, cluster = uncached.kube, uncached.cluster
    ns = "default"
    pool = {"pool": "expiry"}
    nodes = cluster.add_nodes(NODES, prefix="expiry", cpu="2", memory="16Gi", labels=pool)
    name = scheduler_name()
    proxy = TcpProxy(api_target(cluster)).start()
    try:
        config = engine_config(proxied_kubeconfig(uncached, proxy, tmp_path / "kc"), name)
        engine = fault_engines(config)
        first = create_pods(kube, [pod(f"a-{i}", ns, name, nodeSelector=pool)
                                   for i in range(FIRST)])  # fmt: skip
        wait_bound(kube, ns, first, timeout=120)
        assert all(p["spec"].get("nodeName") for p in kube.list_items("v1", "Pod", ns))

        proxy.sever("reset")  # the engine's watches break and cannot come back
        gone = sorted(first)[:REPLACED]
        for pod_name in gone:
            force_delete_pod(kube, ns, pod_name)
        # A node replaced by another of the same size: the engine must drop the old one too.
        replaced = nodes[0]
        kube.delete("v1", "Node", replaced)
        cluster.add_nodes(1, prefix="expiry-new", cpu="2", memory="16Gi", labels=pool)
        second = create_pods(kube, [pod(f"b-{i}", ns, name, nodeSelector=pool)
                                    for i in range(REPLACED)])  # fmt: skip
        revision = cluster.compact_etcd()
        time.sleep(1.0)
        proxy.heal()

        waited = wait_bound(kube, ns, second, timeout=120)
        # The engine's view of the nodes, once its node informer relisted: the replaced node
        # gone, the new one there.
        deadline = time.monotonic() + 60
        while cache_nodes(engine) != NODES:
            assert time.monotonic() < deadline, f"engine cache holds {cache_nodes(engine)} nodes"
            time.sleep(0.5)
        # Pods on the replaced node: the first ones it held, and any new one placed between the
        # pod informer's relist and the node informer's (their order is the watches' luck:
        # the window of test_node_deleted).
        on_replaced = {
            p["metadata"]["name"]
            for p in kube.list_items("v1", "Pod", ns)
            if p["spec"].get("nodeName") == replaced
        }
        expected = {n: u for n, u in {**first, **second}.items()
                    if n not in gone and n not in on_replaced}  # fmt: skip
        result = verdict(kube, ns, expected, uncached.audit_log, gone_nodes=frozenset({replaced}))
        relists = engine.log().count("expired; relisting")
        print(log_line("watch expiry", compacted_at=revision, relists=relists,
                       new_pods_on_deleted_node=len(on_replaced & set(second)),
                       bound_after_s=round(waited, 1), summary=result.summary()))  # fmt: skip
        result.check()
        assert relists >= 2, engine.log()[-3000:]  # pods and nodes at least
        assert not engine_claims_agree(kube, ns, [engine.log()], ignore=on_replaced | set(gone))
    finally:
        proxy.stop()
