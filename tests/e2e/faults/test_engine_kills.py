"""The engine SIGKILLed at random points, ~20 times over a run of bursts: every pod is bound
exactly once and none is lost.

One engine (no leader election: the Lease hand-over is test_failover's and the leader tests'),
restarted at once after each kill, as a Deployment's restart policy would. Kills land anywhere:
while informers sync, mid-burst with Bindings in flight, while idle. Each incarnation logs to
its own file; their "Successfully bound" lines together must agree with the API. The nodes are
exactly full at the end (see test_control_plane_restarts).
"""

from __future__ import annotations

import random
import signal
import threading
import time
from collections.abc import Callable

import pytest

from corral.k8s import Client
from support.bindings import engine_claims_agree, log_line, verdict, wait_bound
from support.engine_process import EngineProcess, engine_config, pod, scheduler_name
from support.faults import FaultCluster, create_pods

KILLS = 20
BURSTS = 10
BURST = 100  # pods per burst: 1,000 in all
NODES = 10  # 10 CPUs each, 100 m per pod: exactly full


@pytest.mark.faults
def test_engine_killed_at_random_points(
    fault_cluster: FaultCluster,
    fault_kube: Client,
    fault_namespace: str,
    fault_nodes: Callable[..., list[str]],
    fault_engines: Callable[..., EngineProcess],
) -> None:
    ns, kube = fault_namespace, fault_kube
    pool = {"pool": ns}
    fault_nodes(NODES, cpu="10", memory="64Gi", pods=110, labels=pool)
    name = scheduler_name()
    config = engine_config(fault_cluster.cluster.kubeconfig, name)
    rng = random.Random(36)
    created: dict[str, str] = {}
    done = threading.Event()

    def bursts() -> None:
        for burst in range(BURSTS):
            objects = [pod(f"b{burst}-{i}", ns, name, nodeSelector=pool) for i in range(BURST)]
            created.update(create_pods(kube, objects))
            time.sleep(rng.uniform(1.0, 4.0))
        done.set()

    creator = threading.Thread(target=bursts, daemon=True)
    creator.start()
    incarnations = [fault_engines(config, "engine-0")]
    uptimes = []
    for kill in range(KILLS):
        uptime = rng.uniform(0.5, 4.0)  # from just after start (informers syncing) to mid-burst
        time.sleep(uptime)
        uptimes.append(round(uptime, 2))
        incarnations[-1].kill(signal.SIGKILL)
        incarnations.append(fault_engines(config, f"engine-{kill + 1}"))
    creator.join()
    assert done.is_set()

    waited = wait_bound(kube, ns, created, timeout=180)
    result = verdict(kube, ns, created, fault_cluster.audit_log)
    print(log_line("engine SIGKILL", kills=KILLS, uptimes=uptimes,
                   bound_after_s=round(waited, 1), summary=result.summary()))  # fmt: skip
    result.check()
    assert not engine_claims_agree(kube, ns, [e.log() for e in incarnations])
    assert incarnations[-1].alive(), incarnations[-1].log()[-3000:]
