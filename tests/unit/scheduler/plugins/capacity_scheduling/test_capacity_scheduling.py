"""CapacityScheduling (scheduler-plugins): transcribed from SP (kubernetes-sigs/scheduler-plugins
at 903da7df) ``pkg/capacityscheduling/capacity_scheduling_test.go`` (TestPreFilter,
TestReserve, TestUnreserve, TestAddElasticQuota, TestUpdateElasticQuota,
TestDeleteElasticQuota, TestAddPod, TestUpdatePod, TestDeletePod); SP's row names are the ids.
SP's tests set a quota's ``Used`` directly or feed its pod informer; here it is what the
snapshot's pods use, so each row puts those pods on a node. Rows marked "corral:" are Corral's
own."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
import yaml

from corral.scheduler.backend.objects import ADDED, DELETED, MODIFIED, WATCHED
from corral.scheduler.backend.records import pod_from_json
from corral.scheduler.config.declarations import BY_NAME
from corral.scheduler.engine.frameworks import load_engine_config
from corral.scheduler.framework import listers
from corral.scheduler.framework.cluster_events import POD, ActionType, ClusterEvent
from corral.scheduler.framework.cycle_state import CycleState
from corral.scheduler.framework.status import Code
from corral.scheduler.framework.types import PodInfo, Resources
from corral.scheduler.plugins import capacity_scheduling as cs
from corral.scheduler.plugins.capacity_scheduling import elastic_quota as eq
from corral.testing.builders import JSON, node, snapshot_of
from corral.testing.framework import FakeHandle

from .support import HIGH, MID, res, rl, sp_eq, sp_pod

MAX, MIN = eq.UPPER_BOUND_OF_MAX, eq.LOWER_BOUND_OF_MIN
NODES = [node("node-a", cpu="100", memory="100Gi")]


class Nominator:
    def __init__(self, by_node: dict[str, list[JSON]]) -> None:
        self.by_node = {n: [pod_from_json(p) for p in ps] for n, ps in by_node.items()}

    def nominated_pods_for_node(self, node_name: str) -> Sequence[PodInfo]:
        return self.by_node.get(node_name, [])

    def nominated_node_names(self) -> list[str]:
        return list(self.by_node)


def plugin(*quotas: JSON, nominator: Nominator | None = None) -> cs.CapacityScheduling:
    handle = FakeHandle(nominator=nominator)
    for quota in quotas:  # filed as the informer files them: under SP's event resource
        handle.objects.apply(listers.SP_ELASTIC_QUOTA, ADDED, quota)
    return cs.CapacityScheduling(handle)


def eq_obj(namespace: str, min_: dict[str, Any] | None, max_: dict[str, Any] | None) -> JSON:
    return sp_eq(namespace, f"eq-{namespace}", max_, min_)


def bound(name: str, namespace: str, mem: int, cpu: int = 0, **kw: Any) -> JSON:
    return sp_pod(name, namespace, mem, cpu, node_name="node-a", **kw)


def used(plugin_: cs.CapacityScheduling, pods: Sequence[JSON] = ()) -> dict[str, Resources]:
    infos = plugin_.quota_infos(snapshot_of(NODES, pods))
    return {ns: info.used for ns, info in infos.items()}


# --- PreFilter ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("quotas", "running", "pods", "codes"),
    [
        pytest.param(
            [eq_obj("ns1", {"memory": 1000}, {"memory": 2000})],
            [bound("used", "ns1", 300)],
            [sp_pod("ns1-p1", "ns1", 500), sp_pod("ns1-p2", "ns1", 1800)],
            [Code.SUCCESS, Code.UNSCHEDULABLE],
            id="pod subjects to ElasticQuota",
        ),
        pytest.param(
            [eq_obj("ns1", {"memory": 1000}, {"memory": 2000}),
             eq_obj("ns2", {"memory": 1000}, {"memory": 2000})],
            [bound("used1", "ns1", 1800), bound("used2", "ns2", 200)],
            [sp_pod("ns2-p1", "ns2", 500)],
            [Code.UNSCHEDULABLE],
            id="the sum of used is bigger than the sum of min",
        ),
        pytest.param(
            [], [], [sp_pod("ns2-p1", "ns2", 500)], [Code.SUCCESS],
            id="without elasticQuotaInfo",
        ),
    ],
)  # fmt: skip
def test_pre_filter(
    quotas: list[JSON], running: list[JSON], pods: list[JSON], codes: list[Code]
) -> None:
    p = plugin(*quotas)
    snapshot = snapshot_of(NODES, running)
    state = CycleState()
    for raw, want in zip(pods, codes, strict=True):
        _, status = p.pre_filter(state, pod_from_json(raw), snapshot)
        assert (Code.SUCCESS if status is None else status.code) is want


@pytest.mark.parametrize(
    ("quotas", "running", "nominated", "incoming", "message"),
    [
        pytest.param(
            [eq_obj("ns1", {"memory": 1000}, {"memory": 2000})],
            [bound("used", "ns1", 300)], {}, sp_pod("p", "ns1", 1800),
            "Pod ns1/p is rejected in PreFilter because ElasticQuota ns1 is more than Max",
            id="corral: over max, SP's message",
        ),
        pytest.param(
            [eq_obj("ns1", {"memory": 1000}, {"memory": 2000}),
             eq_obj("ns2", {"memory": 1000}, {"memory": 2000})],
            [bound("used1", "ns1", 1800), bound("used2", "ns2", 200)], {},
            sp_pod("p", "ns2", 500),
            "Pod ns2/p is rejected in PreFilter because total ElasticQuota used is more than min",
            id="corral: over the sum of mins, SP's message",
        ),
        pytest.param(
            [eq_obj("ns1", {"memory": 1000}, {"memory": 2000}),
             eq_obj("ns2", {"memory": 1000}, {"memory": 2000})],
            [bound("used2", "ns2", 200)], {}, sp_pod("p", "ns1", 1700),
            None,
            id="corral: borrowing: past its min while the other quota leaves its min unused",
        ),
        pytest.param(
            [eq_obj("ns1", {"memory": 2000}, {"memory": 2000})],
            [bound("used", "ns1", 300)],
            {"node-a": [sp_pod("nom", "ns1", 1000, priority=HIGH)]},
            sp_pod("p", "ns1", 800, priority=MID),
            "Pod ns1/p is rejected in PreFilter because ElasticQuota ns1 is more than Max",
            id="corral: a more important pod nominated in the namespace counts against max",
        ),
        pytest.param(
            [eq_obj("ns1", {"memory": 2000}, {"memory": 2000})],
            [bound("used", "ns1", 300)],
            {"node-a": [sp_pod("nom", "ns1", 1000, priority=0)]},
            sp_pod("p", "ns1", 800, priority=MID),
            None,
            id="corral: a less important nominated pod of the namespace does not count",
        ),
        pytest.param(
            [eq_obj("ns1", {"memory": 1000}, {"memory": 2000}),
             eq_obj("ns2", {"memory": 1000}, {"memory": 2000})],
            [bound("used1", "ns1", 500)],
            {"node-a": [sp_pod("nom", "ns2", 900, priority=0)],
             "node-gone": [sp_pod("far", "ns2", 900, priority=0)]},
            sp_pod("p", "ns1", 700),
            "Pod ns1/p is rejected in PreFilter because total ElasticQuota used is more than min",
            id="corral: a pod nominated in a quota within its min counts against the sum of "
            "mins (a node not in the snapshot does not)",
        ),
        pytest.param(
            [eq_obj("ns1", {"memory": 1000}, {"memory": 2000})],
            [bound("used", "ns1", 300)], {}, sp_pod("p", "ns1", 500, cpu=1),
            "Pod ns1/p is rejected in PreFilter because ElasticQuota ns1 is more than Max",
            id="corral: a resource max does not name is capped at 0 (cpu here)",
        ),
    ],
)  # fmt: skip
def test_pre_filter_messages_and_nominated_pods(
    quotas: list[JSON],
    running: list[JSON],
    nominated: dict[str, list[JSON]],
    incoming: JSON,
    message: str | None,
) -> None:
    p = plugin(*quotas, nominator=Nominator(nominated))
    _, status = p.pre_filter(CycleState(), pod_from_json(incoming), snapshot_of(NODES, running))
    if message is None:
        assert status is None
    else:
        assert status is not None
        assert (status.code, status.message) == (Code.UNSCHEDULABLE, message)


# --- Reserve / Unreserve -------------------------------------------------------------------------


def test_reserve() -> None:
    """Reserve pods: a reserved pod counts in its quota until the snapshot shows it; one in a
    namespace without a quota counts nowhere."""
    p = plugin(eq_obj("ns1", {"memory": 1000}, {"memory": 2000}))
    running = [bound("used", "ns1", 300)]
    state = CycleState()
    for raw, want in (
        (sp_pod("t1-p1", "ns1", 50, priority=MID), 350),
        (sp_pod("t1-p2", "ns2", 50, priority=MID), 350),
    ):
        assert p.reserve(state, pod_from_json(raw), "node-a") is None
        assert used(p, running) == {"ns1": res(0, want)}
    # corral: once the snapshot has it (assumed or bound), it is counted once, and forgotten.
    assert used(p, [*running, bound("t1-p1", "ns1", 50)]) == {"ns1": res(0, 350)}
    assert p.reserved() == []


def test_unreserve() -> None:
    """Unreserve pods: only a reserved pod of a quota's namespace gives its amount back."""
    p = plugin(eq_obj("ns1", {"memory": 1000}, {"memory": 2000}))
    running = [bound("t1-p4", "ns1", 250)]
    state = CycleState()
    p.reserve(state, pod_from_json(sp_pod("t1-p3", "ns1", 50, priority=MID)), "node-a")
    for raw, want in (
        (sp_pod("t1-p1", "ns1", 50, priority=MID), 300),
        (sp_pod("t1-p2", "ns2", 50, priority=MID), 300),
        (sp_pod("t1-p3", "ns1", 50, priority=MID), 250),
    ):
        p.unreserve(state, pod_from_json(raw), "node-a")
        assert used(p, running) == {"ns1": res(0, want)}


