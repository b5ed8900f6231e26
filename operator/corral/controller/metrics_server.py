"""The operator's ``/metrics`` endpoint, served as the engines serve theirs.

HTTPS with delegated authentication and authorization (:mod:`corral.k8s.secure_serving`): a
scraper presents a bearer token the API server accepts (TokenReview) for a user allowed ``get``
on the non-resource URL ``/metrics`` (SubjectAccessReview), e.g. through the
``corral-metrics-reader`` ClusterRole; ``/healthz`` needs nothing. The serving pair is
``tls.crt``/``tls.key`` from ``cert_dir`` (cert-manager, a mounted Secret), else a fresh
self-signed one. ``secure=False`` serves plain HTTP to anyone (a local dev run only).
"""

from __future__ import annotations

import asyncio
import logging
import socket
from dataclasses import dataclass
from pathlib import Path

from aiohttp import web
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest

from corral.k8s import Client
from corral.k8s.aio import AsyncClient
from corral.k8s.secure_serving import DelegatedAuth, server_context

log = logging.getLogger("corral.controller")


@dataclass(frozen=True, slots=True)
class MetricsServing:
    address: str  # HOST:PORT (port 0: any free one)
    secure: bool = True
    cert_dir: Path | None = None


def split_address(address: str) -> tuple[str, int]:
    host, _, port = address.rpartition(":")
    if not port.isdigit() or not 0 <= int(port) < 65536:
        raise ValueError(f"--metrics-address: {address!r} is not HOST:PORT")
    return host.strip("[]") or "0.0.0.0", int(port)


async def serve(
    serving: MetricsServing,
    registry: CollectorRegistry,
    client: Client,
    *,
    bound: asyncio.Future[int] | None = None,
) -> None:
    """Serve until cancelled; ``bound`` gets the port once listening."""
    host, port = split_address(serving.address)
    aio = AsyncClient(client) if serving.secure else None
    middlewares = [DelegatedAuth(aio).middleware] if aio is not None else []
    app = web.Application(middlewares=middlewares)

    async def metrics(_: web.Request) -> web.Response:
        body = await asyncio.to_thread(generate_latest, registry)
        return web.Response(body=body, headers={"Content-Type": CONTENT_TYPE_LATEST})

    async def healthz(_: web.Request) -> web.Response:
        return web.Response(text="ok")

    app.router.add_get("/metrics", metrics)
    app.router.add_get("/healthz", healthz)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    context = None
    if serving.secure:
        cert = key = None
        if serving.cert_dir is not None:
            cert, key = str(serving.cert_dir / "tls.crt"), str(serving.cert_dir / "tls.key")
        context = server_context(cert, key)
    sock = socket.create_server((host, port), reuse_port=False)
    try:
        await web.SockSite(runner, sock, ssl_context=context).start()
        port = sock.getsockname()[1]
        scheme = "https" if serving.secure else "http"
        log.info("serving metrics on %s://%s:%d/metrics", scheme, host, port)
        if bound is not None:
            bound.set_result(port)
        await asyncio.Event().wait()
    finally:
        await runner.cleanup()
        if aio is not None:
            await aio.close()
