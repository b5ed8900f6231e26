from __future__ import annotations

import contextlib
import json
import socket
import threading
from collections.abc import Iterator

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


class _Recorder:
    """A loopback socket that records the head and body of each HTTP request it is sent and
    answers ``{}``: what the client put on the wire, whatever server or proxy it believes it
    talks to."""

    def __init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.requests: list[tuple[str, dict[str, str], bytes]] = []
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        with contextlib.suppress(OSError):
            while True:
                conn, _ = self.sock.accept()
                with conn, conn.makefile("rb") as stream:
                    while line := stream.readline():
                        head = [line.decode().rstrip("\r\n")]
                        while (field := stream.readline().decode().rstrip("\r\n")) != "":
                            head.append(field)
                        headers = {k.lower(): v.strip() for k, _, v in
                                   (h.partition(":") for h in head[1:])}  # fmt: skip
                        body = stream.read(int(headers.get("content-length", "0")))
                        self.requests.append((head[0], headers, body))
                        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}")

    def close(self) -> None:
        self.sock.close()


@pytest.fixture
def recorder() -> Iterator[_Recorder]:
    r = _Recorder()
    yield r
    r.close()


@pytest.mark.parametrize(
    ("prefix", "proxied", "method", "body", "request_line"),
    [
        pytest.param("", False, "GET", None, "GET /api/v1/nodes?limit=1 HTTP/1.1",
                     id="server-root"),
        pytest.param("/k8s/clusters/c-1/", False, "GET", None,
                     "GET /k8s/clusters/c-1/api/v1/nodes?limit=1 HTTP/1.1", id="server-path"),
        pytest.param("", False, "POST", {"a": [1, "é"], 2: None},
                     "POST /api/v1/nodes?limit=1 HTTP/1.1", id="json-body"),
        pytest.param("/p", True, "GET", None,
                     "GET http://example.invalid:6443/p/api/v1/nodes?limit=1 HTTP/1.1",
                     id="through-an-http-proxy"),
    ],
)  # fmt: skip
def test_what_a_request_puts_on_the_wire(
    recorder: _Recorder,
    prefix: str,
    proxied: bool,
    method: str,
    body: object,
    request_line: str,
) -> None:
    """Requests go straight to the server's connection pool, under the server URL's path; behind
    a proxy, the proxy gets the absolute URL. A JSON body is written as ``json.dumps`` reads it."""
    server = "http://example.invalid:6443" if proxied else f"http://127.0.0.1:{recorder.port}"
    configuration = Client.from_token(server + prefix, "t", None).configuration
    if proxied:
        configuration.proxy = f"http://127.0.0.1:{recorder.port}"
    c = Client(configuration)
    assert c.request(method, "/api/v1/nodes", params={"limit": 1}, body=body) == {}
    [(line, headers, sent)] = recorder.requests
    assert line == request_line
    assert headers["authorization"] == "Bearer t"
    if body is None:
        assert sent == b""
    else:
        assert json.loads(sent) == json.loads(json.dumps(body))
        assert headers["content-type"] == "application/json"
