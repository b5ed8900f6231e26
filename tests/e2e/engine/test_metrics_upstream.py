"""The engine's /metrics against upstream kube-scheduler's, the oracle, on the same cluster and
the same kind of pods: every metric both export has the same type, help, label names and
buckets, and the same pod flow yields the same queue events, extension points and
unschedulable plugins."""

from __future__ import annotations

import ssl
import urllib.request
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from prometheus_client.parser import text_string_to_metric_families

from corral.k8s import Client
from corral.scheduler import metrics as m
from corral.testing import LocalCluster
from support.engine_process import EngineProcess, create_all, engine_config, pod, scheduler_name
from support.operator_process import eventually

# What both must export after one pod bound and one found unschedulable.
REQUIRED = (
    "scheduler_schedule_attempts_total",
    "scheduler_scheduling_attempt_duration_seconds",
    "scheduler_scheduling_algorithm_duration_seconds",
    "scheduler_pod_scheduling_sli_duration_seconds",
    "scheduler_pod_scheduling_attempts",
    "scheduler_framework_extension_point_duration_seconds",
    "scheduler_pending_pods",
    "scheduler_unschedulable_pods",
    "scheduler_queue_incoming_pods_total",
    "rest_client_requests_total",
    "rest_client_request_duration_seconds",
    "rest_client_rate_limiter_duration_seconds",
    "process_cpu_seconds_total",
    "process_resident_memory_bytes",
)
# metrics.go's ExtensionPoints, and the queue's PreEnqueue.
UPSTREAM_POINTS = {
    "PreEnqueue", "PreFilter", "Filter", "PreFilterExtensionAddPod", "PreFilterExtensionRemovePod",
    "PostFilter", "PreScore", "Score", "ScoreExtensionNormalize", "PreBind", "PreBindPreFlight",
    "Bind", "PostBind", "Reserve", "Unreserve", "Permit",
}  # fmt: skip
STABILITY = ("[STABLE] ", "[BETA] ", "[ALPHA] ")  # component-base prefixes upstream's help

Families = dict[str, dict[str, Any]]


def families(text: str) -> Families:
    out: Families = {}
    for family in text_string_to_metric_families(text):
        name = family.name + ("_total" if family.type == "counter" else "")
        help_ = family.documentation
        for prefix in STABILITY:
            help_ = help_.removeprefix(prefix)
        labels = {k for s in family.samples for k in s.labels if k != "le"}
        buckets = {s.labels["le"] for s in family.samples if "le" in s.labels}
        out[name] = {"type": family.type, "help": help_, "labels": labels, "buckets": buckets,
                     "samples": family.samples}  # fmt: skip
    return out


def values(family: dict[str, Any], *keys: str) -> set[tuple[str, ...]]:
    return {tuple(s.labels.get(k, "") for k in keys) for s in family["samples"]}


@pytest.fixture
def reader_token(kube: Client, namespace: str) -> Iterator[str]:
    """A token allowed `get` on /metrics (upstream serves it only to such)."""
    name = f"t-metrics-{uuid.uuid4().hex[:6]}"
    rbac = "rbac.authorization.k8s.io/v1"
    kube.create({"apiVersion": "v1", "kind": "ServiceAccount",
                 "metadata": {"name": name, "namespace": namespace}})  # fmt: skip
    kube.create({"apiVersion": rbac, "kind": "ClusterRole", "metadata": {"name": name},
                 "rules": [{"nonResourceURLs": ["/metrics"], "verbs": ["get"]}]})  # fmt: skip
    kube.create({"apiVersion": rbac, "kind": "ClusterRoleBinding", "metadata": {"name": name},
                 "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                             "name": name},
                 "subjects": [{"kind": "ServiceAccount", "name": name,
                               "namespace": namespace}]})  # fmt: skip
    yield kube.request_token(namespace, name)
    kube.delete(rbac, "ClusterRoleBinding", name)
    kube.delete(rbac, "ClusterRole", name)


