"""Cluster preparation shared by the benchmark and the conformance harness."""

from __future__ import annotations

import contextlib
import signal
import time
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from types import FrameType

from corral.k8s import JSON, ApiError, Client
from corral.testing.nodes import wait_ready

# Taints of the node lifecycle. The TaintNodesByCondition admission plugin gives every new node
# node.kubernetes.io/not-ready:NoSchedule; kube-controller-manager removes it once the node is
# Ready, one PATCH per node under its default 20 QPS: minutes for 500 nodes. Measuring before
# then confines pods to the nodes already cleared (10x slower anti-affinity), and a taint
# vanishing between two schedulers' decisions would change the state under the conformance
# comparison. So the harness removes it itself from Ready nodes, as the controller would.
LIFECYCLE_TAINT_PREFIX = "node.kubernetes.io/"
UNSCHEDULABLE_TAINT = "node.kubernetes.io/unschedulable"


def _ready(node: JSON) -> bool:
    return any(
        c.get("type") == "Ready" and c.get("status") == "True"
        for c in node.get("status", {}).get("conditions") or []
    )


def _lifecycle_tainted(node: JSON) -> bool:
    """A lifecycle taint still to lift; a cordoned node's ``node.kubernetes.io/unschedulable``
    is not one (the node lifecycle controller puts it back at once)."""
    spec = node.get("spec", {})
    return any(
        t.get("key", "").startswith(LIFECYCLE_TAINT_PREFIX)
        and not (spec.get("unschedulable") and t.get("key") == UNSCHEDULABLE_TAINT)
        for t in spec.get("taints") or []
    )


def make_schedulable(client: Client, names: list[str], *, timeout: float | None = None) -> None:
    """Wait until the nodes are Ready, then lift the lifecycle taints ourselves:
    kube-controller-manager clears them node by node (about 110 s for 500 nodes)."""
    wait_ready(client, names, timeout=timeout or max(120.0, len(names) / 10))
    clear_lifecycle_taints(client, names, timeout=max(300.0, len(names) / 5))


def clear_lifecycle_taints(client: Client, names: Iterable[str], *, timeout: float = 300.0) -> None:
    """Remove node-lifecycle taints from the Ready nodes among ``names``; return once none of
    them carries one."""
    pending = set(names)
    deadline = time.monotonic() + timeout

    def clear(node: JSON) -> None:
        keep = [
            t
            for t in node["spec"].get("taints") or []
            if not t.get("key", "").startswith(LIFECYCLE_TAINT_PREFIX)
        ]
        with contextlib.suppress(ApiError):  # the controller may win the race: fine
            client.request(
                "PATCH",
                f"/api/v1/nodes/{node['metadata']['name']}",
                body={"spec": {"taints": keep or None}},
                content_type="application/merge-patch+json",
            )

    while True:
        tainted = [
            n
            for n in client.list_items("v1", "Node")
            if n["metadata"]["name"] in pending and _lifecycle_tainted(n)
        ]
        if not tainted:
            return
        if time.monotonic() > deadline:
            raise TimeoutError(
                f"{len(tainted)} node(s) still carry node.kubernetes.io/* taints after "
                f"{timeout:.0f}s, e.g. {[n['metadata']['name'] for n in tainted[:3]]}"
            )
        with ThreadPoolExecutor(max_workers=16) as pool:
            list(pool.map(clear, [n for n in tainted if _ready(n)]))
        time.sleep(0.2)


def _interrupt(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt(f"signal {signum}")


def interruptible() -> None:
    """Make SIGTERM and SIGINT raise KeyboardInterrupt, so every started cluster is torn
    down by its ``finally`` (a background job started by a shell ignores SIGINT otherwise)."""
    for sig in (signal.SIGTERM, signal.SIGINT):
        with contextlib.suppress(ValueError):  # not the main thread
            signal.signal(sig, _interrupt)
