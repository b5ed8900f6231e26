"""Consumable capacity end to end: one device with ``allowMultipleAllocations`` and a memory
capacity under a request policy, shared by the claims of several pods until the capacity is
used up; each claim's status records its shareID and the consumed (rounded-up) amount. Per
request policy, the decision and the consumed amount (its text too) are upstream
kube-scheduler's (the cluster's default-scheduler) for the same pod."""

from __future__ import annotations

import uuid
from collections.abc import Callable

import pytest

from corral.k8s import JSON, ApiError, Client
from corral.testing import LocalCluster
from corral_dev.dra import API_VERSION, device_class
from support.engine_process import (
    EngineProcess,
    engine_config,
    pod,
    pods_in,
    scheduler_name,
    wait_until,
)

from .test_dra import claims_in, fit_error, unschedulable_message, with_claim

# 4Gi shared in steps of 1Gi: a request for 1500Mi consumes 2Gi, so two claims fill it.
MEMORY = {
    "value": "4Gi",
    "requestPolicy": {"default": "1Gi", "validRange": {"min": "1Gi", "step": "1Gi"}},
}


def test_shared_device_serves_claims_until_its_capacity_is_used_up(
    kube: Client,
    cluster: LocalCluster,
    namespace: str,
    fake_nodes: Callable[..., list[str]],
    engines: Callable[..., EngineProcess],
) -> None:
    pool = {"pool": namespace}
    (node,) = fake_nodes(1, cpu="8", memory="16Gi", labels=pool)
    driver = f"vgpu-{uuid.uuid4().hex[:6]}.corral.test"
    slice_name = f"{node}-{driver}"
    kube.create({
        "apiVersion": API_VERSION, "kind": "ResourceSlice", "metadata": {"name": slice_name},
        "spec": {"driver": driver, "nodeName": node,
                 "pool": {"name": node, "generation": 1, "resourceSliceCount": 1},
                 "devices": [{"name": "vgpu-0", "allowMultipleAllocations": True,
                              "capacity": {"memory": MEMORY}}]},
    })  # fmt: skip
    cls = f"vgpu-{uuid.uuid4().hex[:6]}"
    kube.create(
        device_class(cls, f'device.driver == "{driver}"', "device.allowMultipleAllocations")
    )
    request = {
        "name": "vgpu",
        "exactly": {"deviceClassName": cls, "capacity": {"requests": {"memory": "1500Mi"}}},
    }
    kube.create({
        "apiVersion": API_VERSION, "kind": "ResourceClaimTemplate",
        "metadata": {"name": "slice-of-gpu", "namespace": namespace},
        "spec": {"spec": {"devices": {"requests": [request]}}},
    })  # fmt: skip
    try:
        name = scheduler_name()
        engines(engine_config(cluster.kubeconfig, name))

        def claiming(pod_name: str) -> JSON:
            return with_claim(pod(pod_name, namespace, name, nodeSelector=pool), "slice-of-gpu")

        # Created together: the second is decided while the first's allocation may still be
        # in flight, so both the in-flight and the informer's accounting are exercised.
        kube.create(claiming("first"))
        kube.create(claiming("second"))

        def both_bound() -> bool:
            return sum(1 for p in pods_in(kube, namespace) if p["spec"].get("nodeName")) == 2

        wait_until("first and second bound", both_bound, timeout=90)
        claims = claims_in(kube, namespace)
        assert len(claims) == 2
        share_ids = set()
        for claim in claims:
            (result,) = claim["status"]["allocation"]["devices"]["results"]
            assert (result["driver"], result["pool"], result["device"]) == (driver, node, "vgpu-0")
            assert result["consumedCapacity"] == {"memory": "2Gi"}
            share_ids.add(result["shareID"])
            assert len(claim["status"]["reservedFor"]) == 1
        assert len(share_ids) == 2

        # The device's 4Gi are consumed: the third pod gets upstream's message.
        kube.create(claiming("third"))
        message = unschedulable_message(kube, "third", namespace)
        assert message == fit_error(kube, {"cannot allocate all claims": 1})

        # Freeing one share lets the third pod have its capacity.
        kube.request(
            "DELETE",
            f"/api/v1/namespaces/{namespace}/pods/first",
            body={"apiVersion": "v1", "kind": "DeleteOptions", "gracePeriodSeconds": 0},
        )

        def third_bound() -> bool:
            try:
                return bool(kube.get("v1", "Pod", "third", namespace)["spec"].get("nodeName"))
            except ApiError:
                return False

        wait_until("third bound to the freed share", third_bound, timeout=90)
        reserved = {
            c["status"]["reservedFor"][0]["name"]
            for c in claims_in(kube, namespace)
            if c.get("status", {}).get("reservedFor")
        }
        assert reserved == {"second", "third"}
    finally:
        kube.delete(API_VERSION, "ResourceSlice", slice_name)
        kube.delete(API_VERSION, "DeviceClass", cls)


