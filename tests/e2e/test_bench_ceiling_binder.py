"""The ceiling's binder (bench/ceiling_binder) on the shared control plane: it binds the pods of
its scheduler name that exist before it starts as well as those created after."""

from __future__ import annotations

import subprocess
import time
import uuid
from collections.abc import Callable
from typing import Any

import pytest
from bench.schedulers import ceiling_argv

from corral.k8s.client import Client
from corral.testing.controlplane import LocalCluster

NAMESPACE_ARG = 4  # ceiling-binder SERVER TOKEN CAFILE NAMESPACES SCHEDULER CONCURRENCY NODES


def _pod(name: str, namespace: str, scheduler: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "schedulerName": scheduler,
            "containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10"}],
        },
    }


def _node_of(kube: Client, namespace: str, name: str) -> str | None:
    node: str | None = kube.get("v1", "Pod", name, namespace)["spec"].get("nodeName")
    return node


@pytest.mark.timeout(180)
def test_the_ceiling_binds_pods_created_before_and_after_it_starts(
    cluster: LocalCluster, kube: Client, namespace: str, fake_nodes: Callable[..., list[str]]
) -> None:
    scheduler = f"ceiling-{uuid.uuid4().hex[:6]}"  # no other scheduler of the cluster takes these
    fake_nodes(1)  # bindings need a node to name (the binder takes every node of the cluster)
    kube.create(_pod("before", namespace, scheduler))  # the race the driver leaves open
    argv = ceiling_argv(cluster, scheduler)
    argv[NAMESPACE_ARG] = namespace
    with subprocess.Popen(argv, stdout=subprocess.PIPE, text=True) as binder:
        try:
            assert binder.stdout is not None
            assert binder.stdout.readline().strip() == "ready"
            kube.create(_pod("after", namespace, scheduler))
            deadline = time.monotonic() + 30
            placed: dict[str, str | None] = {}
            while time.monotonic() < deadline:
                placed = {n: _node_of(kube, namespace, n) for n in ("before", "after")}
                if all(placed.values()):
                    break
                time.sleep(0.2)
            assert all(placed.values()), placed
        finally:
            binder.kill()
