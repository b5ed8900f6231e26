"""Self-signed serving certificates for the admission webhook, made and rotated by the operator.

Contract: :func:`ensure` keeps ``ca.crt``, ``tls.crt`` and ``tls.key`` (PEM, the key mode 0600)
in a directory: a fresh CA and a serving certificate for the given DNS names and IP addresses
whenever the files are missing, name other hosts, or have less than a third of their validity
left. A user-provided directory (``--webhook-cert-dir``) is never written: it is only read,
and re-read by the server when its files change (cert-manager or a mounted Secret rotating).
"""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Sequence
from pathlib import Path

from cryptography import x509

from corral.k8s.certs import issue, sans

CA_FILE, CERT_FILE, KEY_FILE = "ca.crt", "tls.crt", "tls.key"


def needs_renewal(directory: Path, hosts: Sequence[str], now: dt.datetime | None = None) -> bool:
    now = now or dt.datetime.now(dt.UTC)
    try:
        cert = x509.load_pem_x509_certificate((directory / CERT_FILE).read_bytes())
        (directory / KEY_FILE).stat()
        (directory / CA_FILE).stat()
    except (OSError, ValueError):
        return True
    left = cert.not_valid_after_utc - now
    if left < (cert.not_valid_after_utc - cert.not_valid_before_utc) / 3:
        return True
    try:
        names = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    except x509.ExtensionNotFound:
        return True
    return set(names) != set(sans(hosts))


def ensure(directory: Path, hosts: Sequence[str], now: dt.datetime | None = None) -> bool:
    """Issue new files when needed; True when it did. The key is written before the certificate
    (a reader seeing the new certificate finds its key), each file replaced atomically."""
    if not needs_renewal(directory, hosts, now):
        return False
    directory.mkdir(parents=True, exist_ok=True)
    ca, cert, key = issue(hosts, now)
    for name, data, mode in (
        (KEY_FILE, key, 0o600),
        (CA_FILE, ca, 0o644),
        (CERT_FILE, cert, 0o644),
    ):
        tmp = directory / f".{name}.tmp"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        tmp.replace(directory / name)
    return True
