"""`make demo`: a real local control plane with fake nodes, scheduling a Deployment.

Brings up (or reuses) the cluster in --dir with upstream kube-scheduler, adds three kwok nodes
over three zones, runs a 3-replica Deployment and shows where its pods landed, then prints how
to keep using the cluster. Idempotent: running it again reuses what is there.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from corral.k8s import JSON, ApiError, Client
from corral.testing import LocalCluster
from corral.testing.nodes import FAKE_NODE_LABEL, ZONE_LABEL

NAMESPACE = "demo"
DEPLOYMENT = "hello"


def say(message: str) -> None:
    print(f"[demo] {message}", flush=True)


def deployment(replicas: int) -> JSON:
    labels = {"app": DEPLOYMENT}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": DEPLOYMENT, "namespace": NAMESPACE},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {
                    "containers": [
                        {
                            "name": "app",
                            "image": "registry.k8s.io/pause:3.10",
                            "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}},
                        }
                    ]
                },
            },
        },
    }


def wait_running(kube: Client, count: int, timeout: float = 60.0) -> list[JSON]:
    deadline = time.monotonic() + timeout
    while True:
        pods = kube.list_items("v1", "Pod", NAMESPACE, label_selector=f"app={DEPLOYMENT}")
        running = [p for p in pods if p.get("status", {}).get("phase") == "Running"]
        if len(running) >= count:
            return running
        if time.monotonic() > deadline:
            raise TimeoutError(f"only {len(running)}/{count} pods Running after {timeout:.0f}s")
        time.sleep(0.5)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--dir", type=Path, default=Path(".dev-cluster"))
    args = parser.parse_args()

    started = time.monotonic()
    say(f"starting the local control plane in {args.dir} (reused if already running)")
    cluster = LocalCluster.up(args.dir, with_kube_scheduler=True, progress=True)
    kube = cluster.admin
    if not kube.list_items("v1", "Node", label_selector="=".join(FAKE_NODE_LABEL)):
        say("adding 3 kwok nodes over 3 zones")
        cluster.add_nodes(3, cpu="4", memory="8Gi", zones=3)
    say(f"control plane ready in {time.monotonic() - started:.1f}s")

    try:
        kube.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}})
    except ApiError as exc:
        if not exc.conflict:
            raise
    kube.apply(deployment(3), field_manager="corral-demo")
    say("applied Deployment demo/hello with 3 replicas; waiting for them to run")
    pods = wait_running(kube, 3)
    zones = {
        n["metadata"]["name"]: n["metadata"]["labels"].get(ZONE_LABEL, "-")
        for n in kube.list_items("v1", "Node")
    }
    print(f"\n{'POD':<32} {'NODE':<16} {'ZONE':<8} PHASE")
    for pod in sorted(pods, key=lambda p: str(p["metadata"]["name"])):
        node = pod["spec"]["nodeName"]
        name, phase = pod["metadata"]["name"], pod["status"]["phase"]
        print(f"{name:<32} {node:<16} {zones.get(node, '-'):<8} {phase}")
    kubectl = cluster.binaries / "kubectl"
    print(
        f"""
The cluster keeps running. Use it with:
    export KUBECONFIG={cluster.kubeconfig}
    alias kubectl={kubectl}
    kubectl get nodes,pods -A -o wide
Add fake nodes:   hack/dev-cluster nodes --count 5 --cpu 8 --memory 32Gi --zones 3
Logs:             {cluster.directory / "logs"}
Stop it:          make demo-down
"""
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
