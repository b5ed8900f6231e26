"""A shadow profile's observer, comparison and counts: the live scheduler played by a second
PodScheduler over the same cache, pod events fed as the informer delivers them."""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

import pytest

from corral.render import names
from corral.scheduler import metrics as m
from corral.scheduler.backend.cache import Cache
from corral.scheduler.backend.objects import ObjectStore
from corral.scheduler.backend.records import node_from_json, pod_from_json
from corral.scheduler.engine.frameworks import build_frameworks, engine_registry, load_engine_config
from corral.scheduler.engine.nominator import Nominator
from corral.scheduler.engine.shadow import compare as c
from corral.scheduler.engine.shadow import tally as t
from corral.scheduler.engine.shadow.observer import PROFILE_LABEL, ShadowObserver
from corral.scheduler.framework import explanation as x
from corral.scheduler.framework.cycle_state import CycleState
from corral.scheduler.framework.runtime.schedule_pod import PodScheduler
from corral.testing.builders import node, pod

JSON = dict[str, Any]
DEFAULT: JSON = {
    "apiVersion": "kubescheduler.config.k8s.io/v1",
    "kind": "KubeSchedulerConfiguration",
    "profiles": [{"schedulerName": "shadow-a"}],
}
MOST_ALLOCATED: JSON = {
    **DEFAULT,
    "profiles": [
        {
            "schedulerName": "shadow-a",
            "pluginConfig": [
                {"name": "NodeResourcesFit", "args": {"scoringStrategy": {"type": "MostAllocated"}}}
            ],
        }
    ],
}
ONLY_POOL_B: JSON = {
    **DEFAULT,
    "profiles": [
        {
            "schedulerName": "shadow-a",
            "pluginConfig": [
                {
                    "name": "NodeAffinity",
                    "args": {
                        "addedAffinity": {
                            "requiredDuringSchedulingIgnoredDuringExecution": {
                                "nodeSelectorTerms": [
                                    {
                                        "matchExpressions": [
                                            {"key": "pool", "operator": "In", "values": ["b"]}
                                        ]
                                    }
                                ]
                            }
                        }
                    },
                }
            ],
        }
    ],
}


def scheduler(config: Mapping[str, Any], seed: int) -> PodScheduler:
    engine = load_engine_config(config)
    frameworks = build_frameworks(
        engine, engine_registry(), None, objects=ObjectStore(), nominator=Nominator()
    )
    return PodScheduler(next(iter(frameworks.values())), rng=random.Random(seed))


class Cluster:
    """The live scheduler (upstream's default profile) deciding, and the shadow observing, as
    the engine's informer would deliver the events."""

    def __init__(self, shadow_config: Mapping[str, Any], nodes: list[JSON]) -> None:
        self.cache = Cache()
        for raw in nodes:
            self.cache.add_node(node_from_json(raw))
        self.live = scheduler(DEFAULT, seed=1)
        self.recorder = m.new_recorder()
        self.tally = t.Tally("default-scheduler", "hash", "now")
        self.observer = ShadowObserver(
            scheduler(shadow_config, seed=2),
            live_scheduler="default-scheduler",
            cache=self.cache,
            nominator=Nominator(),
            serves_namespace=lambda ns: ns != "elsewhere",
            tally=self.tally,
            recorder=self.recorder,
            clock=lambda: "now",
            own_profile="shadow-a",
        )
        self.observer.start()
        self.pending: dict[str, JSON] = {}

    def arrive(self, raw: JSON) -> None:
        raw = {**raw, "spec": {**raw["spec"], "schedulerName": "default-scheduler"}}
        self.pending[raw["metadata"]["name"]] = raw
        self.observer.on_pod("ADDED", raw)

    def live_decides(self, name: str) -> str | None:
        """The live scheduler's cycle on the cache as it is, then its binding (or its
        Unschedulable condition) delivered to the shadow first, then to the cache."""
        raw = self.pending.pop(name)
        info = pod_from_json(raw)
        try:
            host = self.live.schedule_pod(CycleState(), info, self.cache.snapshot()).suggested_host
        except Exception as err:  # FitError: the live scheduler's condition
            cond = {"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
                    "message": str(err)}  # fmt: skip
            self.observer.on_pod("MODIFIED", {**raw, "status": {"conditions": [cond]}})
            return None
        bound = {**raw, "spec": {**raw["spec"], "nodeName": host}}
        self.observer.on_pod("MODIFIED", bound)
        self.cache.add_pod(pod_from_json(bound))
        return host

    def status(self) -> t.ShadowStatus:
        self.observer.stop()  # every decision submitted is made
        return self.tally.status("now")


