"""The leader's Lease renewals do not queue behind the engine's own writes.

A leader whose token bucket is full of pod status writes and Events must still renew: upstream's
resource lock has a client of its own, and so does Corral's elector. With one shared bucket, the
renewal waited behind the writes past renewDeadline and the leader exited (the soak at load 9).
"""

from __future__ import annotations

import time
from collections.abc import Callable

from corral.k8s import Client
from corral.testing import LocalCluster
from support.engine_process import (
    EngineProcess,
    engine_config,
    leader_election,
    pod,
    scheduler_name,
    wait_until,
)

LEASE, RENEW, RETRY = 4.0, 3.0, 1.0
QPS = 2  # the engine's writes: 40 pods' status patches and Events are ~40 s of tokens
PENDING = 40
WATCH_SECONDS = 15.0


def _holder(kube: Client, namespace: str, lease: str) -> str:
    try:
        found = kube.get("coordination.k8s.io/v1", "Lease", lease, namespace)
    except Exception:
        return ""
    return str(found["spec"].get("holderIdentity") or "")


def _unschedulable(kube: Client, namespace: str) -> int:
    return sum(
        1
        for p in kube.list_items("v1", "Pod", namespace)
        for c in p.get("status", {}).get("conditions") or []
        if c.get("type") == "PodScheduled" and c.get("status") == "False"
    )


def test_a_leader_with_a_full_token_bucket_keeps_its_lease(
    kube: Client,
    cluster: LocalCluster,
    namespace: str,
    fake_nodes: Callable[..., list[str]],
    engines: Callable[..., EngineProcess],
) -> None:
    fake_nodes(1, labels={"pool": namespace})
    name = scheduler_name()
    election = leader_election(name, namespace, lease=LEASE, renew=RENEW, retry=RETRY)
    connection = {"kubeconfig": str(cluster.kubeconfig), "qps": QPS, "burst": QPS}
    config = engine_config(
        cluster.kubeconfig, name, leaderElection=election, clientConnection=connection
    )
    engine = engines(config, f"{name}-0")
    wait_until("the leader", lambda: _holder(kube, namespace, name) == engine.name, timeout=60)
    for i in range(PENDING):  # fit no node: each attempt writes a status and an Event
        kube.create(pod(f"p-{i}", namespace, name, nodeSelector={"pool": "none"}))
    deadline = time.monotonic() + WATCH_SECONDS
    while time.monotonic() < deadline:
        assert engine.alive(), engine.log()[-3000:]
        assert _holder(kube, namespace, name) == engine.name
        time.sleep(0.5)
    assert 0 < _unschedulable(kube, namespace) < PENDING  # the writes were still queued
