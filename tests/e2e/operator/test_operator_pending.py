"""The pending-pod detector: pods waiting for a scheduler that will never take them get an
Event saying why; the profile counts them. The operator never binds them."""

from __future__ import annotations

import uuid
from typing import Any

from corral.k8s import JSON, Client
from support.operator_process import API, KIND, eventually, is_ready, profile


def pod(name: str, namespace: str, scheduler: str) -> JSON:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "schedulerName": scheduler,
            "containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10"}],
        },
    }


def pod_events(kube: Client, namespace: str, name: str) -> list[JSON]:
    return kube.list_items(
        "v1",
        "Event",
        namespace,
        field_selector=f"involvedObject.kind=Pod,involvedObject.name={name}",
    )


def test_pods_no_profile_serves_get_an_event_and_a_count(
    kube: Client, kube_namespaces: list[str], start_operator: Any, profiles: Any
) -> None:
    tenant, other = kube_namespaces
    start_operator("--pending-threshold=1")
    name = profiles("tenant")
    kube.create(profile(name, tenant, replicas=1, tenancy={"namespaces": [tenant]}))
    eventually(lambda: is_ready(kube, name), what=f"{name} Ready")
    kube.create(pod("stray", other, name))
    nobody = f"nobody-{uuid.uuid4().hex[:6]}"
    kube.create(pod("orphan", other, nobody))

    def reasons(pod_name: str) -> list[str]:
        return [e["reason"] for e in pod_events(kube, other, pod_name)]

    eventually(lambda: "NamespaceNotServed" in reasons("stray"), what="NamespaceNotServed event")
    eventually(lambda: "NoSchedulerProfile" in reasons("orphan"), what="NoSchedulerProfile event")
    message = pod_events(kube, other, "stray")[0]["message"]
    assert name in message
    assert other in message
    eventually(
        lambda: kube.get(API, KIND, name)["status"].get("pendingPods") == 1,
        what="pendingPods == 1",
    )
    assert not kube.get("v1", "Pod", "stray", other)["spec"].get("nodeName")
    # Reported once, not on every pass.
    assert reasons("stray").count("NamespaceNotServed") == 1
