"""The path a user runs, on a real node: the image built from this checkout, the operator
installed from config/crd and config/default (kustomize) as real pods, a SchedulerProfile's
engine pods as real containers doing the scheduling, leader failover, a plugin change rolling
the engines, an unpullable image going Stalled, and the operator's standby taking over.

The tests share one cluster and run in order (each starts from what the previous left).
"""

from __future__ import annotations

import subprocess
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from corral import __version__
from corral.k8s import CONTENT_MERGE_PATCH, Client
from corral.testing import LocalCluster
from corral.testing.processes import wait_for
from corral_dev.builds import ensure_helm, load_node_pins
from corral_dev.install import operator_overlay, prerequisites
from corral_dev.realnode import NODE_NAME

# Waiting for the machine's real node (the lock) and cold builds take minutes on two cores.
pytestmark = pytest.mark.timeout(1800)


ROOT = Path(__file__).resolve().parents[3]
IMAGE = f"localhost/corral:{__version__}"
PAUSE_IMAGE = load_node_pins().pause_image  # imported into the node: workload pods run it
API = "corral.dev/v1alpha1"
OPERATOR_NS = "corral-system"
ENGINE_NS = "corral-real"
PROFILE = "real"
ON_REAL_NODE = {"kubernetes.io/hostname": NODE_NAME}
ENGINES = f"app.kubernetes.io/instance={PROFILE}"
OPERATORS = "app.kubernetes.io/name=corral-operator"
LEASE_DURATION, RETRY_PERIOD = 15, 2  # the profile's leaderElection defaults


def _pods(kube: Client, namespace: str, selector: str) -> list[dict[str, Any]]:
    return kube.list_items("v1", "Pod", namespace, label_selector=selector)


def _running_ready(pod: dict[str, Any]) -> bool:
    conditions = {c["type"]: c["status"] for c in pod.get("status", {}).get("conditions", [])}
    return (
        pod.get("status", {}).get("phase") == "Running"
        and conditions.get("Ready") == "True"
        and not pod["metadata"].get("deletionTimestamp")
    )


def _ready_pods(kube: Client, namespace: str, selector: str, count: int) -> list[dict[str, Any]]:
    def check() -> bool:
        return len([p for p in _pods(kube, namespace, selector) if _running_ready(p)]) == count

    wait_for(f"{count} Ready pods {selector} in {namespace}", check, timeout=240)
    return [p for p in _pods(kube, namespace, selector) if _running_ready(p)]


def _patch_profile(kube: Client, name: str, body: dict[str, Any]) -> None:
    path = kube.resource(API, "SchedulerProfile").path(None, name)
    kube.request("PATCH", path, body=body, content_type=CONTENT_MERGE_PATCH)


def _profile_status(kube: Client) -> dict[str, Any]:
    status: dict[str, Any] = kube.get(API, "SchedulerProfile", PROFILE).get("status") or {}
    return status


def _condition(status: dict[str, Any], kind: str) -> dict[str, Any]:
    return next((c for c in status.get("conditions", []) if c["type"] == kind), {})


def _workload(name: str, count: int) -> list[dict[str, Any]]:
    return [
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": f"{name}-{i}", "namespace": "default", "labels": {"w": name}},
            "spec": {
                "schedulerName": PROFILE,
                "containers": [
                    {
                        "name": "c",
                        "image": PAUSE_IMAGE,
                        "resources": {"requests": {"cpu": "10m"}},
                    }
                ],
            },
        }
        for i in range(count)
    ]


def _bound(kube: Client, name: str, count: int) -> list[dict[str, Any]]:
    def check() -> bool:
        pods = kube.list_items("v1", "Pod", "default", label_selector=f"w={name}")
        return len(pods) == count and all(p["spec"].get("nodeName") for p in pods)

    wait_for(f"{count} pods of {name} bound", check, timeout=120)
    return kube.list_items("v1", "Pod", "default", label_selector=f"w={name}")


def _logs(cluster: LocalCluster, namespace: str, pod: str) -> str:
    return cluster.kubectl("logs", "-n", namespace, pod, "--all-containers").stdout


def _exec(cluster: LocalCluster, namespace: str, pod: str, *argv: str) -> Any:
    return cluster.kubectl("exec", "-n", namespace, pod, "--", *argv, check=False)


