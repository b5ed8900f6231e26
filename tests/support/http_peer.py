"""A loopback HTTP/1.1 peer for transport tests: it reads each request's head and body and
answers with scripted bytes, so a test controls framing, closing and silence exactly. Not an
API server: the e2e tests talk to the real one."""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import Callable, Iterator

import pytest

OK = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}"

Answer = Callable[[int, bytes], tuple[bytes, bool]]  # (request number, head) -> (bytes, close)


class Peer:
    """A loopback socket that reads each request's head and body and answers as scripted."""

    def __init__(self, answer: Answer) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.answer = answer
        self.trickle = False  # send answers one byte at a time (they arrive in pieces)
        self.served = 0
        self.accepted: list[socket.socket] = []
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        with contextlib.suppress(OSError):
            while True:
                conn, _ = self.sock.accept()
                self.accepted.append(conn)
                threading.Thread(target=self._talk, args=(conn,), daemon=True).start()

    def _talk(self, conn: socket.socket) -> None:
        with contextlib.suppress(OSError), conn, conn.makefile("rb") as stream:
            while head := stream.readline():
                length = 0
                while (line := stream.readline()) not in (b"\r\n", b""):
                    head += line
                    if line.lower().startswith(b"content-length:"):
                        length = int(line.split(b":")[1])
                stream.read(length)
                self.served += 1
                data, close = self.answer(self.served, head)
                if self.trickle:
                    conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                    for i in range(len(data)):
                        conn.sendall(data[i : i + 1])
                else:
                    conn.sendall(data)
                if close:
                    return

    def close(self) -> None:
        self.sock.close()
        for conn in self.accepted:
            with contextlib.suppress(OSError):
                conn.close()


@pytest.fixture
def peer_of() -> Iterator[Callable[[Answer], Peer]]:
    peers: list[Peer] = []

    def make(answer: Answer) -> Peer:
        peers.append(Peer(answer))
        return peers[-1]

    yield make
    for p in peers:
        p.close()
