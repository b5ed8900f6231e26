"""A loopback TCP proxy a test can sever: one per process under test, so that one process
alone loses the API server (a network partition of that process, not an outage).

Contract:

- :meth:`TcpProxy.start` listens on ``127.0.0.1`` (a free port) and forwards each accepted
  connection to ``target``, connecting from ``source`` (a loopback address of its own, e.g.
  ``127.0.0.2``, so the API server's audit log tells the processes apart by source IP).
- :meth:`sever` with ``"reset"``: every open connection is reset (RST, no FIN) and every new
  one is reset at once: the process sees refused and broken connections, as a host whose
  route went away and came back unreachable.
- :meth:`sever` with ``"blackhole"``: nothing is forwarded either way and new connections are
  accepted but not connected on; what arrives is held, as TCP holds unacknowledged bytes
  across a partition. :meth:`heal` delivers it: a request sent during the partition reaches
  the server late (the window the fault tests measure).
- :meth:`heal` forwards again; :meth:`stop` closes everything. All methods are thread-safe;
  the proxy runs its own event loop on a daemon thread.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import struct
import threading
from collections.abc import Coroutine
from typing import Any, Final, Literal

Mode = Literal["open", "reset", "blackhole"]
CHUNK: Final = 1 << 16


class TcpProxy:
    def __init__(self, target: tuple[str, int], *, source: str = "127.0.0.1") -> None:
        self.target = target
        self.source = source
        self.port = 0
        self.mode: Mode = "open"
        self.connections = 0  # accepted so far
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._server: asyncio.Server | None = None
        self._open: asyncio.Event | None = None
        self._writers: set[asyncio.StreamWriter] = set()
        self._tasks: set[asyncio.Task[None]] = set()

    # --- control (any thread) -------------------------------------------------------------

    def start(self) -> TcpProxy:
        self._thread.start()
        self._call(self._start())
        return self

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def sever(self, mode: Literal["reset", "blackhole"] = "reset") -> None:
        self._call(self._set_mode(mode))

    def heal(self) -> None:
        self._call(self._set_mode("open"))

    def stop(self) -> None:
        if not self._thread.is_alive():
            return
        self._call(self._stop())
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=10)
        self._loop.close()

    def _call(self, coro: Coroutine[Any, Any, None]) -> None:
        asyncio.run_coroutine_threadsafe(coro, self._loop).result(timeout=30)

    # --- the loop's side ------------------------------------------------------------------

    async def _start(self) -> None:
        self._open = asyncio.Event()
        self._open.set()
        self._server = await asyncio.start_server(self._accept, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]

    async def _set_mode(self, mode: Mode) -> None:
        assert self._open is not None
        self.mode = mode
        if mode == "open":
            self._open.set()
            return
        self._open.clear()
        if mode == "reset":
            for writer in list(self._writers):
                _reset(writer)

    async def _stop(self) -> None:
        if self._server is not None:
            self._server.close()
        for writer in list(self._writers):
            _reset(writer)
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        assert self._open is not None
        self.connections += 1
        self._writers.add(writer)
        upstream: asyncio.StreamWriter | None = None
        try:
            if self.mode == "reset":
                _reset(writer)
                return
            await self._open.wait()  # a blackhole holds a new connection here
            up_reader, upstream = await asyncio.open_connection(
                *self.target, local_addr=(self.source, 0)
            )
            self._writers.add(upstream)
            pumps = [
                asyncio.ensure_future(self._pump(reader, upstream)),
                asyncio.ensure_future(self._pump(up_reader, writer)),
            ]
            for pump in pumps:
                self._tasks.add(pump)
                pump.add_done_callback(self._tasks.discard)
            # Each direction ends on its own (a half-close passes on as one), as TCP's do.
            await asyncio.gather(*pumps, return_exceptions=True)
        except (OSError, asyncio.CancelledError):
            pass
        finally:
            for w in (writer, upstream):
                if w is not None:
                    self._writers.discard(w)
                    with contextlib.suppress(Exception):
                        w.close()

    async def _pump(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        assert self._open is not None
        while True:
            data = await reader.read(CHUNK)
            if not data:
                with contextlib.suppress(OSError):
                    writer.write_eof()
                return
            await self._open.wait()  # a blackhole holds what arrived until it heals
            if writer.is_closing():
                return
            writer.write(data)
            await writer.drain()


def _reset(writer: asyncio.StreamWriter) -> None:
    """Close with RST: SO_LINGER on with a zero timeout, then abort."""
    sock = writer.get_extra_info("socket")
    if sock is not None:
        with contextlib.suppress(OSError):
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    writer.transport.abort()