NODES = [node(f"n{i}", cpu="4", memory="8Gi", labels={"pool": "a" if i < 3 else "b"})
         for i in range(1, 5)]  # fmt: skip


def test_the_same_configuration_agrees_on_every_pod_one_at_a_time() -> None:
    cluster = Cluster(DEFAULT, NODES)
    for i in range(24):
        cluster.arrive(pod(f"p{i}", cpu=f"{100 + 37 * (i % 5)}m", memory="256Mi"))
        cluster.live_decides(f"p{i}")
    status = cluster.status()
    assert status.observed == 24
    assert status.agreed + status.ties == 24
    assert status.burst.observed == 0
    assert status.summary == "24/24 agree (100.0%)"


def test_changed_weights_disagree_and_name_the_deciding_plugin() -> None:
    """Least (live) against most allocated (shadow), identical pods on identical nodes: the
    live scheduler spreads, the shadow packs. Every pod that lands on a node with fewer pods
    than the fullest one is a disagreement decided by NodeResourcesFit."""
    cluster = Cluster(MOST_ALLOCATED, NODES)
    expected = 0
    for i in range(8):
        cluster.arrive(pod(f"p{i}", cpu="500m", memory="1Gi"))
        before = _pods_per_node(cluster.cache)
        host = cluster.live_decides(f"p{i}")
        assert host is not None
        if before[host] < max(before.values()):
            expected += 1
    status = cluster.status()
    assert expected == 6  # 8 pods over 4 nodes: each round's first is a tie, the rest not
    assert status.disagreed == expected
    assert status.by_plugin == [t.PluginCount("NodeResourcesFit", expected)]
    last = status.last_disagreements[-1]
    assert last.deciding_plugin == "NodeResourcesFit"
    assert last.lost_on[0].plugin == "NodeResourcesFit"
    assert last.live_total is not None
    assert last.shadow_total is not None
    assert last.live_total < last.shadow_total
    fit = next(s for s in last.scores if s.plugin == "NodeResourcesFit")
    assert fit.live is not None
    assert fit.shadow is not None
    assert fit.live < fit.shadow


def _pods_per_node(cache: Cache) -> dict[str, int]:
    snap = cache.snapshot()
    row = snap.resource_row("pods")
    assert row is not None
    return {name: int(snap.requested[row, slot]) for slot, name in enumerate(snap.names) if name}


def test_a_node_the_shadow_rejects_is_named_with_its_filter() -> None:
    """The shadow keeps to pool b (NodeAffinity's addedAffinity): a live binding in pool a is
    a disagreement rejected by NodeAffinity."""
    cluster = Cluster(ONLY_POOL_B, NODES)
    outcomes = []
    for i in range(6):
        cluster.arrive(pod(f"p{i}", cpu="100m"))
        host = cluster.live_decides(f"p{i}")
        outcomes.append(host)
    status = cluster.status()
    in_a = sum(1 for h in outcomes if h in ("n1", "n2"))
    assert status.disagreed >= in_a > 0
    rejected = [d for d in status.last_disagreements if d.rejected_by]
    assert rejected
    assert all(d.deciding_plugin == "NodeAffinity" for d in rejected)
    assert (
        rejected[0].rejected_by[0].message
        == "node(s) didn't match scheduler-enforced node affinity"
    )


