"""Secure serving of the engine's and the operator's endpoints, as kube-scheduler's
(k8s.io/apiserver delegated authentication and authorization):

- HTTPS with ``--tls-cert-file``/``--tls-private-key-file``, else a self-signed certificate
  made at start (kube-scheduler does the same when given none);
- ``/healthz``, ``/readyz``, ``/livez`` (and paths under them) are always allowed, so kubelet
  probes need no credentials (upstream's ``--authorization-always-allow-paths``);
- any other path needs a bearer token the API server accepts (TokenReview; else 401) for a
  user allowed ``get`` on that non-resource path (SubjectAccessReview; else 403). Verdicts are
  cached for ten seconds per token and per (user, verb, path), as upstream's defaults.
"""

from __future__ import annotations

import hashlib
import ssl
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, Final

from aiohttp import web

from corral.k8s import ApiError
from corral.k8s.aio import AsyncClient

ALWAYS_ALLOW: Final = ("/healthz", "/readyz", "/livez")
CACHE_SECONDS: Final = 10.0
TOKEN_REVIEWS: Final = "/apis/authentication.k8s.io/v1/tokenreviews"
ACCESS_REVIEWS: Final = "/apis/authorization.k8s.io/v1/subjectaccessreviews"
_VERBS: Final = {
    "GET": "get",
    "HEAD": "get",
    "POST": "create",
    "PUT": "update",
    "PATCH": "patch",
    "DELETE": "delete",
}

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def server_context(cert_file: str | None, key_file: str | None) -> ssl.SSLContext:
    """The serving context: the given pair, or a fresh self-signed one (key never on disk for
    longer than loading it takes)."""
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    if cert_file and key_file:
        context.load_cert_chain(cert_file, key_file)
        return context
    # Imported here, not with the module: cryptography costs a scheduler about 8 MB of RSS,
    # and only a self-signed pair needs it.
    from corral.k8s.certs import issue  # noqa: PLC0415

    _, cert, key = issue(["localhost", "127.0.0.1"])
    with tempfile.TemporaryDirectory(prefix="corral-serving-") as tmp:
        cert_path, key_path = Path(tmp, "tls.crt"), Path(tmp, "tls.key")
        cert_path.write_bytes(cert)
        key_path.touch(mode=0o600)
        key_path.write_bytes(key)
        context.load_cert_chain(cert_path, key_path)
    return context


class DelegatedAuth:
    def __init__(self, client: AsyncClient, clock: Callable[[], float] = time.monotonic) -> None:
        self.client = client
        self.clock = clock
        self._users: dict[str, tuple[float, dict[str, Any] | None]] = {}
        self._decisions: dict[tuple[str, str, str], tuple[float, bool]] = {}

    @web.middleware
    async def middleware(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        path = request.path
        if any(path == p or path.startswith(p + "/") for p in ALWAYS_ALLOW):
            return await handler(request)
        scheme, _, token = request.headers.get("Authorization", "").partition(" ")
        user = await self._authenticate(token.strip()) if scheme.lower() == "bearer" else None
        if user is None:
            return web.Response(status=401, text="Unauthorized\n")
        verb = _VERBS.get(request.method, request.method.lower())
        if not await self._authorize(user, verb, path):
            name = user.get("username", "")
            return web.Response(
                status=403, text=f'forbidden: User "{name}" cannot {verb} path "{path}"\n'
            )
        return await handler(request)

    async def _authenticate(self, token: str) -> dict[str, Any] | None:
        if not token:
            return None
        key = hashlib.sha256(token.encode()).hexdigest()
        hit = self._users.get(key)
        now = self.clock()
        if hit is not None and hit[0] > now:
            return hit[1]
        review = {
            "apiVersion": "authentication.k8s.io/v1",
            "kind": "TokenReview",
            "spec": {"token": token},
        }
        try:
            answer = await self.client.request("POST", TOKEN_REVIEWS, body=review)
        except ApiError:
            return None  # not cached: the next request asks again
        status = answer.get("status") or {}
        user = status.get("user") if status.get("authenticated") else None
        self._remember(self._users, key, (now + CACHE_SECONDS, user))
        return user if isinstance(user, dict) else None

    async def _authorize(self, user: dict[str, Any], verb: str, path: str) -> bool:
        key = (str(user.get("username", "")), verb, path)
        hit = self._decisions.get(key)
        now = self.clock()
        if hit is not None and hit[0] > now:
            return hit[1]
        spec: dict[str, Any] = {
            "user": user.get("username"),
            "groups": user.get("groups") or [],
            "nonResourceAttributes": {"path": path, "verb": verb},
        }
        if user.get("uid"):
            spec["uid"] = user["uid"]
        if user.get("extra"):
            spec["extra"] = user["extra"]
        review = {
            "apiVersion": "authorization.k8s.io/v1",
            "kind": "SubjectAccessReview",
            "spec": spec,
        }
        try:
            answer = await self.client.request("POST", ACCESS_REVIEWS, body=review)
        except ApiError:
            return False
        allowed = bool((answer.get("status") or {}).get("allowed"))
        self._remember(self._decisions, key, (now + CACHE_SECONDS, allowed))
        return allowed

    def _remember(self, cache: dict[Any, Any], key: Any, value: Any) -> None:
        if len(cache) > 1024:  # bounded: a flood of distinct tokens cannot grow it
            cache.clear()
        cache[key] = value
