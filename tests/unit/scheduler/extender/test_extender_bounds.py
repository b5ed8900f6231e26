"""The extender client's bounds against hostile peers on 127.0.0.1, and the extender server's
request limit: a deadline over the whole answer, a reply size cap, JSON that is not JSON.

Each peer here is a raw socket server scripted byte by byte, so a bound that is removed shows:
a trickling peer then holds the call for its whole script (tens of seconds, far past the
asserted time), an endless one until memory runs out.
"""

from __future__ import annotations

import contextlib
import json
import socket
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from corral.extender import Extender, ExtenderArgs, ExtenderFilterResult, serve_in_thread
from corral.extender.server import DEFAULT_MAX_REQUEST_BYTES
from corral.scheduler.config.types import Extender as ExtenderConfig
from corral.scheduler.extender import HTTPExtender
from corral.scheduler.extender.client import MIN_MAX_REPLY_BYTES, max_reply
from corral.scheduler.framework.extender import ExtenderError
from corral.scheduler.framework.types import NodeRecord
from corral.testing.builders import pod_info

NODES = [NodeRecord(name=f"n{i}") for i in range(3)]
Peer = Callable[[socket.socket], None]


def _trickle_body(conn: socket.socket) -> None:
    conn.sendall(
        b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 400\r\n\r\n"
    )
    for _ in range(400):  # 400 bytes over 40 s, each well within a per-read timeout
        conn.sendall(b" ")
        time.sleep(0.1)


def _trickle_headers(conn: socket.socket) -> None:
    for byte in b"HTTP/1.1 200 OK\r\n" + b"X-Slow: " + b"a" * 400:
        conn.sendall(bytes([byte]))
        time.sleep(0.1)


SENT: list[int] = []  # MiB the last endless peer sent before the client hung up


def _endless(conn: socket.socket) -> None:
    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 1288490188\r\n\r\n")  # 1.2 GB announced
    _flood(conn, b" " * (1 << 20))


def _chunked_endless(conn: socket.socket) -> None:
    conn.sendall(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")
    _flood(conn, b"100000\r\n" + b" " * 0x100000 + b"\r\n")


def _flood(conn: socket.socket, chunk: bytes) -> None:
    SENT[:] = [0]
    try:
        for _ in range(1230):
            conn.sendall(chunk)
            SENT[0] += 1
    except OSError:
        pass  # the client hung up, as it should


@pytest.fixture
def peer() -> Iterator[Callable[[Peer], str]]:
    """``peer(script)`` serves ``script`` to every connection; gives the URL prefix."""
    servers: list[socket.socket] = []

    def start(script: Peer) -> str:
        server = socket.create_server(("127.0.0.1", 0))
        servers.append(server)

        def serve() -> None:
            while True:
                try:
                    conn, _ = server.accept()
                except OSError:
                    return
                with conn:
                    _read_request(conn)
                    with contextlib.suppress(OSError):
                        script(conn)

        threading.Thread(target=serve, daemon=True).start()
        return f"http://127.0.0.1:{server.getsockname()[1]}"

    yield start
    for server in servers:
        server.close()


def _read_request(conn: socket.socket) -> None:
    data = b""
    while b"\r\n\r\n" not in data:
        data += conn.recv(65536)
    head, _, body = data.partition(b"\r\n\r\n")
    length = int(next(line.split(b":")[1] for line in head.split(b"\r\n")
                      if line.lower().startswith(b"content-length")))  # fmt: skip
    while len(body) < length:
        body += conn.recv(65536)


def _filter(url: str, timeout: str = "1s") -> HTTPExtender:
    return HTTPExtender(ExtenderConfig(url_prefix=url, filter_verb="filter", http_timeout=timeout))


@pytest.mark.parametrize(
    "script",
    [
        pytest.param(_trickle_body, id="a body trickling a byte per 100 ms"),
        pytest.param(_trickle_headers, id="headers trickling a byte per 100 ms"),
    ],
)
def test_the_deadline_covers_the_whole_answer(peer: Callable[[Peer], str], script: Peer) -> None:
    ext = _filter(peer(script), "1s")
    start = time.monotonic()
    with pytest.raises(ExtenderError) as caught:
        ext.filter(pod_info("p"), NODES)
    took = time.monotonic() - start
    assert str(caught.value).endswith(
        "/filter\": no whole answer within 1s (the extender's httpTimeout)"
    )
    assert took < 3.0, f"the call lasted {took:.1f}s past a 1s httpTimeout"


@pytest.mark.parametrize(
    "script",
    [
        pytest.param(_endless, id="Content-Length: 1.2 GB"),
        pytest.param(_chunked_endless, id="chunks without end"),
    ],
)
def test_a_reply_past_the_cap_is_refused_as_it_arrives(
    peer: Callable[[Peer], str], script: Peer
) -> None:
    ext = _filter(peer(script), "60s")
    with pytest.raises(ExtenderError) as caught:
        ext.filter(pod_info("p"), NODES)
    assert str(caught.value).endswith(
        f'/filter": the answer is larger than {MIN_MAX_REPLY_BYTES} bytes'
    )
    time.sleep(0.5)  # the peer notices the hang-up
    assert SENT[0] < 64, f"the client read {SENT[0]} MiB of a reply capped at 16 MiB"


@pytest.mark.parametrize(
    ("request_bytes", "cap"),
    [
        pytest.param(100, MIN_MAX_REPLY_BYTES, id="small requests: the floor"),
        pytest.param(30 * 2**20, 60 * 2**20, id="large requests: twice their size"),
    ],
)
def test_max_reply(request_bytes: int, cap: int) -> None:
    assert max_reply(request_bytes) == cap


class _Reply:
    def __init__(self, body: bytes) -> None:
        self.body = body

    def post(self, url: str, body: bytes, *, max_reply: int) -> tuple[int, bytes]:
        return 200, self.body


@pytest.mark.parametrize(
    ("reply", "message"),
    [
        pytest.param(b'{"NodeNames": [NaN]}', "NaN is not JSON", id="NaN"),
        pytest.param(b'{"Error": Infinity}', "Infinity is not JSON", id="Infinity"),
        pytest.param(b"[" * 100_000 + b"]" * 100_000, "JSON nested too deep", id="deep"),
        pytest.param(b'{"NodeNames": [' + b"9" * 5000 + b"]}", "Exceeds the limit (4300 digits)",
                     id="5000 digits"),
        pytest.param(b"\xff\xfe{", "not UTF-8 JSON", id="not UTF-8"),
    ],
)  # fmt: skip
def test_a_reply_that_is_not_json_is_one_line(reply: bytes, message: str) -> None:
    ext = HTTPExtender(
        ExtenderConfig(url_prefix="http://x", filter_verb="filter"), transport=_Reply(reply)
    )
    with pytest.raises(ExtenderError) as caught:
        ext.filter(pod_info("p"), NODES)
    assert message in str(caught.value)
    assert "\n" not in str(caught.value)


def _node(i: int) -> dict[str, Any]:
    """A Node as an API server sends it, with the status a kubelet reports (~10 KB)."""
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": f"node-{i:05d}",
            "uid": f"8d3b9a4e-0000-4000-8000-{i:012d}",
            "resourceVersion": str(100000 + i),
            "labels": {"kubernetes.io/hostname": f"node-{i:05d}", "pool": "a",
                       "topology.kubernetes.io/zone": f"zone-{i % 3}"},
            "annotations": {"node.alpha.kubernetes.io/ttl": "0", "note": "x" * 2000},
        },
        "spec": {"podCIDR": f"10.{i // 256}.{i % 256}.0/24"},
        "status": {
            "allocatable": {"cpu": "32", "memory": "128Gi", "pods": "110"},
            "capacity": {"cpu": "32", "memory": "128Gi", "pods": "110"},
            "conditions": [{"type": t, "status": "False", "reason": f"Kubelet{t}", "message":
                            "kubelet has sufficient resources " * 3}
                           for t in ("MemoryPressure", "DiskPressure", "PIDPressure", "Ready")],
            "images": [{"names": [f"registry.example.com/team/image-{j}@sha256:{'a' * 64}",
                                  f"registry.example.com/team/image-{j}:v1"],
                        "sizeBytes": 100_000_000} for j in range(20)],
            "nodeInfo": {"kubeletVersion": "v1.37.2", "osImage": "Debian GNU/Linux 12"},
        },
    }  # fmt: skip


