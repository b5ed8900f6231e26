"""The operator SIGKILLed during rollouts: a profile's config changes again and again while its
local engines schedule a stream of pods, and each change is cut short by killing the operator
and starting another. Every pod is bound exactly once and none is lost; the profile converges
(Ready at its last generation, the Deployment rolled out to the last config); no engine of a
killed operator is left running (they die with it, PR_SET_PDEATHSIG).
"""

from __future__ import annotations

import random
import signal
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from corral.k8s import Client
from corral.testing.processes import processes_mentioning
from support.bindings import engine_claims_agree, log_line, verdict, wait_bound
from support.engine_process import pod
from support.faults import FaultCluster
from support.operator_process import API, KIND, ROOT, OperatorProcess, eventually, is_ready, profile

ROLLOUTS = 6
POD_INTERVAL = 0.1


@pytest.fixture
def crd(fault_cluster: FaultCluster) -> None:
    fault_cluster.cluster.kubectl("apply", "-k", str(ROOT / "config" / "crd"))

    def established() -> bool:
        obj = fault_cluster.kube.get(
            "apiextensions.k8s.io/v1", "CustomResourceDefinition", "schedulerprofiles.corral.dev"
        )
        conditions = (obj.get("status") or {}).get("conditions") or []
        return any(c["type"] == "Established" and c["status"] == "True" for c in conditions)

    eventually(established, what="the CRD to be established")


@pytest.fixture
def operators(
    fault_cluster: FaultCluster, crd: None, tmp_path: Path
) -> Iterator[Callable[[], OperatorProcess]]:
    started: list[OperatorProcess] = []
    engine_dir = tmp_path / "engines"

    def start() -> OperatorProcess:
        op = OperatorProcess(
            fault_cluster.cluster,
            tmp_path / f"operator-{len(started)}.log",
            ["--resync=5", "--local-engines", f"--engine-dir={engine_dir}"],
        )
        started.append(op.start())
        return op

    yield start
    for op in started:
        op.stop()


def deployment_rolled_out(kube: Client, namespace: str, name: str) -> bool:
    found = kube.list_items(
        "apps/v1", "Deployment", namespace, label_selector=f"corral.dev/profile={name}"
    )
    if len(found) != 1:
        return False
    d = found[0]
    status, want = d.get("status") or {}, d["spec"]["replicas"]
    return bool(
        status.get("observedGeneration") == d["metadata"]["generation"]
        and status.get("updatedReplicas") == want
        and status.get("availableReplicas") == want
        and status.get("replicas") == want
    )


@pytest.mark.faults
def test_operator_killed_during_rollouts(
    fault_cluster: FaultCluster,
    fault_kube: Client,
    fault_namespace: str,
    fault_nodes: Callable[..., list[str]],
    operators: Callable[[], OperatorProcess],
    tmp_path: Path,
) -> None:
    kube, ns = fault_kube, fault_namespace
    name = f"roll-{ns}"
    pool = {"pool": ns}
    fault_nodes(3, cpu="64", memory="256Gi", pods=500, labels=pool)
    fault_nodes(2, cpu="8", memory="16Gi", pods=50)  # where the Deployment's own pods go
    rng = random.Random(36)
    operator = operators()
    tenancy = {"namespaces": [ns], "nodeSelector": pool}
    kube.create(profile(name, ns, replicas=2, tenancy=tenancy, podMaxBackoffSeconds=10))
    try:
        eventually(lambda: is_ready(kube, name), timeout=90, what=f"{name} Ready")
        stop = threading.Event()
        created: dict[str, str] = {}

        def stream() -> None:
            while not stop.is_set():
                made = kube.create(pod(f"p-{len(created)}", ns, name))
                created[made["metadata"]["name"]] = made["metadata"]["uid"]
                time.sleep(POD_INTERVAL)

        creator = threading.Thread(target=stream, daemon=True)
        creator.start()
        kills = []
        try:
            for rollout in range(ROLLOUTS):
                # Each change renders a new config (hash), so engines and Deployment roll.
                patch = {"spec": {"podMaxBackoffSeconds": 11 + rollout}}
                kube.request("PATCH", f"/apis/{API}/schedulerprofiles/{name}", body=patch,
                             content_type="application/merge-patch+json")  # fmt: skip
                delay = rng.uniform(0.2, 3.0)
                time.sleep(delay)
                kills.append(round(delay, 2))
                operator.stop(signal.SIGKILL)
                operator = operators()
            eventually(lambda: is_ready(kube, name), timeout=120, what=f"{name} Ready at last")
            time.sleep(3.0)
        finally:
            stop.set()
            creator.join()

        waited = wait_bound(kube, ns, created, timeout=120)
        result = verdict(kube, ns, created, fault_cluster.audit_log)
        print(log_line("operator SIGKILL during rollouts", rollouts=ROLLOUTS, kill_after_s=kills,
                       bound_after_s=round(waited, 1), summary=result.summary()))  # fmt: skip
        result.check()
        final = kube.get(API, KIND, name)
        assert final["status"]["observedGeneration"] == final["metadata"]["generation"]
        eventually(lambda: deployment_rolled_out(kube, ns, name), timeout=120,
                   what="the Deployment rolled out")  # fmt: skip
        engine_dir = str(tmp_path / "engines") + "/"
        # Exactly the two engines of the last operator: none of a killed one is left.
        eventually(lambda: len(processes_mentioning(engine_dir)) == 2, timeout=30,
                   what="only the last operator's two engines")  # fmt: skip
        logs = [p.read_text(errors="replace") for p in (tmp_path / "engines").rglob("*.log")]
        assert not engine_claims_agree(kube, ns, logs)
    finally:
        kube.delete(API, KIND, name)
