"""A node deleted while its pods bind: every other pod is bound exactly once to a live node, none
is lost, and what was bound to the deleted node is counted.

The API server takes a Binding to a node that no longer exists (it checks the pod, not the
node), and kube-controller-manager's pod garbage collector then deletes such pods. So the
Bindings to the deleted node that arrive after its deletion are the window: pods the engine
had placed before it saw the deletion. They are measured; every other pod must be bound, once.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable

from corral.k8s import Client
from support.bindings import (
    AuditTail,
    bindings,
    engine_claims_agree,
    log_line,
    node_deletions,
    verdict,
    wait_bound,
)
from support.engine_process import EngineProcess, engine_config, pod, scheduler_name
from support.faults import FaultCluster, create_pods

PODS = 400  # x fault_scale
DELETE_AT = 0.25  # of the pods' Bindings accepted when the node goes


def test_node_deleted_while_its_pods_bind(
    fault_cluster: FaultCluster,
    fault_kube: Client,
    fault_namespace: str,
    fault_nodes: Callable[..., list[str]],
    fault_engines: Callable[..., EngineProcess],
    fault_scale: float,
) -> None:
    ns, kube = fault_namespace, fault_kube
    pool = {"pool": ns}
    pods = round(PODS * fault_scale)
    cpu = str(max(1, round(16 * fault_scale)))  # the pods fit on 3 of the 4 nodes
    nodes = fault_nodes(4, cpu=cpu, memory="64Gi", pods=200, labels=pool)
    name = scheduler_name()
    created = create_pods(kube, [pod(f"p-{i}", ns, name, nodeSelector=pool) for i in range(pods)])
    tail = AuditTail(fault_cluster.audit_log, ns)
    engine = fault_engines(engine_config(fault_cluster.cluster.kubeconfig, name))
    tail.wait_for(round(pods * DELETE_AT), timeout=120)
    so_far = Counter(b.node for b in bindings(fault_cluster.audit_log, ns) if b.code == 201)
    victim = max(nodes, key=lambda n: (so_far[n], n))  # the node being filled now
    kube.delete("v1", "Node", victim)

    # Pods bound to the victim may be deleted by the pod garbage collector at any time now.
    audit = fault_cluster.audit_log

    def on_victim() -> set[str]:
        return {b.pod for b in bindings(audit, ns) if b.code == 201 and b.node == victim}

    waited = wait_bound(kube, ns, set(created) - on_victim(), timeout=120)
    lost_with_node = on_victim()
    survivors = {n: uid for n, uid in created.items() if n not in lost_with_node}
    result = verdict(kube, ns, survivors, audit, gone_nodes=frozenset({victim}))
    (deletion,) = [d for d in node_deletions(audit) if d.name == victim and d.code == 200]
    to_victim = [b for b in bindings(audit, ns) if b.node == victim]
    late = [b for b in to_victim if b.received > deletion.received]
    print(log_line(
        "node deleted",
        bound_to_victim=len(lost_with_node),
        late_bindings=len(late),
        late_accepted=sum(b.code == 201 for b in late),
        last_late_after_s=round(max((b.received - deletion.received for b in late), default=0), 3),
        bound_after_s=round(waited, 1),
        summary=result.summary(),
    ))  # fmt: skip
    result.check()
    # Each pod bound to the victim has that one accepted Binding and no other.
    for b in bindings(audit, ns):
        if b.code == 201 and b.pod in lost_with_node:
            assert b.node == victim, b
    assert not engine_claims_agree(kube, ns, [engine.log()], ignore=lost_with_node)
    assert engine.alive(), engine.log()[-3000:]
