"""The clients' lean transports against the real API server: both framings the server uses,
kept-alive connections shared by threads, its error answers, and TLS that still verifies the
server."""

from __future__ import annotations

import asyncio
import threading

import certifi
import pytest

from corral.k8s import Client
from corral.k8s.aio import AsyncClient
from corral.k8s.client import ApiError


def _lean(kube: Client) -> Client:
    """A client of its own (a fresh transport to count connections on), same identity."""
    fresh = Client(kube.configuration)
    assert fresh._lean is not None  # no proxy here: the lean transport serves requests
    return fresh


def test_both_framings_of_the_server_are_read(kube: Client, namespace: str) -> None:
    client = _lean(kube)
    for i in range(12):
        body = {"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": f"cm-{i}", "namespace": namespace},
                "data": {"blob": "x" * 1000}}  # fmt: skip
        client.create(body)
    assert client._lean is not None
    auth = client.authorization()
    headers = {"Accept": "application/json", **({"Authorization": auth} if auth else {})}
    small = client._lean.exchange("GET", f"/api/v1/namespaces/{namespace}", headers, timeout=10)
    large = client._lean.exchange(
        "GET", f"/api/v1/namespaces/{namespace}/configmaps", headers, timeout=10
    )
    assert small.headers.get("content-length") == str(len(small.body))
    assert large.headers.get("transfer-encoding") == "chunked"  # > 2 KiB: Go's server chunks
    listed = client.request("GET", f"/api/v1/namespaces/{namespace}/configmaps")
    names = {item["metadata"]["name"] for item in listed["items"]}
    assert {f"cm-{i}" for i in range(12)} <= names
    assert client._lean.opened == 1  # every request above on one kept-alive connection


def test_threads_share_kept_alive_connections(kube: Client, namespace: str) -> None:
    client = _lean(kube)
    failures: list[str] = []

    def work(thread: int) -> None:
        for i in range(25):
            name = f"t{thread}-{i}"
            body = {"apiVersion": "v1", "kind": "ConfigMap",
                    "metadata": {"name": name, "namespace": namespace}}  # fmt: skip
            try:
                created = client.request(
                    "POST", f"/api/v1/namespaces/{namespace}/configmaps", body=body
                )
                if created["metadata"]["name"] != name:
                    failures.append(f"{name}: answered {created['metadata']['name']}")
            except ApiError as exc:
                failures.append(f"{name}: {exc}")

    threads = [threading.Thread(target=work, args=(k,)) for k in range(16)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert failures == []
    assert client._lean is not None
    assert 1 <= client._lean.opened <= 16


@pytest.mark.parametrize(
    ("path", "status", "reason"),
    [
        pytest.param("/api/v1/namespaces/{ns}/configmaps/absent", 404, "NotFound",
                     id="not-found"),
        pytest.param("/api/v1/namespaces/{ns}/configmaps/Not_A_Name", 404, "NotFound",
                     id="invalid-name"),
        pytest.param("/api/v1/namespaces/{ns}/configmaps/a b", 404, "NotFound",
                     id="space-encoded"),
    ],
)  # fmt: skip
def test_error_answers_carry_the_api_status(
    kube: Client, namespace: str, path: str, status: int, reason: str
) -> None:
    with pytest.raises(ApiError) as caught:
        _lean(kube).request("GET", path.format(ns=namespace))
    assert (caught.value.status, caught.value.reason) == (status, reason)


def test_a_server_outside_the_trusted_authorities_is_refused(kube: Client) -> None:
    token = kube.authorization() or "Bearer none"
    stranger = Client.from_token(kube.server, token.removeprefix("Bearer "), certifi.where())
    with pytest.raises(ApiError, match="CERTIFICATE_VERIFY_FAILED") as caught:
        stranger.request("GET", "/api/v1/namespaces/default")
    assert caught.value.status == 0


def test_the_event_loop_client_reads_both_framings_and_errors(kube: Client, namespace: str) -> None:
    for i in range(12):
        body = {"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": f"big-{i}", "namespace": namespace},
                "data": {"blob": "y" * 1000}}  # fmt: skip
        kube.create(body)

    async def main() -> tuple[set[str], str, int, int]:
        client = AsyncClient(kube, qps=1000, burst=1000)
        try:
            listed = await client.request("GET", f"/api/v1/namespaces/{namespace}/configmaps")
            one = await client.request("GET", f"/api/v1/namespaces/{namespace}/configmaps/big-0")
            try:
                await client.request("GET", f"/api/v1/namespaces/{namespace}/configmaps/absent")
                status = 200
            except ApiError as exc:
                status = exc.status
            assert client._lean is not None
            return (
                {item["metadata"]["name"] for item in listed["items"]},
                one["metadata"]["name"],
                status,
                client._lean.opened,
            )
        finally:
            await client.close()

    names, one, status, opened = asyncio.run(main())
    assert {f"big-{i}" for i in range(12)} <= names  # a chunked answer (> 2 KiB)
    assert one == "big-0"  # a Content-Length one
    assert status == 404
    assert opened == 1
