"""The lean HTTP/1.1 transport on the event loop: :mod:`corral.k8s.transport`'s contract
(framing, reuse, errors, no retries) for coroutines.

Why not aiohttp for these (the asyncio client keeps it for watch streams): the engine's event
loop writes an Event per scheduled pod, and an Event and a status patch per unschedulable one.
Through aiohttp's session each request cost the loop ~0.21 ms of CPU (request and response
objects, header multidicts, timers, tracing hooks); written whole on a kept-alive connection
and framed from the received bytes, ~0.11 ms (both measured against the real API server, 64 in
flight, Event bodies encoded in both).

Contract, beyond the synchronous transport's:

- At most ``limit`` connections are open for requests at once; a request beyond that waits
  for one to come back (client-go multiplexes on one HTTP/2 connection instead).
- ``timeout`` bounds the whole exchange, waiting for a connection included: a request still
  waiting when it expires is not sent; one sent has its connection closed (its answer may
  still come), as when the awaiting task is cancelled.
"""

from __future__ import annotations

import asyncio
import io
import ssl
import time
from collections.abc import Mapping
from typing import Any, Final, cast

from corral.k8s.transport import (
    IDLE_SECONDS,
    Response,
    Transport,
    TransportError,
    TruncatedError,
    read_response,
)

HEAD_END: Final = b"\r\n\r\n"


class _Connection(asyncio.Protocol):
    """One kept-alive connection: one request at a time, its answer framed from the bytes
    received so far each time more arrive (after the head is complete)."""

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.buffer = bytearray()
        self.answer: asyncio.Future[tuple[Response, bool]] | None = None
        self.method = "GET"
        self.idle_since = 0.0

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)  # a stream's, whatever the loop

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        if self.answer is not None and (HEAD_END in self.buffer or b"\n\n" in self.buffer):
            self._frame(at_eof=False)

    def eof_received(self) -> bool | None:
        return False  # close the connection; connection_lost frames what is left

    def connection_lost(self, exc: Exception | None) -> None:
        if self.answer is not None:
            self._frame(at_eof=True)

    def _frame(self, *, at_eof: bool) -> None:
        answer = self.answer
        if answer is None or answer.done():
            return
        reader = io.BufferedReader(io.BytesIO(self.buffer))
        try:
            framed = read_response(reader, self.method, at_eof=at_eof)
        except TruncatedError as exc:
            if at_eof:
                answer.set_exception(TransportError(str(exc)))
            return
        except TransportError as exc:
            answer.set_exception(exc)
            return
        del self.buffer[: reader.tell()]
        answer.set_result(framed)

    def reusable(self, now: float) -> bool:
        return (
            self.transport is not None
            and not self.transport.is_closing()  # closed, by either side
            and not self.buffer  # nothing unasked arrived while idle
            and now - self.idle_since < IDLE_SECONDS
        )

    def close(self) -> None:
        """Drop the connection now: no TLS goodbye to wait for, which would outlive a loop
        that is closing (and leave the socket open)."""
        if self.transport is not None:
            self.transport.abort()


class AsyncTransport:
    """Kept-alive HTTP/1.1 connections to one server for coroutines of one event loop."""

    def __init__(
        self,
        server: str,
        ssl_context: ssl.SSLContext | None,
        *,
        server_hostname: str | None = None,
        limit: int = 128,
    ) -> None:
        # The synchronous transport checks the server and writes the requests: one format.
        self._requests = Transport(server, ssl_context, server_hostname=server_hostname)
        self.loop = asyncio.get_running_loop()  # made in a coroutine: its connections' loop
        self._idle: list[_Connection] = []
        self._connections: set[_Connection] = set()  # open, idle or in use
        self._slots = asyncio.Semaphore(limit)
        self.opened = 0  # connections opened so far (for tests and benchmarks)

    async def exchange(
        self,
        method: str,
        target: str,
        headers: Mapping[str, str],
        body: bytes | None = None,
        *,
        timeout: float = 30.0,
    ) -> Response:
        """Send one request (``target``: path and query) and read its whole answer."""
        request = self._requests.encode_request(method, target, headers, body)
        loop = asyncio.get_running_loop()
        answer: asyncio.Future[tuple[Response, bool]] = loop.create_future()
        timer = loop.call_later(timeout, _expire, answer, timeout)
        try:
            async with self._slots:
                conn = await self._take(loop, answer)
                if answer.done():  # expired while waiting for a connection: not sent
                    self._give_back(conn)
                    answer.result()
                conn.method, conn.answer = method, answer
                keep_alive = False
                try:
                    assert conn.transport is not None
                    conn.transport.write(request)
                    response, keep_alive = await answer
                finally:
                    conn.answer = None
                    # Only a whole answer that allows it leaves the connection reusable.
                    if keep_alive:
                        self._give_back(conn)
                    else:
                        self._drop(conn)
        finally:
            timer.cancel()
        return response

    def close(self) -> None:
        """Drop every connection; exchanges still in flight fail with :class:`TransportError`."""
        self._idle = []
        connections, self._connections = self._connections, set()
        for conn in connections:
            conn.close()

    async def _take(
        self, loop: asyncio.AbstractEventLoop, answer: asyncio.Future[tuple[Response, bool]]
    ) -> _Connection:
        now = time.monotonic()
        while self._idle:
            conn = self._idle.pop()
            if conn.reusable(now):
                return conn
            self._drop(conn)
        host, port, tls, sni = self._requests.endpoint
        connecting = asyncio.ensure_future(
            loop.create_connection(
                _Connection, host, port, ssl=tls, server_hostname=sni if tls else None
            )
        )
        # The exchange's timer expires the answer: stop waiting for the connection then too.
        waiting: set[asyncio.Future[Any]] = {connecting, answer}
        done, _ = await asyncio.wait(waiting, return_when=asyncio.FIRST_COMPLETED)
        if connecting not in done:
            connecting.cancel()
            answer.result()  # raises the timeout
        try:
            _, conn = connecting.result()
        except (OSError, ssl.SSLError) as exc:
            raise TransportError(
                f"connecting to {host}:{port}: {type(exc).__name__}: {exc}"
            ) from exc
        self.opened += 1
        self._connections.add(conn)
        return conn

    def _drop(self, conn: _Connection) -> None:
        self._connections.discard(conn)
        conn.close()

    def _give_back(self, conn: _Connection) -> None:
        conn.idle_since = time.monotonic()
        self._idle.append(conn)


def _expire(answer: asyncio.Future[tuple[Response, bool]], timeout: float) -> None:
    if not answer.done():
        answer.set_exception(TransportError(f"timed out after {timeout:g} s"))
