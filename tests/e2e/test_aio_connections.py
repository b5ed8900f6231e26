"""The asyncio client's connections to a real API server: a burst of concurrent requests shares
a bounded pool of kept-alive connections (each new one is a TLS handshake), and a watch has a
connection of its own, so it keeps delivering while the requests wait their turn."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from urllib.parse import urlparse

from corral.k8s import Client
from corral.k8s.aio import REQUEST_CONNECTIONS, AsyncClient

BURST = 300


def connections_to(port: int) -> int:
    """This process's established TCP connections to ``port`` (from /proc)."""
    inodes = set()
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[len("socket:[") : -1])
    count = 0
    for table in ("/proc/self/net/tcp", "/proc/self/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            remote_port = int(fields[2].rsplit(":", 1)[1], 16)
            if remote_port == port and fields[3] == "01" and fields[9] in inodes:
                count += 1
    return count


def test_a_burst_shares_a_bounded_pool_and_the_watch_goes_on(kube: Client, namespace: str) -> None:
    port = urlparse(kube.server).port or 443
    before = connections_to(port)  # the synchronous client's own

    async def main() -> tuple[int, list[str]]:
        client = AsyncClient(kube, qps=100_000, burst=100_000)
        seen: list[str] = []
        created = asyncio.Event()

        async def watch() -> None:
            path = f"/api/v1/namespaces/{namespace}/configmaps"
            async for event in client.watch(path, {"timeoutSeconds": 60}):
                seen.append(event["object"]["metadata"]["name"])
                if "during-the-burst" in seen:
                    created.set()
                    return

        watcher = asyncio.create_task(watch())
        try:
            await asyncio.sleep(0.5)  # the watch is open
            path = f"/api/v1/namespaces/{namespace}"
            burst = [client.request("GET", path) for _ in range(BURST)]
            body = {"apiVersion": "v1", "kind": "ConfigMap",
                    "metadata": {"name": "during-the-burst", "namespace": namespace}}  # fmt: skip
            write = client.request("POST", f"{path}/configmaps", body=body)
            await asyncio.gather(write, *burst)
            await asyncio.wait_for(created.wait(), 30)
            return connections_to(port) - before, seen
        finally:
            watcher.cancel()
            await client.close()

    opened, seen = asyncio.run(main())
    assert "during-the-burst" in seen
    # At most the bounded pool and the watch's own; unbounded, the burst opened ~BURST.
    assert 2 <= opened <= REQUEST_CONNECTIONS + 1
