"""A profile enabling a plugin whose CRD the cluster does not serve goes Stalled with reason
PluginCRDMissing (corral.controller.plugin_crds): the needed resources come from the plugin
declarations, discovery is asked once per group per TTL, and the stall clears once served."""

from __future__ import annotations

from collections.abc import Set
from pathlib import Path
from typing import Any

import pytest
import yaml

from corral.api import Catalog, default_catalog
from corral.api.catalog import Resource
from corral.controller import plugin_crds
from corral.controller.apply import TransientError
from corral.controller.events import Recorder
from corral.controller.reconcile import Reconciler
from corral.controller.settings import Settings
from corral.controller.state import State
from corral.k8s import ApiError
from corral.scheduler.config.declarations import BY_NAME, IN_TREE, PluginDeclaration
from support.controller_fakes import FakeClient

CATALOG = default_catalog()
PG = ("scheduling.x-k8s.io", "podgroups")
EQ = ("scheduling.x-k8s.io", "elasticquotas")
NRT = ("topology.node.k8s.io", "noderesourcetopologies")
SP_CRDS = Path(__file__).resolve().parents[3] / "crds" / "scheduler-plugins"
COSCHEDULING_MISSING = (
    "Coscheduling needs podgroups.scheduling.x-k8s.io, which this cluster does not serve; "
    "install crds/scheduler-plugins"
)

OUT_OF_TREE = PluginDeclaration(
    name="Reservations",
    factory=lambda args, handle: None,
    extension_points=frozenset({"filter"}),
    description="an out-of-tree plugin reading its own CRD",
    cluster_reads=(("", "nodes"), ("example.com", "reservations")),
    namespaced_writes=(("example.com", "reservations/status", ("patch",)),),
    source="entry point Reservations (example)",
)
WITH_OUT_OF_TREE = Catalog(plugins={**CATALOG.plugins, OUT_OF_TREE.name: OUT_OF_TREE})


@pytest.mark.parametrize(
    ("plugins", "served", "catalog", "want"),
    [
        pytest.param(["Coscheduling"], set(), CATALOG, [COSCHEDULING_MISSING], id="pg-missing"),
        pytest.param(["Coscheduling"], {PG}, CATALOG, [], id="pg-served"),
        pytest.param(
            ["Coscheduling"], {EQ}, CATALOG, [COSCHEDULING_MISSING], id="same-group-other-kind"
        ),
        pytest.param(
            ["CapacityScheduling"],
            set(),
            CATALOG,
            # Its PodDisruptionBudget reads are of a built-in group: not checked.
            [
                "CapacityScheduling needs elasticquotas.scheduling.x-k8s.io, which this cluster "
                "does not serve; install crds/scheduler-plugins"
            ],
            id="eq-missing-pdb-ignored",
        ),
        pytest.param(
            ["NodeResourceTopologyMatch"],
            set(),
            CATALOG,
            [
                "NodeResourceTopologyMatch needs noderesourcetopologies.topology.node.k8s.io, "
                "which this cluster does not serve; install crds/scheduler-plugins"
            ],
            id="nrt-missing",
        ),
        pytest.param(
            ["NodeResourceTopologyMatch", "CapacityScheduling", "Coscheduling"],
            {PG},
            CATALOG,
            [
                "CapacityScheduling needs elasticquotas.scheduling.x-k8s.io, which this cluster "
                "does not serve; install crds/scheduler-plugins",
                "NodeResourceTopologyMatch needs noderesourcetopologies.topology.node.k8s.io, "
                "which this cluster does not serve; install crds/scheduler-plugins",
            ],
            id="three-plugins-one-served-sorted",
        ),
        pytest.param(
            ["NodeResourceTopologyMatch", "CapacityScheduling", "Coscheduling"],
            {PG, EQ, NRT},
            CATALOG,
            [],
            id="all-served",
        ),
        pytest.param(
            # The default set reads storage, DRA, policy ... all built-in: nothing to check.
            [p.name for p in IN_TREE if p.in_default_set],
            set(),
            CATALOG,
            [],
            id="default-set-builtin-only",
        ),
        pytest.param(["NoSuchPlugin"], set(), CATALOG, [], id="unknown-plugin"),
        pytest.param([], set(), CATALOG, [], id="none-enabled"),
        pytest.param(
            ["Reservations"],
            set(),
            WITH_OUT_OF_TREE,
            # Its status write folds into the resource: one problem, not two.
            [
                "Reservations needs reservations.example.com, which this cluster does not "
                "serve; install the CRD that serves it"
            ],
            id="out-of-tree-crd",
        ),
        pytest.param(
            ["Reservations"],
            {("example.com", "reservations")},
            WITH_OUT_OF_TREE,
            [],
            id="out-of-tree-served",
        ),
    ],
)
def test_missing(
    plugins: list[str], served: Set[Resource], catalog: Catalog, want: list[str]
) -> None:
    assert [p.message for p in plugin_crds.missing(plugins, catalog, served)] == want


