"""The RBAC rendered for a tenant profile, bound to a real ServiceAccount, allows exactly what
the scheduler needs: reads cluster-wide, binding only in the tenant namespaces, its own Lease."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from corral.api import OperatorDefaults, load_profile
from corral.k8s import ApiError, Client
from corral.render import render

pytestmark = pytest.mark.e2e

RBAC_KINDS = ("ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding")


def eventually(call: Callable[[], Any], timeout: float = 10.0) -> Any:
    """Retry while forbidden: RBAC changes reach the authorizer's cache shortly after a write."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            return call()
        except ApiError as exc:
            if exc.status != 403 or time.monotonic() > deadline:
                raise
        time.sleep(0.2)


def forbidden(call: Callable[[], Any]) -> ApiError:
    with pytest.raises(ApiError) as denied:
        call()
    assert denied.value.status == 403, denied.value
    return denied.value


@pytest.fixture
def tenant(kube: Client, namespace: str) -> Iterator[dict[str, Any]]:
    """A tenant profile rendered into ``namespace``, its RBAC applied for real; one tenant
    namespace it serves and one it does not."""
    suffix = uuid.uuid4().hex[:6]
    served, other = f"t-served-{suffix}", f"t-other-{suffix}"
    for ns in (served, other):
        kube.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
    name = f"rbac-{suffix}"
    profile = load_profile(
        {
            "apiVersion": "corral.dev/v1alpha1",
            "kind": "SchedulerProfile",
            "metadata": {"name": name},
            "spec": {"tenancy": {"namespaces": [served]}},
        },
        operator=OperatorDefaults(namespace=namespace),
    )
    objects = [o for o in render(profile).objects if o["kind"] in RBAC_KINDS]
    for obj in objects:
        kube.apply(obj, field_manager="corral-tests")
    (sa,) = [o for o in objects if o["kind"] == "ServiceAccount"]
    client = kube.with_token(kube.request_token(namespace, sa["metadata"]["name"]))
    yield {"client": client, "served": served, "other": other, "lease": name, "ns": namespace}
    for obj in objects:
        if obj["kind"] in ("ClusterRole", "ClusterRoleBinding"):
            kube.delete(obj["apiVersion"], obj["kind"], obj["metadata"]["name"])
    for ns in (served, other):
        kube.delete("v1", "Namespace", ns)


def pod(name: str, namespace: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "schedulerName": "nobody-serves-this",
            "containers": [{"name": "c", "image": "busybox"}],
        },
    }


def binding(name: str, namespace: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Binding",
        "metadata": {"name": name, "namespace": namespace},
        "target": {"apiVersion": "v1", "kind": "Node", "name": "some-node"},
    }


def lease(name: str, namespace: str) -> dict[str, Any]:
    return {
        "apiVersion": "coordination.k8s.io/v1",
        "kind": "Lease",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"holderIdentity": "test", "leaseDurationSeconds": 15},
    }


def test_reads_cluster_wide(tenant: dict[str, Any]) -> None:
    client: Client = tenant["client"]
    eventually(lambda: client.request("GET", "/api/v1/nodes"))
    client.request("GET", "/api/v1/pods")
    # A watch answers with one JSON event per line: consume it as the stream it is. A denied
    # watch raises before the first event; one that fails later says so with an ERROR event.
    # Other tests' nodes may change while it is open, so MODIFIED and DELETED are fine too.
    events = list(client.stream("/api/v1/nodes", params={"watch": "true", "timeoutSeconds": 1}))
    assert {e["type"] for e in events} <= {"ADDED", "MODIFIED", "DELETED", "BOOKMARK"}
    client.request("GET", "/apis/policy/v1/poddisruptionbudgets")


def test_binds_only_in_tenant_namespaces(kube: Client, tenant: dict[str, Any]) -> None:
    client: Client = tenant["client"]
    for ns in (tenant["served"], tenant["other"]):
        kube.create(pod("p", ns))
    bound = eventually(
        lambda: client.request(
            "POST",
            f"/api/v1/namespaces/{tenant['served']}/pods/p/binding",
            body=binding("p", tenant["served"]),
        )
    )
    assert bound["status"] == "Success"
    assert kube.get("v1", "Pod", "p", tenant["served"])["spec"]["nodeName"] == "some-node"
    denied = forbidden(
        lambda: client.request(
            "POST",
            f"/api/v1/namespaces/{tenant['other']}/pods/p/binding",
            body=binding("p", tenant["other"]),
        )
    )
    assert "pods/binding" in denied.message
    assert "nodeName" not in kube.get("v1", "Pod", "p", tenant["other"])["spec"]


