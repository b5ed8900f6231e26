"""API Priority and Fairness throttling the engine (429 with Retry-After) at a low concurrency
limit: every pod is bound exactly once, none is lost.

The engine runs as a ServiceAccount of its own (system:masters is exempt from APF), matched by
a FlowSchema to a PriorityLevel of one concurrency share that may not borrow and rejects what
does not fit: a few seats for everything the engine does (lists, watches' start, Bindings,
Events, status patches), so a 300-pod burst (100 in ``make test``) is answered with 429s.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import yaml

from corral.k8s import ApiError, Client
from corral.k8s.kubeconfig import token_kubeconfig
from support.bindings import engine_claims_agree, log_line, verdict, wait_bound
from support.engine_process import EngineProcess, engine_config, pod, scheduler_name
from support.faults import FaultCluster, create_pods, get_text

NODES = 3  # 10 CPUs each, 100 pods of 100 m each: exactly full (x fault_scale)
FLOWCONTROL = "flowcontrol.apiserver.k8s.io/v1"


@pytest.fixture
def throttled_account(fault_kube: Client, fault_namespace: str) -> Iterator[str]:
    """A ServiceAccount with cluster-admin's rights whose requests APF holds to ~3 seats."""
    ns, kube, name = fault_namespace, fault_kube, "throttled"
    kube.create({"apiVersion": "v1", "kind": "ServiceAccount",
                 "metadata": {"name": name, "namespace": ns}})  # fmt: skip
    binding = {
        "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
        "metadata": {"name": f"{ns}-throttled"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                    "name": "cluster-admin"},
        "subjects": [{"kind": "ServiceAccount", "name": name, "namespace": ns}],
    }  # fmt: skip
    level = {
        "apiVersion": FLOWCONTROL, "kind": "PriorityLevelConfiguration",
        "metadata": {"name": f"{ns}-throttled"},
        "spec": {"type": "Limited", "limited": {
            "nominalConcurrencyShares": 1, "lendablePercent": 0, "borrowingLimitPercent": 0,
            "limitResponse": {"type": "Reject"}}},
    }  # fmt: skip
    schema = {
        "apiVersion": FLOWCONTROL, "kind": "FlowSchema",
        "metadata": {"name": f"{ns}-throttled"},
        "spec": {
            "priorityLevelConfiguration": {"name": f"{ns}-throttled"},
            "matchingPrecedence": 50,  # before every default schema but exempt and probes
            "distinguisherMethod": {"type": "ByUser"},
            "rules": [{
                "subjects": [{"kind": "ServiceAccount",
                              "serviceAccount": {"name": name, "namespace": ns}}],
                "resourceRules": [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"],
                                   "clusterScope": True, "namespaces": ["*"]}],
                "nonResourceRules": [{"verbs": ["*"], "nonResourceURLs": ["*"]}],
            }],
        },
    }  # fmt: skip
    made = [kube.create(obj) for obj in (binding, level, schema)]
    try:
        deadline = time.monotonic() + 30
        while True:  # the API server's APF controller has read the schema (not dangling)
            status = kube.get(FLOWCONTROL, "FlowSchema", f"{ns}-throttled").get("status") or {}
            conditions = {c["type"]: c["status"] for c in status.get("conditions") or []}
            if conditions.get("Dangling") == "False":
                break
            assert time.monotonic() < deadline, "APF never took the FlowSchema"
            time.sleep(0.2)
        yield name
    finally:
        for obj in reversed(made):
            try:
                kube.delete(obj["apiVersion"], obj["kind"], obj["metadata"]["name"])
            except ApiError as exc:
                if not exc.not_found:
                    raise


def rejected(kube: Client, level: str) -> float:
    """kube-apiserver's count of requests APF rejected at ``level``."""
    text = get_text(kube, "/metrics")
    total = 0.0
    for line in text.splitlines():
        if line.startswith("apiserver_flowcontrol_rejected_requests_total{") and (
            f'priority_level="{level}"' in line
        ):
            total += float(line.rsplit(" ", 1)[1])
    return total


@pytest.mark.faults
def test_apf_throttling_binds_every_pod_once(
    fault_cluster: FaultCluster,
    fault_kube: Client,
    fault_namespace: str,
    throttled_account: str,
    fault_nodes: Callable[..., list[str]],
    fault_engines: Callable[..., EngineProcess],
    tmp_path: Path,
    fault_scale: float,
) -> None:
    ns, kube = fault_namespace, fault_kube
    pool = {"pool": ns}
    nodes = max(1, round(NODES * fault_scale))
    fault_nodes(nodes, cpu="10", memory="64Gi", pods=110, labels=pool)
    token = kube.request_token(ns, throttled_account)
    kubeconfig = tmp_path / "throttled.kubeconfig"
    kubeconfig.write_text(yaml.safe_dump(token_kubeconfig(kube.server, kube.ca_file, token, "t")))
    name = scheduler_name()
    created = create_pods(
        kube, [pod(f"p-{i}", ns, name, nodeSelector=pool) for i in range(100 * nodes)]
    )
    engine = fault_engines(engine_config(kubeconfig, name))
    waited = wait_bound(kube, ns, created, timeout=240)
    rejections = rejected(kube, f"{ns}-throttled")

    result = verdict(kube, ns, created, fault_cluster.audit_log)
    throttled = sum(n for k, n in result.refused.items() if k.startswith("429"))
    print(log_line("APF throttling", rejected=rejections, throttled_bindings=throttled,
                   bound_after_s=round(waited, 1), summary=result.summary()))  # fmt: skip
    result.check()
    assert rejections > 0, "APF rejected nothing: the fault did not happen"
    assert not engine_claims_agree(kube, ns, [engine.log()])
    assert engine.alive(), engine.log()[-3000:]
