"""Queueing hints end to end, observed through ``scheduler_schedule_attempts_total``: a pod
NodeResourcesFit (and NodeAffinity) rejected is retried when, and only when, an event one of
their hints accepts arrives; with ``--feature-gates=SchedulerQueueingHints=false`` every event
its rejectors registered retries it.

The events that must not help come first: the pod's node grows a little (still too small) and
an unrelated small node is added. A probe pod of a second profile, pinned by label to that new
node, is the sentinel: the node watch delivers events in order, so once the probe is bound the
engine has handled both. Then the pod's node grows enough, and the pod is bound.

The cluster is shared: an earlier test's namespace is deleted in the background, and each of its
bound pods deleted then is an event NodeResourcesFit's hint rightly accepts (as upstream's: a
freed request may make room). So the test starts once no terminating namespace has a pod left
(such a namespace may stay Terminating for other objects' finalizers; only its pods matter)."""

from __future__ import annotations

import urllib.request
from collections.abc import Callable

import pytest
from prometheus_client.parser import text_string_to_metric_families

from corral.k8s import CONTENT_MERGE_PATCH, Client
from corral.testing import LocalCluster
from support.engine_process import EngineProcess, engine_config, pod, scheduler_name, wait_until


def _attempts(engine: EngineProcess, profile: str, result: str) -> float:
    url = f"http://127.0.0.1:{engine.port}/metrics"
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            text = response.read().decode()
    except OSError:  # still starting
        return 0.0
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if (
                sample.name == "scheduler_schedule_attempts_total"
                and sample.labels.get("profile") == profile
                and sample.labels.get("result") == result
            ):
                return float(sample.value)
    return 0.0


def _set_cpu(kube: Client, node: str, cpu: str) -> None:
    body = {"status": {"capacity": {"cpu": cpu}, "allocatable": {"cpu": cpu}}}
    kube.request(
        "PATCH", f"/api/v1/nodes/{node}/status", body=body, content_type=CONTENT_MERGE_PATCH
    )


def _no_pod_of_a_terminating_namespace(kube: Client) -> bool:
    terminating = {
        ns["metadata"]["name"]
        for ns in kube.list_items("v1", "Namespace")
        if (ns.get("status") or {}).get("phase") == "Terminating"
    }
    return not any(p["metadata"]["namespace"] in terminating for p in kube.list_items("v1", "Pod"))


def _bound(kube: Client, namespace: str, name: str) -> bool:
    return bool(kube.get("v1", "Pod", name, namespace)["spec"].get("nodeName"))


@pytest.mark.parametrize(
    ("args", "retried_by_useless_events"),
    [
        pytest.param((), False, id="hints on: only a helpful event retries the pod"),
        pytest.param(
            ("--feature-gates=SchedulerQueueingHints=false",),
            True,
            id="hints off: every registered event retries it",
        ),
    ],
)
def test_a_rejected_pod_is_retried_only_when_a_hint_accepts_an_event(
    kube: Client,
    cluster: LocalCluster,
    namespace: str,
    fake_nodes: Callable[..., list[str]],
    engines: Callable[..., EngineProcess],
    args: tuple[str, ...],
    retried_by_useless_events: bool,
) -> None:
    wait_until(
        "earlier tests' pods gone", lambda: _no_pod_of_a_terminating_namespace(kube), timeout=120
    )
    pool = {"pool": namespace}
    (home,) = fake_nodes(1, cpu="1", memory="2Gi", labels=pool)
    name, probe_profile = scheduler_name(), scheduler_name()
    config = engine_config(cluster.kubeconfig, name)
    config["profiles"].append({"schedulerName": probe_profile})
    engine = engines(config, args=args)
    kube.create(pod("big", namespace, name, nodeSelector=pool, requests={"cpu": "2"}))
    wait_until("the first attempt", lambda: _attempts(engine, name, "unschedulable") >= 1)
    probe_label = {"probe": namespace}
    kube.create(pod("probe", namespace, probe_profile, nodeSelector=probe_label))

    def probe_failed() -> bool:
        return _attempts(engine, probe_profile, "unschedulable") >= 1

    wait_until("the probe's first attempt", probe_failed)
    # Without hints, any event during an attempt retries the pod: count from here.
    before = _attempts(engine, name, "unschedulable")

    _set_cpu(kube, home, "1500m")  # allocatable grew, still too small: NodeResourcesFit skips
    fake_nodes(1, cpu="1", memory="2Gi", labels=probe_label, ready=True)  # too small, off pool
    wait_until(
        "the probe bound: both node events handled", lambda: _bound(kube, namespace, "probe")
    )
    if retried_by_useless_events:
        wait_until("a retry", lambda: _attempts(engine, name, "unschedulable") > before)

    _set_cpu(kube, home, "4")  # now it fits: NodeResourcesFit queues it
    wait_until("the pod bound", lambda: _bound(kube, namespace, "big"))
    wait_until("the success counted", lambda: _attempts(engine, name, "scheduled") == 1)
    retries = _attempts(engine, name, "unschedulable") - before
    if retried_by_useless_events:
        assert retries >= 1
    else:
        assert retries == 0
