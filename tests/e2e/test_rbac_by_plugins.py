"""RBAC follows the enabled plugins, proven by the real API server: a tenant profile without
DefaultPreemption cannot delete pods anywhere (403), one with it can only in its namespaces;
DynamicResources alone brings the ResourceClaim writes (status, the finalizer, and create/delete
of the claim for extended resources backed by DRA). The rights come from each plugin's
declaration (``PluginDeclaration.namespaced_writes`` / ``cluster_reads``)."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from corral.api import OperatorDefaults, load_profile
from corral.k8s import ApiError, Client
from corral.render import render

pytestmark = pytest.mark.e2e

RBAC_KINDS = ("ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding")
OFF_PREEMPTION = {"multiPoint": {"disabled": [{"name": "DefaultPreemption"}]}}
OFF_BOTH = {
    "multiPoint": {"disabled": [{"name": "DefaultPreemption"}, {"name": "DynamicResources"}]}
}


@pytest.fixture
def served(kube: Client) -> Iterator[str]:
    ns = f"t-served-{uuid.uuid4().hex[:6]}"
    kube.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
    yield ns
    kube.delete("v1", "Namespace", ns)


def rendered_client(kube: Client, namespace: str, served: str, plugins: Any) -> Client:
    name = f"rbac-{uuid.uuid4().hex[:6]}"
    spec: dict[str, Any] = {"tenancy": {"namespaces": [served]}}
    if plugins is not None:
        spec["plugins"] = plugins
    profile = load_profile(
        {"apiVersion": "corral.dev/v1alpha1", "kind": "SchedulerProfile",
         "metadata": {"name": name}, "spec": spec},
        operator=OperatorDefaults(namespace=namespace),
    )  # fmt: skip
    for obj in render(profile).objects:
        if obj["kind"] in RBAC_KINDS:
            kube.apply(obj, field_manager="corral-tests")
    return kube.with_token(kube.request_token(namespace, f"corral-{name}"))


def allowed(client: Client, attrs: dict[str, str]) -> bool:
    review = {"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview",
              "spec": {"resourceAttributes": attrs}}  # fmt: skip
    return bool(
        client.request(
            "POST", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", body=review
        )["status"]["allowed"]
    )


@pytest.mark.parametrize(
    ("plugins", "delete_pods", "claim_status"),
    [
        pytest.param(None, True, True, id="defaults"),
        pytest.param(OFF_PREEMPTION, False, True, id="no preemption"),
        pytest.param(OFF_BOTH, False, False, id="no preemption, no DRA"),
    ],
)
def test_writes_follow_the_enabled_plugins(
    kube: Client,
    namespace: str,
    served: str,
    plugins: Any,
    delete_pods: bool,
    claim_status: bool,
) -> None:
    client = rendered_client(kube, namespace, served, plugins)
    bind = {"verb": "create", "resource": "pods", "subresource": "binding", "namespace": served}
    deadline = time.monotonic() + 10  # RBAC reaches the authorizer's cache shortly after a write
    while not allowed(client, bind) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert allowed(client, bind)
    claim = {"verb": "patch", "group": "resource.k8s.io", "resource": "resourceclaims",
             "subresource": "status", "namespace": served}  # fmt: skip
    assert allowed(client, claim) is claim_status
    finalizer = {"verb": "update", "group": "resource.k8s.io", "resource": "resourceclaims",
                 "namespace": served}  # fmt: skip
    assert allowed(client, finalizer) is claim_status
    for verb in ("create", "delete"):  # the claim for extended resources backed by DRA
        extended = {"verb": verb, "group": "resource.k8s.io", "resource": "resourceclaims",
                    "namespace": served}  # fmt: skip
        assert allowed(client, extended) is claim_status
    taint_rules = {"verb": "watch", "group": "resource.k8s.io", "resource": "devicetaintrules"}
    assert allowed(client, taint_rules) is claim_status
    containers = [{"name": "c", "image": "x"}]
    kube.create({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": served},
                 "spec": {"schedulerName": "nobody", "containers": containers}})  # fmt: skip
    path = f"/api/v1/namespaces/{served}/pods/p"
    if delete_pods:
        client.request("DELETE", path)
        return
    with pytest.raises(ApiError) as denied:
        client.request("DELETE", path)
    assert denied.value.status == 403, denied.value
    assert kube.get("v1", "Pod", "p", served)["metadata"]["name"] == "p"


OFF_VOLUME_BINDING = {"multiPoint": {"disabled": [{"name": "VolumeBinding"}]}}


@pytest.mark.parametrize(
    ("plugins", "binds_volumes"),
    [
        pytest.param(None, True, id="VolumeBinding on"),
        pytest.param(OFF_VOLUME_BINDING, False, id="VolumeBinding off"),
    ],
)
def test_volume_binding_updates_pvs_and_only_served_claims(
    kube: Client, namespace: str, served: str, plugins: Any, binds_volumes: bool
) -> None:
    """A tenant scheduler updates PVCs only in the served namespaces, and never PVs (they are
    cluster-scoped: that would let it rebind another tenant's volume); never deletes or creates
    them."""
    client = rendered_client(kube, namespace, served, plugins)
    bind = {"verb": "create", "resource": "pods", "subresource": "binding", "namespace": served}
    deadline = time.monotonic() + 10
    while not allowed(client, bind) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert allowed(client, bind)
    pv_update = {"verb": "update", "resource": "persistentvolumes"}
    claim_update = {"verb": "update", "resource": "persistentvolumeclaims", "namespace": served}
    assert not allowed(client, pv_update)
    assert allowed(client, claim_update) is binds_volumes
    assert not allowed(client, {**claim_update, "namespace": namespace})
    assert not allowed(client, {"verb": "delete", "resource": "persistentvolumes"})
    assert not allowed(client, {"verb": "create", "resource": "persistentvolumes"})
