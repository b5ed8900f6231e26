"""Applying children: skipped when nothing changed (status-only updates included), drift
detected and reverted, pruning, and what API errors mean."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from corral.controller import apply
from corral.controller.state import State, key_of
from corral.k8s import ApiError
from support.controller_fakes import FakeClient


def cm(name: str, data: str = "x", profile: str = "p") -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": "ns", "labels": {"corral.dev/profile": profile}},
        "data": {"k": data},
    }


def test_second_pass_sends_nothing_and_a_change_is_one_write() -> None:
    client, state = FakeClient(), State()
    first = apply.apply_all(client, state, [cm("a"), cm("b")])  # type: ignore[arg-type]
    assert len(first.written) == 2
    client.calls.clear()
    again = apply.apply_all(client, state, [cm("a"), cm("b")])  # type: ignore[arg-type]
    assert client.calls == []
    assert again.skipped == 2
    changed = apply.apply_all(client, state, [cm("a", "y"), cm("b")])  # type: ignore[arg-type]
    assert changed.written == [key_of(cm("a"))]
    assert changed.repaired == []


def test_someone_elses_change_is_reverted_and_reported() -> None:
    client, state = FakeClient(), State()
    apply.apply_all(client, state, [cm("a")])  # type: ignore[arg-type]
    edited = cm("a", "by hand")
    edited["metadata"]["resourceVersion"] = client._bump()
    client.objects[key_of(edited)] = edited
    state.put_child(edited)  # the watch event
    result = apply.apply_all(client, state, [cm("a")])  # type: ignore[arg-type]
    assert result.repaired == [key_of(cm("a"))]
    assert client.objects[key_of(cm("a"))]["data"] == {"k": "x"}


def test_live_object_moved_without_change_is_applied_but_not_a_write() -> None:
    # After a restart nothing is remembered: every object is applied once, the server keeps
    # the resourceVersion, and no write is counted.
    client, state = FakeClient(), State()
    apply.apply_all(client, state, [cm("a")])  # type: ignore[arg-type]
    live = client.objects[key_of(cm("a"))]
    fresh_state = State()
    fresh_state.put_child(live)
    result = apply.apply_all(client, fresh_state, [cm("a")])  # type: ignore[arg-type]
    assert result.applied == 1
    assert result.written == []


def test_prune_deletes_only_children_no_longer_rendered() -> None:
    client, state = FakeClient(), State()
    apply.apply_all(client, state, [cm("a"), cm("b")])  # type: ignore[arg-type]
    state.put_child(
        {
            **cm("other", profile="q"),
            "metadata": {**cm("other", profile="q")["metadata"], "resourceVersion": "1"},
        }
    )
    gone = apply.prune(client, state, "p", [cm("a")])  # type: ignore[arg-type]
    assert gone == [key_of(cm("b"))]
    assert ("delete", key_of(cm("b"))) in client.calls
    assert all(c[1] != key_of(cm("other", profile="q")) for c in client.calls)


@pytest.mark.parametrize(
    ("error", "kind", "reason"),
    [
        pytest.param(
            ApiError(503, "ServiceUnavailable", "etcd"),
            apply.TransientError,
            None,
            id="5xx is transient",
        ),
        pytest.param(ApiError(409, "Conflict", "x"), apply.TransientError, None, id="conflict"),
        pytest.param(
            ApiError(0, "TransportError", "refused"), apply.TransientError, None, id="transport"
        ),
        pytest.param(
            ApiError(404, "NotFound", 'namespaces "ns" not found'),
            apply.RefusedError,
            "NamespaceMissing",
            id="missing namespace",
        ),
        pytest.param(
            ApiError(403, "Forbidden", "escalation"),
            apply.RefusedError,
            "Forbidden",
            id="forbidden",
        ),
        pytest.param(
            ApiError(422, "Invalid", "bad"), apply.RefusedError, "ApplyRejected", id="invalid"
        ),
    ],
)
def test_classify(error: ApiError, kind: type[Exception], reason: str | None) -> None:
    client, state = FakeClient(), State()
    client.fail[("apply", "ConfigMap")] = error
    with pytest.raises(kind) as raised:
        apply.apply_all(client, state, [cm("a")])  # type: ignore[arg-type]
    if reason is not None:
        assert isinstance(raised.value, apply.RefusedError)
        assert raised.value.reason == reason
        assert "ConfigMap ns/a" in raised.value.message


def deployment() -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "d", "namespace": "ns", "labels": {"corral.dev/profile": "p"}},
        "spec": {"replicas": 2},
    }


def _status_update(live: dict[str, Any]) -> None:
    live["status"] = {"replicas": 2, "readyReplicas": 1}
    live["metadata"]["managedFields"] = [{"manager": "kube-controller-manager"}]


def _hand_scaled(live: dict[str, Any]) -> None:
    live["spec"]["replicas"] = 5


def _labelled(live: dict[str, Any]) -> None:
    live["metadata"]["labels"]["extra"] = "x"


@pytest.mark.parametrize(
    ("change", "applies", "repaired"),
    [
        pytest.param(_status_update, False, False, id="status and managedFields only: skipped"),
        pytest.param(_hand_scaled, True, True, id="a field the operator owns: reverted"),
        pytest.param(_labelled, True, False, id="someone else's label: applied, no write"),
    ],
)
def test_a_live_change_is_applied_only_when_more_than_status(
    change: Any, applies: bool, repaired: bool
) -> None:
    client, state = FakeClient(), State()
    apply.apply_all(client, state, [deployment()])  # type: ignore[arg-type]
    live = copy.deepcopy(client.objects[key_of(deployment())])
    change(live)
    live["metadata"]["resourceVersion"] = client._bump()
    client.objects[key_of(live)] = copy.deepcopy(live)
    state.put_child(live)  # the watch event
    client.calls.clear()
    result = apply.apply_all(client, state, [deployment()])  # type: ignore[arg-type]
    assert bool(client.calls) == applies
    assert result.repaired == ([key_of(live)] if repaired else [])
    if applies and not repaired:  # its answer is remembered: the next pass is skipped
        client.calls.clear()
        apply.apply_all(client, state, [deployment()])  # type: ignore[arg-type]
        assert client.calls == []
