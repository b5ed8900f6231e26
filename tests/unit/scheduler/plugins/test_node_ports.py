"""NodePorts, after upstream 1.37's ``nodeports/node_ports_test.go``: PreFilter and Filter
(``TestNodePorts``) and the queueing hints; case names are upstream's."""

from __future__ import annotations

from typing import Any

import pytest

from corral.scheduler.backend.records import pod_from_json
from corral.scheduler.framework.cluster_events import QueueingHint
from corral.scheduler.framework.cycle_state import CycleState
from corral.scheduler.framework.status import Code, Status
from corral.scheduler.framework.types import PodInfo
from corral.scheduler.plugins import node_ports
from corral.testing.builders import node, pod, pod_info, snapshot_of
from corral.testing.framework import FakeHandle
from support.hints import SKIP, Q

CONFLICT = Status.of(Code.UNSCHEDULABLE, node_ports.ERR_REASON)


def _ports(*infos: str) -> list[dict[str, Any]]:
    """Upstream's ``newPod`` port strings: ``PROTOCOL/hostIP/hostPort``."""
    out = []
    for info in infos:
        protocol, host_ip, port = info.split("/")
        out.append({"containerPort": int(port), "hostPort": int(port), "hostIP": host_ip,
                    "protocol": protocol})  # fmt: skip
    return out


def _pod(name: str, *infos: str, node_name: str | None = None) -> dict[str, Any]:
    return pod(name, containers=[{"name": "c", "ports": _ports(*infos)}], node_name=node_name)


def _init_pod(*, sidecar: bool) -> dict[str, Any]:
    init: dict[str, Any] = {
        "name": "init",
        "ports": [{"containerPort": 8001, "hostPort": 8001, "protocol": "TCP"}],
    }
    if sidecar:
        init["restartPolicy"] = "Always"
    return pod("p", init_containers=[init])


@pytest.mark.parametrize(
    ("incoming", "running", "want_pre_filter", "want_filter"),
    [
        pytest.param(pod("p"), [], Status(Code.SKIP), None, id="skip filter"),
        pytest.param(_pod("p", "UDP/127.0.0.1/8080"), ["UDP/127.0.0.1/9090"], None, None,
                     id="other port"),
        pytest.param(_pod("p", "UDP/127.0.0.1/8080"), ["UDP/127.0.0.1/8080"], None, CONFLICT,
                     id="same udp port"),
        pytest.param(_pod("p", "TCP/127.0.0.1/8080"), ["TCP/127.0.0.1/8080"], None, CONFLICT,
                     id="same tcp port"),
        pytest.param(_pod("p", "TCP/127.0.0.1/8080"), ["TCP/127.0.0.2/8080"], None, None,
                     id="different host ip"),
        pytest.param(_pod("p", "UDP/127.0.0.1/8080"), ["TCP/127.0.0.1/8080"], None, None,
                     id="different protocol"),
        pytest.param(_pod("p", "UDP/127.0.0.1/8000", "UDP/127.0.0.1/8080"),
                     ["UDP/127.0.0.1/8080"], None, CONFLICT, id="second udp port conflict"),
        pytest.param(_pod("p", "TCP/127.0.0.1/8001", "UDP/127.0.0.1/8080"),
                     ["TCP/127.0.0.1/8001", "UDP/127.0.0.1/8081"], None, CONFLICT,
                     id="first tcp port conflict"),
        pytest.param(_pod("p", "TCP/0.0.0.0/8001"), ["TCP/127.0.0.1/8001"], None, CONFLICT,
                     id="first tcp port conflict due to 0.0.0.0 hostIP"),
        pytest.param(_pod("p", "TCP/10.0.10.10/8001", "TCP/0.0.0.0/8001"),
                     ["TCP/127.0.0.1/8001"], None, CONFLICT,
                     id="TCP hostPort conflict due to 0.0.0.0 hostIP"),
        pytest.param(_pod("p", "TCP/127.0.0.1/8001"), ["TCP/0.0.0.0/8001"], None, CONFLICT,
                     id="second tcp port conflict to 0.0.0.0 hostIP"),
        pytest.param(_pod("p", "UDP/127.0.0.1/8001"), ["TCP/0.0.0.0/8001"], None, None,
                     id="second different protocol"),
        pytest.param(_pod("p", "UDP/127.0.0.1/8001"), ["TCP/0.0.0.0/8001", "UDP/0.0.0.0/8001"],
                     None, CONFLICT, id="UDP hostPort conflict due to 0.0.0.0 hostIP"),
        pytest.param(_init_pod(sidecar=False), ["TCP/0.0.0.0/8001"], Status(Code.SKIP), None,
                     id="non-sidecar initContainer using hostPort"),
        pytest.param(_init_pod(sidecar=True), ["TCP/0.0.0.0/8001"], None, CONFLICT,
                     id="TCP hostPort conflict from sidecar initContainer"),
    ],
)  # fmt: skip
def test_node_ports(
    incoming: dict[str, Any],
    running: list[str],
    want_pre_filter: Status | None,
    want_filter: Status | None,
) -> None:
    plugin = node_ports.new(None, FakeHandle())
    pods = [_pod("m1", *running, node_name="n")] if running else []
    snapshot = snapshot_of([node("n")], pods)
    wanted = pod_from_json(incoming)
    state = CycleState()
    _, status = plugin.pre_filter(state, wanted, snapshot)
    assert status == want_pre_filter
    if status is not None and status.is_skip:
        return
    assert plugin.filter(state, wanted, snapshot.node_info(0)) == want_filter
    verdict = plugin.filter_batch(state, wanted, snapshot)
    assert bool(verdict.passed[0]) is (want_filter is None)


def test_filter_without_pre_filter_reads_the_pods_own_ports() -> None:
    """Upstream's ``TestPreFilterDisabled`` wants ErrNotFound from a Filter whose PreFilter did
    not run; Corral's Filter reads the pod's own ports then (a cycle always runs PreFilter
    first, so no scheduling decision differs)."""
    plugin = node_ports.new(None, FakeHandle())
    snapshot = snapshot_of([node("n")], [_pod("m1", "TCP/0.0.0.0/8001", node_name="n")])
    assert plugin.filter(CycleState(), pod_info("p"), snapshot.node_info(0)) is None
    wanted = pod_from_json(_pod("p", "TCP/127.0.0.1/8001"))
    assert plugin.filter(CycleState(), wanted, snapshot.node_info(0)) == CONFLICT


def _with_port(name: str, port: int, node_name: str | None = "fake") -> PodInfo:
    ports = [{"containerPort": port, "hostPort": port, "protocol": "TCP"}]
    return pod_info(name, containers=[{"name": "c", "ports": ports}], node_name=node_name)


@pytest.mark.parametrize(
    ("deleted", "want"),
    [
        pytest.param(_with_port("d", 8080), Q, id="queue-on-released-hostport"),
        pytest.param(_with_port("d", 8081), SKIP, id="skip-queue-on-unrelated-hostport"),
        pytest.param(pod_info("d", node_name="fake"), SKIP, id="skip-queue-on-non-hostport"),
        pytest.param(_with_port("d", 8080, None), SKIP, id="skip-queue-on-unscheduled"),
    ],
)
def test_node_ports_after_assigned_pod_deleted(deleted: PodInfo, want: QueueingHint) -> None:
    plugin = node_ports.new(None, FakeHandle())
    pod = _with_port("p", 8080, None)
    assert plugin.hint_assigned_pod_deleted(pod, deleted, None) is want