def test_own_lease_only(kube: Client, tenant: dict[str, Any]) -> None:
    client: Client = tenant["client"]
    ns = tenant["ns"]
    base = f"/apis/coordination.k8s.io/v1/namespaces/{ns}/leases"
    created = eventually(lambda: client.request("POST", base, body=lease(tenant["lease"], ns)))
    got = client.request("GET", f"{base}/{tenant['lease']}")
    got["spec"]["holderIdentity"] = "renewed"
    client.request("PUT", f"{base}/{tenant['lease']}", body=got)
    assert created["metadata"]["name"] == tenant["lease"]
    kube.create(lease("someone-else", ns))
    forbidden(lambda: client.request("GET", f"{base}/someone-else"))
    other = kube.get("coordination.k8s.io/v1", "Lease", "someone-else", ns)
    forbidden(lambda: client.request("PUT", f"{base}/someone-else", body=other))
    forbidden(
        lambda: client.request(
            "GET", "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/kube-scheduler"
        )
    )
    forbidden(lambda: client.request("GET", base))


def test_no_secrets_and_no_writes_elsewhere(kube: Client, tenant: dict[str, Any]) -> None:
    client: Client = tenant["client"]
    eventually(lambda: client.request("GET", "/api/v1/nodes"))
    forbidden(lambda: client.request("GET", "/api/v1/secrets"))
    forbidden(lambda: client.request("GET", f"/api/v1/namespaces/{tenant['served']}/secrets"))
    forbidden(lambda: client.request("GET", f"/api/v1/namespaces/{tenant['served']}/configmaps"))
    forbidden(
        lambda: client.request(
            "POST", f"/api/v1/namespaces/{tenant['other']}/pods", body=pod("x", tenant["other"])
        )
    )
    kube.create(pod("victim", tenant["other"]))
    forbidden(lambda: client.request("DELETE", f"/api/v1/namespaces/{tenant['other']}/pods/victim"))
    forbidden(
        lambda: client.request(
            "PATCH",
            "/api/v1/nodes/some-node",
            body={"metadata": {"labels": {"a": "b"}}},
            content_type="application/merge-patch+json",
        )
    )


@pytest.mark.parametrize(
    ("verb", "group", "resource", "subresource", "where", "allowed"),
    [
        pytest.param("list", "", "nodes", "", None, True, id="list nodes"),
        pytest.param("watch", "", "nodes", "", None, True, id="watch nodes"),
        pytest.param("watch", "", "pods", "", None, True, id="watch pods"),
        pytest.param("create", "", "pods", "binding", "served", True, id="bind in tenant ns"),
        pytest.param("create", "", "pods", "binding", "other", False, id="no bind elsewhere"),
        pytest.param("patch", "", "pods", "status", "served", True, id="pod status in tenant ns"),
        pytest.param("patch", "", "pods", "status", "other", False, id="no pod status elsewhere"),
        pytest.param("delete", "", "pods", "", "served", True, id="preempt in tenant ns"),
        pytest.param("delete", "", "pods", "", "other", False, id="no preemption elsewhere"),
        pytest.param(
            "create", "events.k8s.io", "events", "", "served", True, id="events in tenant ns"
        ),
        pytest.param("get", "", "secrets", "", "served", False, id="no secrets"),
        pytest.param("create", "coordination.k8s.io", "leases", "", "ns", True, id="create leases"),
        pytest.param(
            "list", "coordination.k8s.io", "leases", "", "ns", False, id="no lease listing"
        ),
    ],
)
def test_access_matrix(
    tenant: dict[str, Any],
    verb: str,
    group: str,
    resource: str,
    subresource: str,
    where: str | None,
    allowed: bool,
) -> None:
    client: Client = tenant["client"]
    attrs: dict[str, Any] = {
        "verb": verb,
        "group": group,
        "resource": resource,
        "subresource": subresource,
    }
    if where is not None:
        attrs["namespace"] = tenant[where]
    review = {
        "apiVersion": "authorization.k8s.io/v1",
        "kind": "SelfSubjectAccessReview",
        "spec": {"resourceAttributes": attrs},
    }
    deadline = time.monotonic() + 10
    while True:
        answer = client.request(
            "POST", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", body=review
        )
        if answer["status"]["allowed"] == allowed or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    assert answer["status"]["allowed"] is allowed, answer["status"]
