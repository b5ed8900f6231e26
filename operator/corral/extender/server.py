"""An extender server on aiohttp: register handlers with decorators, serve their verbs.

Contract of each verb (``POST <prefix>/<verb>``, JSON in and out, as the scheduler calls it):

- ``filter``: ``ExtenderArgs`` → ``ExtenderFilterResult``. A handler exception becomes a reply
  with ``Error`` set, which fails the pod's cycle unless the extender is ``ignorable``.
- ``prioritize``: ``ExtenderArgs`` → list of ``HostPriority`` (or a ``{node: score}`` mapping).
  A handler exception becomes HTTP 500; the scheduler then ignores this extender's scores.
- ``bind``: ``ExtenderBindingArgs`` → ``ExtenderBindingResult`` (or ``None`` for success). An
  exception becomes a reply with ``Error`` set.
- ``preempt``: ``ExtenderPreemptionArgs`` → ``ExtenderPreemptionResult``; an exception → 500.

Handlers may be plain functions (run in a worker thread, so they may block) or coroutines
(awaited on the event loop). A body that does not decode gets HTTP 400, one larger than
``max_request_bytes`` (default :data:`DEFAULT_MAX_REQUEST_BYTES`) HTTP 413. ``GET <prefix>/healthz``
answers ``ok`` for readiness probes.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import json
import logging
import ssl
import threading
from collections.abc import Awaitable, Callable, Iterator, Mapping
from typing import Any, Final, TypeVar

from aiohttp import web

from corral.extender.types import (
    ExtenderArgs,
    ExtenderBindingArgs,
    ExtenderBindingResult,
    ExtenderFilterResult,
    ExtenderPreemptionArgs,
    ExtenderPreemptionResult,
    HostPriority,
    WireError,
    loads,
    priorities_to_json,
)

logger = logging.getLogger("corral.extender")

# The largest request body read (aiohttp's own default, 1 MiB, is below a 1,500-node filter
# call of full Node objects); a larger one gets HTTP 413. ``Extender(max_request_bytes=...)``.
DEFAULT_MAX_REQUEST_BYTES: Final = 64 * 2**20

_A = TypeVar("_A")
_R = TypeVar("_R")
Handler = Callable[[_A], _R | Awaitable[_R]]
FilterHandler = Handler[ExtenderArgs, ExtenderFilterResult]
PrioritizeHandler = Handler[ExtenderArgs, list[HostPriority] | Mapping[str, int]]
BindHandler = Handler[ExtenderBindingArgs, ExtenderBindingResult | None]
PreemptHandler = Handler[ExtenderPreemptionArgs, ExtenderPreemptionResult]
_F = TypeVar("_F", bound=Callable[..., Any])


async def _call(handler: Callable[[_A], Any], args: _A) -> Any:
    if inspect.iscoroutinefunction(handler):
        return await handler(args)
    result = await asyncio.to_thread(handler, args)
    if inspect.isawaitable(result):
        return await result
    return result


def _reply(doc: Any) -> web.Response:
    return web.json_response(doc, dumps=lambda d: json.dumps(d, separators=(",", ":")))


class Extender:
    """A scheduler extender: up to one handler per verb, served by :meth:`app` or :meth:`run`.

    Example::

        ext = Extender()

        @ext.filter
        def even_nodes(args: ExtenderArgs) -> ExtenderFilterResult:
            keep = [n for n in args.candidates if n[-1] in "02468"]
            return ExtenderFilterResult.keep(args, keep)

        ext.run(port=8888)   # POST /filter
    """

    def __init__(
        self,
        *,
        filter_verb: str = "filter",
        prioritize_verb: str = "prioritize",
        bind_verb: str = "bind",
        preempt_verb: str = "preempt",
        max_request_bytes: int = DEFAULT_MAX_REQUEST_BYTES,
    ) -> None:
        self.max_request_bytes = max_request_bytes
        self.verbs = {
            "filter": filter_verb,
            "prioritize": prioritize_verb,
            "bind": bind_verb,
            "preempt": preempt_verb,
        }
        self._filter: FilterHandler | None = None
        self._prioritize: PrioritizeHandler | None = None
        self._bind: BindHandler | None = None
        self._preempt: PreemptHandler | None = None

    # --- registration (each decorator returns the function unchanged) --------------------------

    def filter(self, fn: _F) -> _F:
        self._filter = fn
        return fn

    def prioritize(self, fn: _F) -> _F:
        self._prioritize = fn
        return fn

    def bind(self, fn: _F) -> _F:
        self._bind = fn
        return fn

    def preempt(self, fn: _F) -> _F:
        self._preempt = fn
        return fn

    # --- serving ------------------------------------------------------------------------------

    def app(self, *, prefix: str = "") -> web.Application:
        """An aiohttp application serving the registered verbs under ``prefix``."""
        base = "/" + prefix.strip("/") if prefix.strip("/") else ""
        app = web.Application(client_max_size=self.max_request_bytes)
        routes = {
            "filter": (self._filter, self._handle_filter),
            "prioritize": (self._prioritize, self._handle_prioritize),
            "bind": (self._bind, self._handle_bind),
            "preempt": (self._preempt, self._handle_preempt),
        }
        for kind, (registered, route) in routes.items():
            if registered is not None:
                app.router.add_post(f"{base}/{self.verbs[kind]}", route)
        app.router.add_get(f"{base}/healthz", _healthz)
        return app

    def run(
        self,
        *,
        host: str = "0.0.0.0",  # a server for the cluster network
        port: int = 8888,
        prefix: str = "",
        ssl_context: ssl.SSLContext | None = None,
    ) -> None:
        """Serve until interrupted (blocking)."""
        web.run_app(
            self.app(prefix=prefix), host=host, port=port, ssl_context=ssl_context, print=None
        )

    # --- verb handlers ------------------------------------------------------------------------

    async def _handle_filter(self, request: web.Request) -> web.Response:
        assert self._filter is not None
        args = await _decode(request, ExtenderArgs.from_json)
        try:
            result = await _call(self._filter, args)
        except Exception as exc:
            logger.exception("filter handler failed")
            result = ExtenderFilterResult(error=str(exc) or type(exc).__name__)
        return _reply(result.to_json())

    async def _handle_prioritize(self, request: web.Request) -> web.Response:
        assert self._prioritize is not None
        args = await _decode(request, ExtenderArgs.from_json)
        try:
            result = await _call(self._prioritize, args)
        except Exception as exc:
            logger.exception("prioritize handler failed")
            raise web.HTTPInternalServerError(text=str(exc)) from exc
        if isinstance(result, Mapping):
            result = [HostPriority(host, score) for host, score in result.items()]
        return _reply(priorities_to_json(result))

    async def _handle_bind(self, request: web.Request) -> web.Response:
        assert self._bind is not None
        args = await _decode(request, ExtenderBindingArgs.from_json)
        try:
            result = await _call(self._bind, args) or ExtenderBindingResult()
        except Exception as exc:
            logger.exception("bind handler failed")
            result = ExtenderBindingResult(error=str(exc) or type(exc).__name__)
        return _reply(result.to_json())

    async def _handle_preempt(self, request: web.Request) -> web.Response:
        assert self._preempt is not None
        args = await _decode(request, ExtenderPreemptionArgs.from_json)
        try:
            result = await _call(self._preempt, args)
        except Exception as exc:
            logger.exception("preempt handler failed")
            raise web.HTTPInternalServerError(text=str(exc)) from exc
        return _reply(result.to_json())


async def _decode(request: web.Request, parse: Callable[[Any], _A]) -> _A:
    try:
        return parse(loads(await request.read()))
    except (ValueError, WireError) as exc:
        raise web.HTTPBadRequest(text=f"cannot decode the request: {exc}") from exc


async def _healthz(_request: web.Request) -> web.Response:
    return web.Response(text="ok")


@contextlib.contextmanager
def serve_in_thread(
    extender: Extender,
    *,
    host: str = "127.0.0.1",
    port: int = 0,
    prefix: str = "",
    ssl_context: ssl.SSLContext | None = None,
) -> Iterator[str]:
    """Serve ``extender`` on a background thread; yields its URL prefix (``http(s)://h:p/x``).

    Port 0 picks a free port. Meant for tests and local experiments; production servers use
    :meth:`Extender.run` or mount :meth:`Extender.app` into their own aiohttp application.
    """
    loop = asyncio.new_event_loop()
    runner = web.AppRunner(extender.app(prefix=prefix), access_log=None)
    started = threading.Event()
    bound: list[int] = []
    failure: list[BaseException] = []

    async def start() -> None:
        await runner.setup()
        site = web.TCPSite(runner, host, port, ssl_context=ssl_context)
        await site.start()
        server = site._server  # aiohttp exposes no public accessor for the bound port
        assert isinstance(server, asyncio.base_events.Server)
        bound.append(server.sockets[0].getsockname()[1])

    def main() -> None:
        asyncio.set_event_loop(loop)
        try:
            loop.run_until_complete(start())
        except BaseException as exc:
            failure.append(exc)
            started.set()
            return
        started.set()
        loop.run_forever()
        loop.run_until_complete(runner.cleanup())
        loop.close()

    thread = threading.Thread(target=main, name="corral-extender", daemon=True)
    thread.start()
    started.wait()
    if failure:
        raise failure[0]
    scheme = "https" if ssl_context is not None else "http"
    path = "/" + prefix.strip("/") if prefix.strip("/") else ""
    try:
        yield f"{scheme}://{host}:{bound[0]}{path}"
    finally:
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout=10)