# --- the ElasticQuota objects ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("max_", "min_", "want_max", "want_min"),
    [
        pytest.param(rl(100, 1000), rl(10, 100), res(100, 1000), res(10, 100),
                     id="Add ElasticQuota"),
        pytest.param(None, rl(10, 100), res(MAX, MAX, MAX), res(10, 100),
                     id="Add ElasticQuota without Max"),
        pytest.param(rl(100, 1000), None, res(100, 1000), res(MIN, MIN, MIN),
                     id="Add ElasticQuota without Min"),
        pytest.param(None, None, res(MAX, MAX, MAX), res(MIN, MIN, MIN),
                     id="Add ElasticQuota without Max and Min"),
    ],
)  # fmt: skip
def test_add_elastic_quota(
    max_: dict[str, str] | None, min_: dict[str, str] | None, want_max: Resources,
    want_min: Resources,
) -> None:  # fmt: skip
    p = plugin(sp_eq("ns1", "t1-eq1", max_, min_))
    (info,) = p.quota_infos(snapshot_of(NODES)).values()
    assert (info.namespace, info.max, info.min, info.used, info.pods) == (
        "ns1", want_max, want_min, res(), set(),
    )  # fmt: skip


def test_update_elastic_quota() -> None:
    """Update ElasticQuota without Used"""
    p = plugin(sp_eq("ns1", "t1-eq1", rl(100, 1000), rl(10, 100)))
    p.handle.objects.apply(  # type: ignore[attr-defined]
        listers.SP_ELASTIC_QUOTA, MODIFIED, sp_eq("ns1", "t1-eq1", rl(300, 1000), rl(10, 100))
    )
    info = p.quota_infos(snapshot_of(NODES))["ns1"]
    assert (info.max, info.min, info.used) == (res(300, 1000), res(10, 100), res())


