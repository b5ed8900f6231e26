"""Self-signed webhook certificates: issued for the given hosts, chained to the CA handed to
the API server, renewed when missing, for other hosts, or past two thirds of their life."""

from __future__ import annotations

import datetime as dt
import ssl
from pathlib import Path

import pytest
from cryptography import x509

from corral.controller import certs

NOW = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)


def test_certificate_verifies_against_the_ca(tmp_path: Path) -> None:
    assert certs.ensure(tmp_path, ["127.0.0.1", "localhost"], NOW)
    server = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server.load_cert_chain(tmp_path / certs.CERT_FILE, tmp_path / certs.KEY_FILE)
    cert = x509.load_pem_x509_certificate((tmp_path / certs.CERT_FILE).read_bytes())
    ca = x509.load_pem_x509_certificate((tmp_path / certs.CA_FILE).read_bytes())
    cert.verify_directly_issued_by(ca)
    assert (tmp_path / certs.KEY_FILE).stat().st_mode & 0o077 == 0


@pytest.mark.parametrize(
    ("hosts", "later", "renewed"),
    [
        pytest.param(["127.0.0.1"], dt.timedelta(days=1), False, id="fresh"),
        pytest.param(["127.0.0.1"], dt.timedelta(days=61), True, id="two thirds used"),
        pytest.param(["other.svc"], dt.timedelta(days=1), True, id="other hosts"),
    ],
)
def test_renewal(tmp_path: Path, hosts: list[str], later: dt.timedelta, renewed: bool) -> None:
    certs.ensure(tmp_path, ["127.0.0.1"], NOW)
    before = (tmp_path / certs.CERT_FILE).read_bytes()
    assert certs.ensure(tmp_path, hosts, NOW + later) is renewed
    assert (before != (tmp_path / certs.CERT_FILE).read_bytes()) is renewed


def test_missing_key_is_renewed(tmp_path: Path) -> None:
    certs.ensure(tmp_path, ["127.0.0.1"], NOW)
    (tmp_path / certs.KEY_FILE).unlink()
    assert certs.ensure(tmp_path, ["127.0.0.1"], NOW)
