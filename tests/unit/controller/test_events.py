"""Profile events: one in ``default`` (where ``kubectl describe`` finds it) and a copy in each
tenant namespace, whose involvedObject names that namespace (the API server's rule)."""

from __future__ import annotations

from typing import Any

import pytest

from corral.controller.events import Recorder, tenant_namespaces


class _Client:
    def __init__(self) -> None:
        self.created: list[dict[str, Any]] = []

    def create(self, obj: dict[str, Any]) -> dict[str, Any]:
        self.created.append(obj)
        return obj


def body(tenancy: dict[str, Any] | None = None) -> dict[str, Any]:
    spec = {"tenancy": tenancy} if tenancy is not None else {}
    return {"metadata": {"name": "team-a", "uid": "u1", "resourceVersion": "7"}, "spec": spec}


@pytest.mark.parametrize(
    ("tenancy", "namespaces"),
    [
        pytest.param(None, [], id="no tenancy"),
        pytest.param({"nodeSelector": {"pool": "a"}}, [], id="node pool only"),
        pytest.param({"namespaceSelector": {"matchLabels": {"t": "a"}}}, [], id="selector only"),
        pytest.param({"namespaces": ["team-b", "team-a"]}, ["team-a", "team-b"], id="listed"),
    ],
)
def test_tenant_namespaces(tenancy: dict[str, Any] | None, namespaces: list[str]) -> None:
    assert tenant_namespaces(body(tenancy)) == namespaces


def test_profile_event_is_copied_to_each_tenant_namespace() -> None:
    client = _Client()
    Recorder(client).post_profile(  # type: ignore[arg-type]
        body({"namespaces": ["team-a", "team-a-batch"]}), "Warning", "Stalled", "why"
    )
    where = [
        (e["metadata"]["namespace"], e["involvedObject"].get("namespace")) for e in client.created
    ]
    assert where == [("default", None), ("team-a", "team-a"), ("team-a-batch", "team-a-batch")]
    for event in client.created:
        assert event["involvedObject"]["kind"] == "SchedulerProfile"
        assert event["involvedObject"]["uid"] == "u1"
        assert (event["reason"], event["message"], event["type"]) == ("Stalled", "why", "Warning")
