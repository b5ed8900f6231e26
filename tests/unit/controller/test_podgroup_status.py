"""PodGroup status (scheduler-plugins' controller): transcribed from SP
``pkg/controllers/podgroup_controller_test.go`` at 903da7df (Test_Run: each row reconciles once
per pod, after that pod's status update, over the two pods SP's fake client holds;
TestFillGroupStatusOccupied), SP's row names as ids; rows marked "corral:" are Corral's fixes
(pods of the group's own namespace only; scheduleStartTime set) and its own checks."""

from __future__ import annotations

import datetime
from typing import Any

import pytest

from corral.controller import podgroup_status as ps

NOW = 1_800_000_000.0
LABEL = ps.POD_GROUP_LABEL


def _stamp(at: float) -> str:
    return datetime.datetime.fromtimestamp(at, datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def group(
    name: str, min_member: int, phase: str, created: float = NOW, started: float | None = NOW
) -> dict[str, Any]:
    """SP's makePG: occupiedBy "test", scheduleStartTime now."""
    status: dict[str, Any] = {"phase": phase, "occupiedBy": "test"}
    if started is not None:
        status["scheduleStartTime"] = _stamp(started)
    return {"apiVersion": "scheduling.x-k8s.io/v1alpha1", "kind": "PodGroup",
            "metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}",
                         "creationTimestamp": _stamp(created)},
            "spec": {"minMember": min_member}, "status": status}  # fmt: skip


def member(
    name: str, group_name: str, phase: str, owners: tuple[str, ...] = (), namespace: str = "default"
) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "namespace": namespace, "uid": f"uid-{name}",
                            "labels": {LABEL: group_name}}  # fmt: skip
    if owners:
        meta["ownerReferences"] = [{"name": o} for o in owners]
    return {"metadata": meta, "status": {"phase": phase}}


def run(pg: dict[str, Any], names: list[str], phase: str, next_phase: str | None) -> dict[str, Any]:
    """SP Test_Run's loop: the fake client holds the first two pods; each listed pod's status
    is updated (to next_phase, when set) and the group reconciled once."""
    pods = {n: member(n, pg["metadata"]["name"], phase) for n in names[:2]}
    for name in names:
        if next_phase is not None and name in pods:
            pods[name] = member(name, pg["metadata"]["name"], next_phase)
        outcome = ps.next_status(pg, list(pods.values()), NOW)
        if outcome.status is not None:
            pg = {**pg, "status": outcome.status}
    return pg


@pytest.mark.parametrize(
    ("min_member", "names", "phase", "previous", "want", "next_phase", "created"),
    [
        pytest.param(2, ["pod1", "pod2"], "Running", ps.SCHEDULING, ps.RUNNING, None, NOW,
                     id="Group running"),
        pytest.param(2, ["pod11", "pod21", "pod31", "pod41"], "Running", ps.SCHEDULING,
                     ps.RUNNING, None, NOW, id="Group running, more than min member"),
        pytest.param(2, ["pod1", "pod2"], "Failed", ps.SCHEDULING, ps.FAILED, None, NOW,
                     id="Group failed"),
        pytest.param(2, ["pod1", "pod2"], "Succeeded", ps.SCHEDULING, ps.FINISHED, None, NOW,
                     id="Group finished"),
        pytest.param(2, ["pod1", "pod2"], "Pending", ps.PENDING, ps.SCHEDULING, None, NOW,
                     id="Group status convert from pending to prescheduling"),
        pytest.param(2, ["pod1", "pod2"], "Pending", ps.SCHEDULING, ps.FINISHED, "Succeeded",
                     NOW, id="Group status convert from scheduling to finished"),
        pytest.param(3, ["pod1", "pod2"], "Running", ps.PENDING, ps.PENDING, None, NOW,
                     id="Group status keeps pending"),
        pytest.param(2, ["pod1", "pod2"], "Pending", ps.PENDING, ps.FINISHED, "Succeeded", NOW,
                     id="Group status convert from pending to finished"),
        pytest.param(2, ["pod1", "pod2"], "Running", ps.PENDING, ps.PENDING, None,
                     NOW - 72 * 3600, id="Group should not enqueue, created too long"),
        pytest.param(3, ["pod91", "pod92"], "Pending", ps.PENDING, ps.PENDING, None, NOW,
                     id="Group min member more than Pod number"),
        pytest.param(4, ["pod101", "pod102"], "Pending", ps.RUNNING, ps.PENDING, None, NOW,
                     id="Group status convert from running to pending"),
    ],
)  # fmt: skip
def test_podgroup_status_run(
    min_member: int,
    names: list[str],
    phase: str,
    previous: str,
    want: str,
    next_phase: str | None,
    created: float,
) -> None:
    pg = run(group("pg", min_member, previous, created=created), names, phase, next_phase)
    assert pg["status"]["phase"] == want


