"""The ceiling: how fast this control plane accepts pods and bindings with no scheduler at all.

A minimal client, authenticated as ``system:kube-scheduler`` (so API Priority and Fairness
treats it exactly like a scheduler: the ``kube-scheduler`` FlowSchema, ``workload-high``),
posts ``pods/binding`` for pods nobody schedules, round-robin over the nodes, as fast as the
API server answers (``CONCURRENCY`` in flight, no client-side limit). Three figures:

- ``create``: pods created per second (admin, the same way the workloads create them);
- ``bind``: bindings per second for pods that already exist;
- ``pipeline``: the workloads' measurement with the scheduler replaced by a minimal one: pods
  created as in the workloads (``bench.driver``), bound by ``ceiling_binder/main.go`` (Go,
  standard library only, built on first use) which watches for them and binds each at once
  with ``CONCURRENCY`` in flight; pods bound per second from the first creation to the last
  binding. This is the upper bound for any scheduler on this machine at that moment. (A
  Python binder was tried first: on 2 cores it, not the API server, was the limit, below
  upstream kube-scheduler's own throughput.)

The protocol measures the ceiling differently (``bench.schedulers``, kind ``ceiling``): the
same binder in place of the scheduler of an API-bound workload's run, on the scheduler's CPU,
between the pair's two schedulers.

``create`` and ``bind`` are measured from this Python process, so they too are lower bounds of
what the API server accepts.

The machine is shared, so the ceiling is measured at the start of every repetition.
"""

from __future__ import annotations

import asyncio
import contextlib
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Final

from bench.cluster import make_schedulable
from bench.driver import BoundWatcher, create_all
from bench.schedulers import go_binder
from bench.workloads import JSON, MEASURED_NAMESPACE, default_pod
from corral.k8s import Client
from corral.k8s.aio import AsyncClient
from corral.testing import LocalCluster

CONCURRENCY: Final = 32
NOBODY: Final = "no-scheduler"


def _binding(name: str, node: str) -> JSON:
    return {
        "apiVersion": "v1",
        "kind": "Binding",
        "metadata": {"name": name},
        "target": {"apiVersion": "v1", "kind": "Node", "name": node},
    }


async def _bind_all(client: AsyncClient, names: list[str], nodes: list[str]) -> None:
    semaphore = asyncio.Semaphore(CONCURRENCY)

    async def one(i: int, name: str) -> None:
        async with semaphore:
            path = f"/api/v1/namespaces/{MEASURED_NAMESPACE}/pods/{name}/binding"
            await client.request("POST", path, body=_binding(name, nodes[i % len(nodes)]))

    await asyncio.gather(*(one(i, n) for i, n in enumerate(names)))


async def _pipeline_measure(cluster: LocalCluster, admin: AsyncClient, pods: list[JSON]) -> float:
    nodes_file = cluster.directory / "ceiling-nodes.txt"
    nodes_file.write_text(
        "\n".join(n["metadata"]["name"] for n in cluster.admin.list_items("v1", "Node"))
    )
    identity = Client.from_kubeconfig(str(cluster.directory / "scheduler.kubeconfig"))
    token = (identity.authorization() or "").removeprefix("Bearer ")
    binder = subprocess.Popen(
        [str(go_binder()), identity.server, token, identity.ca_file or "", MEASURED_NAMESPACE,
         NOBODY, str(CONCURRENCY), str(nodes_file)],
        stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    watch_client = AsyncClient(cluster.admin, qps=0, burst=1)
    try:
        assert binder.stdout is not None
        if binder.stdout.readline().strip() != "ready":
            raise RuntimeError("the ceiling's binder process did not start")
        watcher = BoundWatcher(watch_client, MEASURED_NAMESPACE)
        await watcher.prime()
        watching = asyncio.create_task(watcher.run())
        t0 = time.monotonic()
        await create_all(admin, pods, CONCURRENCY)
        names = {p["metadata"]["name"] for p in pods}
        deadline = time.monotonic() + 120
        while not names <= watcher.bound.keys() and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        watching.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await watching
        bound = [t for n, t in watcher.bound.items() if n in names]
        return len(bound) / (max(bound) - t0) if bound else 0.0
    finally:
        binder.kill()
        binder.wait(timeout=10)
        await watch_client.close()


async def _measure(cluster: LocalCluster, nodes: list[str], pods: int) -> dict[str, float]:
    admin = AsyncClient(cluster.admin, qps=0, burst=1)
    scheduler = Client.from_kubeconfig(str(cluster.directory / "scheduler.kubeconfig"))
    binder = AsyncClient(scheduler, qps=0, burst=1)
    try:
        first = [default_pod(f"a-{i}", MEASURED_NAMESPACE, NOBODY) for i in range(pods)]
        t = time.monotonic()
        await create_all(admin, first, CONCURRENCY)
        create_rate = pods / (time.monotonic() - t)
        t = time.monotonic()
        await _bind_all(binder, [p["metadata"]["name"] for p in first], nodes)
        bind_rate = pods / (time.monotonic() - t)
        second = [default_pod(f"b-{i}", MEASURED_NAMESPACE, NOBODY) for i in range(pods)]
        pipeline_rate = await _pipeline_measure(cluster, admin, second)
    finally:
        await admin.close()
        await binder.close()
    return {"create": create_rate, "bind": bind_rate, "pipeline": pipeline_rate}


def measure(nodes: int, pods: int) -> dict[str, float]:
    """Pods/s for create, bind and pipeline on a fresh cluster with ``nodes`` kwok nodes."""
    with tempfile.TemporaryDirectory(prefix="corral-bench-ceiling-") as tmp:
        cluster = LocalCluster.up(Path(tmp))
        try:
            cluster.admin.create(
                {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": MEASURED_NAMESPACE}}
            )
            names = cluster.add_nodes(nodes, cpu="4", memory="32Gi", pods=110, wait=False)
            make_schedulable(cluster.admin, names)
            return asyncio.run(_measure(cluster, names, pods))
        finally:
            cluster.down()
