"""The asyncio JSON client the engine and the operator run on: requests on the lean transport
(:mod:`corral.k8s.aio_transport`), watch streams (and everything behind a proxy) on aiohttp,
as kopf uses.

Same contract as :mod:`corral.k8s.client`: plain JSON in and out (``send`` may write protobuf),
:class:`ApiError` for every non-2xx answer, an answer with a ``Retry-After`` sent again as the
synchronous client does (each attempt takes its own token from the bucket, as client-go's
retries pass its rate limiter). Credentials and trust come from the synchronous
:class:`Client`'s configuration (kubeconfig or in-cluster). Requests other than watches pass a
client-side token bucket (:mod:`corral.k8s.ratelimit`) honouring ``clientConnection.qps`` /
``burst``.
"""

from __future__ import annotations

import asyncio
import asyncio.sslproto
import ssl
import time
from collections.abc import AsyncIterator, Mapping
from typing import Any, Final
from urllib.parse import urlencode

import aiohttp
import orjson

from corral.k8s import protobuf, protobuf_objects
from corral.k8s.aio_transport import AsyncTransport
from corral.k8s.client import (
    ACCEPT_PROTOBUF,
    CONTENT_APPLY_PATCH,
    CONTENT_JSON,
    JSON,
    RETRY_AFTER_ATTEMPTS,
    ApiError,
    Client,
    api_error,
    json_bytes,
)
from corral.k8s.observer import NO_ANSWER
from corral.k8s.ratelimit import TokenBucket
from corral.k8s.transport import TransportError, server_hostname_for, ssl_context_for

WATCH_READ_TIMEOUT: Final = 600.0  # longer than any timeoutSeconds the informers ask for
# A protobuf watch asks for protobuf and accepts JSON (a resource without a protobuf form).
ACCEPT_WATCH_PROTOBUF: Final = f"{protobuf_objects.ACCEPT_PROTOBUF_WATCH}, {CONTENT_JSON}"
MAX_WATCH_FRAME: Final = 16 << 20  # no object is larger (etcd's default request limit is 1.5 MiB)
# Requests (not watches) share at most this many kept-alive connections (behind a proxy, kept
# KEEPALIVE_SECONDS idle; otherwise the lean transport's IDLE_SECONDS). Unbounded and closed
# after aiohttp's default 15 s idle, a burst of Events and status writes
# (one of each per unschedulable pod) opened a connection per request in flight, each with a
# TLS handshake, again at every burst: 300+ in one benchmark run. A request beyond the bound
# waits for a free connection (client-go multiplexes its requests on one HTTP/2 connection
# instead). The bound leaves room for the Event recorder's 64 writes in flight beside the
# status writes: at 32, Events queued behind them, half a burst late.
REQUEST_CONNECTIONS: Final = 128
KEEPALIVE_SECONDS: Final = 120.0
# asyncio reads a TLS connection's socket into a buffer of ``SSLProtocol.max_size`` bytes, made
# (zeroed, so resident) when the connection opens: 256 KiB in CPython 3.11 to 3.13. The engine
# keeps one connection per watch and up to REQUEST_CONNECTIONS for requests: 8 MB of these
# buffers once the informers have synced (tracemalloc, `stdlib:sslproto`), up to 32 MB in a
# burst of writes (issue 42 part 4: peak RSS). A TLS record holds at most 16 KiB; 64 KiB takes
# four at a time, so a large list takes a few more reads and nothing else changes. Process-wide:
# every asyncio TLS connection of the process (kopf's too) gets the smaller buffer.
TLS_READ_BUFFER: Final = 64 << 10
asyncio.sslproto.SSLProtocol.max_size = TLS_READ_BUFFER


