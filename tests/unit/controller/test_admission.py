"""The webhook's client config: a URL for a local operator, a Service for one in a pod, with
the CA bundle of the serving certificate the operator made (kopf's server, really started)."""

from __future__ import annotations

import asyncio
import base64
import socket
from pathlib import Path
from typing import Any

import pytest

from corral.controller import certs
from corral.controller.admission import SERVICE_PORT, Webhook


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def _noop(*_: Any, **__: Any) -> dict[str, Any]:
    return {}


def first_config(hook: Webhook) -> dict[str, Any]:
    async def run() -> dict[str, Any]:
        stream = hook.server()(_noop)
        config = dict(await stream.__anext__())
        await stream.aclose()
        return config

    return asyncio.run(run())


@pytest.mark.parametrize(
    ("kwargs", "where", "hosts"),
    [
        pytest.param({}, {"url": "https://127.0.0.1:{port}"}, ["127.0.0.1"], id="local url"),
        pytest.param(
            {"service": "corral-system/corral-webhook"},
            {
                "service": {
                    "namespace": "corral-system",
                    "name": "corral-webhook",
                    "port": SERVICE_PORT,
                }
            },
            ["corral-webhook.corral-system.svc"],
            id="service",
        ),
    ],
)
def test_client_config(
    tmp_path: Path, kwargs: dict[str, Any], where: dict[str, Any], hosts: list[str]
) -> None:
    port = free_port()
    hook = Webhook(f"127.0.0.1:{port}", cert_dir=None, **kwargs)
    config = first_config(hook)
    hook_dir = hook.cert_dir
    ca = base64.b64decode(config.pop("caBundle"))
    assert ca == (hook.cert_dir / certs.CA_FILE).read_bytes()
    expected = {k: v.format(port=port) if isinstance(v, str) else v for k, v in where.items()}
    assert config == expected
    assert hook.hosts[0] == hosts[0]
    assert not certs.needs_renewal(hook.cert_dir, hook.hosts)
    hook.close()
    assert not hook_dir.exists()


def test_user_certificates_are_never_written(tmp_path: Path) -> None:
    certs.ensure(tmp_path, ["127.0.0.1"])
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    hook = Webhook("127.0.0.1:1", cert_dir=tmp_path)
    assert not hook.generated
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before
