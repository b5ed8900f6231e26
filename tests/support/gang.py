"""Helpers for the gang (GenericWorkload) end-to-end tests: PodGroups, their member pods, what is
bound, a group's condition."""

from __future__ import annotations

from typing import Any

from corral.k8s import JSON, Client


def pod_group(name: str, namespace: str, min_count: int | None = None, **spec: Any) -> JSON:
    policy: JSON = {"gang": {"minCount": min_count}} if min_count is not None else {"basic": {}}
    return {
        "apiVersion": "scheduling.k8s.io/v1beta1",
        "kind": "PodGroup",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"schedulingPolicy": policy, **spec},
    }


def member(
    name: str, namespace: str, scheduler: str, group: str, cpu: str = "1", **spec: Any
) -> JSON:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "schedulerName": scheduler,
            "schedulingGroup": {"podGroupName": group},
            "terminationGracePeriodSeconds": 0,
            "containers": [{"name": "c", "image": "pause",
                            "resources": {"requests": {"cpu": cpu, "memory": "64Mi"}}}],
            **spec,
        },
    }  # fmt: skip


def bound(kube: Client, namespace: str) -> dict[str, str]:
    return {
        p["metadata"]["name"]: p["spec"]["nodeName"]
        for p in kube.list_items("v1", "Pod", namespace)
        if p["spec"].get("nodeName")
    }


def condition(kube: Client, namespace: str, group: str) -> JSON | None:
    obj = kube.get("scheduling.k8s.io/v1beta1", "PodGroup", group, namespace)
    return next(
        (c for c in (obj.get("status") or {}).get("conditions") or []
         if c.get("type") == "PodGroupInitiallyScheduled"),
        None,
    )  # fmt: skip
