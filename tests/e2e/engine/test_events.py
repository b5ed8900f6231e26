"""`corral scheduler` end to end: a pod retried many times gets one FailedScheduling Event series,
as client-go's events broadcaster aggregates them, not one Event per attempt."""

from __future__ import annotations

import signal
from collections.abc import Callable

from corral.k8s import JSON, Client
from corral.testing import LocalCluster
from support.engine_process import EngineProcess, engine_config, pod, scheduler_name, wait_until

ATTEMPTS = 20


def failed_scheduling(kube: Client, namespace: str, name: str) -> list[JSON]:
    events = kube.list_items("events.k8s.io/v1", "Event", namespace,
                             field_selector="reason=FailedScheduling")  # fmt: skip
    return [e for e in events if e["regarding"]["name"] == name]


def test_a_pod_retried_twenty_times_gets_one_event_series(
    kube: Client,
    cluster: LocalCluster,
    namespace: str,
    fake_nodes: Callable[..., list[str]],
    engines: Callable[..., EngineProcess],
) -> None:
    pool = {"pool": namespace}
    (node,) = fake_nodes(1, cpu="1", memory="2Gi", labels=pool)
    name = scheduler_name()
    # A 1-second backoff keeps the retries quick; each retry is moved by a cluster event.
    config = engine_config(cluster.kubeconfig, name, podInitialBackoffSeconds=1,
                           podMaxBackoffSeconds=1)  # fmt: skip
    engine = engines(config)
    kube.create(pod("big", namespace, name, nodeSelector=pool, requests={"cpu": "2"}))
    attempt_line = f'Unable to schedule pod pod="{namespace}/big"'

    def attempts() -> int:
        return engine.log().count(attempt_line)

    wait_until("the first attempt", lambda: attempts() >= 1, timeout=30)
    fillers = 0
    while (seen := attempts()) < ATTEMPTS:
        # Deleting an assigned pod re-queues pods NodeResourcesFit rejected (AssignedPodDelete,
        # also under its queueing hint); the message stays the same, as the nodes do.
        filler = pod(f"filler-{fillers}", namespace, name)
        filler["spec"]["nodeName"] = node
        kube.create(filler)
        kube.request("DELETE", f"/api/v1/namespaces/{namespace}/pods/filler-{fillers}",
                     body={"gracePeriodSeconds": 0})  # fmt: skip
        fillers += 1
        wait_until(f"attempt {seen + 1}", lambda: attempts() > seen, timeout=30)
    first = failed_scheduling(kube, namespace, "big")
    # Graceful shutdown writes the series' count, which otherwise lands when the series ends.
    engine.kill(signal.SIGTERM)

    events = failed_scheduling(kube, namespace, "big")
    # client-go keys a series by the pod's resourceVersion, which the first attempt's status
    # patch changes: one key for the pod as created, one for it as patched. Attempts that run
    # before the engine's queue holds the patched pod still have the first key, so that key may
    # get a series of its own (upstream does the same; how many attempts it takes depends on
    # the machine's load); no attempt makes a third key.
    assert 1 <= len(events) <= 2, events
    # Every attempt is counted once: in a series or as a singleton Event.
    assert sum(e["series"]["count"] if e.get("series") else 1 for e in events) == attempts()
    # The series still being written is the patched pod's: it grew after `first` was read.
    event = max(
        (e for e in events if e.get("series")), key=lambda e: e["series"]["lastObservedTime"]
    )
    (before,) = (e for e in first if e["metadata"]["name"] == event["metadata"]["name"])
    # When `first` was read, that Event may still have been a singleton: its series' first
    # write lands after the Event's own (and is retried ~10 s later when it overtook it).
    earlier = (before.get("series") or {}).get("lastObservedTime", "")
    assert event["series"]["lastObservedTime"] > earlier
