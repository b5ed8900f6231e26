"""The control plane really runs workloads: KCM, upstream kube-scheduler and kwok together."""

from __future__ import annotations

import time
from collections.abc import Callable

from corral.k8s import JSON, Client


def wait_until(what: str, check: Callable[[], bool], timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, f"timed out after {timeout:.0f}s waiting for {what}"
        time.sleep(0.25)


def deployment(name: str, namespace: str, replicas: int, node_selector: dict[str, str]) -> JSON:
    labels = {"app": name}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {
                    "nodeSelector": node_selector,
                    "containers": [{"name": "app", "image": "registry.k8s.io/pause:3.10"}],
                },
            },
        },
    }


def test_deployment_is_scheduled_run_and_garbage_collected(
    kube: Client, namespace: str, fake_nodes: Callable[..., list[str]]
) -> None:
    pool = {"test-pool": namespace}  # other tests' nodes may share the cluster
    nodes = set(fake_nodes(2, cpu="4", memory="8Gi", labels=pool))
    kube.create(deployment("web", namespace, 3, pool))

    def pods() -> list[JSON]:
        return kube.list_items("v1", "Pod", namespace, label_selector="app=web")

    def all_running() -> bool:
        current = pods()
        return len(current) == 3 and all(p["status"].get("phase") == "Running" for p in current)

    wait_until("3 Running pods", all_running)
    placed = pods()
    # Bound by upstream kube-scheduler (default-scheduler) to our kwok nodes.
    assert {p["spec"]["nodeName"] for p in placed} <= nodes
    assert all(p["spec"]["schedulerName"] == "default-scheduler" for p in placed)
    names = {p["metadata"]["name"] for p in placed}

    def scheduled_events() -> bool:
        events = kube.list_items("v1", "Event", namespace, field_selector="reason=Scheduled")
        return {e["involvedObject"]["name"] for e in events} >= names

    # The scheduler's event broadcaster writes Events after the binding, on its own goroutine:
    # on a busy machine they may land after kwok has the pods Running.
    wait_until("a Scheduled Event for each pod", scheduled_events)
    assert len(kube.list_items("apps/v1", "ReplicaSet", namespace)) == 1

    kube.delete("apps/v1", "Deployment", "web", namespace)
    wait_until(
        "the ReplicaSet and Pods to be garbage-collected",
        lambda: not kube.list_items("apps/v1", "ReplicaSet", namespace) and not pods(),
    )