@pytest.fixture(scope="module")
def operator(
    real_cluster: LocalCluster, kube: Client, tmp_path_factory: pytest.TempPathFactory
) -> list[dict[str, Any]]:
    overlay = operator_overlay(
        tmp_path_factory.mktemp("overlay"), ROOT / "config" / "default", IMAGE, ON_REAL_NODE
    )
    prerequisites(real_cluster.kubectl, ROOT)
    real_cluster.kubectl("apply", "--server-side", "-k", str(overlay))
    return _ready_pods(kube, OPERATOR_NS, OPERATORS, 2)


def test_operator_runs_from_kustomize_as_two_real_pods(
    real_cluster: LocalCluster, operator: list[dict[str, Any]]
) -> None:
    for pod in operator:
        assert pod["spec"]["nodeName"] == NODE_NAME
        assert pod["spec"]["containers"][0]["image"] == IMAGE
        engine_image = {e["name"]: e.get("value") for e in pod["spec"]["containers"][0]["env"]}
        assert engine_image["CORRAL_ENGINE_IMAGE"] == IMAGE
    # Real processes in real containers, talking to the API server through the kubernetes
    # Service: both joined kopf's peering (one active, one standby).
    names = [p["metadata"]["name"] for p in operator]
    wait_for(
        "both operator pods in the peering",
        lambda: all(any(n in peer for peer in _peers(real_cluster.admin)) for n in names),
        timeout=90,
    )


@pytest.fixture(scope="module")
def engines(
    real_cluster: LocalCluster, kube: Client, operator: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    kube.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ENGINE_NS}})
    kube.create({
        "apiVersion": API, "kind": "SchedulerProfile", "metadata": {"name": PROFILE},
        "spec": {"namespace": ENGINE_NS, "replicas": 2,
                 "deployment": {"nodeSelector": ON_REAL_NODE}},
    })  # fmt: skip
    started = time.monotonic()
    pods = _ready_pods(kube, ENGINE_NS, ENGINES, 2)
    print(f"profile apply -> 2 engine pods Ready: {time.monotonic() - started:.1f}s")
    return pods


def test_profile_runs_two_engine_pods_on_the_real_node(
    real_cluster: LocalCluster, kube: Client, engines: list[dict[str, Any]]
) -> None:
    for pod in engines:
        name = pod["metadata"]["name"]
        assert pod["spec"]["nodeName"] == NODE_NAME
        # Probes from the kubelet pass: the pod is Ready (readiness) and was never restarted.
        assert pod["status"]["containerStatuses"][0]["restartCount"] == 0
        ident = _exec(real_cluster, ENGINE_NS, name, "python3", "-c",
                      "import os; print(os.getuid(), os.getgid())")  # fmt: skip
        assert ident.stdout.split() == ["65532", "65532"], ident.stderr
        write = _exec(real_cluster, ENGINE_NS, name, "python3", "-c", "open('/x', 'w')")
        assert write.returncode != 0
        assert "Read-only file system" in write.stderr
    names = {p["metadata"]["name"] for p in engines}
    wait_for("status.leader", lambda: _profile_status(kube).get("leader") in names, timeout=60)


def test_pods_are_bound_by_the_leader(
    real_cluster: LocalCluster, kube: Client, engines: list[dict[str, Any]]
) -> None:
    for pod in _workload("first", 6):
        kube.create(pod)
    bound = _bound(kube, "first", 6)
    leader = _profile_status(kube)["leader"]
    log = _logs(real_cluster, ENGINE_NS, leader)
    for pod in bound:
        assert f'pod="default/{pod["metadata"]["name"]}"' in log
        assert "Successfully bound pod to node" in log


