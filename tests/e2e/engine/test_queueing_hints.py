"""Queueing hints end to end, one smoke test observed through
``scheduler_schedule_attempts_total``: a pod NodeAffinity rejected is retried when, and only
when, an event its hint accepts arrives, with the informers' real node events (kwok's status
updates among them). The table of events with hints on and off
(``--queueing-hints=false``) is the unit test
``tests/unit/scheduler/engine/test_loop.py::test_a_rejected_pod_is_retried_only_by_an_event_its_rejector_accepts``.

The cluster is shared and other tests' objects come and go in the background (a deleted
namespace's pods, nodes removed at teardown), so the pod is built to be moved by nothing but
this test: it is pinned to its node by a ``matchFields metadata.name`` term (NodeAffinity's
PreFilter narrows the cycle to that node, so no other node's taints or load add a rejector) and
needs a label that node lacks, so NodeAffinity alone rejects it. NodeAffinity registers only
Node Add and Node label updates: pod deletions anywhere cannot retry it.

The events that must not help come first: the pod's node gets a label still not the one wanted,
and an unrelated node is added. A probe pod of a second profile, pinned by label to that new
node, is the sentinel: the node watch delivers events in order, so once the probe is bound the
engine has handled both. Then the node gets the wanted label, and the pod is bound."""

from __future__ import annotations

from collections.abc import Callable

from corral.k8s import CONTENT_MERGE_PATCH, Client
from corral.testing import LocalCluster
from support.engine_process import EngineProcess, engine_config, pod, scheduler_name, wait_until
from support.engine_process import schedule_attempts as _attempts


def _label(kube: Client, node: str, key: str, value: str) -> None:
    body = {"metadata": {"labels": {key: value}}}
    kube.request("PATCH", f"/api/v1/nodes/{node}", body=body, content_type=CONTENT_MERGE_PATCH)


def _pinned_affinity(node: str, key: str, value: str) -> dict[str, object]:
    term = {
        "matchFields": [{"key": "metadata.name", "operator": "In", "values": [node]}],
        "matchExpressions": [{"key": key, "operator": "In", "values": [value]}],
    }
    required = {"nodeSelectorTerms": [term]}
    return {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": required}}


def _bound(kube: Client, namespace: str, name: str) -> bool:
    return bool(kube.get("v1", "Pod", name, namespace)["spec"].get("nodeName"))


def test_a_rejected_pod_is_retried_only_when_a_hint_accepts_an_event(
    kube: Client,
    cluster: LocalCluster,
    namespace: str,
    fake_nodes: Callable[..., list[str]],
    engines: Callable[..., EngineProcess],
) -> None:
    (home,) = fake_nodes(1, cpu="4", memory="8Gi")
    name, probe_profile = scheduler_name(), scheduler_name()
    config = engine_config(cluster.kubeconfig, name)
    config["profiles"].append({"schedulerName": probe_profile})
    engine = engines(config)
    affinity = _pinned_affinity(home, "pool", namespace)
    kube.create(pod("picky", namespace, name, affinity=affinity))
    wait_until(
        "the first attempt", lambda: _attempts(engine, name, "unschedulable") >= 1, timeout=120
    )
    probe_label = {"probe": namespace}
    kube.create(pod("probe", namespace, probe_profile, nodeSelector=probe_label))

    def probe_failed() -> bool:
        return _attempts(engine, probe_profile, "unschedulable") >= 1

    wait_until("the probe's first attempt", probe_failed)
    before = _attempts(engine, name, "unschedulable")

    _label(kube, home, "pool", "elsewhere")  # a label update, still not the wanted value
    fake_nodes(1, cpu="1", memory="2Gi", labels=probe_label, ready=True)  # added, not its node
    wait_until(
        "the probe bound: both node events handled", lambda: _bound(kube, namespace, "probe")
    )
    assert _attempts(engine, name, "unschedulable") == before, "retried by a useless event"

    _label(kube, home, "pool", namespace)  # now it matches: NodeAffinity queues it
    wait_until("the pod bound", lambda: _bound(kube, namespace, "picky"))
    wait_until("the success counted", lambda: _attempts(engine, name, "scheduled") == 1)
    assert _attempts(engine, name, "unschedulable") == before
