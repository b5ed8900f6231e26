"""DynamicResources' binding conditions end to end: a kwok node's device that binds to the node
and is ready only once its driver says so. The test plays the driver: it sets the device's
conditions in the claim's status through the API, and Corral's engine binds the pod, or retries
it after a failure or a timeout, deallocating the claim first as upstream does. Then the API
server's cap on a claim's reservedFor list, which upstream's PreBind meets as Corral's does."""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime

import pytest

from corral.k8s import JSON, ApiError, Client
from corral.testing import LocalCluster
from corral_dev.dra import API_VERSION, device_class
from support.engine_process import EngineProcess, engine_config, pod, scheduler_name, wait_until

READY, FAILED = "Attached", "AttachFailed"
MAX_RESERVED = 256  # resourceapi.ResourceClaimReservedForMaxSize


@dataclass
class Env:
    node: str
    driver: str
    scheduler: str
    namespace: str
    selector: dict[str, str]


@pytest.fixture
def binding_device(
    kube: Client,
    cluster: LocalCluster,
    namespace: str,
    fake_nodes: Callable[..., list[str]],
    engines: Callable[..., EngineProcess],
) -> Iterator[Callable[..., Env]]:
    """``make(**args)``: a kwok node with one device that has binding conditions, a class and a
    one-device template, and a Corral engine with ``args`` as DynamicResources' args."""
    made: list[tuple[str, str]] = []

    def make(**args: str) -> Env:
        selector = {"pool": namespace}
        (node,) = fake_nodes(1, cpu="8", memory="16Gi", labels=selector)
        driver = f"attach-{uuid.uuid4().hex[:6]}.corral.test"
        device = {"name": "gpu-0", "bindsToNode": True,
                  "bindingConditions": [READY], "bindingFailureConditions": [FAILED]}  # fmt: skip
        kube.create({"apiVersion": API_VERSION, "kind": "ResourceSlice",
                     "metadata": {"name": f"{node}-{driver}"},
                     "spec": {"driver": driver, "nodeName": node, "devices": [device],
                              "pool": {"name": node, "generation": 1,
                                       "resourceSliceCount": 1}}})  # fmt: skip
        kube.create(device_class(driver, f'device.driver == "{driver}"'))
        made.append((f"{node}-{driver}", driver))
        request = {"name": "gpu", "exactly": {"deviceClassName": driver}}
        kube.create({"apiVersion": API_VERSION, "kind": "ResourceClaimTemplate",
                     "metadata": {"name": "one-gpu", "namespace": namespace},
                     "spec": {"spec": {"devices": {"requests": [request]}}}})  # fmt: skip
        name = scheduler_name()
        config = engine_config(cluster.kubeconfig, name)
        if args:
            config["profiles"][0]["pluginConfig"] = [{"name": "DynamicResources", "args": args}]
        engines(config)
        return Env(node, driver, name, namespace, selector)

    yield make
    for slice_name, cls in made:
        kube.delete(API_VERSION, "ResourceSlice", slice_name)
        kube.delete(API_VERSION, "DeviceClass", cls)


def gpu_pod(kube: Client, env: Env, name: str = "gpu") -> None:
    kube.create(pod(name, env.namespace, env.scheduler, nodeSelector=env.selector,
                    resourceClaims=[{"name": "gpu",
                                     "resourceClaimTemplateName": "one-gpu"}]))  # fmt: skip


def the_claim(kube: Client, env: Env) -> JSON:
    """The namespace's one claim (``{}`` until the resourceclaim controller created it)."""
    claims = kube.list_items(API_VERSION, "ResourceClaim", env.namespace)
    assert len(claims) <= 1, claims
    return claims[0] if claims else {}


def allocated_for_the_pod(kube: Client, env: Env, *, fresh: bool = False) -> JSON:
    """The claim once allocated and reserved for the pod (``fresh``: with no device status, so
    allocated anew after the test set one)."""

    def ready() -> bool:
        status = the_claim(kube, env).get("status") or {}
        return bool(status.get("allocation") and status.get("reservedFor")) and not (
            fresh and status.get("devices")
        )

    wait_until("the claim allocated and reserved", ready, timeout=60)
    return the_claim(kube, env)


def set_condition(kube: Client, claim: JSON, kind: str, reason: str, message: str = "") -> None:
    """What the driver does: a condition on the allocated device, in the claim's status."""
    for _ in range(5):
        meta = claim["metadata"]
        claim = kube.get(API_VERSION, "ResourceClaim", meta["name"], meta["namespace"])
        (result,) = claim["status"]["allocation"]["devices"]["results"]
        now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        condition = {"type": kind, "status": "True", "reason": reason, "message": message,
                     "lastTransitionTime": now}  # fmt: skip
        claim["status"]["devices"] = [{"driver": result["driver"], "pool": result["pool"],
                                       "device": result["device"],
                                       "conditions": [condition]}]  # fmt: skip
        try:
            kube.request("PUT", f"{kube.path_of(claim)}/status", body=claim)
            return
        except ApiError as err:
            if not err.conflict:
                raise
    raise AssertionError("the claim kept changing")


