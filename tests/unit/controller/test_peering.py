"""The hot-standby gate (controller/peering.py) decides as kopf's peering does
(``kopf/_core/engines/peering.py``): paused while another live peer has a priority at least ours;
a peer is dead once ``lastseen + lifetime`` has passed. The Gate asks the ClusterKopfPeering at
most every CACHE_SECONDS, answers "standby" when it cannot read it, and is always active
standalone."""

from __future__ import annotations

import datetime
from typing import Any

import pytest

from corral.controller import peering
from corral.k8s import ApiError

NOW = datetime.datetime(2026, 12, 1, 12, 0, 0, tzinfo=datetime.UTC)
ME, MY_PRIORITY = "me@host", 10


def seen(seconds_ago: float, *, priority: int = 0, lifetime: int | None = 60) -> dict[str, Any]:
    stamp = (NOW - datetime.timedelta(seconds=seconds_ago)).strftime("%Y-%m-%dT%H:%M:%S.%f")
    info: dict[str, Any] = {"priority": priority, "lastseen": stamp}
    if lifetime is not None:
        info["lifetime"] = lifetime
    return info


@pytest.mark.parametrize(
    ("peers", "active"),
    [
        pytest.param({}, True, id="alone"),
        pytest.param({ME: seen(0, priority=99)}, True, id="only its own record"),
        pytest.param({"b": seen(1, priority=5)}, True, id="a live peer of lower priority"),
        pytest.param({"b": seen(1, priority=10)}, False, id="a live peer of equal priority"),
        pytest.param({"b": seen(1, priority=11)}, False, id="a live peer of higher priority"),
        pytest.param({"b": seen(60, priority=11)}, True, id="dead: lastseen + lifetime is now"),
        pytest.param({"b": seen(59, priority=11)}, False, id="alive one second before it dies"),
        pytest.param({"b": seen(100, priority=11, lifetime=120)}, False, id="its own lifetime"),
        pytest.param({"b": seen(61, priority=11, lifetime=None)}, True, id="lifetime default 60"),
        pytest.param({"b": {"priority": 11, "lastseen": "yesterday"}}, True,
                     id="an unreadable lastseen: dead"),
        pytest.param({"b": {"priority": 11}}, True, id="no lastseen: dead"),
        pytest.param({"b": "not a record"}, True, id="not a mapping: ignored"),
        pytest.param({"b": {**seen(1, priority=11), "lastseen": "2026-12-01T11:59:59Z"}}, False,
                     id="a Z-suffixed stamp"),
        pytest.param({"b": {"priority": 11, "lastseen": "2026-12-01T11:59:59+00:00"}}, False,
                     id="an offset stamp"),
        pytest.param({"b": seen(1, priority=1), "c": seen(200, priority=50),
                      "d": seen(2, priority=10)}, False, id="one live rival among weaker and dead"),
    ],
)  # fmt: skip
def test_is_active_follows_kopfs_rule(peers: dict[str, Any], active: bool) -> None:
    assert peering.is_active(peers, ME, MY_PRIORITY, NOW) is active


class PeeringClient:
    """Answers ``get`` of the ClusterKopfPeering with ``status``, or raises ``error``."""

    def __init__(self, status: dict[str, Any], error: ApiError | None = None) -> None:
        self.status = status
        self.error = error
        self.gets = 0

    def get(self, api_version: str, kind: str, name: str) -> dict[str, Any]:
        assert (api_version, kind, name) == (peering.PEERING_API_VERSION, peering.PEERING_KIND, "p")
        self.gets += 1
        if self.error is not None:
            raise self.error
        return {"metadata": {"name": name}, "status": self.status}


def live_rival() -> dict[str, Any]:
    stamp = datetime.datetime.now(datetime.UTC).isoformat()
    return {"rival": {"priority": MY_PRIORITY, "lifetime": 60, "lastseen": stamp}}


@pytest.mark.parametrize(
    ("name", "rival", "error", "active", "gets"),
    [
        pytest.param(None, True, None, True, 0, id="standalone: never asks"),
        pytest.param("p", False, None, True, 1, id="no other peer: active"),
        pytest.param("p", True, None, False, 1, id="a live rival: standby"),
        pytest.param("p", False, ApiError(403, "Forbidden", "no"), False, 1,
                     id="cannot read the peering: standby"),
    ],
)  # fmt: skip
def test_gate_asks_the_peering(
    name: str | None, rival: bool, error: ApiError | None, active: bool, gets: int
) -> None:
    client = PeeringClient(live_rival() if rival else {}, error)  # seen now, not at collection
    gate = peering.Gate(client, name, ME, MY_PRIORITY)  # type: ignore[arg-type]
    assert gate.active() is active
    assert client.gets == gets


def test_gate_keeps_its_answer_for_cache_seconds(monkeypatch: pytest.MonkeyPatch) -> None:
    now = [1000.0]
    monkeypatch.setattr("corral.controller.peering.time.monotonic", lambda: now[0])
    client = PeeringClient({})
    gate = peering.Gate(client, "p", ME, MY_PRIORITY)  # type: ignore[arg-type]
    assert gate.active()
    client.status = live_rival()
    now[0] += peering.CACHE_SECONDS - 0.1
    assert gate.active(), "asked again within CACHE_SECONDS"
    now[0] += 0.2
    assert not gate.active(), "the rival not seen after CACHE_SECONDS"
    assert client.gets == 2
