"""HTTP for the extender client: TLS as upstream's ``makeTransport``, pooled connections.

The client (policy) and the transport (I/O) meet in the one-method :class:`Transport` contract,
so tests and embedders can swap the transport. The pooled transport is synchronous on purpose:
extender calls block the scheduling cycle as upstream's do, and binding calls run on the
binding workers' threads; the pool is thread-safe and reuses connections.
"""

from __future__ import annotations

import base64
import binascii
import os
import re
import ssl
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Final, Protocol
from urllib.parse import urlsplit

from corral.boundedio import InputError, read_input
from corral.k8s.transport import DeadlineError, TooLargeError, TransportError
from corral.k8s.transport import Transport as HTTPTransport
from corral.scheduler.config.extender_urls import redact_url
from corral.scheduler.config.types import ExtenderTLSConfig
from corral.scheduler.framework.extender import ExtenderError

# Upstream DefaultExtenderTimeout, used when httpTimeout is 0 or unset.
DEFAULT_TIMEOUT_SECONDS: Final = 5.0
# A CA bundle, client certificate or key file: far above any real one.
MAX_TLS_FILE_BYTES: Final = 2**20


class Transport(Protocol):
    def post(self, url: str, body: bytes, *, max_reply: int) -> tuple[int, bytes]:
        """POST ``body`` as JSON; (status, body). Raises :class:`ExtenderError` on I/O failure,
        past the transport's deadline, and for an answer larger than ``max_reply`` bytes."""
        ...


def _decode_data(value: str, what: str) -> bytes:
    # []byte fields travel base64-encoded in the JSON/YAML config, as upstream decodes them.
    try:
        return base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise ValueError(f"tlsConfig.{what}: illegal base64 data: {exc}") from None


@contextmanager
def _as_file(data: bytes) -> Iterator[str]:
    """``ssl`` loads client certificates from files only; a private temporary file it is."""
    fd, path = tempfile.mkstemp(prefix="corral-extender-", suffix=".pem")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        yield path
    finally:
        os.unlink(path)


def tls_context(tls: ExtenderTLSConfig | None, *, enable_https: bool) -> ssl.SSLContext | None:
    """The TLS context for one extender; ``None`` means the defaults (system CAs, verified).

    As upstream: with ``enableHTTPS`` and no CA (file or data), verification is skipped; a CA
    together with ``insecure`` is an error (client-go refuses the combination).
    """
    tls = tls or ExtenderTLSConfig()
    has_ca = bool(tls.ca_file or tls.ca_data)
    insecure = bool(tls.insecure) or (enable_https and not has_ca)
    has_cert = bool(tls.cert_file or tls.cert_data or tls.key_file or tls.key_data)
    if not (has_ca or has_cert or insecure or tls.server_name):
        return None
    if insecure and has_ca:
        raise ValueError(
            "specifying a root certificates file with the insecure flag is not allowed"
        )
    ctx = ssl.create_default_context()
    if tls.ca_file:
        _load_ca(ctx, _read(tls.ca_file, "caFile"), "caFile")
    if tls.ca_data:
        _load_ca(ctx, _decode_data(tls.ca_data, "caData"), "caData")
    if insecure:
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
    if has_cert:
        cert = tls.cert_file, tls.cert_data
        key = tls.key_file, tls.key_data
        if not any(cert) or not any(key):
            raise ValueError("tlsConfig: a client certificate needs both a cert and a key")
        # Data wins over a file, as in client-go's dataFromSliceOrFile.
        cert_pem = (
            _decode_data(tls.cert_data, "certData")
            if tls.cert_data
            else _read(tls.cert_file, "certFile")
        )
        key_pem = (
            _decode_data(tls.key_data, "keyData")
            if tls.key_data
            else _read(tls.key_file, "keyFile")
        )
        with _as_file(cert_pem) as cert_path, _as_file(key_pem) as key_path:
            try:
                ctx.load_cert_chain(certfile=cert_path, keyfile=key_path)
            except ssl.SSLError as exc:
                where = "certData/keyData" if tls.cert_data or tls.key_data else "certFile/keyFile"
                raise ValueError(
                    f"tlsConfig.{where}: unable to load the client certificate and key: "
                    f"{_ssl_reason(exc)}"
                ) from None
    return ctx


