"""Coscheduling and CapacityScheduling in one profile, through the engine's cluster state, queue,
cache and loop (binding cycles run inline): a gang that fills its namespace's ElasticQuota to
exactly its max binds whole, also when a member still carries the ``status.nominatedNodeName``
its gang's earlier, rejected attempt announced. Upstream's ``assume`` drops an assumed pod's
nomination (``DeleteNominatedPodIfExists``): kept, the member counted twice in its siblings'
PreFilter (as used and as nominated), and the last one was refused as over max."""

from __future__ import annotations

import pytest

from corral.scheduler.engine.loop import Failure
from corral.scheduler.framework import listers
from corral.scheduler.plugins.capacity_scheduling import over_max
from corral.scheduler.plugins.coscheduling import POD_GROUP_LABEL
from corral.testing.builders import JSON, node, pod, pod_info
from support.engine_rig import EngineRig

PROFILE = "gang-quota"
NS = "team"


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


class Engine(EngineRig):
    def __init__(self, members: int) -> None:
        super().__init__(_config(), PROFILE)
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