class AsyncClient:
    """JSON requests and watch streams against one API server with one identity."""

    def __init__(
        self,
        sync: Client,
        *,
        qps: float = 50.0,
        burst: int = 100,
        bucket: TokenBucket | None = None,
    ) -> None:
        self._sync = sync
        self.bucket = bucket or TokenBucket(qps, burst)
        self._sessions: dict[bool, aiohttp.ClientSession] = {}  # by "for watches"
        context = ssl_context_for(sync.configuration)
        self._ssl: ssl.SSLContext | bool = context or False
        # Requests take the lean transport (its docstring says why), made on first use in each
        # event loop (its connections belong to one); watches, and everything behind a proxy,
        # stay on aiohttp.
        self._lean_args = (
            None
            if sync.configuration.proxy
            else (sync.server, context, server_hostname_for(sync.configuration))
        )
        self._lean: AsyncTransport | None = None

    @property
    def sync(self) -> Client:
        """The synchronous client with the same identity (discovery, one-off calls)."""
        return self._sync

    def _session_for_loop(self, *, watch: bool = False) -> aiohttp.ClientSession:
        """Watches hold their connection for as long as they run: they get their own pool,
        unbounded, so they never wait behind requests nor hold requests up."""
        session = self._sessions.get(watch)
        if session is None or session.closed:
            if watch:
                connector = aiohttp.TCPConnector(ssl=self._ssl, limit=0)
            else:
                connector = aiohttp.TCPConnector(
                    ssl=self._ssl, limit=REQUEST_CONNECTIONS, keepalive_timeout=KEEPALIVE_SECONDS
                )
            # Watch lines (one object each) may be large: allow lines of up to 2 x 4 MiB.
            session = aiohttp.ClientSession(connector=connector, read_bufsize=4 << 20)
            self._sessions[watch] = session
        return session

    async def close(self) -> None:
        if self._lean is not None:
            self._lean.close()
            self._lean = None
        sessions, self._sessions = list(self._sessions.values()), {}
        for session in sessions:
            await session.close()

    def _headers(self, content_type: str | None, accept: str = CONTENT_JSON) -> dict[str, str]:
        headers = {"Accept": accept, "User-Agent": "corral"}
        auth = self._sync.authorization()
        if auth:
            headers["Authorization"] = auth
        if content_type:
            headers["Content-Type"] = content_type
        return headers

    def _url(self, path: str, params: Mapping[str, str | int | bool] | None) -> str:
        return self._sync.server.rstrip("/") + _target(path, params)

    async def request(
        self,
        method: str,
        path: str,
        *,
        body: Any = None,
        params: Mapping[str, str | int | bool] | None = None,
        content_type: str = CONTENT_JSON,
        timeout: float = 30.0,
    ) -> Any:
        payload = None if body is None else json_bytes(body)
        data = await self._exchange(
            method, path, params, payload, content_type, accept=CONTENT_JSON, timeout=timeout
        )
        return orjson.loads(data) if data else None

    async def send(
        self,
        path: str,
        body: Mapping[str, Any],
        *,
        content_type: str = CONTENT_JSON,
        timeout: float = 30.0,
    ) -> None:
        """:meth:`corral.k8s.client.Client.send` on the event loop: POST ``body``, its answer
        unread, as protobuf when ``content_type`` asks for it and the object can be written so."""
        payload = protobuf.encode(body) if content_type == protobuf.CONTENT_PROTOBUF else None
        if payload is None:
            await self.request("POST", path, body=body, timeout=timeout)
            return
        await self._exchange(
            "POST", path, None, payload, protobuf.CONTENT_PROTOBUF,
            accept=ACCEPT_PROTOBUF, timeout=timeout,
        )  # fmt: skip

    async def _exchange(
        self,
        method: str,
        path: str,
        params: Mapping[str, str | int | bool] | None,
        payload: bytes | None,
        content_type: str,
        *,
        accept: str,
        timeout: float,
    ) -> bytes:
        """One rate-limited request, sent again when the server asks to; the answer's body, or
        :class:`ApiError`."""
        waited = 0.0
        for attempt in range(RETRY_AFTER_ATTEMPTS + 1):
            try:
                return await self._exchange_once(
                    method, path, params, payload, content_type, accept=accept, timeout=timeout
                )
            except ApiError as err:
                wait = err.retry_wait
                if wait is None or attempt == RETRY_AFTER_ATTEMPTS or waited + wait > timeout:
                    raise
                waited += wait
                await asyncio.sleep(wait)
        raise AssertionError("unreachable")  # pragma: no cover

    async def _exchange_once(
        self,
        method: str,
        path: str,
        params: Mapping[str, str | int | bool] | None,
        payload: bytes | None,
        content_type: str,
        *,
        accept: str,
        timeout: float,
    ) -> bytes:
        delay = self.bucket.reserve(method)
        if delay:
            await asyncio.sleep(delay)
        headers = self._headers(content_type if payload is not None else None, accept)
        observer = self._sync.observer
        sent = time.perf_counter() if observer is not None else 0.0
        code, answer_headers = NO_ANSWER, None
        try:
            code, reason, body, answer_headers = await self._send(
                method, path, params=params, payload=payload, headers=headers, timeout=timeout
            )
        finally:
            if observer is not None:
                observer.requested(method, self._sync.host, code, time.perf_counter() - sent)
        if code >= 300:
            raise api_error(code, reason, body, answer_headers)
        return body

    async def _send(
        self,
        method: str,
        path: str,
        *,
        params: Mapping[str, str | int | bool] | None,
        payload: bytes | None,
        headers: dict[str, str],
        timeout: float,
    ) -> tuple[int, str, bytes, Mapping[str, str]]:
        """One request on the lean transport (or aiohttp): its status, reason, body and
        headers; raises :class:`ApiError` only when no answer came."""
        if self._lean_args is not None:
            if self._lean is None or self._lean.loop is not asyncio.get_running_loop():
                server, context, sni = self._lean_args
                self._lean = AsyncTransport(
                    server, context, server_hostname=sni, limit=REQUEST_CONNECTIONS
                )
            target = _target(path, params)
            try:
                answer = await self._lean.exchange(
                    method, target, headers, payload, timeout=timeout
                )
            except (TransportError, ValueError) as exc:
                url = self._url(path, params)
                raise ApiError(0, "TransportError", f"{method} {url}: {exc}") from exc
            return answer.status, answer.reason, answer.body, answer.headers
        url = self._url(path, params)
        try:
            async with self._session_for_loop().request(
                method,
                url,
                data=payload,
                headers=headers,
                timeout=aiohttp.ClientTimeout(total=timeout),
            ) as response:
                body = await response.read()
                return response.status, response.reason or "", body, response.headers
        except (aiohttp.ClientError, TimeoutError) as exc:
            raise ApiError(0, "TransportError", f"{method} {url}: {exc!r}") from exc

    async def apply(
        self, obj: Mapping[str, Any], *, field_manager: str, force: bool = True
    ) -> JSON:
        params: dict[str, str | int | bool] = {"fieldManager": field_manager, "force": force}
        result: JSON = await self.request(
            "PATCH",
            self._sync.path_of(obj),
            body=obj,
            params=params,
            content_type=CONTENT_APPLY_PATCH,
        )
        return result

    async def watch(
        self, path: str, params: Mapping[str, str | int | bool], *, protobuf_objects: bool = False
    ) -> AsyncIterator[JSON]:
        """Stream a watch: yields each event (``{"type": ..., "object": ...}``) as it arrives.

        ``protobuf_objects``: ask for Kubernetes' protobuf stream (JSON stays acceptable, for a
        resource the server cannot write as protobuf) and decode each object into the dict JSON
        gives (:mod:`corral.k8s.protobuf_objects`); an object its schema does not describe
        raises :class:`~corral.k8s.protobuf_objects.WireSchemaError` before it is yielded.

        Ends when the server closes the stream (``timeoutSeconds``); raises :class:`ApiError`
        on an error status or a broken connection."""
        url = self._url(path, {**params, "watch": True})
        timeout = aiohttp.ClientTimeout(total=None, sock_read=WATCH_READ_TIMEOUT)
        accept = ACCEPT_WATCH_PROTOBUF if protobuf_objects else CONTENT_JSON
        observer = self._sync.observer
        sent = time.perf_counter() if observer is not None else 0.0
        opened = False
        try:
            async with self._session_for_loop(watch=True).get(
                url, headers=self._headers(None, accept), timeout=timeout
            ) as response:
                opened = True
                if observer is not None:
                    elapsed = time.perf_counter() - sent
                    observer.requested("GET", self._sync.host, response.status, elapsed)
                if response.status >= 300:
                    body = await response.read()
                    raise api_error(response.status, response.reason or "", body, response.headers)
                if response.content_type == protobuf.CONTENT_PROTOBUF:
                    async for event in _protobuf_events(response.content):
                        yield event
                    return
                # Watch events are newline-delimited JSON; one line can exceed any chunk size.
                async for line in response.content:
                    if line.strip():
                        yield orjson.loads(line)
        except (aiohttp.ClientError, TimeoutError) as exc:
            if observer is not None and not opened:
                elapsed = time.perf_counter() - sent
                observer.requested("GET", self._sync.host, NO_ANSWER, elapsed)
            raise ApiError(0, "TransportError", f"watch {path}: {exc!r}") from exc


async def _protobuf_events(stream: aiohttp.StreamReader) -> AsyncIterator[JSON]:
    """Kubernetes' protobuf watch framing: a 4-byte big-endian length, then a
    ``metav1.WatchEvent``; the stream ends cleanly only between frames."""
    while True:
        try:
            header = await stream.readexactly(4)
        except asyncio.IncompleteReadError as exc:
            if exc.partial:
                raise aiohttp.ClientPayloadError("watch stream cut inside a frame header") from None
            return
        size = int.from_bytes(header, "big")
        if size > MAX_WATCH_FRAME:
            raise aiohttp.ClientPayloadError(f"watch frame of {size} bytes exceeds the limit")
        try:
            frame = await stream.readexactly(size)
        except asyncio.IncompleteReadError:
            raise aiohttp.ClientPayloadError("watch stream cut inside a frame") from None
        yield protobuf_objects.decode_watch_event(frame)


def _target(path: str, params: Mapping[str, str | int | bool] | None) -> str:
    if not params:
        return path
    return path + "?" + urlencode({k: _param(v) for k, v in params.items()})


def _param(value: str | int | bool) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)