def test_the_message_is_one_line_naming_each_problem() -> None:
    problems = plugin_crds.missing(["Coscheduling", "CapacityScheduling"], CATALOG, set())
    text = plugin_crds.message(problems)
    assert "\n" not in text
    assert text.startswith("CapacityScheduling needs elasticquotas")
    assert text.endswith(COSCHEDULING_MISSING)


def test_the_needs_are_derived_from_the_declarations() -> None:
    assert plugin_crds.needs(BY_NAME["Coscheduling"]) == [PG]
    assert plugin_crds.needs(BY_NAME["CapacityScheduling"]) == [EQ]
    assert plugin_crds.needs(BY_NAME["NodeResourceTopologyMatch"]) == [NRT]
    # Every other in-tree plugin touches only built-in groups.
    others = [d.name for d in IN_TREE if plugin_crds.needs(d)]
    assert sorted(others) == ["CapacityScheduling", "Coscheduling", "NodeResourceTopologyMatch"]


def test_crds_scheduler_plugins_serves_every_need_it_is_named_for() -> None:
    shipped = set()
    for path in SP_CRDS.glob("*.yaml"):
        doc = yaml.safe_load(path.read_text())
        if doc.get("kind") == "CustomResourceDefinition":
            shipped.add((doc["spec"]["group"], doc["spec"]["names"]["plural"]))
    sp = [d for d in IN_TREE if plugin_crds.hint(d) == "install crds/scheduler-plugins"]
    needed = {r for d in sp for r in plugin_crds.needs(d)}
    assert needed == {PG, EQ, NRT}
    assert needed <= shipped


# --- discovery ----------------------------------------------------------------------------


class DiscoveryClient:
    """Answers discovery GETs from ``groups``: group -> {version: [resource names]}."""

    def __init__(self, groups: dict[str, dict[str, list[str]]]) -> None:
        self.groups = groups
        self.calls: list[str] = []
        self.fail: ApiError | None = None

    def request(self, method: str, path: str, **_: Any) -> Any:
        assert method == "GET"
        self.calls.append(path)
        if self.fail is not None:
            raise self.fail
        parts = path.removeprefix("/apis/").split("/")
        versions = self.groups.get(parts[0])
        if versions is None or (len(parts) == 2 and parts[1] not in versions):
            raise ApiError(404, "NotFound", "404 page not found")
        if len(parts) == 1:
            return {"versions": [{"groupVersion": f"{parts[0]}/{v}"} for v in versions]}
        return {"resources": [{"name": n} for n in versions[parts[1]]]}


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def discovery(client: DiscoveryClient, clock: Clock | None = None) -> plugin_crds.Discovery:
    return plugin_crds.Discovery(client, ttl=10.0, monotonic=clock or Clock())  # type: ignore[arg-type]


def test_discovery_unions_versions_and_skips_subresources() -> None:
    client = DiscoveryClient(
        {"scheduling.x-k8s.io": {"v1alpha1": ["podgroups", "podgroups/status"], "v1": ["x"]}}
    )
    assert discovery(client).served(["scheduling.x-k8s.io", "topology.node.k8s.io"]) == {
        PG,
        ("scheduling.x-k8s.io", "x"),
    }


def test_a_thousand_profiles_cost_one_look_per_group_per_ttl() -> None:
    clock = Clock()
    client = DiscoveryClient({"scheduling.x-k8s.io": {"v1alpha1": ["podgroups"]}})
    d = discovery(client, clock)
    for _ in range(1000):
        assert d.served(["scheduling.x-k8s.io", "topology.node.k8s.io"]) == {PG}
    # The group and its one version, plus the unknown group's 404.
    assert client.calls == [
        "/apis/scheduling.x-k8s.io",
        "/apis/scheduling.x-k8s.io/v1alpha1",
        "/apis/topology.node.k8s.io",
    ]
    clock.now += 9.9
    d.served(["topology.node.k8s.io"])
    assert len(client.calls) == 3
    # The CRD is installed; the next look after the TTL sees it.
    client.groups["topology.node.k8s.io"] = {"v1alpha2": ["noderesourcetopologies"]}
    clock.now += 0.1
    assert d.served(["topology.node.k8s.io"]) == {NRT}
    assert len(client.calls) == 5


