"""HTTP for the extender client: TLS as upstream's ``makeTransport``, a pooled urllib3 client.

The client (policy) and the transport (I/O) meet in the one-method :class:`Transport` contract,
so tests and embedders can swap the transport. The pooled transport is synchronous on purpose:
extender calls block the scheduling cycle as upstream's do, and binding calls run on the
binding workers' threads; urllib3's pool is thread-safe and reuses connections.
"""

from __future__ import annotations

import base64
import binascii
import logging
import os
import ssl
import tempfile
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, Final, Protocol

import urllib3

from corral.scheduler.config.types import ExtenderTLSConfig
from corral.scheduler.framework.extender import ExtenderError

logger = logging.getLogger(__name__)

# Upstream DefaultExtenderTimeout, used when httpTimeout is 0 or unset.
DEFAULT_TIMEOUT_SECONDS: Final = 5.0
_POOL_SIZE: Final = 8  # connections kept per extender host (binding workers share them)


class Transport(Protocol):
    def post(self, url: str, body: bytes) -> tuple[int, bytes]:
        """POST ``body`` as JSON; (status, body). Raises :class:`ExtenderError` on I/O failure."""
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
        ctx.load_verify_locations(cafile=tls.ca_file)
    if tls.ca_data:
        ctx.load_verify_locations(cadata=_decode_data(tls.ca_data, "caData").decode())
    if insecure:
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
    if has_cert:
        cert = tls.cert_file, tls.cert_data
        key = tls.key_file, tls.key_data
        if not any(cert) or not any(key):
            raise ValueError("tlsConfig: a client certificate needs both a cert and a key")
        cert_pem = _decode_data(tls.cert_data, "certData") if tls.cert_data else None
        key_pem = _decode_data(tls.key_data, "keyData") if tls.key_data else None
        with _cert_files(tls.cert_file, cert_pem, tls.key_file, key_pem) as (cert_path, key_path):
            ctx.load_cert_chain(certfile=cert_path, keyfile=key_path)
    return ctx


@contextmanager
def _cert_files(
    cert_file: str | None, cert_pem: bytes | None, key_file: str | None, key_pem: bytes | None
) -> Iterator[tuple[str, str]]:
    # Data wins over a file, as in client-go's dataFromSliceOrFile.
    with (
        _as_file(cert_pem) if cert_pem is not None else _given(cert_file) as cert_path,
        _as_file(key_pem) if key_pem is not None else _given(key_file) as key_path,
    ):
        yield cert_path, key_path


@contextmanager
def _given(path: str | None) -> Iterator[str]:
    assert path
    yield path


class PoolTransport:
    """A urllib3 pool: no retries (POSTs are not idempotent), one total timeout per call."""

    def __init__(
        self,
        *,
        timeout: float | None,  # None: no timeout
        ssl_context: ssl.SSLContext | None = None,
        server_name: str | None = None,
    ) -> None:
        kw: dict[str, Any] = {}
        if ssl_context is not None:
            kw["ssl_context"] = ssl_context
            if ssl_context.verify_mode == ssl.CERT_NONE:
                kw["cert_reqs"] = "CERT_NONE"
                kw["assert_hostname"] = False
                # Configured on purpose (enableHTTPS without a CA, or insecure): say it once here
                # instead of a warning per request.
                logger.warning("extender TLS certificates are not verified (no CA configured)")
                warnings.filterwarnings(
                    "ignore", category=urllib3.exceptions.InsecureRequestWarning
                )
        if server_name:
            kw["server_hostname"] = server_name
            if kw.get("assert_hostname") is not False:
                kw["assert_hostname"] = server_name
        self._pool = urllib3.PoolManager(
            num_pools=4,
            maxsize=_POOL_SIZE,
            retries=False,
            timeout=urllib3.Timeout(total=timeout),
            **kw,
        )

    def post(self, url: str, body: bytes) -> tuple[int, bytes]:
        try:
            resp = self._pool.request(
                "POST", url, body=body, headers={"Content-Type": "application/json"}
            )
        except urllib3.exceptions.HTTPError as exc:
            raise ExtenderError(f'Post "{url}": {exc}') from exc
        return resp.status, resp.data