def test_delete_elastic_quota() -> None:
    """Delete ElasticQuota"""
    quota = sp_eq("ns1", "t1-eq1", rl(300, 1000), rl(10, 100))
    p = plugin(quota)
    p.handle.objects.apply(listers.SP_ELASTIC_QUOTA, DELETED, quota)  # type: ignore[attr-defined]
    assert p.quota_infos(snapshot_of(NODES)) == {}


def test_one_quota_per_namespace_the_oldest() -> None:
    """corral: SP keeps the first it is told of (and an update or delete of any replaces or
    drops the namespace's); Corral keeps the oldest, then the first by name."""
    p = plugin(
        sp_eq("ns1", "b-newer", rl(1, 1), None, created="2026-02-01T00:00:00Z"),
        sp_eq("ns1", "z-older", rl(2, 2), None, created="2026-01-01T00:00:00Z"),
        sp_eq("ns1", "a-older", rl(3, 3), None, created="2026-01-01T00:00:00Z"),
    )
    assert p.quota_infos(snapshot_of(NODES))["ns1"].max == res(3, 3)


def test_a_malformed_quota_is_left_out() -> None:
    """corral: a quota whose amounts do not parse (the CRD's schema refuses them) counts as
    absent rather than failing the cycle."""
    bad = sp_eq("ns1", "bad", {"cpu": "lots"}, None)
    assert plugin(bad).quota_infos(snapshot_of(NODES)) == {}


