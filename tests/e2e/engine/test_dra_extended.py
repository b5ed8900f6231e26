"""Extended resources backed by DRA end to end: a DeviceClass names ``example.com/gpu`` as its
extended resource, a test driver publishes GPUs for kwok nodes that do not advertise that
resource, and pods asking for ``example.com/gpu: 1`` are bound by Corral's engine with a
ResourceClaim it created for each (owned by the pod, allocated, reserved for it) and named in
the pod's ``status.extendedResourceClaimStatus``."""

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
    scheduler_name,
    wait_until,
)

from .test_dra import claims_in, fit_error, unschedulable_message

RESOURCE = "example.com/gpu"
ANNOTATION = "resource.kubernetes.io/extended-resource-claim"


@dataclass
class Env:
    driver: TestDriver
    nodes: list[str]
    pool: dict[str, str]
    scheduler: str


@pytest.fixture
def extended_gpus(
    kube: Client,
    cluster: LocalCluster,
    namespace: str,
    fake_nodes: Callable[..., list[str]],
    engines: Callable[..., EngineProcess],
) -> Iterator[Callable[[int], Env]]:
    """``make(nodes)``: kwok nodes with one GPU each, a class providing ``example.com/gpu``,
    and a Corral engine."""
    drivers: list[TestDriver] = []
    classes: list[str] = []

    def make(count: int) -> Env:
        pool = {"pool": namespace}
        nodes = fake_nodes(count, cpu="8", memory="16Gi", labels=pool)
        driver = TestDriver(kube, f"gpu-{uuid.uuid4().hex[:6]}.corral.test")
        drivers.append(driver)
        for node in nodes:
            driver.publish(node, gpus(1))
        cls = device_class(f"gpu-{uuid.uuid4().hex[:6]}", f'device.driver == "{driver.driver}"')
        cls["spec"]["extendedResourceName"] = RESOURCE
        kube.create(cls)
        classes.append(cls["metadata"]["name"])
        scheduler = scheduler_name()
        engines(engine_config(cluster.kubeconfig, scheduler))
        return Env(driver, nodes, pool, scheduler)

    yield make
    for driver in drivers:
        driver.close()
    for name in classes:
        kube.delete(API_VERSION, "DeviceClass", name)


def gpu_pod(name: str, namespace: str, env: Env) -> JSON:
    requests = {"cpu": "100m", RESOURCE: "1"}
    p = pod(name, namespace, env.scheduler, nodeSelector=env.pool, requests=requests)
    p["spec"]["containers"][0]["resources"]["limits"] = {RESOURCE: "1"}  # extended: limit = request
    return p


def node_of(kube: Client, name: str, namespace: str) -> str:
    try:
        return str(kube.get("v1", "Pod", name, namespace)["spec"].get("nodeName") or "")
    except ApiError:
        return ""


