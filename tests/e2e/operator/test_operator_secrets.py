"""Secrets stay secret, end to end with the operator running the engines locally:

- an extender that requires a client certificate (mutual TLS) is reached with the key pair
  from the profile's ``tlsSecretRef`` Secret, delivered to the local engine as the pod's
  Secret volume would deliver it; no ConfigMap in the cluster holds the key;
- the engine's /metrics is HTTPS with delegated auth: no token 401, a token without the
  non-resource rule 403, a token allowed ``get /metrics`` 200; /healthz needs nothing."""

from __future__ import annotations

import base64
import datetime as dt
import re
import ssl
import urllib.error
import urllib.request
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID
from test_operator_pending import pod

from corral.extender import Extender, ExtenderArgs, ExtenderFilterResult, serve_in_thread
from corral.k8s import JSON, Client
from support.operator_process import eventually, is_ready, profile

PEM = serialization.Encoding.PEM


class Pki:
    """A CA and certificates it signs (PEM)."""

    def __init__(self) -> None:
        self.key = ec.generate_private_key(ec.SECP256R1())
        self.name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "test-ca")])
        now = dt.datetime.now(dt.UTC)
        self.cert = (
            x509.CertificateBuilder()
            .subject_name(self.name)
            .issuer_name(self.name)
            .public_key(self.key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - dt.timedelta(minutes=5))
            .not_valid_after(now + dt.timedelta(days=1))
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .sign(self.key, hashes.SHA256())
        )

    @property
    def ca_pem(self) -> bytes:
        return self.cert.public_bytes(PEM)

    def issue(
        self, cn: str, usage: x509.ObjectIdentifier, ip: str | None = None
    ) -> tuple[bytes, bytes]:
        key = ec.generate_private_key(ec.SECP256R1())
        now = dt.datetime.now(dt.UTC)
        builder = (
            x509.CertificateBuilder()
            .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn)]))
            .issuer_name(self.name)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - dt.timedelta(minutes=5))
            .not_valid_after(now + dt.timedelta(days=1))
            .add_extension(x509.ExtendedKeyUsage([usage]), critical=False)
        )
        if ip:
            import ipaddress  # noqa: PLC0415

            builder = builder.add_extension(
                x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address(ip))]),
                critical=False,
            )
        cert = builder.sign(self.key, hashes.SHA256())
        key_pem = key.private_bytes(
            PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
        return cert.public_bytes(PEM), key_pem


@pytest.fixture
def mtls_extender(tmp_path: Path) -> Iterator[dict[str, Any]]:
    """An extender on 127.0.0.1 that requires a client certificate signed by ``client_ca``;
    it keeps only nodes named in ``allowed`` and records the client certificates it saw."""
    server_ca, client_ca = Pki(), Pki()
    cert, key = server_ca.issue("extender", ExtendedKeyUsageOID.SERVER_AUTH, ip="127.0.0.1")
    (tmp_path / "srv.crt").write_bytes(cert)
    (tmp_path / "srv.key").write_bytes(key)
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(tmp_path / "srv.crt", tmp_path / "srv.key")
    context.verify_mode = ssl.CERT_REQUIRED
    context.load_verify_locations(cadata=client_ca.ca_pem.decode())
    state: dict[str, Any] = {"allowed": set(), "calls": 0}
    ext = Extender()

    @ext.filter
    def only_allowed(args: ExtenderArgs) -> ExtenderFilterResult:
        state["calls"] += 1
        return ExtenderFilterResult.keep(
            args, [n for n in args.candidates if n in state["allowed"]]
        )

    with serve_in_thread(ext, ssl_context=context) as url:
        state.update(url=url, server_ca=server_ca, client_ca=client_ca)
        yield state


def tls_secret(name: str, namespace: str, cert: bytes, key: bytes, ca: bytes) -> JSON:
    data = {"tls.crt": cert, "tls.key": key, "ca.crt": ca}
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "type": "kubernetes.io/tls",
        "metadata": {"name": name, "namespace": namespace},
        "data": {k: base64.b64encode(v).decode() for k, v in data.items()},
    }


def engine_port(engine_dir: Path, name: str) -> int:
    for log in (engine_dir / name).glob("*.log"):
        found = re.search(r"serving health and metrics on [\d.]+:(\d+)", log.read_text())
        if found:
            return int(found.group(1))
    return 0


def get(url: str, token: str | None = None) -> tuple[int, str]:
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE  # the engine's self-signed serving certificate
    request = urllib.request.Request(url)
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(request, timeout=10, context=context) as answer:
            return answer.status, answer.read().decode()
    except urllib.error.HTTPError as err:
        return err.code, err.read().decode()


