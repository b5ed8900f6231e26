"""Reconcile with a fake API: invalid or refused profiles stall without touching anything;
a valid one is applied once and then costs no writes."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from corral.api import default_catalog
from corral.controller import reconcile
from corral.controller.events import Recorder
from corral.controller.reconcile import Reconciler
from corral.controller.settings import Settings
from corral.controller.state import State
from support.controller_fakes import FakeClient


def body(name: str, spec: dict[str, Any], created: str = "2026-01-01T00:00:00Z") -> Any:
    return {
        "apiVersion": "corral.dev/v1alpha1",
        "kind": "SchedulerProfile",
        "metadata": {
            "name": name,
            "uid": f"uid-{name}",
            "generation": 1,
            "resourceVersion": "1",
            "creationTimestamp": created,
        },
        "spec": spec,
    }


def reconciler(client: FakeClient, state: State) -> Reconciler:
    return Reconciler(
        client=client,  # type: ignore[arg-type]
        state=state,
        settings=Settings(),
        recorder=Recorder(client),  # type: ignore[arg-type]
        catalog=default_catalog(),
        clock=lambda: "2026-01-01T00:00:00Z",
    )


@pytest.mark.parametrize(
    ("spec", "others", "reason", "fragment"),
    [
        pytest.param(
            {"plugins": {"score": {"enabled": [{"name": "Nope", "weight": 1}]}}},
            [],
            "InvalidSpec",
            "spec.plugins.score.enabled[0].name",
            id="unknown plugin",
        ),
        pytest.param(
            {"schedulerName": "default-scheduler"},
            [],
            "InvalidSpec",
            "spec.schedulerName",
            id="default-scheduler",
        ),
        pytest.param(
            {"schedulerName": "s"},
            [body("older", {"schedulerName": "s"}, "2025-01-01T00:00:00Z")],
            "SchedulerNameConflict",
            "'older'",
            id="name already held",
        ),
    ],
)
def test_refused_profiles_stall_and_touch_nothing(
    spec: dict[str, Any], others: list[Any], reason: str, fragment: str
) -> None:
    client, state = FakeClient(), State()
    for other in others:
        state.put_profile(other)
    state.put_profile(body("p", spec))
    client.profiles["p"] = body("p", spec)
    reconciler(client, state).reconcile("p")
    assert [c for c in client.writes() if c[0] in ("apply", "delete")] == []
    patch = next(c for c in client.calls if c[0] == "PATCH")
    stored = state.profile("p")
    assert stored is not None
    conds = {c["type"]: c for c in stored["status"]["conditions"]}
    assert conds["Stalled"]["status"] == "True"
    assert conds["Stalled"]["reason"] == reason
    assert fragment in conds["Stalled"]["message"]
    assert patch[1].endswith("/p/status")
    assert ("create", "Event") in client.calls


def test_valid_profile_applies_once_then_writes_nothing() -> None:
    client, state = FakeClient(), State()
    state.put_profile(body("p", {"namespace": "ns"}))
    client.profiles["p"] = body("p", {"namespace": "ns"})
    rec = reconciler(client, state)
    rec.reconcile("p")
    kinds = [c[1][1] for c in client.calls if c[0] == "apply"]
    assert kinds[0] == "ServiceAccount"
    assert kinds[-2:] == ["Deployment", "PodDisruptionBudget"]
    client.calls.clear()
    rec.reconcile("p")
    assert client.writes() == []


@pytest.mark.parametrize(
    ("change", "renders", "applies"),
    [
        pytest.param(lambda b: None, 1, False, id="nothing changed"),
        pytest.param(lambda b: b.update(status={"phase": "x"}), 1, False, id="status only"),
        pytest.param(lambda b: b["spec"].update(replicas=3), 2, True, id="spec changed"),
        # The parsed profile holds its labels; they render to nothing, so nothing is applied.
        pytest.param(
            lambda b: b["metadata"].update(labels={"a": "b"}), 2, False, id="labels changed"
        ),
    ],
)
def test_a_profile_is_rendered_again_only_when_it_changed(
    monkeypatch: pytest.MonkeyPatch, change: Any, renders: int, applies: bool
) -> None:
    calls: list[str] = []
    real = reconcile.render

    def counting(profile: Any, catalog: Any) -> Any:
        calls.append(profile.name)
        return real(profile, catalog)

    monkeypatch.setattr(reconcile, "render", counting)
    client, state = FakeClient(), State()
    first = body("p", {"namespace": "ns"})
    state.put_profile(first)
    client.profiles["p"] = first
    rec = reconciler(client, state)
    rec.reconcile("p")
    second = body("p", {"namespace": "ns"})
    change(second)
    second["metadata"]["resourceVersion"] = "1000"  # newer than the status writes
    state.put_profile(second)
    client.profiles["p"] = second
    client.calls.clear()
    rec.reconcile("p")
    assert len(calls) == renders
    applied = [c for c in client.calls if c[0] == "apply"]
    assert bool(applied) == applies


def _ready(state: State, client: FakeClient, ready: int, replicas: int = 2) -> None:
    """The Deployment controller's status update of the profile's Deployment (the watch)."""
    (key,) = [k for k in client.objects if k[1] == "Deployment"]
    live = copy.deepcopy(client.objects[key])
    live["metadata"]["resourceVersion"] = client._bump()
    live["status"] = {"replicas": replicas, "updatedReplicas": replicas, "readyReplicas": ready}
    state.put_child(live)


@pytest.mark.parametrize(
    ("replicas", "lists"),
    [
        pytest.param(None, False, id="Deployment just created: no pod list"),
        pytest.param(0, False, id="no replica counted: no pod list"),
        pytest.param(1, True, id="a replica counted, none ready: its pods listed"),
    ],
)
def test_the_engine_pods_are_listed_once_the_deployment_counts_some(
    replicas: int | None, lists: bool
) -> None:
    client, state = FakeClient(), State()
    state.put_profile(body("p", {"namespace": "ns"}))
    client.profiles["p"] = body("p", {"namespace": "ns"})
    rec = reconciler(client, state)
    rec.reconcile("p")
    if replicas is not None:
        _ready(state, client, 0, replicas)
    client.calls.clear()
    rec.reconcile("p")
    assert bool([c for c in client.calls if c[0] == "list"]) == lists


@pytest.mark.parametrize(
    ("ready", "reads"),
    [
        pytest.param(0, False, id="no replica ready: no Lease read"),
        pytest.param(1, True, id="a replica ready: the Lease read"),
    ],
)
def test_the_lease_is_read_once_a_replica_is_ready(ready: int, reads: bool) -> None:
    client, state = FakeClient(), State()
    state.put_profile(body("p", {"namespace": "ns"}))
    client.profiles["p"] = body("p", {"namespace": "ns"})
    rec = reconciler(client, state)
    rec.reconcile("p")
    _ready(state, client, ready)
    client.calls.clear()
    rec.reconcile("p")
    leases = [c for c in client.calls if c[0] == "get" and c[1][1] == "Lease"]
    assert bool(leases) == reads
    assert [c for c in client.calls if c[0] == "apply"] == []  # a status update: nothing sent


@pytest.mark.parametrize(
    ("reconciled", "generation", "elapsed", "due"),
    [
        pytest.param(False, 1, 0.0, True, id="never reconciled"),
        pytest.param(True, 1, 5.0, False, id="reconciled within the period"),
        pytest.param(True, 1, 30.0, True, id="a period ago"),
        pytest.param(True, 2, 5.0, True, id="at another generation"),
    ],
)
def test_the_resync_skips_profiles_reconciled_within_the_period(
    reconciled: bool, generation: int, elapsed: float, due: bool
) -> None:
    now = [100.0]
    client, state = FakeClient(), State()
    state.put_profile(body("p", {"namespace": "ns"}))
    client.profiles["p"] = body("p", {"namespace": "ns"})
    rec = reconciler(client, state)
    rec.monotonic = lambda: now[0]
    if reconciled:
        rec.reconcile("p")
    now[0] += elapsed
    assert state.generations() == {"p": 1}
    assert rec.due("p", generation, 30.0) == due