def _load_ca(ctx: ssl.SSLContext, pem: bytes, what: str) -> None:
    """Root certificates from PEM ``pem``, as client-go's ``rootCertPool``: one line naming the
    field when they are not (bytes outside ASCII, where ``ssl`` raised a TypeError; no PEM
    block; a block that is no certificate)."""
    try:
        ctx.load_verify_locations(cadata=pem.decode("ascii"))
    except ValueError:  # bytes outside ASCII, or none ("Empty certificate data")
        why = "unable to parse bytes as PEM block"
    except ssl.SSLError as exc:
        why = _ssl_reason(exc)
    else:
        return
    raise ValueError(f"tlsConfig.{what}: unable to load root certificates: {why}")


def _ssl_reason(exc: ssl.SSLError) -> str:
    """OpenSSL's words, without the ``(_ssl.c:4020)`` of the C source line."""
    return re.sub(r"\s*\(_ssl\.c:\d+\)$", "", str(exc)) or type(exc).__name__


def _read(path: str | None, what: str) -> bytes:
    """A TLS file, within bounds: a FIFO named as the CA would block the engine's start."""
    assert path
    try:
        return read_input(path, MAX_TLS_FILE_BYTES, allow_stdin=False)
    except InputError as exc:
        raise ValueError(f"tlsConfig.{what}: {exc}") from None


class PoolTransport:
    """Kept-alive HTTP/1.1 connections per extender server (:class:`corral.k8s.transport.
    Transport`): no retries (POSTs are not idempotent); ``timeout`` is a deadline over the
    whole exchange, as Go's ``http.Client.Timeout`` is (connect, send and the whole answer: a
    peer trickling bytes cannot stretch it), and an answer past ``max_reply`` bytes is refused
    as it arrives, before it is kept."""

    def __init__(
        self,
        *,
        timeout: float | None,  # None: no timeout
        ssl_context: ssl.SSLContext | None = None,
        server_name: str | None = None,
    ) -> None:
        self._timeout = timeout
        self._tls = ssl_context
        self._server_name = server_name
        self._servers: dict[str, HTTPTransport] = {}
        self._lock = threading.Lock()

    def _server(self, origin: str) -> HTTPTransport:
        with self._lock:
            server = self._servers.get(origin)
            if server is None:
                tls = self._tls
                if tls is None and origin.startswith("https:"):
                    tls = ssl.create_default_context()
                server = HTTPTransport(origin, tls, server_hostname=self._server_name)
                self._servers[origin] = server
            return server

    def post(self, url: str, body: bytes, *, max_reply: int) -> tuple[int, bytes]:
        deadline = None if self._timeout is None else time.monotonic() + self._timeout
        try:
            parts = urlsplit(url)
            origin = f"{parts.scheme}://{parts.netloc}"
            target = parts.path + (f"?{parts.query}" if parts.query else "")
            answer = self._server(origin).exchange(
                "POST",
                target or "/",
                {"Content-Type": "application/json", "Accept": "application/json"},
                body,
                deadline=deadline,
                max_answer=max_reply,
            )
        except DeadlineError:
            raise ExtenderError(
                f'Post "{redact_url(url)}": no whole answer within {self._timeout:g}s '
                "(the extender's httpTimeout)"
            ) from None
        except TooLargeError:
            raise ExtenderError(
                f'Post "{redact_url(url)}": the answer is larger than {max_reply} bytes'
            ) from None
        except (TransportError, ValueError) as exc:
            raise ExtenderError(f'Post "{redact_url(url)}": {exc}') from exc
        return answer.status, answer.body

    def close(self) -> None:
        with self._lock:
            servers, self._servers = list(self._servers.values()), {}
        for server in servers:
            server.close()