@pytest.mark.parametrize(
    ("cpu", "outcome"),
    [
        pytest.param("100", c.AGREED, id="both find it unschedulable"),
    ],
)
def test_unschedulable_on_both_sides_agrees(cpu: str, outcome: str) -> None:
    cluster = Cluster(DEFAULT, NODES)
    cluster.arrive(pod("big", cpu=cpu))
    assert cluster.live_decides("big") is None
    status = cluster.status()
    assert (status.observed, status.agreed) == (1, 1)


def test_the_live_scheduler_finding_no_node_where_the_shadow_finds_one() -> None:
    cluster = Cluster(DEFAULT, NODES)
    raw = {**pod("p", cpu="1"), "status": {"conditions": [{
        "type": "PodScheduled", "status": "False", "reason": "Unschedulable",
        "message": "0/4 nodes are available: 4 Insufficient example.com/gpu."}]}}  # fmt: skip
    raw["spec"]["schedulerName"] = "default-scheduler"
    cluster.observer.on_pod("ADDED", raw)
    cluster.observer.on_pod("MODIFIED", raw)  # the condition again: decided once
    status = cluster.status()
    assert (status.observed, status.live_unschedulable) == (1, 1)
    d = status.last_disagreements[0]
    assert d.live_node is None
    assert d.shadow_node is not None
    assert d.message == "0/4 nodes are available: 4 Insufficient example.com/gpu."


def test_pods_in_flight_together_are_counted_as_a_burst() -> None:
    cluster = Cluster(DEFAULT, NODES)
    cluster.arrive(pod("a", cpu="100m"))
    cluster.arrive(pod("b", cpu="100m"))  # arrives while a is in flight
    cluster.live_decides("a")
    cluster.live_decides("b")
    cluster.arrive(pod("c", cpu="100m"))  # alone again
    cluster.live_decides("c")
    status = cluster.status()
    assert status.observed == 3
    assert status.burst.observed == 2


@pytest.mark.parametrize(
    ("event", "raw"),
    [
        pytest.param("ADDED", pod("other", cpu="1"), id="another scheduler's pod"),
        pytest.param("ADDED", pod("far", namespace="elsewhere"), id="a namespace not served"),
    ],
)
def test_pods_the_shadow_does_not_watch(event: str, raw: JSON) -> None:
    cluster = Cluster(DEFAULT, NODES)
    if raw["metadata"]["namespace"] == "elsewhere":
        raw["spec"]["schedulerName"] = "default-scheduler"
    else:
        raw["spec"]["schedulerName"] = "someone-else"
    cluster.observer.on_pod(event, raw)
    bound = {**raw, "spec": {**raw["spec"], "nodeName": "n1"}}
    cluster.observer.on_pod("MODIFIED", bound)
    assert cluster.status().observed == 0


@pytest.mark.parametrize(
    ("profile", "observed"),
    [
        pytest.param("shadow-a", 0, id="the shadow's own Deployment's pod"),
        pytest.param("team-b", 1, id="another profile's engine pod"),
    ],
)
def test_the_shadows_own_pods_are_not_decided(profile: str, observed: int) -> None:
    cluster = Cluster(DEFAULT, NODES)
    raw = pod("corral-shadow-a-7d9f-x2x", cpu="100m", labels={PROFILE_LABEL: profile})
    cluster.arrive(raw)
    cluster.live_decides(raw["metadata"]["name"])
    assert cluster.status().observed == observed


def test_the_own_pods_label_is_the_one_the_operator_renders() -> None:
    assert PROFILE_LABEL == names.PROFILE_LABEL


def test_decisions_are_counted_in_the_metric_by_outcome() -> None:
    cluster = Cluster(DEFAULT, NODES)
    cluster.arrive(pod("p", cpu="100m"))
    cluster.live_decides("p")
    status = cluster.status()
    outcome = c.AGREED if status.agreed else c.TIE
    assert cluster.recorder.series(m.SHADOW_DECISIONS) == {(outcome,): 1.0}
    assert cluster.recorder.series(m.SHADOW_BURST_DECISIONS) == {}