def node_of(kube: Client, env: Env, name: str = "gpu") -> str:
    return str(kube.get("v1", "Pod", name, env.namespace)["spec"].get("nodeName") or "")


def failed_scheduling(kube: Client, env: Env, *messages: str) -> None:
    def posted() -> bool:
        events = kube.list_items(
            "v1", "Event", env.namespace, field_selector="reason=FailedScheduling"
        )
        return any(e["message"] in messages for e in events)

    try:
        wait_until(f"a FailedScheduling event {messages[0]!r}", posted, timeout=60)
    except AssertionError:
        events = kube.list_items("v1", "Event", env.namespace)
        seen = sorted({f"{e['reason']}: {e['message']}" for e in events})
        raise AssertionError(f"no event {messages[0]!r}; events: {seen}") from None


def prebind_error(message: str) -> str:
    return f'running PreBind plugin "DynamicResources": {message}'


def test_pod_is_bound_once_the_binding_conditions_hold(
    kube: Client, binding_device: Callable[..., Env]
) -> None:
    env = binding_device()
    gpu_pod(kube, env)
    claim = allocated_for_the_pod(kube, env)
    (result,) = claim["status"]["allocation"]["devices"]["results"]
    assert result["bindingConditions"] == [READY]
    assert result["bindingFailureConditions"] == [FAILED]
    assert claim["status"]["allocation"]["nodeSelector"]["nodeSelectorTerms"] == [
        {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [env.node]}]}
    ]
    assert claim["status"]["allocation"]["allocationTimestamp"]
    assert node_of(kube, env) == ""  # PreBind waits for the driver
    set_condition(kube, claim, READY, "Attached")
    wait_until("the pod bound", lambda: node_of(kube, env) == env.node, timeout=60)


def test_failed_binding_deallocates_and_retries(
    kube: Client, binding_device: Callable[..., Env]
) -> None:
    env = binding_device()
    gpu_pod(kube, env)
    claim = allocated_for_the_pod(kube, env)
    set_condition(kube, claim, FAILED, "NoLink", 'cable "b" unplugged')
    name = claim["metadata"]["name"]
    failed_scheduling(
        kube,
        env,
        prebind_error(
            f'device binding failed: claim={name}, reason=NoLink, message="cable \\"b\\" unplugged"'
        ),
    )
    # The retry finds the claim unusable on every node, PostFilter deallocates it (status
    # devices included), and the next attempt allocates it afresh.
    claim = allocated_for_the_pod(kube, env, fresh=True)
    assert node_of(kube, env) == ""
    set_condition(kube, claim, READY, "Attached")
    wait_until("the pod bound", lambda: node_of(kube, env) == env.node, timeout=60)


def test_binding_timeout_deallocates_and_retries(
    kube: Client, binding_device: Callable[..., Env]
) -> None:
    env = binding_device(bindingTimeout="1s")
    gpu_pod(kube, env)
    first = allocated_for_the_pod(kube, env)["status"]["allocation"]["allocationTimestamp"]
    name = the_claim(kube, env)["metadata"]["name"]
    # Mostly the wait's own deadline; the claim's check wins when its second-rounded
    # allocationTimestamp is already a second old at the first look (upstream's race too).
    failed_scheduling(
        kube,
        env,
        prebind_error("device binding timeout: context deadline exceeded"),
        prebind_error(f"device binding timeout: claim={name}"),
    )

    def allocated_again() -> bool:
        allocation = (the_claim(kube, env).get("status") or {}).get("allocation") or {}
        return allocation.get("allocationTimestamp", first) != first

    wait_until("the claim deallocated and allocated anew", allocated_again, timeout=60)
    assert node_of(kube, env) == ""


