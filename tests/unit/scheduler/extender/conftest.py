"""A real extender server (built with corral.extender) whose answers each test scripts."""

from __future__ import annotations

import base64
import ssl
import subprocess
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from corral.extender import (
    Extender,
    ExtenderArgs,
    ExtenderBindingArgs,
    ExtenderBindingResult,
    ExtenderFilterResult,
    ExtenderPreemptionArgs,
    ExtenderPreemptionResult,
    HostPriority,
    serve_in_thread,
)


@dataclass
class Script:
    """What the server answers; every request body is recorded in ``seen``."""

    keep: set[str] | None = None  # None: keep every candidate
    failed: dict[str, str] = field(default_factory=dict)
    unresolvable: dict[str, str] = field(default_factory=dict)
    error: str = ""
    scores: dict[str, int] = field(default_factory=dict)
    delay: float = 0.0
    raw_reply: Any = None  # sent as is instead of the computed reply when set
    preempt: ExtenderPreemptionResult | None = None
    seen: list[tuple[str, Any]] = field(default_factory=list)


def scripted_extender(current: Callable[[], Script]) -> Extender:
    """Handlers read ``current()`` per request, so one server can serve many tests."""
    ext = Extender()

    @ext.filter
    def _filter(args: ExtenderArgs) -> ExtenderFilterResult:
        script = current()
        script.seen.append(("filter", args))
        time.sleep(script.delay)
        if script.raw_reply is not None:
            return script.raw_reply  # type: ignore[no-any-return]
        keep = set(args.candidates) if script.keep is None else script.keep
        result = ExtenderFilterResult.keep(
            args, keep, failed=script.failed, failed_and_unresolvable=script.unresolvable
        )
        result.error = script.error
        return result

    @ext.prioritize
    def _prioritize(args: ExtenderArgs) -> list[HostPriority]:
        script = current()
        script.seen.append(("prioritize", args))
        time.sleep(script.delay)
        return [HostPriority(n, script.scores.get(n, 0)) for n in args.candidates]

    @ext.bind
    def _bind(args: ExtenderBindingArgs) -> ExtenderBindingResult:
        script = current()
        script.seen.append(("bind", args))
        time.sleep(script.delay)
        return ExtenderBindingResult(error=script.error)

    @ext.preempt
    def _preempt(args: ExtenderPreemptionArgs) -> ExtenderPreemptionResult:
        script = current()
        script.seen.append(("preempt", args))
        if script.preempt is not None:
            return script.preempt
        return ExtenderPreemptionResult(args.meta_victims())

    return ext


@pytest.fixture(scope="module")
def server() -> Iterator[tuple[str, list[Script]]]:
    """One server per module; the ``scripted`` fixture gives each test a fresh script."""
    holder = [Script()]
    with serve_in_thread(scripted_extender(lambda: holder[0])) as url:
        yield url, holder


@pytest.fixture
def scripted(server: tuple[str, list[Script]]) -> tuple[str, Script]:
    url, holder = server
    holder[0] = Script()
    return url, holder[0]


# --- TLS material -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Pki:
    dir: Path
    ca: Path
    server_cert: Path
    server_key: Path
    client_cert: Path
    client_key: Path

    def b64(self, path: Path) -> str:
        return base64.b64encode(path.read_bytes()).decode()

    def server_context(self, *, require_client_cert: bool = False) -> ssl.SSLContext:
        ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        ctx.load_cert_chain(self.server_cert, self.server_key)
        if require_client_cert:
            ctx.load_verify_locations(cafile=self.ca)
            ctx.verify_mode = ssl.CERT_REQUIRED
        return ctx


def _openssl(*args: str, cwd: Path) -> None:
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True)


@pytest.fixture(scope="session")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Pki:
    """A throwaway CA, a server certificate for 127.0.0.1/localhost and a client certificate."""
    d = tmp_path_factory.mktemp("pki")
    _openssl(
        "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out", "ca.crt",
        "-days", "1", "-subj", "/CN=corral-test-ca", cwd=d,
    )  # fmt: skip
    (d / "server.ext").write_text("subjectAltName=IP:127.0.0.1,DNS:localhost\n")
    (d / "client.ext").write_text("extendedKeyUsage=clientAuth\n")
    for who in ("server", "client"):
        _openssl(
            "req", "-newkey", "rsa:2048", "-nodes", "-keyout", f"{who}.key", "-out", f"{who}.csr",
            "-subj", f"/CN={who}", cwd=d,
        )  # fmt: skip
        _openssl(
            "x509", "-req", "-in", f"{who}.csr", "-CA", "ca.crt", "-CAkey", "ca.key",
            "-CAcreateserial", "-out", f"{who}.crt", "-days", "1", "-extfile", f"{who}.ext",
            cwd=d,
        )  # fmt: skip
    return Pki(
        d, d / "ca.crt", d / "server.crt", d / "server.key", d / "client.crt", d / "client.key"
    )
