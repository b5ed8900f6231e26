"""Three engines on one config: exactly one schedules, and kill -9 of the leader hands over."""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Callable
from datetime import datetime

from corral.k8s import Client
from corral.testing import LocalCluster
from support.engine_process import (
    EngineProcess,
    all_bound,
    engine_config,
    leader_election,
    pod,
    pods_in,
    scheduler_name,
    wait_until,
)

LEASE, RENEW, RETRY = 4.0, 3.0, 1.0
KILLS = 10


def lease_spec(kube: Client, namespace: str, lease: str) -> dict[str, object]:
    try:
        found = kube.get("coordination.k8s.io/v1", "Lease", lease, namespace)
    except Exception:
        return {}
    return dict(found["spec"])


def holder(kube: Client, namespace: str, lease: str) -> str:
    return str(lease_spec(kube, namespace, lease).get("holderIdentity") or "")


def stamp(spec: dict[str, object], field: str) -> float:
    return datetime.fromisoformat(str(spec[field])).timestamp()


def test_only_the_leader_schedules_and_kills_hand_over(
    kube: Client,
    cluster: LocalCluster,
    namespace: str,
    fake_nodes: Callable[..., list[str]],
    engines: Callable[..., EngineProcess],
) -> None:
    pool = {"pool": namespace}
    fake_nodes(5, cpu="64", memory="128Gi", pods=500, labels=pool)
    name = scheduler_name()
    election = leader_election(name, namespace, lease=LEASE, renew=RENEW, retry=RETRY)
    config = engine_config(cluster.kubeconfig, name, leaderElection=election)
    running = {e.name: e for e in (engines(config, f"{name}-{i}") for i in range(3))}
    wait_until("a leader", lambda: holder(kube, namespace, name) in running, timeout=30)

    stop = threading.Event()
    created: list[str] = []

    def stream() -> None:  # a steady trickle of new pods throughout the kills
        while not stop.is_set():
            pod_name = f"p-{len(created)}"
            kube.create(pod(pod_name, namespace, name, nodeSelector=pool))
            created.append(pod_name)
            time.sleep(0.1)

    creator = threading.Thread(target=stream, daemon=True)
    creator.start()
    takeovers: list[float] = []
    # Lease time between the killed leader's last renewal we saw and the new holder's
    # acquisition: a standby that took a lease before it expired would make it < leaseDuration.
    gaps: list[float] = []
    try:
        for kill in range(KILLS):
            before = lease_spec(kube, namespace, name)
            leader = str(before.get("holderIdentity") or "")
            assert leader in running
            # Standbys never schedule: only the leader's log has bindings since it took over.
            running[leader].kill()  # SIGKILL: no release, the Lease must expire
            killed_at = time.monotonic()
            del running[leader]

            def replaced(old: str = leader) -> bool:
                return holder(kube, namespace, name) not in ("", old)

            wait_until("a new leader", replaced, timeout=30)
            takeovers.append(time.monotonic() - killed_at)
            gaps.append(
                stamp(lease_spec(kube, namespace, name), "acquireTime") - stamp(before, "renewTime")
            )
            replacement = engines(config, f"{name}-r{kill}")  # like a new pod, a new identity
            running[replacement.name] = replacement
            time.sleep(1.0)
    finally:
        stop.set()
        creator.join()

    wait_until("every pod bound", lambda: all_bound(kube, namespace), timeout=60)
    assert len(pods_in(kube, namespace)) == len(created)
    # How long takeovers take is a figure, not an assertion (the host's load moves it); that
    # every one waited for the lease to expire is the contract.
    print(f"takeover seconds after kill -9: {[round(t, 2) for t in takeovers]}")
    assert min(gaps) >= LEASE, f"acquired {[round(g, 2) for g in gaps]} s after the last renewal"
    logs = [e.log() for e in running.values()]
    # A second Binding for a bound pod would be refused by the API server (409): none was.
    assert not any("reason=SchedulerError" in log for log in logs)
    scheduled = kube.list_items("v1", "Event", namespace, field_selector="reason=Scheduled")
    per_pod = Counter(e["involvedObject"]["name"] for e in scheduled)
    assert per_pod
    assert max(per_pod.values()) == 1
    # Exactly one live engine schedules: the others' logs show no binding at all.
    leader = holder(kube, namespace, name)
    standbys = [e for n, e in running.items() if n != leader]
    assert all("Successfully bound" not in e.log() for e in standbys)