@pytest.fixture
def scraper(kube: Client, kube_namespaces: list[str]) -> Iterator[Callable[[bool], str]]:
    """``scraper(allowed) -> token`` of a fresh ServiceAccount, bound (or not) to a ClusterRole
    allowing ``get`` on the non-resource URL /metrics (what a Prometheus needs)."""
    ns = kube_namespaces[1]
    role = f"t-metrics-reader-{uuid.uuid4().hex[:6]}"
    rbac = "rbac.authorization.k8s.io/v1"
    kube.create(
        {
            "apiVersion": rbac,
            "kind": "ClusterRole",
            "metadata": {"name": role},
            "rules": [{"nonResourceURLs": ["/metrics"], "verbs": ["get"]}],
        }
    )

    def make(allowed: bool) -> str:
        sa = f"scraper-{uuid.uuid4().hex[:6]}"
        kube.create(
            {
                "apiVersion": "v1",
                "kind": "ServiceAccount",
                "metadata": {"name": sa, "namespace": ns},
            }
        )
        if allowed:
            kube.create(
                {
                    "apiVersion": rbac,
                    "kind": "ClusterRoleBinding",
                    "metadata": {"name": role},
                    "roleRef": {
                        "apiGroup": "rbac.authorization.k8s.io",
                        "kind": "ClusterRole",
                        "name": role,
                    },
                    "subjects": [{"kind": "ServiceAccount", "name": sa, "namespace": ns}],
                }
            )
        return kube.request_token(ns, sa)

    yield make
    kube.delete(rbac, "ClusterRoleBinding", role)
    kube.delete(rbac, "ClusterRole", role)


def test_mtls_extender_from_a_secret_and_authorized_metrics(
    kube: Client,
    kube_namespaces: list[str],
    fake_nodes: Callable[..., list[str]],
    start_operator: Any,
    profiles: Any,
    tmp_path: Path,
    mtls_extender: dict[str, Any],
    scraper: Callable[[bool], str],
) -> None:
    ns, _ = kube_namespaces
    name = profiles("mtls")
    pool = f"pool-{name}"
    nodes = fake_nodes(3, labels={"pool": pool})
    mtls_extender["allowed"] = {nodes[1]}
    cert, key = mtls_extender["client_ca"].issue(f"corral-{name}", ExtendedKeyUsageOID.CLIENT_AUTH)
    kube.create(tls_secret("ext-client", ns, cert, key, mtls_extender["server_ca"].ca_pem))
    engine_dir = tmp_path / "engines"
    op = start_operator("--local-engines", f"--engine-dir={engine_dir}")
    extender = {
        "urlPrefix": mtls_extender["url"],
        "filterVerb": "filter",
        "tlsSecretRef": {"name": "ext-client"},
    }
    kube.create(
        profile(
            name,
            ns,
            replicas=1,
            extenders=[extender],
            tenancy={"namespaces": [ns], "nodeSelector": {"pool": pool}},
        )
    )
    eventually(lambda: is_ready(kube, name), timeout=60, what=f"{name} Ready")
    for i in range(2):
        kube.create(pod(f"w{i}", ns, name))

    def placed() -> list[str]:
        got = [kube.get("v1", "Pod", f"w{i}", ns)["spec"].get("nodeName") for i in range(2)]
        return got if all(got) else []

    assert eventually(placed, timeout=60, what="pods bound") == [nodes[1]] * 2, op.log()
    assert mtls_extender["calls"] >= 2
    key_body = key.decode().splitlines()[1]
    for cm in kube.list_items("v1", "ConfigMap"):
        text = str(cm.get("data") or {}) + str(cm.get("binaryData") or {})
        assert "PRIVATE KEY" not in text, cm["metadata"]
        assert key_body not in text, cm["metadata"]

    port = eventually(lambda: engine_port(engine_dir, name), what="the engine's port")
    base = f"https://127.0.0.1:{port}"
    assert get(f"{base}/healthz") == (200, "ok")
    assert get(f"{base}/metrics")[0] == 401
    assert get(f"{base}/metrics", "not-a-token")[0] == 401
    denied = scraper(False)
    status, text = get(f"{base}/metrics", denied)
    assert status == 403, text
    assert 'cannot get path "/metrics"' in text
    allowed = scraper(True)

    def scraped() -> str:  # the binding reaches the authorizer's cache shortly after the write
        status, text = get(f"{base}/metrics", allowed)
        return text if status == 200 else ""

    assert "scheduler_schedule_attempts_total" in eventually(scraped, what="an authorized scrape")