@pytest.mark.parametrize(
    ("error", "want"),
    [
        pytest.param(ApiError(403, "Forbidden", "no discovery"), None, id="forbidden-unknown"),
        pytest.param(ApiError(404, "NotFound", "gone"), frozenset(), id="not-found-nothing"),
    ],
)
def test_discovery_failures_that_answer(error: ApiError, want: Any) -> None:
    client = DiscoveryClient({})
    client.fail = error
    assert discovery(client).served(["scheduling.x-k8s.io"]) == want


@pytest.mark.parametrize(
    "error",
    [
        pytest.param(ApiError(503, "ServiceUnavailable", "later"), id="503"),
        pytest.param(ApiError(0, "", "connection refused"), id="transport"),
    ],
)
def test_other_discovery_failures_are_transient(error: ApiError) -> None:
    client = DiscoveryClient({})
    client.fail = error
    with pytest.raises(TransientError):
        discovery(client).served(["scheduling.x-k8s.io"])


# --- in the reconcile ---------------------------------------------------------------------


class ReconcileClient(FakeClient):
    """The controller fake, plus discovery answered from ``groups``."""

    def __init__(self) -> None:
        super().__init__()
        self.discovery = DiscoveryClient({})

    def request(self, method: str, path: str, **kwargs: Any) -> Any:
        if method == "GET" and path.startswith("/apis/"):
            return self.discovery.request(method, path)
        return super().request(method, path, **kwargs)


def coscheduling(name: str) -> dict[str, Any]:
    # As config/samples/coscheduling.yaml: Coscheduling sorts the queue, so PrioritySort is off.
    enabled = {"enabled": [{"name": "Coscheduling"}], "disabled": [{"name": "PrioritySort"}]}
    spec = {"namespace": "ns", "plugins": {"multiPoint": enabled}}
    return {
        "apiVersion": "corral.dev/v1alpha1",
        "kind": "SchedulerProfile",
        "metadata": {"name": name, "uid": f"uid-{name}", "generation": 1, "resourceVersion": "1",
                     "creationTimestamp": "2026-01-01T00:00:00Z"},
        "spec": spec,
    }  # fmt: skip


def conditions(state: State, name: str) -> dict[str, dict[str, Any]]:
    stored = state.profile(name)
    assert stored is not None
    return {c["type"]: c for c in stored["status"]["conditions"]}


def test_a_profile_stalls_until_the_crd_is_served_and_is_due_sooner_meanwhile() -> None:
    client, state, clock = ReconcileClient(), State(), Clock()
    state.put_profile(coscheduling("p"))
    client.profiles["p"] = coscheduling("p")
    rec = Reconciler(
        client=client,  # type: ignore[arg-type]
        state=state,
        settings=Settings(),
        recorder=Recorder(client),  # type: ignore[arg-type]
        catalog=CATALOG,
        clock=lambda: "2026-01-01T00:00:00Z",
        monotonic=clock,
    )
    rec.reconcile("p")
    conds = conditions(state, "p")
    assert (conds["Ready"]["status"], conds["Stalled"]["status"]) == ("False", "True")
    assert conds["Stalled"]["reason"] == "PluginCRDMissing"
    assert conds["Stalled"]["message"] == COSCHEDULING_MISSING
    assert [c for c in client.writes() if c[0] == "apply"] == []  # nothing runs, nothing applied
    assert ("create", "Event") in client.calls
    # Due after the discovery TTL, not the resync period.
    clock.now += 9.0
    assert not rec.due("p", 1, period=30.0)
    clock.now += 1.0
    assert rec.due("p", 1, period=30.0)

    client.discovery.groups["scheduling.x-k8s.io"] = {"v1alpha1": ["podgroups"]}
    rec.reconcile("p")
    conds = conditions(state, "p")
    assert conds["Stalled"]["status"] == "False"
    assert conds["Reconciling"]["status"] == "True"  # rolling out now
    assert any(c[0] == "apply" and c[1][1] == "Deployment" for c in client.calls)
    clock.now += 10.0
    assert not rec.due("p", 1, period=30.0)  # back to the resync period


def test_a_profile_without_such_plugins_asks_no_discovery() -> None:
    client, state = ReconcileClient(), State()
    body = coscheduling("p")
    body["spec"]["plugins"] = {}
    state.put_profile(body)
    client.profiles["p"] = body
    Reconciler(
        client=client,  # type: ignore[arg-type]
        state=state,
        settings=Settings(),
        recorder=Recorder(client),  # type: ignore[arg-type]
        catalog=CATALOG,
        clock=lambda: "2026-01-01T00:00:00Z",
    ).reconcile("p")
    assert client.discovery.calls == []
    assert conditions(state, "p")["Stalled"]["status"] == "False"
