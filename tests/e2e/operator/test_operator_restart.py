"""Restarts: a restarted operator writes nothing to converged children; one killed mid-flight
converges after a restart with nothing orphaned or duplicated."""

from __future__ import annotations

import signal
import time
from typing import Any

from corral.k8s import Client
from support.operator_process import API, KIND, children, eventually, is_ready, profile, versions


def test_restart_with_ready_profiles_writes_nothing(
    kube: Client, namespace: str, start_operator: Any, profiles: Any
) -> None:
    names = [profiles("rst") for _ in range(20)]
    first = start_operator()
    for name in names:
        kube.create(profile(name, namespace, replicas=1))
    for name in names:
        eventually(lambda: is_ready(kube, name), timeout=90, what=f"{name} Ready")  # noqa: B023
    before = {n: versions(kube, n) for n in names}
    statuses = {n: kube.get(API, KIND, n)["metadata"]["resourceVersion"] for n in names}
    first.stop()

    second = start_operator()
    # Every profile is reconciled at start; wait for a resync on top (5 s) to be sure.
    eventually(lambda: "Ready" in second.log() or time.sleep(8) is None, timeout=20)
    time.sleep(8)
    assert second.process is not None
    assert second.process.poll() is None
    assert {n: versions(kube, n) for n in names} == before
    # Not even the status was rewritten.
    assert {n: kube.get(API, KIND, n)["metadata"]["resourceVersion"] for n in names} == statuses


def test_killed_mid_reconcile_converges_after_restart(
    kube: Client, namespace: str, start_operator: Any, profiles: Any
) -> None:
    names = [profiles("kill") for _ in range(50)]
    first = start_operator()
    for name in names:
        kube.create(profile(name, namespace, replicas=1))
    eventually(lambda: any(children(kube, n) for n in names[:10]), timeout=30, what="work started")
    first.stop(signal.SIGKILL)
    start_operator()
    for name in names:
        eventually(lambda: is_ready(kube, name), timeout=180, what=f"{name} Ready")  # noqa: B023
    for name in names:
        kids = children(kube, name)
        # Exactly the rendered set for a 1-replica profile: no PDB, one of everything else.
        assert sorted(k[0] for k in kids) == sorted(
            [
                "ClusterRole",
                "ClusterRoleBinding",
                "ConfigMap",
                "Deployment",
                "Role",
                "RoleBinding",
                "Service",
                "ServiceAccount",
            ]
        ), name
    deployments = kube.list_items(
        "apps/v1", "Deployment", namespace, label_selector="app.kubernetes.io/managed-by=corral"
    )
    assert len(deployments) == len(names)
