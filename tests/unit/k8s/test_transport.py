"""The lean HTTP/1.1 transport: answer framing (from bytes), the request it writes, and its
kept-alive connections against a loopback peer that answers as scripted (the real API server
is the e2e tests' part: tests/e2e/test_lean_transport.py)."""

from __future__ import annotations

import io
import socket
import threading
import time
from collections.abc import Callable

import pytest

from corral.k8s import transport as transport_module
from corral.k8s.transport import Response, Transport, TransportError, read_response
from support.http_peer import OK, Answer, Peer


@pytest.mark.parametrize(
    ("raw", "method", "status", "body", "keep_alive"),
    [
        pytest.param(OK, "GET", 200, b"{}", True, id="content-length"),
        pytest.param(b"HTTP/1.1 201 Created\r\nTransfer-Encoding: chunked\r\n\r\n"
                     b"3;ext=1\r\nabc\r\n0a\r\n0123456789\r\n0\r\nX-Trailer: t\r\n\r\n",
                     "POST", 201, b"abc0123456789", True, id="chunked-extension-trailer"),
        pytest.param(b"HTTP/1.1 200 OK\r\n\r\nuntil the end", "GET", 200, b"until the end",
                     False, id="to-the-end-of-the-connection"),
        pytest.param(b"HTTP/1.1 200 OK\r\nConnection: Close\r\nContent-Length: 1\r\n\r\nx",
                     "GET", 200, b"x", False, id="connection-close"),
        pytest.param(b"HTTP/1.0 200 OK\r\nContent-Length: 1\r\n\r\nx", "GET", 200, b"x", False,
                     id="http-1.0"),
        pytest.param(b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n", "HEAD", 200, b"", True,
                     id="head-has-no-body"),
        pytest.param(b"HTTP/1.1 204 No Content\r\n\r\n", "DELETE", 204, b"", True,
                     id="no-content"),
        pytest.param(b"HTTP/1.1 100 Continue\r\n\r\n" + OK, "POST", 200, b"{}", True,
                     id="interim-answer-skipped"),
        pytest.param(b"HTTP/1.1 403 Forbidden\nContent-Length: 1\n\nx", "GET", 403, b"x", True,
                     id="bare-line-feeds"),
    ],
)  # fmt: skip
def test_answer_framing(
    raw: bytes, method: str, status: int, body: bytes, keep_alive: bool
) -> None:
    reader = io.BufferedReader(io.BytesIO(raw + (b"NEXT" if keep_alive else b"")))
    response, reusable = read_response(reader, method)
    assert (response.status, response.body, reusable) == (status, body, keep_alive)
    if keep_alive:
        assert reader.read() == b"NEXT"  # read exactly one answer


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        pytest.param(b"", "closed before an answer", id="nothing"),
        pytest.param(b"SSH-2.0-OpenSSH\r\n\r\n", "malformed status line", id="not-http"),
        pytest.param(b"HTTP/1.1 2000 OK\r\n\r\n", "malformed status line", id="bad-code"),
        pytest.param(b"HTTP/1.1 200 OK\r\nContent-Len", "closed mid-answer", id="cut-in-headers"),
        pytest.param(b"HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\nabc", "cut short: 3 of 9",
                     id="short-body"),
        pytest.param(b"HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n", "Content-Length",
                     id="negative-length"),
        pytest.param(b"HTTP/1.1 200 OK\r\nno colon here\r\n\r\n", "malformed header line",
                     id="header-without-colon"),
        pytest.param(b"HTTP/1.1 200 OK\r\n folded: x\r\n\r\n", "malformed header line",
                     id="obsolete-line-folding"),
        pytest.param(b"HTTP/1.1 200 OK\r\nX: " + b"a" * transport_module.MAX_LINE + b"\r\n\r\n",
                     "line too long", id="header-line-too-long"),
        pytest.param(b"HTTP/1.1 200 OK\r\n" + b"X: y\r\n" * (transport_module.MAX_HEADERS + 1)
                     + b"\r\n", "header lines", id="too-many-headers"),
        pytest.param(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
                     "malformed chunk size", id="bad-chunk-size"),
        pytest.param(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nabX\r\n",
                     "chunk not followed", id="chunk-overrun"),
        pytest.param(b"HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: 0\r\n\r\n",
                     "unasked content coding", id="content-coding"),
    ],
)  # fmt: skip
def test_malformed_answers_are_one_line_errors(raw: bytes, message: str) -> None:
    with pytest.raises(TransportError, match=message) as caught:
        read_response(io.BufferedReader(io.BytesIO(raw)), "GET")
    assert "\n" not in str(caught.value)


@pytest.mark.parametrize(
    ("server", "target", "headers", "body", "wire"),
    [
        pytest.param("http://h:6443", "/api/v1/nodes?limit=1", {"Accept": "a/b"}, None,
                     b"GET /api/v1/nodes?limit=1 HTTP/1.1\r\nHost: h:6443\r\nAccept: a/b\r\n\r\n",
                     id="get"),
        pytest.param("http://h/k8s/c-1/", "/api/v1/pods", {}, b"{}",
                     b"POST /k8s/c-1/api/v1/pods HTTP/1.1\r\nHost: h\r\nContent-Length: 2\r\n"
                     b"\r\n{}", id="server-path-and-body"),
        pytest.param("http://h", "/api/v1/namespaces/a b/pods/%2F\u00e9", {}, b"",
                     b"POST /api/v1/namespaces/a%20b/pods/%2F%C3%A9 HTTP/1.1\r\nHost: h\r\n"
                     b"Content-Length: 0\r\n\r\n", id="target-percent-encoded"),
    ],
)  # fmt: skip
def test_the_request_on_the_wire(
    server: str, target: str, headers: dict[str, str], body: bytes | None, wire: bytes
) -> None:
    method = "GET" if body is None else "POST"
    assert Transport(server, None).encode_request(method, target, headers, body) == wire