def test_pods_get_devices_through_a_claim_the_scheduler_creates(
    kube: Client, namespace: str, extended_gpus: Callable[[int], Env]
) -> None:
    env = extended_gpus(2)
    for name in ("a", "b"):
        kube.create(gpu_pod(name, namespace, env))
    wait_until(
        "both pods bound",
        lambda: all(node_of(kube, n, namespace) for n in ("a", "b")),
        timeout=90,
    )
    claims = {c["metadata"]["name"]: c for c in claims_in(kube, namespace)}
    assert len(claims) == 2
    devices: set[tuple[str, str]] = set()
    for name in ("a", "b"):
        p = kube.get("v1", "Pod", name, namespace)
        status = p["status"]["extendedResourceClaimStatus"]
        # Request j is the resource's index in the container's sorted requests (cpu is 0).
        assert status["requestMappings"] == [
            {"containerName": "c", "resourceName": RESOURCE, "requestName": "container-0-request-1"}
        ]
        claim = claims[status["resourceClaimName"]]
        meta = claim["metadata"]
        assert meta["name"].startswith(f"{name}-extended-resources-")
        assert meta["annotations"][ANNOTATION] == "true"
        (owner,) = meta["ownerReferences"]
        assert (owner["kind"], owner["uid"], owner["controller"]) == (
            "Pod",
            p["metadata"]["uid"],
            True,
        )
        (request,) = claim["spec"]["devices"]["requests"]
        assert request["name"] == "container-0-request-1"
        assert request["exactly"]["count"] == 1
        assert request["exactly"]["allocationMode"] == "ExactCount"
        (result,) = claim["status"]["allocation"]["devices"]["results"]
        assert result["driver"] == env.driver.driver
        assert result["pool"] == p["spec"]["nodeName"]  # one pool per node, named after it
        assert [r["uid"] for r in claim["status"]["reservedFor"]] == [p["metadata"]["uid"]]
        devices.add((result["pool"], result["device"]))
    assert len(devices) == 2  # no device allocated twice

    # Every GPU is taken: a third pod waits with DynamicResources' reason, and no claim is
    # created for it.
    kube.create(gpu_pod("c", namespace, env))
    message = unschedulable_message(kube, "c", namespace)
    assert message == fit_error(kube, {"cannot allocate all claims": 2})
    assert len(claims_in(kube, namespace)) == 2

    # Deleting a pod takes its claim (garbage collection): the device is free for the third.
    kube.request(
        "DELETE",
        f"/api/v1/namespaces/{namespace}/pods/a",
        body={"apiVersion": "v1", "kind": "DeleteOptions", "gracePeriodSeconds": 0},
    )
    wait_until("c bound to the freed device", lambda: bool(node_of(kube, "c", namespace)), 120)
    status = kube.get("v1", "Pod", "c", namespace)["status"]["extendedResourceClaimStatus"]
    claim = kube.get(API_VERSION, "ResourceClaim", status["resourceClaimName"], namespace)
    assert claim["status"]["allocation"]["devices"]["results"][0]["pool"] == node_of(
        kube, "c", namespace
    )


def test_a_claim_left_by_a_failed_binding_is_deleted_and_made_anew(
    kube: Client, namespace: str, extended_gpus: Callable[[int], Env]
) -> None:
    """A claim for the pod's extended resources from an earlier attempt (here: written before
    the pod may be scheduled) makes every node fail; PostFilter deletes it and the next attempt,
    requeued by that deletion, creates and allocates a new one."""
    env = extended_gpus(1)
    gated = gpu_pod("p", namespace, env)
    gated["spec"]["schedulingGates"] = [{"name": "corral.dev/test"}]
    uid = kube.create(gated)["metadata"]["uid"]
    request = {"name": "container-0-request-1", "exactly": {"deviceClassName": "none"}}
    stale = kube.create({
        "apiVersion": API_VERSION, "kind": "ResourceClaim",
        "metadata": {"name": "p-extended-resources-stale", "namespace": namespace,
                     "annotations": {ANNOTATION: "true"},
                     "ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "name": "p",
                                          "uid": uid, "controller": True}]},
        "spec": {"devices": {"requests": [request]}},
    })  # fmt: skip
    kube.request(
        "PATCH",
        f"/api/v1/namespaces/{namespace}/pods/p",
        body={"spec": {"schedulingGates": None}},
        content_type="application/merge-patch+json",
    )
    wait_until("p bound", lambda: bool(node_of(kube, "p", namespace)), timeout=90)
    names = [c["metadata"]["name"] for c in claims_in(kube, namespace)]
    assert stale["metadata"]["name"] not in names
    status = kube.get("v1", "Pod", "p", namespace)["status"]["extendedResourceClaimStatus"]
    assert names == [status["resourceClaimName"]]
    claim = kube.get(API_VERSION, "ResourceClaim", status["resourceClaimName"], namespace)
    assert [r["uid"] for r in claim["status"]["reservedFor"]] == [uid]
