"""The engine with a real HTTP extender (examples/extender-example) on the real cluster."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from corral.extender import Extender, ExtenderArgs, ExtenderFilterResult, serve_in_thread
from corral.k8s import Client
from corral.testing import LocalCluster
from corral.testing.nodes import MANAGED_ANNOTATION
from corral.testing.processes import free_port
from support.engine_process import (
    EngineProcess,
    create_all,
    engine_config,
    pod,
    scheduler_name,
    wait_until,
)

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "extender-example" / "extender.py"
ALLOWED = "example.corral.dev/allowed"
PREFERRED = "example.corral.dev/preferred"


@pytest.fixture
def extender(cluster: LocalCluster, tmp_path: Path) -> Iterator[str]:
    """The example extender, binding through the API as the admin; yields its URL."""
    port = free_port()
    log = (tmp_path / "extender.log").open("wb")
    process = subprocess.Popen(
        [sys.executable, str(EXAMPLE), "--host", "127.0.0.1", "--port", str(port), "--bind"],
        stdout=log, stderr=subprocess.STDOUT,
        env={**os.environ, "KUBECONFIG": str(cluster.kubeconfig)},
    )  # fmt: skip
    try:
        wait_until("the extender to listen", lambda: _listening(port), timeout=30)
        yield f"http://127.0.0.1:{port}"
    finally:
        process.terminate()
        process.wait(timeout=10)
        log.close()


def _listening(port: int) -> bool:
    import socket  # noqa: PLC0415

    with socket.socket() as sock:
        return sock.connect_ex(("127.0.0.1", port)) == 0


def test_extender_filters_prioritizes_and_binds(
    kube: Client,
    cluster: LocalCluster,
    namespace: str,
    fake_nodes: Callable[..., list[str]],
    engines: Callable[..., EngineProcess],
    extender: str,
) -> None:
    pool = {"pool": namespace}
    (preferred,) = fake_nodes(1, cpu="2", memory="4Gi",
                              labels={**pool, ALLOWED: "true", PREFERRED: "true"})  # fmt: skip
    (allowed,) = fake_nodes(1, cpu="8", memory="16Gi", labels={**pool, ALLOWED: "true"})
    (forbidden,) = fake_nodes(1, cpu="8", memory="16Gi", labels=pool)
    name = scheduler_name()
    extenders = [
        {"urlPrefix": extender, "filterVerb": "filter", "prioritizeVerb": "prioritize",
         "bindVerb": "bind", "weight": 5, "nodeCacheCapable": False, "httpTimeout": "5s"}
    ]  # fmt: skip
    engines(engine_config(cluster.kubeconfig, name, extenders=extenders))

    create_all(kube, [pod(f"p-{i}", namespace, name, nodeSelector=pool,
                          requests={"cpu": "500m"}) for i in range(6)])  # fmt: skip
    kube.create(
        pod("stuck", namespace, name, nodeSelector={**pool, "kubernetes.io/hostname": forbidden})
    )

    def placed() -> dict[str, str]:
        pods = kube.list_items("v1", "Pod", namespace)
        return {p["metadata"]["name"]: p["spec"].get("nodeName", "") for p in pods}

    wait_until("six pods bound", lambda: sum(1 for n, node in placed().items()
                                            if n != "stuck" and node) == 6)  # fmt: skip
    nodes = placed()
    assert nodes["stuck"] == ""
    # Never on the node the extender filters out; the preferred node fills up first (its
    # extender score x weight outweighs LeastAllocated), then the merely allowed one.
    bound = [node for n, node in nodes.items() if n != "stuck"]
    assert forbidden not in bound
    assert bound.count(preferred) == 4  # 2 cpu / 500m
    assert bound.count(allowed) == 2
    events = kube.list_items("v1", "Event", namespace, field_selector="reason=FailedScheduling")
    stuck = [e["message"] for e in events if e["involvedObject"]["name"] == "stuck"]
    assert stuck
    assert "not allowed by the example extender" in stuck[-1]


def test_a_failed_bind_is_reported_with_upstreams_message(
    kube: Client,
    cluster: LocalCluster,
    namespace: str,
    fake_nodes: Callable[..., list[str]],
    engines: Callable[..., EngineProcess],
    extender: str,
) -> None:
    pool = {"pool": namespace}
    fake_nodes(1, cpu="2", memory="4Gi", labels={**pool, ALLOWED: "true"})
    name = scheduler_name()
    extenders = [
        {"urlPrefix": extender, "filterVerb": "filter", "bindVerb": "no-such-verb",
         "nodeCacheCapable": False, "httpTimeout": "5s"}
    ]  # fmt: skip
    engines(engine_config(cluster.kubeconfig, name, extenders=extenders))
    kube.create(pod("p", namespace, name, nodeSelector=pool))

    def condition() -> dict[str, str] | None:
        status = kube.get("v1", "Pod", "p", namespace).get("status", {})
        return next((c for c in status.get("conditions", []) if c["type"] == "PodScheduled"), None)

    wait_until("the PodScheduled=False condition", lambda: condition() is not None, timeout=30)
    # Upstream (1.27+) reports the binding cycle's status as it is, without the old
    # "binding rejected: " prefix.
    message = f"failed no-such-verb with extender at URL {extender}/no-such-verb, code 404"
    got = condition()
    assert got is not None
    assert (got["status"], got["reason"], got["message"]) == ("False", "SchedulerError", message)

    def noted() -> list[str]:
        events = kube.list_items("events.k8s.io/v1", "Event", namespace,
                                 field_selector="reason=FailedScheduling")  # fmt: skip
        return [e["note"] for e in events if e["regarding"]["name"] == "p"]

    wait_until("the FailedScheduling event", lambda: bool(noted()), timeout=15)
    assert set(noted()) == {message}


@pytest.mark.parametrize(
    "cache_capable",
    [pytest.param(False, id="not nodeCacheCapable: the Node as the API server has it"),
     pytest.param(True, id="nodeCacheCapable: node names only")],
)  # fmt: skip
def test_the_extender_receives_the_node_as_served(
    kube: Client,
    cluster: LocalCluster,
    namespace: str,
    fake_nodes: Callable[..., list[str]],
    engines: Callable[..., EngineProcess],
    cache_capable: bool,
) -> None:
    pool = {"pool": namespace}
    (target,) = fake_nodes(1, cpu="2", memory="4Gi", labels=pool)
    seen: list[ExtenderArgs] = []
    recorder = Extender()

    @recorder.filter
    def _keep_all(args: ExtenderArgs) -> ExtenderFilterResult:
        seen.append(args)
        return ExtenderFilterResult.keep(args, set(args.candidates))

    with serve_in_thread(recorder) as url:
        name = scheduler_name()
        extenders = [{"urlPrefix": url, "filterVerb": "filter",
                      "nodeCacheCapable": cache_capable, "httpTimeout": "5s"}]  # fmt: skip
        engines(engine_config(cluster.kubeconfig, name, extenders=extenders))
        kube.create(pod("p", namespace, name, nodeSelector=pool))
        wait_until("p bound", lambda: bool(kube.get("v1", "Pod", "p", namespace)["spec"]
                                           .get("nodeName")))  # fmt: skip
    if cache_capable:
        assert all(args.nodes is None for args in seen)
        assert [args.node_names for args in seen][-1] == [target]
        return
    (sent,) = seen[-1].nodes or []
    assert sent["metadata"]["name"] == target
    # What no NodeRecord column holds arrives: kwok's annotation, the Ready condition.
    assert sent["metadata"]["annotations"][MANAGED_ANNOTATION] == "fake"
    ready = [c for c in sent["status"]["conditions"] if c["type"] == "Ready"]
    assert [c["status"] for c in ready] == ["True"]
