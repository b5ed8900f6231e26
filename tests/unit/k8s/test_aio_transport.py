"""The lean transport on the event loop against a loopback peer that answers as scripted:
answers framed as they arrive in pieces, kept-alive reuse, the connection bound, timeouts and
cancellation (the real API server: tests/e2e/test_lean_transport.py)."""

from __future__ import annotations

import asyncio
import socket
import time
from collections.abc import Callable

import pytest

from corral.k8s import aio_transport as aio_module
from corral.k8s.aio_transport import AsyncTransport
from corral.k8s.transport import TransportError
from support.http_peer import OK, Answer, Peer

PeerOf = Callable[[Answer], Peer]


def _run(peer: Peer, work: Callable[[AsyncTransport], object], **options: int) -> AsyncTransport:
    async def main() -> AsyncTransport:
        t = AsyncTransport(f"http://127.0.0.1:{peer.port}", None, **options)
        await work(t)  # type: ignore[misc]
        t.close()
        return t

    return asyncio.run(main())


async def _get(t: AsyncTransport, timeout: float = 5.0) -> bytes:
    return (await t.exchange("GET", "/x", {}, timeout=timeout)).body


@pytest.mark.parametrize(
    ("answer", "body"),
    [
        pytest.param(OK, b"{}", id="content-length"),
        pytest.param(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
                     b"4\r\nabcd\r\n3\r\nefg\r\n0\r\n\r\n", b"abcdefg", id="chunked"),
        pytest.param(b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nto the end", b"to the end",
                     id="to-the-end"),
    ],
)  # fmt: skip
def test_answers_arriving_byte_by_byte_are_framed(
    peer_of: PeerOf, answer: bytes, body: bytes
) -> None:
    closes = b"Content-Length" not in answer and b"chunked" not in answer
    peer = peer_of(lambda n, head: (answer, closes))
    peer.trickle = True  # one byte per send, so the answer arrives in many pieces
    got: list[bytes] = []

    async def work(t: AsyncTransport) -> None:
        got.append(await _get(t))
        got.append(await _get(t))

    t = _run(peer, work)
    assert got == [body, body]
    assert t.opened == (2 if closes else 1)


def test_concurrent_requests_stay_within_the_bound(peer_of: PeerOf) -> None:
    def echo(n: int, head: bytes) -> tuple[bytes, bool]:
        path = head.split(b" ")[1]
        return b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(path), path), False

    peer = peer_of(echo)
    results: list[bool] = []

    async def work(t: AsyncTransport) -> None:
        async def one(i: int) -> None:
            answer = await t.exchange("GET", f"/r/{i}", {}, timeout=5)
            results.append(answer.body == f"/r/{i}".encode())

        await asyncio.gather(*(one(i) for i in range(100)))

    t = _run(peer, work, limit=4)
    assert results == [True] * 100
    assert 1 <= t.opened <= 4


def test_a_connection_the_server_closed_is_replaced(peer_of: PeerOf) -> None:
    peer = peer_of(lambda n, head: (OK, True))  # answers as if keeping it, then closes

    async def work(t: AsyncTransport) -> None:
        await _get(t)
        await asyncio.sleep(0.1)  # the close arrives while the connection is idle
        await _get(t)

    assert _run(peer, work).opened == 2


def test_a_connection_idle_too_long_is_replaced(
    peer_of: PeerOf, monkeypatch: pytest.MonkeyPatch
) -> None:
    peer = peer_of(lambda n, head: (OK, False))
    clock = [100.0]
    monkeypatch.setattr(aio_module.time, "monotonic", lambda: clock[0])

    async def work(t: AsyncTransport) -> None:
        await _get(t)
        clock[0] += aio_module.IDLE_SECONDS + 1
        await _get(t)

    assert _run(peer, work).opened == 2


@pytest.mark.parametrize(
    ("answer", "message"),
    [
        pytest.param(b"HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\nabc", "cut short",
                     id="closed-mid-body"),
        pytest.param(b"", "closed before an answer", id="closed-without-answer"),
        pytest.param(b"garbage\r\n\r\n", "malformed status line", id="not-http"),
    ],
)  # fmt: skip
def test_broken_answers_fail_and_the_next_request_gets_a_new_connection(
    peer_of: PeerOf, answer: bytes, message: str
) -> None:
    peer = peer_of(lambda n, head: (answer, True) if n == 1 else (OK, False))
    errors: list[str] = []

    async def work(t: AsyncTransport) -> None:
        try:
            await _get(t)
        except TransportError as exc:
            errors.append(str(exc))
        assert await _get(t) == b"{}"

    t = _run(peer, work)
    assert len(errors) == 1
    assert message in errors[0]
    assert t.opened == 2


def test_a_silent_server_times_out_and_the_connection_is_dropped(peer_of: PeerOf) -> None:
    peer = peer_of(lambda n, head: (b"", False) if n == 1 else (OK, False))
    started = time.monotonic()
    errors: list[str] = []

    async def work(t: AsyncTransport) -> None:
        try:
            await _get(t, timeout=0.3)
        except TransportError as exc:
            errors.append(str(exc))
        assert await _get(t) == b"{}"  # not on the connection whose answer is still due

    t = _run(peer, work)
    assert errors == ["timed out after 0.3 s"]
    assert time.monotonic() - started < 5
    assert t.opened == 2


def test_a_request_that_expires_waiting_for_a_connection_is_not_sent(peer_of: PeerOf) -> None:
    peer = peer_of(lambda n, head: (b"", False))  # never answers: the one connection stays busy
    errors: list[str] = []

    async def work(t: AsyncTransport) -> None:
        async def one(timeout: float) -> None:
            try:
                await _get(t, timeout=timeout)
            except TransportError as exc:
                errors.append(str(exc))

        await asyncio.gather(one(0.5), one(0.2))

    _run(peer, work, limit=1)
    assert sorted(errors) == ["timed out after 0.2 s", "timed out after 0.5 s"]
    assert peer.served == 1


def test_a_cancelled_request_closes_its_connection(peer_of: PeerOf) -> None:
    peer = peer_of(lambda n, head: (b"", False) if n == 1 else (OK, False))

    async def work(t: AsyncTransport) -> None:
        task = asyncio.create_task(_get(t))
        await asyncio.sleep(0.2)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert await _get(t) == b"{}"

    assert _run(peer, work).opened == 2


def test_a_refused_connection_is_a_transport_error() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]

        async def main() -> str:
            t = AsyncTransport(f"http://127.0.0.1:{port}", None)
            try:
                await _get(t)
            except TransportError as exc:
                return str(exc)
            return ""

        assert f"connecting to 127.0.0.1:{port}" in asyncio.run(main())