# --- the namespace's pods ------------------------------------------------------------------------


def test_add_pod() -> None:
    """AddPod"""
    p = plugin(sp_eq("ns1", "t1-eq1", rl(100, 1000), rl(10, 100)))
    pods = [bound(f"t1-p{i}", "ns1", 50, 10, priority=MID) for i in (1, 2, 3)]
    infos = p.quota_infos(snapshot_of(NODES, pods))
    assert infos["ns1"].used == res(30, 150)
    assert all(infos["ns1"].counts(pod_from_json(raw)) for raw in pods)


@pytest.mark.parametrize(
    ("old_phase", "new_phase", "want"),
    [
        pytest.param("Succeeded", "Running", res(30, 100),
                     id="Update Pod With Pod Status PodSucceeded and PodRunning"),
        pytest.param("Pending", "Failed", res(0, 0),
                     id="Update Pod With Pod Status PodPending and PodFailed"),
    ],
)  # fmt: skip
def test_update_pod(old_phase: str, new_phase: str, want: Resources) -> None:
    """The pod as its last update left it: Running counts, Failed does not."""
    p = plugin(sp_eq("ns1", "t1-eq1", rl(100, 1000), rl(10, 100)))
    updated = bound("t1-p1", "ns1", 100, 30, priority=HIGH)
    updated["status"] = {"phase": new_phase}
    assert used(p, [updated])["ns1"] == want


@pytest.mark.parametrize(
    ("deleted", "want"),
    [
        pytest.param(["t1-p1", "t1-p2"], res(0, 0), id="Delete All Pods"),
        pytest.param(["t1-p1"], res(30, 100), id="Delete one Pod"),
    ],
)
def test_delete_pod(deleted: list[str], want: Resources) -> None:
    p = plugin(sp_eq("ns1", "t1-eq1", rl(100, 1000), rl(10, 100)))
    pods = [bound("t1-p1", "ns1", 100, 30, priority=MID), bound("t1-p2", "ns1", 100, 30)]
    assert used(p, [x for x in pods if x["metadata"]["name"] not in deleted])["ns1"] == want


