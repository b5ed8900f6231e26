"""DynamicResources end to end: devices published as ResourceSlices by a test driver for kwok
nodes, claims from ResourceClaimTemplates (created by kube-controller-manager's resourceclaim
controller), allocated by Corral's engine and written to the claims' status."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import pytest

from corral.k8s import JSON, ApiError, Client
from corral.testing import LocalCluster
from corral_dev.dra import API_VERSION, TestDriver, device_class, gpus
from support.engine_process import (
    EngineProcess,
    engine_config,
    pod,
    pods_in,
    scheduler_name,
    wait_until,
)


@dataclass
class Gpus:
    driver: TestDriver
    nodes: list[str]
    pool: dict[str, str]
    template: str  # a ResourceClaimTemplate asking for one device of the class
    device_class: str
    scheduler: str  # a Corral engine's scheduler name, running for the test


def claim_template(name: str, namespace: str, cls: str, count: int = 1) -> JSON:
    request = {"name": "gpu", "exactly": {"deviceClassName": cls, "count": count}}
    return {
        "apiVersion": API_VERSION,
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"spec": {"devices": {"requests": [request]}}},
    }


@pytest.fixture
def gpu_nodes(
    kube: Client,
    cluster: LocalCluster,
    namespace: str,
    fake_nodes: Callable[..., list[str]],
    engines: Callable[..., EngineProcess],
) -> Iterator[Callable[[int, int], Gpus]]:
    """``make(nodes, per_node)``: kwok nodes with ``per_node`` GPUs each, a class, a template,
    and a Corral engine."""
    drivers: list[TestDriver] = []
    classes: list[str] = []

    def make(count: int, per_node: int) -> Gpus:
        pool = {"pool": namespace}
        nodes = fake_nodes(count, cpu="8", memory="16Gi", labels=pool)
        driver = TestDriver(kube, f"gpu-{uuid.uuid4().hex[:6]}.corral.test")
        drivers.append(driver)
        for node in nodes:
            driver.publish(node, gpus(per_node))
        cls = f"gpu-{uuid.uuid4().hex[:6]}"
        kube.create(device_class(cls, f'device.driver == "{driver.driver}"'))
        classes.append(cls)
        kube.create(claim_template("one-gpu", namespace, cls))
        scheduler = scheduler_name()
        engines(engine_config(cluster.kubeconfig, scheduler))
        return Gpus(driver, nodes, pool, "one-gpu", cls, scheduler)

    yield make
    for driver in drivers:
        driver.close()
    for cls in classes:
        kube.delete(API_VERSION, "DeviceClass", cls)


def with_claim(p: JSON, template: str) -> JSON:
    p["spec"]["resourceClaims"] = [{"name": "gpu", "resourceClaimTemplateName": template}]
    return p


def claims_in(kube: Client, namespace: str) -> list[JSON]:
    return kube.list_items(API_VERSION, "ResourceClaim", namespace)


def scheduled_condition(kube: Client, name: str, namespace: str) -> JSON | None:
    status = kube.get("v1", "Pod", name, namespace).get("status", {})
    return next((c for c in status.get("conditions", []) if c["type"] == "PodScheduled"), None)


def unschedulable_message(kube: Client, name: str, namespace: str) -> str:
    def failed() -> bool:
        condition = scheduled_condition(kube, name, namespace)
        return condition is not None and condition["status"] == "False"

    wait_until(f"{name} reported unschedulable", failed, timeout=60)
    condition = scheduled_condition(kube, name, namespace)
    assert condition is not None
    return str(condition["message"])


def fit_error(kube: Client, reasons: dict[str, int]) -> str:
    """Upstream's FitError text when every node fails as UnschedulableAndUnresolvable; nodes of
    the shared cluster outside the pod's pool fail its nodeSelector."""
    total = len(kube.list_items("v1", "Node"))
    others = total - sum(reasons.values())
    counted = [f"{n} {reason}" for reason, n in reasons.items()]
    if others:
        counted.append(f"{others} node(s) didn't match Pod's node affinity/selector")
    return (
        f"0/{total} nodes are available: {', '.join(sorted(counted))}. "
        f"preemption: 0/{total} nodes are available: {total} Preemption is not helpful for"
        " scheduling."
    )


def test_deployment_pods_each_get_their_own_device(
    kube: Client,
    namespace: str,
    gpu_nodes: Callable[[int, int], Gpus],
) -> None:
    env = gpu_nodes(3, 2)
    name = env.scheduler
    template = with_claim(pod("gpu", namespace, name, nodeSelector=env.pool), env.template)
    template["metadata"]["labels"] = {"app": "gpu"}
    kube.create({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "gpu", "namespace": namespace},
        "spec": {"replicas": 6, "selector": {"matchLabels": {"app": "gpu"}},
                 "template": {"metadata": template["metadata"], "spec": template["spec"]}},
    })  # fmt: skip

    def six_bound() -> bool:
        pods = pods_in(kube, namespace)
        return len(pods) == 6 and all(p["spec"].get("nodeName") for p in pods)

    wait_until("6 pods bound", six_bound, timeout=120)
    pods = {p["metadata"]["uid"]: p for p in pods_in(kube, namespace)}
    claims = claims_in(kube, namespace)
    assert len(claims) == 6
    seen: set[tuple[str, str, str]] = set()
    for claim in claims:
        status = claim["status"]
        (consumer,) = status["reservedFor"]
        assert consumer["resource"] == "pods"
        owner = pods[consumer["uid"]]
        assert consumer["name"] == owner["metadata"]["name"]
        (result,) = status["allocation"]["devices"]["results"]
        assert result["request"] == "gpu"
        assert result["driver"] == env.driver.driver
        # One pool per node, named after it: the device is on the pod's node.
        assert result["pool"] == owner["spec"]["nodeName"]
        assert status["allocation"]["nodeSelector"]["nodeSelectorTerms"][0]["matchFields"] == [
            {"key": "metadata.name", "operator": "In", "values": [owner["spec"]["nodeName"]]}
        ]
        assert "resource.kubernetes.io/delete-protection" in claim["metadata"]["finalizers"]
        seen.add((result["driver"], result["pool"], result["device"]))
    assert len(seen) == 6  # no device allocated twice

    # Every device is taken: one more pod waits, with upstream's reason on each pool node.
    kube.create(with_claim(pod("extra", namespace, name, nodeSelector=env.pool), env.template))
    message = unschedulable_message(kube, "extra", namespace)
    assert message == fit_error(kube, {"cannot allocate all claims": 3})