@pytest.mark.parametrize(
    ("owners", "want"),
    [
        pytest.param(("new-occupied",), "default/new-occupied",
                     id="fill the Occupied of PodGroup with a single ownerReference"),
        pytest.param(("new-occupied-2", "new-occupied-1"),
                     "default/new-occupied-1,default/new-occupied-2",
                     id="fill the Occupied of PodGroup with multi ownerReferences"),
    ],
)  # fmt: skip
def test_podgroup_status_fill_occupied(owners: tuple[str, ...], want: str) -> None:
    pods = [member(n, "pg", "Pending", owners) for n in ("pod1", "pod2")]
    outcome = ps.next_status(group("pg", 2, ps.PENDING), pods, NOW)
    assert outcome.status is not None
    assert outcome.status["occupiedBy"] == want


def test_podgroup_status_steps_from_nothing_to_finished() -> None:
    # corral: one reconcile per step; scheduleStartTime set on entering Scheduling; counters.
    pg: dict[str, Any] = {**group("pg", 2, ""), "status": {}}
    pods = [member(n, "pg", "Pending", ("job",)) for n in ("a", "b")]
    phases = []
    for pod_phase in ("Pending", "Pending", "Running", "Succeeded"):
        pods = [member(n, "pg", pod_phase, ("job",)) for n in ("a", "b")]
        outcome = ps.next_status(pg, pods, NOW + 5)
        if outcome.status is not None:
            pg = {**pg, "status": outcome.status}
        phases.append(pg["status"]["phase"])
    assert phases == [ps.PENDING, ps.SCHEDULING, ps.RUNNING, ps.FINISHED]
    assert pg["status"]["scheduleStartTime"] == _stamp(NOW + 5)
    assert pg["status"]["occupiedBy"] == "default/job"
    assert (pg["status"]["running"], pg["status"]["succeeded"], pg["status"]["failed"]) == (0, 2, 0)
    assert ps.next_status(pg, pods, NOW + 6) == ps.Outcome()  # terminal


def test_podgroup_status_no_change_writes_nothing() -> None:
    pods = [member(n, "pg", "Running") for n in ("a", "b")]
    pg = run(group("pg", 2, ps.SCHEDULING), ["a", "b"], "Running", None)
    assert ps.next_status(pg, pods, NOW) == ps.Outcome()


def test_podgroup_status_timeout_posts_an_event_once_started_long_after_creation() -> None:
    # corral: with scheduleStartTime set, SP's 48-hour Timeout can fire (its own never does).
    pg = group("pg", 2, ps.SCHEDULING, created=NOW - 49 * 3600, started=NOW)
    outcome = ps.next_status(pg, [member("a", "pg", "Pending")], NOW)
    assert outcome == ps.Outcome(event=("Timeout", "schedule time longer than 48 hours"))
    running = {**pg, "status": {**pg["status"], "running": 1}}
    assert ps.next_status(running, [member("a", "pg", "Running")], NOW).event is None


def test_podgroup_status_counts_only_its_namespace() -> None:
    # corral: a same-named group in another namespace does not count these pods (SP lists the
    # label in every namespace); a pod whose label is removed leaves its group.
    changed: list[tuple[str, str]] = []
    state = ps.PodGroups(changed.append)
    state.on_group("ADDED", group("pg", 2, ps.PENDING))
    for name in ("a", "b"):
        state.on_pod("ADDED", member(name, "pg", "Pending", namespace="other"))
    assert state.outcome(("default", "pg"), NOW) == ps.Outcome()  # no pod of its own
    state.on_pod("ADDED", member("c", "pg", "Pending"))
    state.on_pod("ADDED", member("d", "pg", "Pending"))
    outcome = state.outcome(("default", "pg"), NOW)
    assert outcome is not None
    assert outcome.status is not None
    assert outcome.status["phase"] == ps.SCHEDULING
    unlabelled = member("d", "pg", "Pending")
    unlabelled["metadata"]["labels"] = {}
    state.on_pod("MODIFIED", unlabelled)
    assert state.outcome(("default", "pg"), NOW) == ps.Outcome()  # one pod left
    assert state.outcome(("default", "missing"), NOW) is None
    assert changed == [("default", "pg"), ("other", "pg"), ("other", "pg"),
                       ("default", "pg"), ("default", "pg"), ("default", "pg")]  # fmt: skip


@pytest.mark.parametrize(
    ("plugins", "want"),
    [
        pytest.param({"multiPoint": {"enabled": [{"name": "Coscheduling"}]}}, True,
                     id="multiPoint"),
        pytest.param({"queueSort": {"enabled": [{"name": "Coscheduling"}]}}, True, id="one point"),
        pytest.param({"multiPoint": {"disabled": [{"name": "Coscheduling"}]}}, False,
                     id="disabled only"),
        pytest.param({}, False, id="defaults"),
        pytest.param({"score": None}, False, id="an empty point"),
    ],
)  # fmt: skip
def test_podgroup_status_runs_when_a_profile_enables_coscheduling(
    plugins: dict[str, Any], want: bool
) -> None:
    assert ps.enables_coscheduling({"spec": {"plugins": plugins}}) is want