def test_leader_kill_hands_over_without_double_binding(
    real_cluster: LocalCluster, kube: Client, engines: list[dict[str, Any]]
) -> None:
    old = _profile_status(kube)["leader"]
    kube.delete("v1", "Pod", old, ENGINE_NS)
    killed = time.monotonic()
    # The deleted leader may still bind during its grace period, and its log goes with the pod:
    # the workload arrives once it is gone, so every binding is in a surviving replica's log.
    wait_for(
        "the deleted leader pod to be gone",
        lambda: old not in {p["metadata"]["name"] for p in _pods(kube, ENGINE_NS, ENGINES)},
        timeout=90,
    )
    for pod in _workload("second", 6):
        kube.create(pod)
    bound = _bound(kube, "second", 6)
    print(f"leader pod killed -> all 6 new pods bound: {time.monotonic() - killed:.1f}s "
          f"(bound within leaseDuration + retryPeriod = {LEASE_DURATION + RETRY_PERIOD}s "
          "plus the pods' own scheduling)")  # fmt: skip
    # status.leader follows the Lease at the operator's next reconcile (a Deployment change or
    # its resync).
    wait_for(
        "status.leader to name the surviving replica",
        lambda: _profile_status(kube).get("leader") not in (None, old),
        timeout=90,
    )
    binders = [line for p in _pods(kube, ENGINE_NS, ENGINES)
               for line in _logs(real_cluster, ENGINE_NS, p["metadata"]["name"]).splitlines()
               if "Successfully bound" in line and 'pod="default/second-' in line]  # fmt: skip
    assert len(binders) == 6  # each pod bound once, by the surviving engine
    scheduled = Counter(
        e["involvedObject"]["name"]
        for e in kube.list_items("v1", "Event", "default")
        if e.get("reason") == "Scheduled"
    )
    assert all(count == 1 for count in scheduled.values()), scheduled
    assert {p["metadata"]["name"] for p in bound} <= set(scheduled)


def test_plugin_change_rolls_within_the_pdb(
    real_cluster: LocalCluster, kube: Client, engines: list[dict[str, Any]]
) -> None:
    _ready_pods(kube, ENGINE_NS, ENGINES, 2)
    before = {p["metadata"]["name"] for p in _pods(kube, ENGINE_NS, ENGINES)}
    pdb = kube.get("policy/v1", "PodDisruptionBudget", f"corral-{PROFILE}", ENGINE_NS)
    _patch_profile(kube, PROFILE, {"spec": {"plugins": {
        "score": {"disabled": [{"name": "ImageLocality"}]}}}})  # fmt: skip
    fewest_ready = 2
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline:
        pods = _pods(kube, ENGINE_NS, ENGINES)
        ready = [p for p in pods if _running_ready(p)]
        fewest_ready = min(fewest_ready, len(ready))
        names = {p["metadata"]["name"] for p in ready}
        if len(ready) == 2 and not names & before and len(pods) == 2:
            break
        time.sleep(0.5)
    else:
        pytest.fail("the engine Deployment did not roll to two new Ready pods")
    budget = pdb["spec"]
    floor = budget["minAvailable"] if "minAvailable" in budget else 2 - budget["maxUnavailable"]
    assert fewest_ready >= floor
    for pod in _workload("third", 4):
        kube.create(pod)
    _bound(kube, "third", 4)


def test_unpullable_image_goes_stalled(
    real_cluster: LocalCluster, kube: Client, operator: list[dict[str, Any]]
) -> None:
    # The engine namespace may not exist yet when this test runs alone (-k).
    kube.apply({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ENGINE_NS}},
               field_manager="corral-e2e")  # fmt: skip
    kube.create({
        "apiVersion": API, "kind": "SchedulerProfile", "metadata": {"name": "no-image"},
        "spec": {"namespace": ENGINE_NS, "replicas": 1, "image": "localhost/absent:1",
                 "deployment": {"nodeSelector": ON_REAL_NODE, "imagePullPolicy": "Never"}},
    })  # fmt: skip

    def stalled() -> dict[str, Any] | None:
        status = kube.get(API, "SchedulerProfile", "no-image").get("status") or {}
        cond = _condition(status, "Stalled")
        return cond if cond.get("status") == "True" else None

    wait_for("the profile to go Stalled", lambda: stalled() is not None, timeout=120)
    cond = stalled()
    assert cond is not None
    assert cond["reason"] == "PodsCannotStart"
    assert "ErrImageNeverPull" in cond["message"]
    assert "localhost/absent:1" in cond["message"]

    # The operator posts the Event after its status patch returns: status can be seen first.
    def warned() -> bool:
        events = kube.list_items(
            "v1", "Event", "default", field_selector="involvedObject.name=no-image"
        )
        return any("ErrImageNeverPull" in e.get("message", "") for e in events)

    wait_for("the profile's ErrImageNeverPull Event", warned, timeout=30)
    kube.delete(API, "SchedulerProfile", "no-image")


