"""Coscheduling and CapacityScheduling in one profile, through the engine's cluster state, queue,
cache and loop (binding cycles run inline): a gang that fills its namespace's ElasticQuota to
exactly its max binds whole, also when a member still carries the ``status.nominatedNodeName``
its gang's earlier, rejected attempt announced. Upstream's ``assume`` drops an assumed pod's
nomination (``DeleteNominatedPodIfExists``): kept, the member counted twice in its siblings'
PreFilter (as used and as nominated), and the last one was refused as over max."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from corral.scheduler.backend.cache import Cache
from corral.scheduler.backend.objects import ObjectStore
from corral.scheduler.backend.pod_labels import PodLabelIndex
from corral.scheduler.backend.queue import SchedulingQueue
from corral.scheduler.engine.frameworks import (
    build_frameworks,
    engine_declarations,
    engine_registry,
    load_engine_config,
)
from corral.scheduler.engine.handlers import ClusterState
from corral.scheduler.engine.loop import Failure, SchedulingLoop, Success
from corral.scheduler.engine.nominator import Nominator
from corral.scheduler.framework import listers
from corral.scheduler.framework.runtime.schedule_pod import PodScheduler
from corral.scheduler.framework.types import PodInfo
from corral.scheduler.plugins.capacity_scheduling import over_max
from corral.scheduler.plugins.coscheduling import POD_GROUP_LABEL
from corral.testing.builders import JSON, node, pod, pod_info

PROFILE = "gang-quota"
NS = "team"


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class Reported:
    def __init__(self) -> None:
        self.outcomes: list[Success | Failure] = []

    def scheduled(self, outcome: Success) -> None:
        self.outcomes.append(outcome)

    def failed(self, outcome: Failure) -> None:
        self.outcomes.append(outcome)


class Binder:
    def __init__(self) -> None:
        self.bound: list[str] = []

    def __call__(self, pod: PodInfo, node_name: str) -> None:
        self.bound.append(pod.name)


class Deferred:
    """The binding pool, run on demand: a member waits at Permit while the next is scheduled."""

    def __init__(self) -> None:
        self.jobs: list[tuple[Callable[..., Any], tuple[Any, ...]]] = []

    def submit(self, fn: Callable[..., Any], *args: Any) -> None:
        self.jobs.append((fn, args))

    def run(self) -> None:
        jobs, self.jobs = self.jobs, []
        for fn, args in jobs:
            fn(*args)


def _config() -> JSON:
    return {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [{
            "schedulerName": PROFILE,
            "plugins": {"multiPoint": {
                "enabled": [{"name": "Coscheduling"}, {"name": "CapacityScheduling"}],
                "disabled": [{"name": "PrioritySort"}, {"name": "DefaultPreemption"}],
            }},
        }],
    }  # fmt: skip


def _member(name: str, nominated: str = "") -> JSON:
    raw = pod(name, namespace=NS, cpu="1", labels={POD_GROUP_LABEL: "g"})
    raw["spec"]["schedulerName"] = PROFILE
    raw["metadata"]["resourceVersion"] = "2" if nominated else "1"
    if nominated:
        raw["status"] = {"nominatedNodeName": nominated}
    return raw


class Engine:
    def __init__(self, members: int) -> None:
        self.clock, self.reported, self.binder = Clock(), Reported(), Binder()
        engine = load_engine_config(_config())
        self.objects, self.nominator = ObjectStore(), Nominator()
        labels = PodLabelIndex.for_plugins(
            engine_declarations(), {n for p in engine.profiles for n in p.plugin_names()}
        )
        (fwk,) = build_frameworks(
            engine, engine_registry(), self.binder, objects=self.objects, pod_lister=labels,
            nominator=self.nominator,
        ).values()  # fmt: skip
        self.fwk = fwk
        self.queue = SchedulingQueue(
            less=fwk.less,
            pre_enqueue=fwk.run_pre_enqueue,
            events_by_profile={PROFILE: dict(fwk.events_by_plugin())},
            clock=self.clock,
        )
        self.cache = Cache()
        self.state = ClusterState(self.cache, self.queue, {PROFILE}, lambda _: True,
                                  self.nominator, labels=labels)  # fmt: skip
        self.loop = SchedulingLoop(self.queue, self.cache, {PROFILE: PodScheduler(fwk)},
                                   self.reported, nominator=self.nominator)  # fmt: skip
        self.pool = Deferred()
        self.loop._pool = self.pool  # type: ignore[assignment]
        self.state.on_node("ADDED", node("n", cpu="8"))
        self.objects.apply(listers.SP_POD_GROUP, "ADDED", {
            "apiVersion": "scheduling.x-k8s.io/v1alpha1", "kind": "PodGroup",
            "metadata": {"name": "g", "namespace": NS, "creationTimestamp": "2026-01-01T00:00:00Z"},
            "spec": {"minMember": members, "scheduleTimeoutSeconds": 600},
        })  # fmt: skip
        cpus = str(members)
        self.objects.apply(listers.SP_ELASTIC_QUOTA, "ADDED", {
            "apiVersion": "scheduling.x-k8s.io/v1alpha1", "kind": "ElasticQuota",
            "metadata": {"name": "quota", "namespace": NS,
                         "creationTimestamp": "2026-01-01T00:00:00Z"},
            "spec": {"min": {"cpu": cpus}, "max": {"cpu": cpus}},
        })  # fmt: skip

    def cycle(self) -> None:
        self.clock.now += 60
        self.queue.flush_backoff_completed()
        qpi = self.queue.pop(timeout=0)
        assert qpi is not None, "nothing to schedule"
        self.loop.schedule_one(qpi)


NOMINATED = [
    # id, gang size (= the quota's max in cpus), members whose status still names the node
    pytest.param(2, (), id="no member nominated: the gang fills max and binds"),
    pytest.param(2, ("g-0",), id="the first member nominated by an earlier attempt"),
    pytest.param(4, ("g-0", "g-1", "g-2", "g-3"),
                 id="every member of 4 nominated by the gang's rejected attempt"),
]  # fmt: skip


@pytest.mark.parametrize(("members", "nominated"), NOMINATED)
def test_a_gang_at_exactly_its_quotas_max_binds_whole(
    members: int, nominated: tuple[str, ...]
) -> None:
    e = Engine(members)
    names = [f"g-{i}" for i in range(members)]
    for name in names:
        e.state.on_pod("ADDED", _member(name))
    for name in nominated:  # the announce of the rejected attempt, seen after its forget
        e.state.on_pod("MODIFIED", _member(name, nominated="n"))
    assert len(e.nominator) == len(nominated)
    for _ in names:
        e.cycle()  # each member assumed, reserved, waiting at Permit (the last allows all)
    refused = [o.message for o in e.reported.outcomes if isinstance(o, Failure)]
    assert refused == [], refused
    assert not any(over_max(pod_info(n, namespace=NS), NS) in m for n in names for m in refused)
    e.pool.run()
    assert sorted(e.binder.bound) == names
    assert len(e.nominator) == 0