def test_a_1500_node_filter_call_fits_the_servers_default_limit() -> None:
    nodes = [NodeRecord(name=f"node-{i:05d}", raw=_node(i)) for i in range(1500)]
    with serve_in_thread(_limited(DEFAULT_MAX_REQUEST_BYTES)) as url:
        ext = HTTPExtender(ExtenderConfig(url_prefix=url, filter_verb="filter"))
        sent = len(json.dumps(ext._args(pod_info("p"), nodes).to_json()))
        assert sent > 8 * 2**20  # far past aiohttp's own 1 MiB default
        result = ext.filter(pod_info("p"), nodes)
    assert len(result.node_names) == 1500


@pytest.mark.parametrize(
    ("limit", "body_bytes", "status"),
    [
        pytest.param(DEFAULT_MAX_REQUEST_BYTES, DEFAULT_MAX_REQUEST_BYTES + 1, 413,
                     id="past the default limit"),
        pytest.param(1000, 1001, 413, id="past a limit set lower"),
        pytest.param(1000, 900, 200, id="within a limit set lower"),
    ],
)  # fmt: skip
def test_the_servers_request_limit(limit: int, body_bytes: int, status: int) -> None:
    doc = b'{"Pod": {}, "NodeNames": ["n0"], "pad": "'
    body = doc + b"x" * (body_bytes - len(doc) - 2) + b'"}'
    with serve_in_thread(_limited(limit)) as url:
        req = urllib.request.Request(
            f"{url}/filter", data=body, headers={"Content-Type": "application/json"}
        )
        try:
            with urllib.request.urlopen(req, timeout=30) as resp:
                got = resp.status
        except urllib.error.HTTPError as err:
            got = err.code
    assert got == status


def _limited(limit: int) -> Extender:
    ext = Extender(max_request_bytes=limit)

    @ext.filter
    def _filter(args: ExtenderArgs) -> ExtenderFilterResult:
        return ExtenderFilterResult.keep(args, list(args.candidates))

    return ext
