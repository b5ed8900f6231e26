"""Authorization is real RBAC: a ServiceAccount can do only what it is bound to do."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from corral.k8s import ApiError, Client


def eventually_allowed(call: Callable[[], Any], timeout: float = 10.0) -> Any:
    """Retry ``call`` while it is forbidden, up to ``timeout``; other errors fail at once."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            return call()
        except ApiError as exc:
            if exc.status != 403 or time.monotonic() > deadline:
                raise
        time.sleep(0.2)


@pytest.fixture
def cluster_role(kube: Client) -> Iterator[str]:
    name = f"t-nodes-reader-{uuid.uuid4().hex[:6]}"
    kube.create(
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRole",
            "metadata": {"name": name},
            "rules": [{"apiGroups": [""], "resources": ["nodes"], "verbs": ["list"]}],
        }
    )
    yield name
    kube.delete("rbac.authorization.k8s.io/v1", "ClusterRoleBinding", name)
    kube.delete("rbac.authorization.k8s.io/v1", "ClusterRole", name)


def test_service_account_needs_a_binding_to_list_nodes(
    kube: Client,
    namespace: str,
    cluster_role: str,
    service_account_client: Callable[[str, str], Client],
) -> None:
    robot = service_account_client(namespace, "robot")

    with pytest.raises(ApiError) as denied:
        robot.request("GET", "/api/v1/nodes")
    assert denied.value.status == 403
    assert f"system:serviceaccount:{namespace}:robot" in denied.value.message

    kube.create(
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRoleBinding",
            "metadata": {"name": cluster_role},
            "roleRef": {
                "apiGroup": "rbac.authorization.k8s.io",
                "kind": "ClusterRole",
                "name": cluster_role,
            },
            "subjects": [{"kind": "ServiceAccount", "name": "robot", "namespace": namespace}],
        }
    )
    # The RBAC authorizer reads bindings from an informer: allow it a moment to see the new one.
    listing = eventually_allowed(lambda: robot.request("GET", "/api/v1/nodes"))
    assert listing["kind"] == "NodeList"
    # The binding grants list on nodes only: reading secrets stays forbidden.
    with pytest.raises(ApiError) as still_denied:
        robot.request("GET", f"/api/v1/namespaces/{namespace}/secrets")
    assert still_denied.value.status == 403
