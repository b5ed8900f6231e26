"""The Job path (kube-controller-manager with WorkloadWithJob, GenericWorkload): a Job asking
for gang scheduling gets a Workload and a PodGroup from the Job controller, its pods point at
the PodGroup, and a Corral engine places them together or not at all."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from corral.k8s import JSON, Client
from support.engine_process import EngineProcess, wait_until
from support.gang import bound, condition

pytestmark = pytest.mark.e2e

GROUPS = "scheduling.k8s.io/v1beta1"


def gang_job(
    name: str, namespace: str, scheduler: str, parallelism: int, cpu: str = "1", **policy: Any
) -> JSON:
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "parallelism": parallelism,
            "completions": parallelism,
            "scheduling": {"schedulingPolicy": {"gang": dict(policy)}},
            "template": {"spec": {
                "schedulerName": scheduler,
                "restartPolicy": "Never",
                "terminationGracePeriodSeconds": 0,
                "containers": [{"name": "c", "image": "pause",
                                "resources": {"requests": {"cpu": cpu, "memory": "64Mi"}}}],
            }},
        },
    }  # fmt: skip


def _owned_by(obj: JSON, owner: JSON) -> bool:
    return any(
        ref.get("uid") == owner["metadata"]["uid"] and ref.get("controller")
        for ref in obj["metadata"].get("ownerReferences") or []
    )


def _job_pods(kube: Client, namespace: str, job: str) -> list[JSON]:
    return kube.list_items("v1", "Pod", namespace, label_selector=f"job-name={job}")


def _the_pod_group(kube: Client, namespace: str, job: JSON) -> JSON:
    groups = [g for g in kube.list_items(GROUPS, "PodGroup", namespace) if _owned_by(g, job)]
    assert len(groups) == 1, groups
    return groups[0]


def test_a_gang_job_gets_its_pod_group_and_is_placed_whole(
    gang_kube: Client,
    gang_namespace: str,
    gang_nodes: Callable[..., list[str]],
    gang_scheduler: tuple[str, EngineProcess],
) -> None:
    scheduler, _ = gang_scheduler
    gang_nodes(2, cpu="2")
    job = gang_kube.create(gang_job("train", gang_namespace, scheduler, 4))

    def created() -> bool:
        return any(
            _owned_by(g, job) for g in gang_kube.list_items(GROUPS, "PodGroup", gang_namespace)
        )

    wait_until("the Job's PodGroup", created)
    group = _the_pod_group(gang_kube, gang_namespace, job)
    # minCount defaults to the Job's parallelism (upstream defaultMinCountForJob).
    assert group["spec"]["schedulingPolicy"] == {"gang": {"minCount": 4}}
    workloads = gang_kube.list_items(GROUPS, "Workload", gang_namespace)
    assert [w for w in workloads if _owned_by(w, job)], workloads
    wait_until("4 pods bound", lambda: len(bound(gang_kube, gang_namespace)) == 4)
    name = group["metadata"]["name"]
    for pod in _job_pods(gang_kube, gang_namespace, "train"):
        assert pod["spec"]["schedulingGroup"] == {"podGroupName": name}
    wait_until("the condition", lambda: condition(gang_kube, gang_namespace, name) is not None)
    cond = condition(gang_kube, gang_namespace, name)
    assert cond is not None
    assert (cond["status"], cond["reason"]) == ("True", "Scheduled")


def test_a_gang_job_that_does_not_fit_waits_whole_until_room_comes(
    gang_kube: Client,
    gang_namespace: str,
    gang_nodes: Callable[..., list[str]],
    gang_scheduler: tuple[str, EngineProcess],
) -> None:
    """3 cpu for 4 pods of 1 cpu: no pod is bound (upstream places none of a gang it cannot
    place whole); a node added later lets the whole gang in."""
    scheduler, _ = gang_scheduler
    gang_nodes(1, cpu="3")
    job = gang_kube.create(gang_job("wide", gang_namespace, scheduler, 4))

    def refused() -> bool:
        groups = [g for g in gang_kube.list_items(GROUPS, "PodGroup", gang_namespace)
                  if _owned_by(g, job)]  # fmt: skip
        if not groups:
            return False
        cond = condition(gang_kube, gang_namespace, groups[0]["metadata"]["name"])
        return cond is not None and cond["reason"] == "Unschedulable"

    wait_until("the PodGroup's Unschedulable condition", refused, timeout=90)
    name = _the_pod_group(gang_kube, gang_namespace, job)["metadata"]["name"]
    cond = condition(gang_kube, gang_namespace, name)
    assert cond is not None
    assert cond["message"].startswith("minCount (4) cannot be satisfied: 3 scheduled, 0 remaining")
    assert bound(gang_kube, gang_namespace) == {}
    for pod in _job_pods(gang_kube, gang_namespace, "wide"):
        scheduled = next(c for c in pod["status"]["conditions"] if c["type"] == "PodScheduled")
        assert (scheduled["status"], scheduled["reason"]) == ("False", "Unschedulable")
    gang_nodes(1, cpu="2")
    wait_until("all 4 bound once a node comes",
               lambda: len(bound(gang_kube, gang_namespace)) == 4, timeout=120)  # fmt: skip
