"""The pending-pod detector's classification and bookkeeping."""

from __future__ import annotations

import pytest

from corral.controller import pending

NOW = 1_000_000.0


def pod(ns: str, sched: str, age: float = 120, uid: str = "u") -> pending.PendingPod:
    return pending.PendingPod(ns, "p", uid, sched, NOW - age)


SERVED = {
    "team-a": pending.Served("team-a", True, "ok", namespaces=("a",)),
    "sel": pending.Served("sel", True, "ok", namespace_selector={"matchLabels": {"t": "x"}}),
    "wide": pending.Served("wide", True, "ok"),
    "down": pending.Served("down", False, "0/2 replicas ready"),
}
LABELS = {"labelled": {"t": "x"}}


@pytest.mark.parametrize(
    ("the_pod", "reason"),
    [
        pytest.param(pod("a", "team-a"), None, id="served namespace"),
        pytest.param(pod("b", "team-a"), "NamespaceNotServed", id="other namespace"),
        pytest.param(pod("labelled", "sel"), None, id="selector matches"),
        pytest.param(pod("b", "sel"), "NamespaceNotServed", id="selector does not match"),
        pytest.param(pod("b", "wide"), None, id="cluster-wide profile"),
        pytest.param(pod("a", "down"), "SchedulerNotReady", id="profile not ready"),
        pytest.param(pod("a", "ghost"), "NoSchedulerProfile", id="no profile"),
        pytest.param(pod("a", "volcano"), None, id="reserved for another scheduler"),
        pytest.param(pod("b", "team-a", age=5), None, id="younger than the threshold"),
    ],
)
def test_classify(the_pod: pending.PendingPod, reason: str | None) -> None:
    found = pending.classify(
        [the_pod],
        SERVED,
        now=NOW,
        threshold=60,
        reserved=("default-scheduler", "volcano"),
        namespace_labels=lambda ns: LABELS.get(ns, {}),
    )
    assert [f.reason for f in found] == ([reason] if reason else [])


@pytest.mark.parametrize(
    ("selector", "labels", "match"),
    [
        pytest.param({}, {}, True, id="empty matches all"),
        pytest.param(
            {"matchExpressions": [{"key": "t", "operator": "In", "values": ["x"]}]},
            {"t": "x"},
            True,
            id="In",
        ),
        pytest.param(
            {"matchExpressions": [{"key": "t", "operator": "NotIn", "values": ["x"]}]},
            {"t": "x"},
            False,
            id="NotIn",
        ),
        pytest.param(
            {"matchExpressions": [{"key": "t", "operator": "Exists"}]}, {}, False, id="Exists"
        ),
        pytest.param(
            {"matchExpressions": [{"key": "t", "operator": "DoesNotExist"}]},
            {},
            True,
            id="DoesNotExist",
        ),
    ],
)
def test_selector_matches(selector: dict, labels: dict[str, str], match: bool) -> None:  # type: ignore[type-arg]
    assert pending.selector_matches(selector, labels) is match


def test_record_reports_each_pod_once_and_tracks_counts() -> None:
    det = pending.Detector()
    f = pending.Finding(pod("b", "team-a"), "NamespaceNotServed", "m", "team-a")
    fresh, changed = det.record([f])
    assert fresh == [f]
    assert changed == {"team-a"}
    assert det.count("team-a") == 1
    fresh, changed = det.record([f])
    assert fresh == []
    assert changed == set()
    _, changed = det.record([])
    assert changed == {"team-a"}
    assert det.count("team-a") == 0


def test_pending_pod_ignores_bound_or_running_pods() -> None:
    base = {"metadata": {"name": "p", "namespace": "n", "uid": "u"}, "spec": {}}
    assert pending.pending_pod({**base, "status": {"phase": "Running"}}) is None
    bound = {**base, "spec": {"nodeName": "n1"}, "status": {"phase": "Pending"}}
    assert pending.pending_pod(bound) is None
    got = pending.pending_pod({**base, "status": {"phase": "Pending"}})
    assert got is not None
    assert got.scheduler_name == "default-scheduler"