def _peers(kube: Client) -> dict[str, Any]:
    peering = kube.get("kopf.dev/v1", "ClusterKopfPeering", "corral")
    return {k: v for k, v in (peering.get("status") or {}).items() if isinstance(v, dict)}


def test_standby_operator_takes_over(
    real_cluster: LocalCluster, kube: Client, operator: list[dict[str, Any]]
) -> None:
    names = [p["metadata"]["name"] for p in _ready_pods(kube, OPERATOR_NS, OPERATORS, 2)]
    wait_for("both operators in the peering", lambda: len(_peers(kube)) >= 2, timeout=60)
    peers = _peers(kube)
    by_pod = {
        n: max((v["priority"] for k, v in peers.items() if n in k), default=-1) for n in names
    }
    active = max(by_pod, key=lambda n: by_pod[n])
    standby = next(n for n in names if n != active)
    kube.delete("v1", "Pod", active, OPERATOR_NS)
    wait_for(
        "the standby to resume",
        lambda: "Resuming operations" in _logs(real_cluster, OPERATOR_NS, standby),
        timeout=90,
    )
    _patch_profile(kube, PROFILE, {"spec": {"deployment": {
        "podAnnotations": {"corral.test/after-takeover": "1"}}}})  # fmt: skip
    wait_for(
        "the standby to reconcile the change",
        lambda: f"profile {PROFILE}: wrote" in _logs(real_cluster, OPERATOR_NS, standby),
        timeout=90,
    )


def test_helm_chart_installs_an_equivalent_working_operator(
    real_cluster: LocalCluster, kube: Client, operator: list[dict[str, Any]]
) -> None:
    # Replace the kustomize install's operator with the chart's (the CRDs and profiles stay).
    real_cluster.kubectl("delete", "-n", OPERATOR_NS, "deployment/corral-operator",
                         "serviceaccount/corral-operator", "--wait=true")  # fmt: skip
    real_cluster.kubectl("delete", "clusterrole/corral:operator",
                         "clusterrolebinding/corral:operator",
                         "clusterrole/corral:schedulerprofiles:viewer",
                         "clusterrole/corral:schedulerprofiles:editor")  # fmt: skip
    wait_for("the kustomize operator pods to go", lambda: not _pods(kube, OPERATOR_NS, OPERATORS),
             timeout=120)  # fmt: skip
    name, _, tag = IMAGE.rpartition(":")
    result = subprocess.run(
        [str(ensure_helm()), "install", "corral", str(ROOT / "charts" / "corral"),
         f"--kubeconfig={real_cluster.kubeconfig}", "--namespace", OPERATOR_NS,
         "--set", "crds.install=false", "--set", f"image.repository={name}",
         "--set", f"image.tag={tag}", "--set", f"nodeSelector.kubernetes\\.io/hostname={NODE_NAME}",
         "--wait", "--timeout=4m"],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    pods = _ready_pods(kube, OPERATOR_NS, OPERATORS, 2)
    assert {p["spec"]["nodeName"] for p in pods} == {NODE_NAME}
    # It reconciles: a profile change reaches the engine Deployment and the profile is Ready.
    _patch_profile(kube, PROFILE, {"spec": {"deployment": {
        "podAnnotations": {"corral.test/installed-by": "helm"}}}})  # fmt: skip

    def reconciled() -> bool:
        body = kube.get(API, "SchedulerProfile", PROFILE)
        status = body.get("status") or {}
        return (
            status.get("observedGeneration") == body["metadata"]["generation"]
            and _condition(status, "Ready").get("status") == "True"
        )

    wait_for("the chart's operator to reconcile the profile", reconciled, timeout=240)
    deployment = kube.get("apps/v1", "Deployment", f"corral-{PROFILE}", ENGINE_NS)
    annotations = deployment["spec"]["template"]["metadata"]["annotations"]
    assert annotations["corral.test/installed-by"] == "helm"