def test_claim_reserved_for_the_maximum_refuses_one_more_pod(
    kube: Client, binding_device: Callable[..., Env]
) -> None:
    env = binding_device()
    request = {"name": "gpu", "exactly": {"deviceClassName": env.driver}}
    claim = kube.create({"apiVersion": API_VERSION, "kind": "ResourceClaim",
                         "metadata": {"name": "shared", "namespace": env.namespace},
                         "spec": {"devices": {"requests": [request]}}})  # fmt: skip
    # Allocated (with the timestamp a scheduler writes: PreBind adds a missing one, and the API
    # server refuses any change of an allocation), and reserved for as many consumers as the
    # API allows; not pods, so the resourceclaim controller leaves the entries alone.
    result = {"request": "gpu", "driver": env.driver, "pool": env.node, "device": "gpu-0"}
    on_node = {"key": "metadata.name", "operator": "In", "values": [env.node]}
    consumers = [
        {"apiGroup": "corral.test", "resource": "things", "name": f"t{i}", "uid": str(uuid.uuid4())}
        for i in range(MAX_RESERVED)
    ]
    stamp = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    claim["status"] = {"allocation": {"devices": {"results": [result]},
                                      "allocationTimestamp": stamp,
                                      "nodeSelector": {"nodeSelectorTerms": [
                                          {"matchFields": [on_node]}]}},
                       "reservedFor": consumers}  # fmt: skip
    kube.request("PUT", f"{kube.path_of(claim)}/status", body=claim)
    kube.create(pod("late", env.namespace, env.scheduler, nodeSelector=env.selector,
                    resourceClaims=[{"name": "gpu", "resourceClaimName": "shared"}]))  # fmt: skip
    failed_scheduling(
        kube,
        env,
        prebind_error(
            f"add reservation to claim {env.namespace}/shared: ResourceClaim.resource.k8s.io"
            ' "shared" is invalid: status.reservedFor: Too many: 257: must have at most 256 items'
        ),
    )
    assert node_of(kube, env, "late") == ""


def nominations(kube: Client, namespace: str, name: str) -> tuple[threading.Thread, list[str]]:
    """Watch pod ``name`` from now until it is bound, recording each change of its
    ``status.nominatedNodeName`` ("" when unset), in order."""
    seen: list[str] = []
    since = kube.request("GET", f"/api/v1/namespaces/{namespace}/pods")["metadata"]
    params = {"watch": "true", "fieldSelector": f"metadata.name={name}", "timeoutSeconds": 120,
              "resourceVersion": since["resourceVersion"]}  # fmt: skip

    def watch() -> None:
        for event in kube.stream(f"/api/v1/namespaces/{namespace}/pods", params=params):
            obj = event["object"]
            nominated = (obj.get("status") or {}).get("nominatedNodeName") or ""
            if not seen or seen[-1] != nominated:
                seen.append(nominated)
            if obj.get("spec", {}).get("nodeName") or event["type"] == "DELETED":
                return

    thread = threading.Thread(target=watch, daemon=True)
    thread.start()
    return thread, seen


def outcome(kube: Client, env: Env, name: str, scheduler: str) -> tuple[JSON, str, str, list[str]]:
    """One pod through the failure path, then the success path: its first allocation (without
    the timestamp), the FailedScheduling message of the failed binding, its node, and the
    values its status.nominatedNodeName took. The pod and its claim are gone after."""
    watcher, nominated = nominations(kube, env.namespace, name)
    kube.create(pod(name, env.namespace, scheduler, nodeSelector=env.selector,
                    resourceClaims=[{"name": "gpu",
                                     "resourceClaimTemplateName": "one-gpu"}]))  # fmt: skip
    claim = allocated_for_the_pod(kube, env)
    allocation = dict(claim["status"]["allocation"])
    del allocation["allocationTimestamp"]
    set_condition(kube, claim, FAILED, "NoLink", "unplugged")
    claim_name = claim["metadata"]["name"]

    def failure() -> str:
        for e in kube.list_items(
            "v1", "Event", env.namespace, field_selector="reason=FailedScheduling"
        ):
            if e["involvedObject"]["name"] == name and "device binding" in e["message"]:
                return str(e["message"])
        return ""

    wait_until(f"{name}'s failed binding reported", lambda: bool(failure()), timeout=60)
    message = failure().replace(claim_name, "<claim>")
    set_condition(kube, allocated_for_the_pod(kube, env, fresh=True), READY, "Attached")
    wait_until(f"{name} bound", lambda: bool(node_of(kube, env, name)), timeout=60)
    node = node_of(kube, env, name)
    watcher.join(timeout=30)
    kube.request(
        "DELETE",
        f"/api/v1/namespaces/{env.namespace}/pods/{name}",
        body={"apiVersion": "v1", "kind": "DeleteOptions", "gracePeriodSeconds": 0},
    )
    wait_until(f"{name}'s claim gone", lambda: not the_claim(kube, env), timeout=60)
    return allocation, message, node, nominated


def test_same_binding_outcome_as_upstream(kube: Client, binding_device: Callable[..., Env]) -> None:
    """Upstream kube-scheduler (``default-scheduler``) and Corral, one after the other, on the
    same device: the same allocation, node and message, and the same nominatedNodeName
    history: set to the node before PreBind waits (upstream's NominatedNodeNameForExpectation),
    cleared by the failed binding, set again, and cleared by the API server at binding."""
    env = binding_device()
    upstream = outcome(kube, env, "ref", "default-scheduler")
    ours = outcome(kube, env, "corral", env.scheduler)
    allocation, message, node, nominated = upstream
    assert ours == (allocation, message, node, nominated)
    assert message == prebind_error(
        'device binding failed: claim=<claim>, reason=NoLink, message="unplugged"'
    )
    assert nominated == ["", node, "", node, ""]
