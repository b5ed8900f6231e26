"""Upstream plugins and an out-of-tree plugin, end to end through `corral scheduler`."""

from __future__ import annotations

import contextlib
import shutil
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from corral.k8s import JSON, ApiError, Client
from corral.testing import LocalCluster
from corral.testing.nodes import ZONE_LABEL
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

EXAMPLE_PLUGIN = Path(__file__).resolve().parents[3] / "examples" / "corral-plugin-example"
HOSTNAME = "kubernetes.io/hostname"


def placements(kube: Client, namespace: str, prefix: str) -> dict[str, str]:
    return {
        p["metadata"]["name"]: p["spec"].get("nodeName", "")
        for p in pods_in(kube, namespace)
        if p["metadata"]["name"].startswith(prefix)
    }


def test_required_anti_affinity_puts_replicas_on_distinct_nodes(
    kube: Client,
    cluster: LocalCluster,
    namespace: str,
    fake_nodes: Callable[..., list[str]],
    engines: Callable[..., EngineProcess],
) -> None:
    pool = {"pool": namespace}
    nodes = fake_nodes(5, cpu="8", memory="16Gi", labels=pool)
    name = scheduler_name()
    engines(engine_config(cluster.kubeconfig, name))
    anti = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"labelSelector": {"matchLabels": {"app": "db"}}, "topologyKey": HOSTNAME}]}}  # fmt: skip
    create_all(kube, [pod(f"db-{i}", namespace, name, nodeSelector=pool, labels={"app": "db"},
                          affinity=anti) for i in range(6)])  # fmt: skip

    wait_until("5 replicas bound", lambda: sum(1 for n in placements(kube, namespace, "db-")
                                               .values() if n) == 5)  # fmt: skip
    placed = placements(kube, namespace, "db-")
    bound = [n for n in placed.values() if n]
    assert sorted(bound) == sorted(nodes)  # one per node, every node used
    # The sixth has nowhere to go, in upstream's words.
    (stuck,) = [p for p, n in placed.items() if not n]
    wait_until("its FailedScheduling event", lambda: any(
        e["involvedObject"]["name"] == stuck
        for e in kube.list_items("v1", "Event", namespace, field_selector="reason=FailedScheduling")
    ))  # fmt: skip
    events = kube.list_items("v1", "Event", namespace, field_selector="reason=FailedScheduling")
    message = next(e["message"] for e in events if e["involvedObject"]["name"] == stuck)
    assert "5 node(s) didn't match pod anti-affinity rules" in message


def test_topology_spread_over_three_zones_stays_within_max_skew(
    kube: Client,
    cluster: LocalCluster,
    namespace: str,
    fake_nodes: Callable[..., list[str]],
    engines: Callable[..., EngineProcess],
) -> None:
    pool = {"pool": namespace}
    nodes = fake_nodes(9, cpu="8", memory="16Gi", labels=pool, zones=3)
    zone_of = {
        n["metadata"]["name"]: n["metadata"]["labels"][ZONE_LABEL]
        for n in kube.list_items("v1", "Node")
        if n["metadata"]["name"] in nodes
    }
    assert len(set(zone_of.values())) == 3
    name = scheduler_name()
    engines(engine_config(cluster.kubeconfig, name))
    spread = [{"maxSkew": 1, "topologyKey": ZONE_LABEL, "whenUnsatisfiable": "DoNotSchedule",
               "labelSelector": {"matchLabels": {"app": "web"}}}]  # fmt: skip
    # Two waves, so the second is placed against the first's counts.
    for wave in range(2):
        create_all(kube, [pod(f"web-{wave}-{i}", namespace, name, nodeSelector=pool,
                              labels={"app": "web"}, topologySpreadConstraints=spread)
                          for i in range(7)])  # fmt: skip
        wait_until("the wave bound", lambda: all_bound(kube, namespace))
    per_zone = Counter(zone_of[n] for n in placements(kube, namespace, "web-").values())
    assert sum(per_zone.values()) == 14
    assert max(per_zone.values()) - min(per_zone.values()) <= 1, per_zone


