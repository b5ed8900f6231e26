"""Pod-level requests (``spec.resources.requests``, PodLevelResources: beta and on by default in
the pinned API server) against the real control plane: counted, never overcommitted."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from corral.k8s import JSON, Client
from corral.testing import LocalCluster
from support.engine_process import (
    EngineProcess,
    create_all,
    engine_config,
    pod,
    pods_in,
    scheduler_name,
    wait_until,
)


def _pod_level(name: str, namespace: str, scheduler: str, cpu: str, pool: JSON) -> JSON:
    # No container requests: before the fix the pod counted as requesting nothing.
    return pod(name, namespace, scheduler, requests={}, nodeSelector=pool,
               resources={"requests": {"cpu": cpu}})  # fmt: skip


@pytest.mark.since_kube("1.34", reason="PodLevelResources is alpha and off in 1.33")
def test_pod_level_requests_fit_nowhere_and_are_not_overcommitted(
    kube: Client,
    cluster: LocalCluster,
    namespace: str,
    fake_nodes: Callable[..., list[str]],
    engines: Callable[..., EngineProcess],
) -> None:
    pool = {"pool": namespace}
    nodes = fake_nodes(2, cpu="2", memory="4Gi", labels=pool)
    name = scheduler_name()
    engines(engine_config(cluster.kubeconfig, name))
    create_all(kube, [_pod_level("big", namespace, name, "3", pool)])
    stored = kube.get("v1", "Pod", "big", namespace)
    resources = stored["spec"].get("resources", {})
    assert resources.get("requests") == {"cpu": "3"}, "the API server dropped spec.resources"

    def failed_event() -> JSON | None:
        events = kube.list_items("v1", "Event", namespace, field_selector="reason=FailedScheduling")
        return next((e for e in events if e["involvedObject"]["name"] == "big"), None)

    wait_until("big's FailedScheduling event", lambda: failed_event() is not None, timeout=30)
    event = failed_event()
    assert event is not None
    total = len(kube.list_items("v1", "Node"))
    message = event["message"]
    assert message.startswith(f"0/{total} nodes are available: ")
    assert "2 Insufficient cpu" in message
    assert message.endswith("Preemption is not helpful for scheduling.")

    create_all(kube, [_pod_level(p, namespace, name, "1500m", pool) for p in ("a", "b")])

    def placed() -> dict[str, str]:
        return {
            p["metadata"]["name"]: p["spec"].get("nodeName", "") for p in pods_in(kube, namespace)
        }

    wait_until("a and b bound", lambda: bool(placed()["a"] and placed()["b"]), timeout=30)
    where = placed()
    assert {where["a"], where["b"]} == set(nodes)  # 1500m each: one per 2-cpu node
    assert not where["big"]
