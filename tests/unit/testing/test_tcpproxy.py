"""The fault tests' severable proxy against a local echo server: it forwards, a reset breaks
and refuses connections, a blackhole holds what is sent until it heals."""

from __future__ import annotations

import socket
import socketserver
import threading
from collections.abc import Iterator

import pytest

from support.tcpproxy import TcpProxy


class Echo(socketserver.BaseRequestHandler):
    def handle(self) -> None:
        try:
            while data := self.request.recv(4096):
                self.request.sendall(data)
        except ConnectionResetError:
            pass  # the proxy reset its side


@pytest.fixture
def proxy() -> Iterator[TcpProxy]:
    server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), Echo)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    started = TcpProxy(server.server_address[:2], source="127.0.0.2").start()  # type: ignore[arg-type]
    yield started
    started.stop()
    server.shutdown()
    server.server_close()


def connect(proxy: TcpProxy) -> socket.socket:
    return socket.create_connection(("127.0.0.1", proxy.port), timeout=5)


def exchange(proxy: TcpProxy, data: bytes, conn: socket.socket | None = None) -> bytes:
    """Send ``data`` (on ``conn``, else on a new connection) and read as much back."""
    if conn is None:
        with connect(proxy) as fresh:
            return exchange(proxy, data, fresh)
    conn.sendall(data)
    return conn.recv(len(data))


def test_forwards_both_ways(proxy: TcpProxy) -> None:
    assert exchange(proxy, b"ping") == b"ping"


def test_reset_breaks_open_connections_and_refuses_new_ones(proxy: TcpProxy) -> None:
    with connect(proxy) as conn:
        assert exchange(proxy, b"a", conn) == b"a"
        proxy.sever("reset")
        with pytest.raises(ConnectionResetError):
            exchange(proxy, b"b", conn)
    with pytest.raises(ConnectionResetError):  # at connect or at the first exchange
        exchange(proxy, b"c")
    proxy.heal()
    assert exchange(proxy, b"d") == b"d"


def test_blackhole_holds_until_healed(proxy: TcpProxy) -> None:
    with connect(proxy) as conn:
        proxy.sever("blackhole")
        conn.sendall(b"late")
        conn.settimeout(0.5)
        with pytest.raises(TimeoutError):
            conn.recv(4)
        proxy.heal()
        conn.settimeout(5)
        assert conn.recv(4) == b"late"
