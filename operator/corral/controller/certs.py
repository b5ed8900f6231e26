"""Self-signed serving certificates for the admission webhook, made and rotated by the operator.

Contract:
- :func:`ensure` keeps ``ca.crt``, ``tls.crt`` and ``tls.key`` (PEM, the key mode 0600) in a
  directory: a fresh CA and serving certificate for the given DNS names and IP addresses
  whenever the files are missing, name other hosts, or have less than a third of their
  validity left.
- :func:`sync_secret` does the same through a Secret (``tls.crt``, ``tls.key``, ``ca.crt``), so
  every operator replica behind one Service serves the same pair: the first to find it missing
  or due creates or replaces it (optimistic concurrency; on a conflict it takes the pair the
  other replica wrote), and each copies the Secret's files into its directory.
- A user-provided directory (``--webhook-cert-dir``) is never written: it is only read, and
  re-read by the server when its files change (cert-manager or a mounted Secret rotating).
"""

from __future__ import annotations

import base64
import datetime as dt
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from cryptography import x509

from corral.k8s import ApiError, Client
from corral.k8s.certs import issue, sans

CA_FILE, CERT_FILE, KEY_FILE = "ca.crt", "tls.crt", "tls.key"
FILES = (CA_FILE, CERT_FILE, KEY_FILE)


def pem_needs_renewal(
    cert_pem: bytes, hosts: Sequence[str], now: dt.datetime | None = None
) -> bool:
    now = now or dt.datetime.now(dt.UTC)
    try:
        cert = x509.load_pem_x509_certificate(cert_pem)
        names = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    except (ValueError, x509.ExtensionNotFound):
        return True
    left = cert.not_valid_after_utc - now
    if left < (cert.not_valid_after_utc - cert.not_valid_before_utc) / 3:
        return True
    return set(names) != set(sans(hosts))


def needs_renewal(directory: Path, hosts: Sequence[str], now: dt.datetime | None = None) -> bool:
    try:
        cert = (directory / CERT_FILE).read_bytes()
        (directory / KEY_FILE).stat()
        (directory / CA_FILE).stat()
    except OSError:
        return True
    return pem_needs_renewal(cert, hosts, now)


def write(directory: Path, files: Mapping[str, bytes]) -> bool:
    """Write the files that differ; True when any did. The key goes first (a reader seeing a new
    certificate finds its key), each file replaced atomically, the key mode 0600."""
    directory.mkdir(parents=True, exist_ok=True)
    changed = False
    for name in (KEY_FILE, CA_FILE, CERT_FILE):
        target = directory / name
        if target.exists() and target.read_bytes() == files[name]:
            continue
        tmp = directory / f".{name}.tmp"
        fd = os.open(
            tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600 if name == KEY_FILE else 0o644
        )
        with os.fdopen(fd, "wb") as f:
            f.write(files[name])
        tmp.replace(target)
        changed = True
    return changed


def _issued(hosts: Sequence[str], now: dt.datetime | None) -> dict[str, bytes]:
    ca, cert, key = issue(hosts, now)
    return {CA_FILE: ca, CERT_FILE: cert, KEY_FILE: key}


def ensure(directory: Path, hosts: Sequence[str], now: dt.datetime | None = None) -> bool:
    """Issue new files when needed; True when it did."""
    if not needs_renewal(directory, hosts, now):
        return False
    return write(directory, _issued(hosts, now))


def _secret_files(secret: Mapping[str, Any]) -> dict[str, bytes] | None:
    data = secret.get("data") or {}
    try:
        files = {name: base64.b64decode(data[name]) for name in FILES}
    except (KeyError, ValueError):
        return None
    return files


def sync_secret(
    client: Client,
    namespace: str,
    name: str,
    directory: Path,
    hosts: Sequence[str],
    *,
    now: dt.datetime | None = None,
) -> bool:
    """Make the Secret hold a valid pair for ``hosts`` and copy it to ``directory``; True when
    the files there changed."""
    try:
        secret: dict[str, Any] | None = client.get("v1", "Secret", name, namespace)
    except ApiError as exc:
        if exc.status != 404:
            raise
        secret = None
    files = _secret_files(secret) if secret is not None else None
    if files is None or pem_needs_renewal(files[CERT_FILE], hosts, now):
        files = _issued(hosts, now)
        body: dict[str, Any] = {
            "apiVersion": "v1",
            "kind": "Secret",
            "type": "kubernetes.io/tls",
            "metadata": {
                "name": name,
                "namespace": namespace,
                "labels": {"app.kubernetes.io/part-of": "corral"},
            },
            "data": {k: base64.b64encode(v).decode() for k, v in files.items()},
        }
        try:
            if secret is None:
                client.create(body)
            else:
                body["metadata"]["resourceVersion"] = secret["metadata"]["resourceVersion"]
                client.request("PUT", client.path_of(body), body=body)
        except ApiError as exc:
            if exc.status not in (409,):
                raise
            # Another replica wrote first: serve its pair.
            theirs = _secret_files(client.get("v1", "Secret", name, namespace))
            if theirs is None:
                raise
            files = theirs
    return write(directory, files)