@pytest.mark.parametrize(
    "headers",
    [
        pytest.param({"Authorization": "Bearer t\r\nX-Injected: 1"}, id="line-break-in-value"),
        pytest.param({"X-A: b\r\nX": "c"}, id="line-break-in-name"),
        pytest.param({"X-A:": "b"}, id="colon-in-name"),
    ],
)
def test_header_injection_is_refused(headers: dict[str, str]) -> None:
    with pytest.raises(ValueError, match="not allowed"):
        Transport("http://h", None).encode_request("GET", "/", headers, None)


@pytest.mark.parametrize(
    ("server", "context"),
    [
        pytest.param("ftp://h", None, id="not-http"),
        pytest.param("https://h", None, id="https-without-tls"),
        pytest.param("http://", None, id="no-host"),
    ],
)
def test_bad_servers_are_refused(server: str, context: None) -> None:
    with pytest.raises(ValueError, match="server"):
        Transport(server, context)


def _get(t: Transport, timeout: float = 5.0) -> Response:
    return t.exchange("GET", "/x", {"Accept": "application/json"}, timeout=timeout)


def test_one_connection_carries_request_after_request(peer_of: Callable[[Answer], Peer]) -> None:
    peer = peer_of(lambda n, head: (OK, False))
    t = Transport(f"http://127.0.0.1:{peer.port}", None)
    for _ in range(5):
        assert _get(t).body == b"{}"
    assert t.opened == 1


def test_a_closing_answer_is_not_reused(peer_of: Callable[[Answer], Peer]) -> None:
    closing = b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\n{}"
    peer = peer_of(lambda n, head: (closing, True))
    t = Transport(f"http://127.0.0.1:{peer.port}", None)
    assert [_get(t).status for _ in range(3)] == [200, 200, 200]
    assert t.opened == 3


def test_a_connection_the_server_closed_while_idle_is_replaced(
    peer_of: Callable[[Answer], Peer],
) -> None:
    # The peer answers as if keeping the connection, then closes it: the transport must see
    # that before writing the next request there (where it would fail).
    peer = peer_of(lambda n, head: (OK, True))
    t = Transport(f"http://127.0.0.1:{peer.port}", None)
    assert _get(t).status == 200
    deadline = time.monotonic() + 5
    while peer.served < 1 and time.monotonic() < deadline:
        time.sleep(0.01)
    time.sleep(0.1)  # the peer's close reaches this side
    assert _get(t).status == 200
    assert t.opened == 2


def test_a_connection_idle_too_long_is_replaced(
    peer_of: Callable[[Answer], Peer], monkeypatch: pytest.MonkeyPatch
) -> None:
    peer = peer_of(lambda n, head: (OK, False))
    t = Transport(f"http://127.0.0.1:{peer.port}", None)
    clock = [100.0]
    monkeypatch.setattr(transport_module.time, "monotonic", lambda: clock[0])
    _get(t)
    clock[0] += transport_module.IDLE_SECONDS - 1
    _get(t)
    assert t.opened == 1
    clock[0] += transport_module.IDLE_SECONDS + 1
    _get(t)
    assert t.opened == 2


def test_a_silent_server_times_out(peer_of: Callable[[Answer], Peer]) -> None:
    peer = peer_of(lambda n, head: (b"", False))  # reads the request, never answers
    t = Transport(f"http://127.0.0.1:{peer.port}", None)
    started = time.monotonic()
    with pytest.raises(TransportError, match="timed out"):
        _get(t, timeout=0.3)
    assert time.monotonic() - started < 5


def test_a_refused_connection_names_the_server() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # bound, not listening: refused
        t = Transport(f"http://127.0.0.1:{port}", None)
        with pytest.raises(TransportError, match=f"connecting to 127.0.0.1:{port}"):
            _get(t)


def test_a_failed_exchange_closes_its_connection(peer_of: Callable[[Answer], Peer]) -> None:
    peer = peer_of(lambda n, head: (b"HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\nabc", n == 1)
                   if n == 1 else (OK, False))  # fmt: skip
    t = Transport(f"http://127.0.0.1:{peer.port}", None)
    with pytest.raises(TransportError, match="cut short"):
        _get(t)
    assert _get(t).body == b"{}"  # on a new connection
    assert t.opened == 2


def test_threads_share_the_pool_without_mixing_answers(
    peer_of: Callable[[Answer], Peer],
) -> None:
    def echo(n: int, head: bytes) -> tuple[bytes, bool]:
        path = head.split(b" ")[1]
        return b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(path), path), False

    peer = peer_of(echo)
    t = Transport(f"http://127.0.0.1:{peer.port}", None)
    wrong: list[str] = []

    def work(thread: int) -> None:
        for i in range(50):
            target = f"/t{thread}/{i}"
            if t.exchange("GET", target, {}, timeout=5).body != target.encode():
                wrong.append(target)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(8)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert wrong == []
    assert 1 <= t.opened <= 8
