"""The engine's HTTP endpoints: ``/healthz`` and ``/livez`` (the process serves requests),
``/readyz`` (caches synced; leader or standby, both are ready), ``/metrics`` (Prometheus).

Probes answer ``ok`` with 200, or 503 with the reason, as kube-scheduler's healthz does. With
``secure`` (an SSL context and the delegated-auth middleware, :mod:`corral.k8s.
secure_serving`) everything is HTTPS and only the probes are open.
"""

from __future__ import annotations

import socket
import ssl
from collections.abc import Callable
from typing import Any

from aiohttp import web
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest

ReadyCheck = Callable[[], str | None]  # None when ready, else the reason it is not


class ListenError(OSError):
    """The health and metrics server cannot listen where it was told to."""


class HealthServer:
    def __init__(
        self,
        host: str,
        port: int,
        registry: CollectorRegistry,
        ready: ReadyCheck,
        secure: tuple[ssl.SSLContext, Any] | None = None,  # (context, middleware)
    ) -> None:
        self.secure = secure
        self.host = host
        self.port = port
        self.registry = registry
        self.ready = ready
        self._runner: web.AppRunner | None = None

    def app(self) -> web.Application:
        app = web.Application(middlewares=[self.secure[1]] if self.secure else [])
        app.router.add_get("/healthz", self._ok)
        app.router.add_get("/livez", self._ok)
        app.router.add_get("/readyz", self._readyz)
        app.router.add_get("/metrics", self._metrics)
        return app

    async def start(self) -> None:
        self._runner = web.AppRunner(self.app(), access_log=None)
        await self._runner.setup()
        # Bind ourselves so that port 0 works and the chosen port is known to the caller.
        try:
            sock = socket.create_server((self.host, self.port), reuse_port=False)
        except OSError as exc:  # an unknown host, a port in use or not ours: one line
            await self._runner.cleanup()
            raise ListenError(
                f"cannot listen on {self.host}:{self.port}: {exc.strerror or exc}"
            ) from None
        self.port = sock.getsockname()[1]
        context = self.secure[0] if self.secure else None
        await web.SockSite(self._runner, sock, ssl_context=context).start()

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()

    async def _ok(self, _: web.Request) -> web.Response:
        return web.Response(text="ok")

    async def _readyz(self, _: web.Request) -> web.Response:
        reason = self.ready()
        if reason is None:
            return web.Response(text="ok")
        return web.Response(status=503, text=f"not ready: {reason}")

    async def _metrics(self, _: web.Request) -> web.Response:
        body = generate_latest(self.registry)
        return web.Response(body=body, headers={"Content-Type": CONTENT_TYPE_LATEST})
