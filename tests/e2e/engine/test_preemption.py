"""DefaultPreemption end to end: a high-priority pod evicts lower-priority ones and takes their
place, with upstream's events, conditions and nomination."""

from __future__ import annotations

import urllib.request
from collections.abc import Callable

from corral.k8s import Client
from corral.testing import LocalCluster
from support.engine_process import (
    EngineProcess,
    create_all,
    engine_config,
    pod,
    scheduler_name,
    wait_until,
)


def test_high_priority_pod_preempts_and_is_bound(
    kube: Client,
    cluster: LocalCluster,
    namespace: str,
    fake_nodes: Callable[..., list[str]],
    engines: Callable[..., EngineProcess],
    priorities: tuple[str, str],
) -> None:
    low, high = priorities
    pool = {"pool": namespace}
    (node,) = fake_nodes(1, cpu="2", memory="4Gi", labels=pool)
    name = scheduler_name()
    engine = engines(engine_config(cluster.kubeconfig, name))
    create_all(kube, [pod(f"low-{i}", namespace, name, nodeSelector=pool, priorityClassName=low,
                          requests={"cpu": "900m"}) for i in range(2)])  # fmt: skip
    wait_until(
        "the low-priority pods bound",
        lambda: all(
            kube.get("v1", "Pod", f"low-{i}", namespace)["spec"].get("nodeName") for i in range(2)
        ),
    )

    kube.create(pod("vip", namespace, name, nodeSelector=pool, priorityClassName=high,
                    requests={"cpu": "1500m"}))  # fmt: skip

    wait_until("the high-priority pod bound",
               lambda: kube.get("v1", "Pod", "vip", namespace)["spec"].get("nodeName") == node,
               timeout=60)  # fmt: skip
    remaining = {p["metadata"]["name"] for p in kube.list_items("v1", "Pod", namespace)}
    assert "vip" in remaining
    assert len(remaining - {"vip"}) <= 1  # 1500m + 900m > 2 cpu: at least one victim went
    events = kube.list_items("v1", "Event", namespace)
    preempted = [e for e in events if e["reason"] == "Preempted"]
    assert preempted
    vip_uid = kube.get("v1", "Pod", "vip", namespace)["metadata"]["uid"]
    assert preempted[0]["message"] == f"Preempted by pod {vip_uid} on node {node}"
    failed = [
        e["message"]
        for e in events
        if e["reason"] == "FailedScheduling" and e["involvedObject"]["name"] == "vip"
    ]
    # Upstream 1.37's message: no node fits as things are, then the preemption's verdict (both
    # low pods must go: 2 cpu - 1500m leaves room for neither 900m pod).
    assert failed
    assert failed[0].startswith("0/")
    assert "1 Insufficient cpu" in failed[0]
    assert failed[0].endswith(
        f". preemption: found a potential placement for pod on node {node}, preempting 2 victims"
    )
    assert "Preempted pod" in engine.log()
    # Upstream's metric names: one preemption attempt, with its victims counted once.
    with urllib.request.urlopen(f"http://127.0.0.1:{engine.port}/metrics", timeout=5) as answer:
        metrics = answer.read().decode()
    assert "scheduler_preemption_attempts_total 1.0" in metrics
    assert "scheduler_preemption_victims_count 1.0" in metrics