def test_more_devices_than_any_node_has(
    kube: Client,
    namespace: str,
    gpu_nodes: Callable[[int, int], Gpus],
) -> None:
    env = gpu_nodes(2, 2)
    name = env.scheduler
    kube.create(claim_template("three-gpus", namespace, env.device_class, count=3))
    kube.create(with_claim(pod("big", namespace, name, nodeSelector=env.pool), "three-gpus"))
    message = unschedulable_message(kube, "big", namespace)
    assert message == fit_error(kube, {"cannot allocate all claims": 2})
    (claim,) = claims_in(kube, namespace)
    assert "allocation" not in claim.get("status", {})


def test_freeing_a_claim_lets_a_pending_pod_schedule(
    kube: Client,
    namespace: str,
    gpu_nodes: Callable[[int, int], Gpus],
) -> None:
    env = gpu_nodes(1, 1)
    name = env.scheduler
    kube.create(with_claim(pod("first", namespace, name, nodeSelector=env.pool), env.template))
    wait_until(
        "first bound",
        lambda: bool(kube.get("v1", "Pod", "first", namespace)["spec"].get("nodeName")),
        timeout=60,
    )
    kube.create(with_claim(pod("second", namespace, name, nodeSelector=env.pool), env.template))
    message = unschedulable_message(kube, "second", namespace)
    assert message == fit_error(kube, {"cannot allocate all claims": 1})

    kube.request(
        "DELETE",
        f"/api/v1/namespaces/{namespace}/pods/first",
        body={"apiVersion": "v1", "kind": "DeleteOptions", "gracePeriodSeconds": 0},
    )

    def second_bound() -> bool:
        try:
            return bool(kube.get("v1", "Pod", "second", namespace)["spec"].get("nodeName"))
        except ApiError:
            return False

    # The first pod's claim goes with it (resourceclaim controller, garbage collector): the
    # claim's deletion requeues the pending pod long before the unschedulable flush.
    wait_until("second bound to the freed device", second_bound, timeout=90)
    (claim,) = [c for c in claims_in(kube, namespace) if c["status"].get("reservedFor")]
    assert claim["status"]["reservedFor"][0]["name"] == "second"


def test_claim_allocated_elsewhere_is_deallocated_for_the_pod(
    kube: Client,
    namespace: str,
    gpu_nodes: Callable[[int, int], Gpus],
) -> None:
    env = gpu_nodes(2, 1)
    first, second = env.nodes
    name = env.scheduler
    request = {"name": "gpu", "exactly": {"deviceClassName": env.device_class}}
    claim = kube.create({"apiVersion": API_VERSION, "kind": "ResourceClaim",
                         "metadata": {"name": "shared", "namespace": namespace},
                         "spec": {"devices": {"requests": [request]}}})  # fmt: skip
    # Allocated on the first node and used by nobody (the resourceclaim controller leaves a
    # claim that was never reserved allocated).
    result = {"request": "gpu", "driver": env.driver.driver, "pool": first, "device": "gpu-0"}
    on_first = {"key": "metadata.name", "operator": "In", "values": [first]}
    claim["status"] = {"allocation": {"devices": {"results": [result]},
                                      "nodeSelector": {"nodeSelectorTerms": [
                                          {"matchFields": [on_first]}]}}}  # fmt: skip
    kube.request("PUT", f"{kube.path_of(claim)}/status", body=claim)
    # A pod that may only run on the second node: the claim is not available there, so
    # PostFilter deallocates it and the next attempt (requeued by the claim's update)
    # allocates it on that node.
    moved = {**env.pool, "kubernetes.io/hostname": second}
    kube.create(pod("late", namespace, name, nodeSelector=moved,
                    resourceClaims=[{"name": "gpu", "resourceClaimName": "shared"}]))  # fmt: skip
    wait_until(
        "late bound to the second node",
        lambda: kube.get("v1", "Pod", "late", namespace)["spec"].get("nodeName") == second,
        timeout=60,
    )
    claim = kube.get(API_VERSION, "ResourceClaim", "shared", namespace)
    (allocated,) = claim["status"]["allocation"]["devices"]["results"]
    assert allocated["pool"] == second
    assert [r["name"] for r in claim["status"]["reservedFor"]] == ["late"]
