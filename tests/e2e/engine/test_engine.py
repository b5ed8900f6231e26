"""`corral scheduler` end to end: scale, unschedulable pods and cluster events, restarts."""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Callable, Iterator

import pytest

from corral.k8s import JSON, Client
from corral.scheduler.config import quantity
from corral.testing import LocalCluster
from support.engine_process import (
    EngineProcess,
    all_bound,
    create_all,
    engine_config,
    pod,
    pods_in,
    scheduler_name,
    wait_until,
)


@pytest.mark.parametrize("encoding", ["json", "protobuf"])
def test_thousand_pods_on_hundred_nodes(
    kube: Client,
    cluster: LocalCluster,
    namespace: str,
    fake_nodes: Callable[..., list[str]],
    engines: Callable[..., EngineProcess],
    encoding: str,
) -> None:
    pool = {"pool": namespace}
    nodes = fake_nodes(100, cpu="4", memory="8Gi", pods=30, labels=pool)
    name = scheduler_name()
    engine = engines(
        engine_config(cluster.kubeconfig, name), args=(f"--pod-watch-encoding={encoding}",)
    )
    rng = random.Random(7)
    cpus = ["50m", "100m", "250m", "500m"]
    mems = ["64Mi", "128Mi", "256Mi", "512Mi"]
    create_all(
        kube,
        [
            pod(f"p-{i}", namespace, name, nodeSelector=pool,
                requests={"cpu": rng.choice(cpus), "memory": rng.choice(mems)})
            for i in range(1000)
        ],
    )  # fmt: skip

    wait_until("1000 pods bound", lambda: all_bound(kube, namespace), timeout=240)

    placed = pods_in(kube, namespace)
    assert len(placed) == 1000
    assert {p["spec"]["nodeName"] for p in placed} <= set(nodes)
    used: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])
    for p in placed:
        req = p["spec"]["containers"][0]["resources"]["requests"]
        totals = used[p["spec"]["nodeName"]]
        totals[0] += quantity.milli_value(quantity.parse(req["cpu"]))
        totals[1] += quantity.value(quantity.parse(req["memory"]))
        totals[2] += 1
    for node, (cpu, memory, count) in used.items():
        assert cpu <= 4000, node
        assert memory <= 8 * 1024**3, node
        assert count <= 30, node
    # Each pod bound exactly once: one success each in the log, and no binding was refused.
    log = engine.log()
    assert log.count("Successfully bound pod to node") == 1000
    assert "reason=SchedulerError" not in log
    assert "watching as JSON from now on" not in log  # the protobuf watch held throughout


def test_unschedulable_pod_is_retried_when_a_node_fits(
    kube: Client,
    cluster: LocalCluster,
    namespace: str,
    fake_nodes: Callable[..., list[str]],
    engines: Callable[..., EngineProcess],
) -> None:
    pool = {"pool": namespace}
    fake_nodes(2, cpu="1", memory="2Gi", labels=pool)
    name = scheduler_name()
    engines(engine_config(cluster.kubeconfig, name))
    kube.create(pod("big", namespace, name, nodeSelector=pool, requests={"cpu": "2"}))

    def failed() -> JSON | None:
        status = kube.get("v1", "Pod", "big", namespace).get("status", {})
        return next((c for c in status.get("conditions", []) if c["type"] == "PodScheduled"), None)

    wait_until("the PodScheduled=False condition", lambda: failed() is not None, timeout=30)
    condition = failed()
    assert condition is not None
    assert condition["status"] == "False"
    assert condition["reason"] == "Unschedulable"
    # Upstream's format, with DefaultPreemption's verdict appended; the other nodes of a shared
    # cluster are excluded by the pod's nodeSelector.
    total = len(kube.list_items("v1", "Node"))
    message = condition["message"]
    assert message.startswith(f"0/{total} nodes are available: ")
    assert "2 Insufficient cpu" in message
    assert message.endswith(
        f"preemption: 0/{total} nodes are available: 2 No preemption victims found for "
        "incoming pod."
    ) or message.endswith("Preemption is not helpful for scheduling.")
    if total > 2:
        assert f"{total - 2} node(s) didn't match Pod's node affinity/selector" in message

    def event_posted() -> bool:
        events = kube.list_items("v1", "Event", namespace, field_selector="reason=FailedScheduling")
        return any(e["message"] == message for e in events)

    # Events go out through the engine's event recorder, independently of the status patch
    # (as upstream's broadcaster): the Event may land a moment after the condition.
    wait_until("the FailedScheduling event with the same message", event_posted, timeout=15)

    fake_nodes(1, cpu="4", memory="8Gi", labels=pool)
    # Moved by the node's events: far sooner than the 5-minute unschedulable flush.
    wait_until("the pod bound to the new node",
               lambda: bool(kube.get("v1", "Pod", "big", namespace)["spec"].get("nodeName")),
               timeout=30)  # fmt: skip

    def scheduled_event() -> bool:
        events = kube.list_items("v1", "Event", namespace, field_selector="reason=Scheduled")
        return any(
            e["message"].startswith(f"Successfully assigned {namespace}/big to ") for e in events
        )

    # Posted after the binding, like the FailedScheduling one above.
    wait_until("the Scheduled event", scheduled_event, timeout=15)


@pytest.fixture(scope="module")
def own_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalCluster]:
    """A cluster of its own: restarting its API server must not disturb other tests."""
    started = LocalCluster.up(tmp_path_factory.mktemp("restart"))
    try:
        yield started
    finally:
        started.down()


def test_survives_an_api_server_restart(
    own_cluster: LocalCluster, engines: Callable[..., EngineProcess]
) -> None:
    kube = own_cluster.admin
    own_cluster.add_nodes(3, cpu="8", memory="16Gi")
    name = scheduler_name()
    engine = engines(engine_config(own_cluster.kubeconfig, name))
    create_all(kube, [pod(f"before-{i}", "default", name) for i in range(5)])
    wait_until("pods created before the restart to be bound", lambda: all_bound(kube, "default"))

    own_cluster.restart("kube-apiserver")
    create_all(kube, [pod(f"after-{i}", "default", name) for i in range(5)])

    wait_until("pods created after the restart", lambda: all_bound(kube, "default"), timeout=90)
    assert engine.alive()
    assert len(pods_in(kube, "default")) == 10