# --- the comparison ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("shadow", "live", "outcome"),
    [
        pytest.param(c.ShadowDecision("a", {"a": 10, "b": 5}), c.LiveDecision("a"), c.AGREED,
                     id="same node"),
        pytest.param(c.ShadowDecision("a", {"a": 10, "b": 10}), c.LiveDecision("b"), c.TIE,
                     id="equal total"),
        pytest.param(c.ShadowDecision("a", {"a": 10, "b": 9}), c.LiveDecision("b"), c.DISAGREED,
                     id="lower total"),
        pytest.param(c.ShadowDecision("a", {"a": 10}), c.LiveDecision("b"), c.DISAGREED,
                     id="not feasible for the shadow"),
        pytest.param(c.ShadowDecision("a", {}), c.LiveDecision("b"), c.DISAGREED,
                     id="one feasible node, another"),
        pytest.param(c.ShadowDecision(None), c.LiveDecision("b"), c.SHADOW_UNSCHEDULABLE,
                     id="shadow finds none"),
        pytest.param(c.ShadowDecision("a"), c.LiveDecision(None, "no"), c.LIVE_UNSCHEDULABLE,
                     id="live finds none"),
        pytest.param(c.ShadowDecision(None), c.LiveDecision(None, "no"), c.AGREED,
                     id="neither finds one"),
    ],
)  # fmt: skip
def test_classify(shadow: c.ShadowDecision, live: c.LiveDecision, outcome: str) -> None:
    assert c.classify(shadow, live) == outcome


def test_evidence_when_a_prefilter_narrowed_the_nodes() -> None:
    e = x.Explanation(pod="ns/p", nodes=["a", "b"], selected_node="a")
    e.pre_filter.append(x.PointResult("NodeAffinity", x.SUCCESS, node_names=["a"]))
    d = c.evidence(e, c.LiveDecision("b"), c.DISAGREED)
    assert d.deciding_plugin == "NodeAffinity"
    assert d.rejected_by[0].message == "its PreFilter narrowed the nodes to 1, not this one"


def test_evidence_for_a_node_the_shadow_never_saw() -> None:
    e = x.Explanation(pod="ns/p", nodes=["a"], selected_node="a")
    d = c.evidence(e, c.LiveDecision("new-node"), c.DISAGREED)
    assert d.rejected_by == [c.Rejection("", c.NOT_IN_SNAPSHOT)]


# --- the counts --------------------------------------------------------------------------------


def test_the_status_round_trips_and_a_restart_goes_on_counting() -> None:
    first = t.Tally("default-scheduler", "h1", "t0")
    first.record(c.AGREED, None, burst=False)
    first.record(c.DISAGREED, c.Disagreement("ns/p", c.DISAGREED, deciding_plugin="X"),
                 burst=True)  # fmt: skip
    written = t.to_json(first.status("t1"))
    assert written["summary"] == "1/2 agree (50.0%)"
    assert written["byPlugin"] == [{"plugin": "X", "decisions": 1}]
    assert written["burst"]["disagreed"] == 1
    again = t.Tally("default-scheduler", "h1", "t2")
    assert again.resume(t.from_json(written))
    again.record(c.TIE, None, burst=False)
    status = again.status("t3")
    assert (status.observed, status.ties, status.since) == (3, 1, "t0")
    other = t.Tally("default-scheduler", "h2", "t2")
    assert not other.resume(t.from_json(written))  # another configuration starts afresh


def test_only_the_newest_disagreements_are_kept() -> None:
    tally = t.Tally("s", "h", "t")
    for i in range(t.KEEP + 5):
        tally.record(c.DISAGREED, c.Disagreement(f"ns/p{i}", c.DISAGREED), burst=False)
    kept = tally.status("t").last_disagreements
    assert [d.pod for d in kept] == [f"ns/p{i}" for i in range(5, t.KEEP + 5)]
    assert tally.status("t").by_plugin == [t.PluginCount(t.UNKNOWN_PLUGIN, t.KEEP + 5)]


def test_a_status_that_is_not_a_shadow_status_is_refused_with_its_path() -> None:
    with pytest.raises(Exception, match=r"status\.shadow\.observed"):
        t.from_json({"observed": "many"})