# (policy of the device's 8Gi memory, requested memory): what each claim consumes is compared
# with what upstream kube-scheduler writes, text included (rounding and the step's format).
POLICY_CASES = [
    pytest.param(None, None, id="no-policy-no-request"),
    pytest.param(None, "1500Mi", id="no-policy"),
    pytest.param({"default": "1Gi", "validRange": {"min": "1Gi", "step": "1Gi"}}, None,
                 id="range-default"),
    pytest.param({"default": "1Gi", "validRange": {"min": "1Gi", "step": "1Gi"}}, "1500Mi",
                 id="range-binary-step"),
    pytest.param({"default": "1Ki", "validRange": {"min": "1Ki", "step": "1k"}}, "2000",
                 id="range-decimal-step-from-binary-min"),
    pytest.param({"default": "1k", "validRange": {"min": "1k", "step": "2k"}}, "1500",
                 id="range-decimal-step"),
    # DRAFractionalCapacityRange is off at 1.37's defaults: whole units (250m rounds to 1).
    pytest.param({"default": "100m", "validRange": {"min": "100m", "step": "100m"}}, "250m",
                 id="fractional-range-gate-off"),
    pytest.param({"default": "2Gi", "validValues": ["2Gi", "4Gi"]}, "3Gi", id="valid-values"),
    pytest.param({"default": "2Gi", "validRange": {"min": "2Gi", "max": "4Gi"}}, "6Gi",
                 id="over-max"),
]  # fmt: skip


def _decide(kube: Client, p: JSON) -> tuple[str, JSON | None]:
    """The pod's node (or its unschedulable message) and its claim's consumedCapacity; the pod
    and its claim are gone after."""
    namespace, name = p["metadata"]["namespace"], p["metadata"]["name"]
    kube.create(p)
    outcome: list[tuple[str, JSON | None]] = []

    def decided() -> bool:
        current = kube.get("v1", "Pod", name, namespace)
        if current["spec"].get("nodeName"):
            (claim,) = claims_in(kube, namespace)
            allocation = claim.get("status", {}).get("allocation")
            if allocation is None:
                return False
            (result,) = allocation["devices"]["results"]
            assert len(result["shareID"]) == 36
            outcome.append((current["spec"]["nodeName"], result.get("consumedCapacity")))
            return True
        for c in current.get("status", {}).get("conditions", []):
            if c["type"] == "PodScheduled" and c["status"] == "False" and c.get("message"):
                outcome.append((str(c["message"]), None))
                return True
        return False

    wait_until(f"a decision for {name}", decided, timeout=60)
    kube.request(
        "DELETE",
        f"/api/v1/namespaces/{namespace}/pods/{name}",
        body={"apiVersion": "v1", "kind": "DeleteOptions", "gracePeriodSeconds": 0},
    )
    wait_until(
        f"{name} and its claim gone",
        lambda: not pods_in(kube, namespace) and not claims_in(kube, namespace),
        timeout=60,
    )
    return outcome[0]


@pytest.mark.parametrize(("policy", "wanted"), POLICY_CASES)
def test_consumed_capacity_as_upstream_writes_it(
    kube: Client,
    cluster: LocalCluster,
    namespace: str,
    fake_nodes: Callable[..., list[str]],
    engines: Callable[..., EngineProcess],
    policy: JSON | None,
    wanted: str | None,
) -> None:
    pool = {"pool": namespace}
    (node,) = fake_nodes(1, cpu="8", memory="16Gi", labels=pool)
    driver = f"vgpu-{uuid.uuid4().hex[:6]}.corral.test"
    memory: JSON = {"value": "8Gi"}
    if policy is not None:
        memory["requestPolicy"] = policy
    slice_name = f"{node}-{driver}"
    kube.create({
        "apiVersion": API_VERSION, "kind": "ResourceSlice", "metadata": {"name": slice_name},
        "spec": {"driver": driver, "nodeName": node,
                 "pool": {"name": node, "generation": 1, "resourceSliceCount": 1},
                 "devices": [{"name": "vgpu-0", "allowMultipleAllocations": True,
                              "capacity": {"memory": memory}}]},
    })  # fmt: skip
    cls = f"vgpu-{uuid.uuid4().hex[:6]}"
    kube.create(device_class(cls, f'device.driver == "{driver}"'))
    exactly: JSON = {"deviceClassName": cls}
    if wanted is not None:
        exactly["capacity"] = {"requests": {"memory": wanted}}
    kube.create({
        "apiVersion": API_VERSION, "kind": "ResourceClaimTemplate",
        "metadata": {"name": "slice-of-gpu", "namespace": namespace},
        "spec": {"spec": {"devices": {"requests": [{"name": "vgpu", "exactly": exactly}]}}},
    })  # fmt: skip
    try:
        corral = scheduler_name()
        engines(engine_config(cluster.kubeconfig, corral))

        def copy(name: str, scheduler: str) -> JSON:
            return with_claim(pod(name, namespace, scheduler, nodeSelector=pool), "slice-of-gpu")

        upstream = _decide(kube, copy("ref", "default-scheduler"))
        ours = _decide(kube, copy("corral", corral))
        assert ours == upstream
    finally:
        kube.delete(API_VERSION, "ResourceSlice", slice_name)
        kube.delete(API_VERSION, "DeviceClass", cls)
