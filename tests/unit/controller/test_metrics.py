"""The operator's metrics (prometheus_client): the detector's counts, each profile's kstatus
conditions, reconciles and API requests, in the exposition a scrape reads; and the bad
``--metrics-*`` flags refused with one line."""

from __future__ import annotations

import asyncio
import ssl
import subprocess
import sys
from pathlib import Path

import aiohttp
import pytest
from prometheus_client import generate_latest
from prometheus_client.parser import text_string_to_metric_families

from corral.controller.metrics import Metrics, profile_conditions
from corral.controller.metrics_server import MetricsServing, serve
from corral.k8s import Client


def samples(metrics: Metrics, name: str) -> dict[tuple[tuple[str, str], ...], float]:
    text = generate_latest(metrics.registry).decode()
    out = {}
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            if s.name == name:
                out[tuple(sorted(s.labels.items()))] = s.value
    return out


def test_the_detectors_counts_and_their_resolution() -> None:
    m = Metrics()
    m.set_pending({("team-a", "SchedulerNotReady"): 2, ("ghost", "NoSchedulerProfile"): 1})
    m.set_pending({("ghost", "NoSchedulerProfile"): 3})
    assert samples(m, "corral_pending_pods") == {
        (("reason", "SchedulerNotReady"), ("scheduler_name", "team-a")): 0.0,  # resolved: 0
        (("reason", "NoSchedulerProfile"), ("scheduler_name", "ghost")): 3.0,
    }


def test_profile_conditions_and_counts() -> None:
    m = Metrics()
    m.set_profiles(
        {"a": {"Ready": True}, "b": {"Ready": False, "Stalled": True}, "c": {"Reconciling": True}}
    )
    m.set_profiles({"b": {"Ready": False, "Stalled": True}, "c": {"Ready": True}})  # a deleted
    assert samples(m, "corral_profiles") == {(("ready", "true"),): 1.0, (("ready", "false"),): 1.0}
    got = samples(m, "corral_profile_condition")
    assert got[(("profile", "b"), ("type", "Stalled"))] == 1.0
    assert got[(("profile", "c"), ("type", "Ready"))] == 1.0
    assert got[(("profile", "c"), ("type", "Reconciling"))] == 0.0
    assert not any(dict(k)["profile"] == "a" for k in got)


def test_reconciles_and_requests_are_histograms_and_counters() -> None:
    m = Metrics()
    m.reconciled("ok", 0.02)
    m.reconciled("retry", 3.0)
    m.requested("PATCH", "10.0.0.1:6443", 200, 0.01)
    m.requested("GET", "10.0.0.1:6443", 0, 30.0)
    assert samples(m, "corral_reconcile_total") == {
        (("result", "ok"),): 1.0,
        (("result", "retry"),): 1.0,
    }
    assert samples(m, "corral_reconcile_duration_seconds_count")[(("result", "retry"),)] == 1.0
    assert samples(m, "rest_client_requests_total") == {
        (("code", "200"), ("host", "10.0.0.1:6443"), ("method", "PATCH")): 1.0,
        (("code", "<error>"), ("host", "10.0.0.1:6443"), ("method", "GET")): 1.0,
    }
    assert samples(m, "process_resident_memory_bytes")  # the process family is there


@pytest.mark.parametrize(
    ("status", "expected"),
    [
        pytest.param({}, {}, id="no status yet"),
        pytest.param(
            {
                "conditions": [
                    {"type": "Ready", "status": "True"},
                    {"type": "Other", "status": "True"},
                ]
            },
            {"Ready": True},
            id="only kstatus types",
        ),
        pytest.param(
            {"conditions": [{"type": "Stalled", "status": "False"}]}, {"Stalled": False}, id="false"
        ),
    ],
)
def test_profile_conditions_read_from_status(
    status: dict[str, object], expected: dict[str, bool]
) -> None:
    assert profile_conditions({"status": status}) == expected


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        pytest.param(
            ["--metrics-address", "localhost"],
            "--metrics-address: 'localhost' is not HOST:PORT",
            id="no port",
        ),
        pytest.param(
            ["--metrics-address", ":8443", "--metrics-cert-dir", "{tmp}"],
            "--metrics-cert-dir: {tmp} lacks tls.crt and tls.key",
            id="cert dir without the pair",
        ),
    ],
)
def test_bad_metrics_flags_are_one_line(tmp_path: Path, flags: list[str], message: str) -> None:
    args = [f.format(tmp=tmp_path) for f in flags]
    result = subprocess.run(
        [sys.executable, "-m", "corral", "operator", *args, "--kubeconfig", "/nonexistent"],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert result.returncode == 2
    assert message.format(tmp=tmp_path) in result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize(
    ("secure", "path", "status", "body"),
    [
        pytest.param(False, "/metrics", 200, "corral_reconcile_total", id="plain HTTP: open"),
        pytest.param(True, "/metrics", 401, "Unauthorized", id="HTTPS: no token, 401"),
        pytest.param(True, "/healthz", 200, "ok", id="HTTPS: the probe is open"),
    ],
)
def test_the_endpoint(secure: bool, path: str, status: int, body: str) -> None:
    """Over HTTPS a request without a token is refused before any API call (so this needs no
    cluster); tokens are checked against a real API server in the e2e tests."""
    client = Client.from_token("https://127.0.0.1:1", "unused", None)

    async def main() -> tuple[int, str]:
        m = Metrics()
        m.reconciled("ok", 0.1)
        bound: asyncio.Future[int] = asyncio.get_running_loop().create_future()
        task = asyncio.create_task(
            serve(MetricsServing("127.0.0.1:0", secure), m.registry, client, bound=bound)
        )
        port = await bound
        context = ssl.create_default_context()
        context.check_hostname, context.verify_mode = False, ssl.CERT_NONE
        scheme = "https" if secure else "http"
        try:
            async with (
                aiohttp.ClientSession() as session,
                session.get(f"{scheme}://127.0.0.1:{port}{path}", ssl=context) as answer,
            ):
                return answer.status, await answer.text()
        finally:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)

    got_status, text = asyncio.run(main())
    assert got_status == status
    assert body in text
