from __future__ import annotations

import json

import pytest

from corral.k8s import ResourceInfo, api_prefix
from corral.k8s import client as client_module
from corral.k8s.client import Client, api_error


@pytest.mark.parametrize(
    ("info", "namespace", "name", "path"),
    [
        pytest.param(ResourceInfo("v1", "Node", "nodes", False), None, None, "/api/v1/nodes",
                     id="cluster-list"),
        pytest.param(ResourceInfo("v1", "Node", "nodes", False), "ignored", "n1",
                     "/api/v1/nodes/n1", id="cluster-scoped-ignores-namespace"),
        pytest.param(ResourceInfo("v1", "Pod", "pods", True), "ns", "p",
                     "/api/v1/namespaces/ns/pods/p", id="namespaced-get"),
        pytest.param(ResourceInfo("v1", "Pod", "pods", True), None, None, "/api/v1/pods",
                     id="all-namespaces"),
        pytest.param(ResourceInfo("apps/v1", "Deployment", "deployments", True), "ns", None,
                     "/apis/apps/v1/namespaces/ns/deployments", id="group"),
    ],
)  # fmt: skip
def test_resource_paths(
    info: ResourceInfo, namespace: str | None, name: str | None, path: str
) -> None:
    assert info.path(namespace, name) == path


def test_api_prefix() -> None:
    assert api_prefix("v1") == "/api/v1"
    assert api_prefix("corral.dev/v1alpha1") == "/apis/corral.dev/v1alpha1"


def test_status_body_becomes_a_readable_error() -> None:
    body = {"kind": "Status", "status": "Failure", "reason": "Forbidden", "code": 403,
            "message": 'nodes is forbidden: User "x" cannot list resource "nodes"'}  # fmt: skip
    error = api_error(403, "Forbidden", json.dumps(body).encode())
    assert error.forbidden
    assert not error.not_found
    assert error.reason == "Forbidden"
    assert str(error) == '403 Forbidden: nodes is forbidden: User "x" cannot list resource "nodes"'
    assert error.body == body


def test_non_json_error_keeps_the_text() -> None:
    error = api_error(502, "Bad Gateway", b"upstream down\n")
    assert (error.status, error.message) == (502, "upstream down")


def test_the_bearer_token_is_reread_once_per_refresh_period(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    clock = [1000.0]
    monkeypatch.setattr(client_module.time, "monotonic", lambda: clock[0])
    c = Client.from_token("https://127.0.0.1:1", "first", None)
    assert c.authorization() == "Bearer first"
    c.configuration.api_key = {"authorization": "rotated"}  # e.g. a new in-cluster token
    clock[0] += client_module.TOKEN_REFRESH_SECONDS - 1
    assert c.authorization() == "Bearer first"  # cached: no refresh hook on every request
    clock[0] += 2
    assert c.authorization() == "Bearer rotated"
