"""Self-signed serving certificates for the admission webhook, made and rotated by the operator.

Contract: :func:`ensure` keeps ``ca.crt``, ``tls.crt`` and ``tls.key`` (PEM, the key mode 0600)
in a directory: a fresh CA and a serving certificate for the given DNS names and IP addresses
whenever the files are missing, name other hosts, or have less than a third of their validity
left. A user-provided directory (``--webhook-cert-dir``) is never written: it is only read,
and re-read by the server when its files change (cert-manager or a mounted Secret rotating).
"""

from __future__ import annotations

import datetime as dt
import ipaddress
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Final

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

VALIDITY: Final = dt.timedelta(days=90)
CA_FILE, CERT_FILE, KEY_FILE = "ca.crt", "tls.crt", "tls.key"


def _name(common: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common)])


def _sans(hosts: Sequence[str]) -> list[x509.GeneralName]:
    out: list[x509.GeneralName] = []
    for host in hosts:
        try:
            out.append(x509.IPAddress(ipaddress.ip_address(host)))
        except ValueError:
            out.append(x509.DNSName(host))
    return out


def issue(hosts: Sequence[str], now: dt.datetime | None = None) -> tuple[bytes, bytes, bytes]:
    """(CA certificate, serving certificate, serving key) as PEM; the CA key is discarded."""
    now = now or dt.datetime.now(dt.UTC)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = _name("corral-webhook-ca")
    ca = (
        x509.CertificateBuilder()
        .subject_name(ca_name)
        .issuer_name(ca_name)
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5))
        .not_valid_after(now + VALIDITY)
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .sign(ca_key, hashes.SHA256())
    )
    key = ec.generate_private_key(ec.SECP256R1())
    cert = (
        x509.CertificateBuilder()
        .subject_name(_name(hosts[0]))
        .issuer_name(ca_name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5))
        .not_valid_after(now + VALIDITY)
        .add_extension(x509.SubjectAlternativeName(_sans(hosts)), critical=False)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    pem = serialization.Encoding.PEM
    key_pem = key.private_bytes(
        pem, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    return ca.public_bytes(pem), cert.public_bytes(pem), key_pem


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
    return set(names) != set(_sans(hosts))


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