def test_preemption_respects_a_pod_disruption_budget(
    kube: Client,
    cluster: LocalCluster,
    namespace: str,
    fake_nodes: Callable[..., list[str]],
    engines: Callable[..., EngineProcess],
    priorities: tuple[str, str],
) -> None:
    low, high = priorities
    pool = {"pool": namespace}
    guarded, free = fake_nodes(2, cpu="2", memory="4Gi", labels=pool)
    selector = {"matchLabels": {"app": "guarded"}}
    kube.create({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
                 "metadata": {"name": "keep", "namespace": namespace},
                 "spec": {"minAvailable": 1, "selector": selector}})  # fmt: skip
    name = scheduler_name()
    engines(engine_config(cluster.kubeconfig, name))
    kube.create(
        pod(
            "guarded",
            namespace,
            name,
            labels={"app": "guarded"},
            priorityClassName=low,
            nodeSelector={**pool, HOSTNAME: guarded},
            requests={"cpu": "1500m"},
        )
    )
    kube.create(pod("spare", namespace, name, labels={"app": "spare"}, priorityClassName=low,
                    nodeSelector={**pool, HOSTNAME: free}, requests={"cpu": "1500m"}))  # fmt: skip

    def budget() -> JSON:
        return kube.get("policy/v1", "PodDisruptionBudget", "keep", namespace).get("status", {})

    def guarding() -> bool:
        status = budget()
        return status.get("currentHealthy") == 1 and status.get("disruptionsAllowed") == 0

    wait_until("the budget to allow no disruption", guarding, timeout=60)

    nominated: set[str] = set()
    stop = threading.Event()

    def watch_vip() -> None:  # records every nominatedNodeName the pod shows before it binds
        while not stop.is_set():
            with contextlib.suppress(ApiError):
                status = kube.get("v1", "Pod", "vip", namespace).get("status", {})
                if status.get("nominatedNodeName"):
                    nominated.add(status["nominatedNodeName"])
            time.sleep(0.05)

    watcher = threading.Thread(target=watch_vip, daemon=True)
    watcher.start()
    kube.create(pod("vip", namespace, name, priorityClassName=high, nodeSelector=pool,
                    requests={"cpu": "1500m"}))  # fmt: skip

    # Either node would do by resources; only preempting on the unguarded one keeps the budget.
    wait_until("vip bound", lambda: kube.get("v1", "Pod", "vip", namespace)["spec"].get("nodeName")
               == free, timeout=60)  # fmt: skip
    stop.set()
    watcher.join()
    names = {p["metadata"]["name"] for p in pods_in(kube, namespace)}
    assert names == {"guarded", "vip"}
    # Preemption chose the unguarded node: the victim's Event says so, and the vip was never
    # nominated elsewhere (it may be bound before its nomination is even written: preemption
    # is asynchronous and a preemptor leaves backoffQ as soon as the queue is idle).
    assert nominated <= {free}
    vip_uid = kube.get("v1", "Pod", "vip", namespace)["metadata"]["uid"]

    def preempted() -> list[tuple[str, str]]:
        events = kube.list_items("v1", "Event", namespace)
        return [(e["involvedObject"]["name"], e["message"]) for e in events
                if e["reason"] == "Preempted"]  # fmt: skip

    wait_until("the Preempted event", preempted, timeout=30)  # Events are posted asynchronously
    assert preempted() == [("spare", f"Preempted by pod {vip_uid} on node {free}")]


def test_out_of_tree_example_plugin_changes_placements(
    kube: Client,
    cluster: LocalCluster,
    namespace: str,
    fake_nodes: Callable[..., list[str]],
    engines: Callable[..., EngineProcess],
    tmp_path: Path,
) -> None:
    # Installed as a user would (pip, entry point corral.plugins), next to Corral.
    source = tmp_path / "src"
    shutil.copytree(EXAMPLE_PLUGIN, source)
    site = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps",
                    "--no-build-isolation", "--target", str(site), str(source)],
                   check=True, capture_output=True)  # fmt: skip
    pool = {"pool": namespace}
    (ssd,) = fake_nodes(1, cpu="8", memory="16Gi", labels={**pool, "disk": "ssd"})
    (hdd,) = fake_nodes(1, cpu="8", memory="16Gi", labels=pool)
    plain, bonus = scheduler_name(), scheduler_name()
    config = engine_config(cluster.kubeconfig, plain)
    config["profiles"].append({
        "schedulerName": bonus,
        "plugins": {"score": {"enabled": [{"name": "NodeLabelBonus", "weight": 10}]}},
        "pluginConfig": [{"name": "NodeLabelBonus",
                          "args": {"labelKey": "disk", "labelValue": "ssd"}}],
    })  # fmt: skip
    engines(config, env={"PYTHONPATH": str(site)})
    create_all(kube, [pod(f"{kind}-{i}", namespace, sched, nodeSelector=pool)
                      for kind, sched in (("plain", plain), ("bonus", bonus))
                      for i in range(4)])  # fmt: skip

    wait_until("all bound", lambda: all_bound(kube, namespace), timeout=60)
    # With the plugin the SSD node wins every pod; without it, LeastAllocated sends pods to the
    # emptier HDD node too.
    assert set(placements(kube, namespace, "bonus-").values()) == {ssd}
    assert hdd in set(placements(kube, namespace, "plain-").values())
