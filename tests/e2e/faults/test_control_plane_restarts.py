"""kube-apiserver or etcd restarted in the middle of a 1,000-pod burst (300 in ``make test``):
every pod is bound exactly once and none is lost.

The burst: 1,000 pending pods exist before the engine starts, so it binds as fast as it can
from its first cycle; the component is restarted once 30% of the Bindings were accepted. The
nodes are exactly full at the end (100 m CPU per pod, 10 CPUs per node): an engine that lost
track of a Binding the server took (it forgets the assumed pod when the answer is lost) would
place another pod on its room (:func:`support.bindings.overcommitted`), and one that leaked an
assumed pod would leave the last pod with nowhere to go.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from corral.k8s import Client
from support.bindings import AuditTail, engine_claims_agree, log_line, verdict, wait_bound
from support.engine_process import EngineProcess, engine_config, pod, scheduler_name
from support.faults import FaultCluster, create_pods

NODES = 10  # 10 CPUs each, 100 pods of 100 m each: exactly full (x fault_scale)
PODS_PER_NODE = 100
RESTART_AT = 0.3


@pytest.mark.parametrize(
    ("component", "crash"),
    [
        pytest.param("kube-apiserver", False, id="apiserver-graceful"),
        pytest.param("kube-apiserver", True, id="apiserver-crash", marks=pytest.mark.faults),
        pytest.param("etcd", False, id="etcd-graceful", marks=pytest.mark.faults),
        pytest.param("etcd", True, id="etcd-crash", marks=pytest.mark.faults),
    ],
)
def test_restart_mid_burst_binds_every_pod_once(
    component: str,
    crash: bool,
    fault_cluster: FaultCluster,
    fault_kube: Client,
    fault_namespace: str,
    fault_nodes: Callable[..., list[str]],
    fault_engines: Callable[..., EngineProcess],
    fault_scale: float,
) -> None:
    ns, kube = fault_namespace, fault_kube
    pool = {"pool": ns}
    nodes = max(1, round(NODES * fault_scale))
    fault_nodes(nodes, cpu="10", memory="64Gi", pods=110, labels=pool)
    name = scheduler_name()
    pods = nodes * PODS_PER_NODE
    created = create_pods(kube, [pod(f"p-{i}", ns, name, nodeSelector=pool) for i in range(pods)])
    tail = AuditTail(fault_cluster.audit_log, ns)
    engine = fault_engines(engine_config(fault_cluster.cluster.kubeconfig, name))
    tail.wait_for(int(pods * RESTART_AT), timeout=120)
    before = tail.poll()
    fault_cluster.cluster.restart(component, crash=crash)
    waited = wait_bound(kube, ns, created, timeout=180)

    result = verdict(kube, ns, created, fault_cluster.audit_log)
    print(log_line(f"{component} {'crash' if crash else 'restart'}", accepted_before=before,
                   bound_after_s=round(waited, 1), summary=result.summary()))  # fmt: skip
    result.check()
    assert not engine_claims_agree(kube, ns, [engine.log()])
    assert engine.alive(), engine.log()[-3000:]