def test_a_quota_created_after_its_pods_counts_them() -> None:
    """corral: SP's informer counts a bound pod only if the namespace's quota was known when
    the pod was added; here the quota counts every pod already running."""
    p = plugin()
    running = [bound("early", "ns1", 600)]
    assert used(p, running) == {}
    p.handle.objects.apply(  # type: ignore[attr-defined]
        listers.SP_ELASTIC_QUOTA, ADDED, eq_obj("ns1", {"memory": 1000}, {"memory": 1000})
    )
    assert used(p, running) == {"ns1": res(0, 600)}
    _, status = p.pre_filter(CycleState(), pod_from_json(sp_pod("late", "ns1", 500)),
                             snapshot_of(NODES, running))  # fmt: skip
    assert status is not None
    assert status.code is Code.UNSCHEDULABLE


# --- events, declaration, CRD --------------------------------------------------------------------


def test_events_to_register() -> None:
    assert tuple(plugin().events_to_register()) == (
        ClusterEvent(POD, ActionType.DELETE),
        ClusterEvent(listers.SP_ELASTIC_QUOTA, ActionType.ALL),
    )


def test_it_takes_no_args() -> None:
    with pytest.raises(TypeError, match="CapacityScheduling takes no args"):
        cs.new({"x": 1}, FakeHandle())


CRD = (
    Path(__file__).resolve().parents[5]
    / "crds/scheduler-plugins/elasticquotas.scheduling.x-k8s.io.yaml"
)


def test_capacity_scheduling_crd_serves_what_the_plugin_declares_and_reads() -> None:
    crd = yaml.safe_load(CRD.read_text())
    group, plural = crd["spec"]["group"], crd["spec"]["names"]["plural"]
    (version,) = crd["spec"]["versions"]
    declaration = BY_NAME[cs.NAME]
    assert (group, plural) in declaration.cluster_reads
    assert declaration.extension_points == {"preFilter", "postFilter", "reserve"}
    assert WATCHED[(group, plural)] == (
        listers.SP_ELASTIC_QUOTA, f"/apis/{group}/{version['name']}/{plural}",
    )  # fmt: skip
    assert f"{plural}.{version['name']}.{group}" == listers.SP_ELASTIC_QUOTA  # SP's event resource
    schema = version["schema"]["openAPIV3Schema"]["properties"]
    assert set(schema["spec"]["properties"]) == {"min", "max"}
    assert set(schema["status"]["properties"]) == {"used"}
    assert [c["name"] for c in version["additionalPrinterColumns"]] == ["Used", "Max", "Age"]
    assert crd["spec"]["names"]["shortNames"] == ["eq", "eqs"]
    kustomization = yaml.safe_load((CRD.parent / "kustomization.yaml").read_text())
    assert CRD.name in kustomization["resources"]


SP_SAMPLE_CONFIG: JSON = {
    # SP manifests/capacityscheduling/scheduler-config.yaml (its kubeconfig left out)
    "apiVersion": "kubescheduler.config.k8s.io/v1",
    "kind": "KubeSchedulerConfiguration",
    "leaderElection": {"leaderElect": False},
    "profiles": [{
        "schedulerName": "default-scheduler",
        "plugins": {
            "multiPoint": {"enabled": [{"name": "CapacityScheduling"}]},
            "postFilter": {"enabled": [{"name": "CapacityScheduling"}],
                           "disabled": [{"name": "*"}]},
        },
    }],
}  # fmt: skip


def test_sps_sample_configuration_loads_unchanged() -> None:
    """corral: scheduler-plugins' own configuration for the plugin: CapacityScheduling at each
    of its points, the only PostFilter."""
    (profile,) = load_engine_config(SP_SAMPLE_CONFIG).profiles
    assert cs.NAME in profile.pre_filter
    assert profile.post_filter == (cs.NAME,)
    assert cs.NAME in profile.reserve