def fetch(url: str, token: str | None = None) -> str:
    context = ssl.create_default_context()
    context.check_hostname, context.verify_mode = False, ssl.CERT_NONE  # self-signed, both
    request = urllib.request.Request(url)
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    with urllib.request.urlopen(request, timeout=10, context=context) as answer:
        return str(answer.read().decode())


def test_the_engine_exports_what_upstream_does(
    kube: Client,
    cluster: LocalCluster,
    namespace: str,
    fake_nodes: Callable[..., list[str]],
    engines: Callable[..., EngineProcess],
    reader_token: str,
) -> None:
    upstream = next(c for c in cluster.state.components if c.name == "kube-scheduler")
    pool = {"pool": namespace}
    fake_nodes(2, labels=pool)
    name = scheduler_name()
    engine = engines(engine_config(cluster.kubeconfig, name))
    nowhere = {"pool": f"{namespace}-none"}
    create_all(kube, [
        pod("up-ok", namespace, "default-scheduler", nodeSelector=pool),
        pod("up-no", namespace, "default-scheduler", nodeSelector=nowhere),
        pod("c-ok", namespace, name, nodeSelector=pool),
        pod("c-no", namespace, name, nodeSelector=nowhere),
    ])  # fmt: skip

    def bound(pod_name: str) -> bool:
        return bool(kube.get("v1", "Pod", pod_name, namespace)["spec"].get("nodeName"))

    eventually(lambda: bound("up-ok") and bound("c-ok"), what="both bound pods")

    def scraped() -> tuple[Families, Families] | None:
        ours = families(fetch(f"http://127.0.0.1:{engine.port}/metrics"))
        theirs = families(fetch(f"https://127.0.0.1:{upstream.port}/metrics", reader_token))
        have = all(n in ours and n in theirs for n in REQUIRED)
        unschedulable = ours.get("scheduler_unschedulable_pods", {"samples": []})["samples"]
        return (ours, theirs) if have and any(s.value for s in unschedulable) else None

    ours, theirs = eventually(scraped, timeout=60, what="both scrapes with every metric")

    # Every metric Corral declares that upstream exports too is the same metric.
    for metric in m.DECLARED:
        if metric.name not in theirs or metric.name not in ours:
            continue
        mine, oracle = ours[metric.name], theirs[metric.name]
        assert mine["type"] == oracle["type"], metric.name
        assert mine["help"] == oracle["help"], metric.name
        if mine["samples"] and oracle["samples"]:  # a sampled metric may have none yet
            assert mine["labels"] == oracle["labels"], metric.name
            assert mine["buckets"] == oracle["buckets"], metric.name

    # The same pod flow: a new pod enters activeQ, a rejected one unschedulablePods.
    for pair in (("active", "UnscheduledPodAdd"), ("unschedulable", "ScheduleAttemptFailure")):
        for side in (ours, theirs):
            assert pair in values(side["scheduler_queue_incoming_pods_total"], "queue", "event")
    # The rejector, per profile, on both sides.
    assert ("NodeAffinity", name) in values(
        ours["scheduler_unschedulable_pods"], "plugin", "profile"
    )
    assert ("NodeAffinity", "default-scheduler") in values(
        theirs["scheduler_unschedulable_pods"], "plugin", "profile"
    )
    # Extension points Corral runs carry upstream's names and status labels.
    points = values(ours["scheduler_framework_extension_point_duration_seconds"],
                    "extension_point", "status")  # fmt: skip
    upstream_points = values(theirs["scheduler_framework_extension_point_duration_seconds"],
                             "extension_point", "status")  # fmt: skip
    assert {point for point, _ in points} <= UPSTREAM_POINTS
    for point in ("PreEnqueue", "PreFilter", "Filter", "Bind"):
        assert (point, "Success") in points
        assert (point, "Success") in upstream_points
    # The SLI counts the bound pod once, by its attempts.
    sli = [s for s in ours["scheduler_pod_scheduling_sli_duration_seconds"]["samples"]
           if s.name.endswith("_count")]  # fmt: skip
    assert [(s.labels["attempts"], s.value) for s in sli] == [("1", 1.0)]
