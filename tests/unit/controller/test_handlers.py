"""The kopf wiring of controller/handlers.py, without kopf running: the registry watches the
profiles, the nine kinds of children and the pods and nothing else, each watch gets its
server-side filter, and each registered handler routes its event: a profile or one of its
children queues the profile, a child nobody owns queues nothing, and a pod event feeds the
pending-pod detector (added, changed out of Pending, deleted).

The registry's handlers are read with ``OperatorRegistry._watching.get_all_handlers()``, the
accessor kopf's own tests use; there is no public one."""

from __future__ import annotations

import asyncio
import sys
import time
from typing import Any, cast

import kopf
import pytest

from corral.api import GROUP, PLURAL, VERSION
from corral.controller import pending
from corral.controller.handlers import Operator
from corral.controller.queue import WorkQueue
from corral.controller.settings import Settings
from corral.controller.state import CHILD_KINDS, MANAGED_SELECTOR
from corral.render import names
from support.controller_fakes import FakeClient

PODS = ("", "pods")


def operator() -> Operator:
    op = Operator(Settings(), FakeClient())  # type: ignore[arg-type]
    op.queue = WorkQueue()
    return op


def handlers(op: Operator) -> dict[tuple[str, str], Any]:
    """(group, plural) → the handler kopf would call for that resource's watch events."""
    out: dict[tuple[str, str], Any] = {}
    for handler in op.registry()._watching.get_all_handlers():
        selector = handler.selector
        assert selector is not None
        key = (selector.group or "", str(selector.any_name or ""))
        assert key not in out, f"two handlers watch {key}"
        out[key] = handler.fn
    return out


def deliver(op: Operator, resource: tuple[str, str], kind: str, obj: dict[str, Any]) -> None:
    event = cast("kopf.RawEvent", {"type": kind, "object": obj})
    asyncio.run(handlers(op)[resource](event=event))


def queued(op: Operator) -> list[str]:
    assert op.queue is not None
    return sorted(op.queue._queued)


def profile(name: str = "p") -> dict[str, Any]:
    meta = {"name": name, "uid": f"u-{name}", "generation": 1, "resourceVersion": "5"}
    return {"apiVersion": f"{GROUP}/{VERSION}", "kind": "SchedulerProfile", "metadata": meta,
            "spec": {}}  # fmt: skip


def config_map(owner: str | None) -> dict[str, Any]:
    labels = {"app.kubernetes.io/managed-by": "corral"}
    if owner:
        labels[names.PROFILE_LABEL] = owner
    meta = {"name": "c", "namespace": "ns", "resourceVersion": "7", "labels": labels}
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta}


def pod(phase: str = "Pending") -> dict[str, Any]:
    meta = {"name": "w", "namespace": "ns", "uid": "u-w",
            "creationTimestamp": "2026-12-01T12:00:00Z"}  # fmt: skip
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta,
            "spec": {"schedulerName": "team-a"}, "status": {"phase": phase}}  # fmt: skip


def test_the_registry_watches_profiles_children_and_pods_only() -> None:
    children = {(group, plural) for group, _, plural, _, _ in CHILD_KINDS}
    assert len(children) == 9
    assert set(handlers(operator())) == {(GROUP, PLURAL), *children, PODS}


def test_without_a_webhook_no_admission_handler_is_registered() -> None:
    assert list(operator().registry()._webhooks.get_all_handlers()) == []


def test_each_watch_gets_its_server_side_filter() -> None:
    settings = kopf.OperatorSettings()
    operator().configure(settings)
    for group, version, plural, _, _ in CHILD_KINDS:
        resource = (group, version, plural) if group else (version, plural)
        assert settings.watching.label_selectors[resource] == MANAGED_SELECTOR, plural
    assert settings.watching.field_selectors[("v1", "pods")] == pending.POD_FIELD_SELECTOR
    assert ("v1", "pods") not in settings.watching.label_selectors


@pytest.mark.parametrize(
    ("resource", "kind", "obj", "expected"),
    [
        pytest.param((GROUP, PLURAL), "ADDED", profile(), ["p"], id="a profile added"),
        pytest.param((GROUP, PLURAL), "DELETED", profile(), ["p"], id="a profile deleted"),
        pytest.param(("", "configmaps"), "ADDED", config_map("p"), ["p"], id="a child: its owner"),
        pytest.param(("", "configmaps"), "ADDED", config_map(None), [],
                     id="a child without the profile label: nothing"),
    ],
)  # fmt: skip
def test_a_profile_or_child_event_queues_the_profile(
    resource: tuple[str, str], kind: str, obj: dict[str, Any], expected: list[str]
) -> None:
    op = operator()
    deliver(op, resource, kind, obj)
    assert queued(op) == expected


def test_a_child_deletion_queues_the_profile_that_held_it() -> None:
    op = operator()
    deliver(op, ("", "configmaps"), "ADDED", config_map("p"))
    op.queue = WorkQueue()
    deliver(op, ("", "configmaps"), "DELETED", config_map("p"))
    assert queued(op) == ["p"]


@pytest.mark.parametrize(
    ("events", "pending_pods"),
    [
        pytest.param([("ADDED", pod())], ["ns/w team-a"], id="added Pending: held"),
        pytest.param([("ADDED", pod()), ("MODIFIED", pod("Running"))], [],
                     id="no longer Pending: dropped"),
        pytest.param([("ADDED", pod()), ("DELETED", pod())], [], id="deleted: dropped"),
    ],
)  # fmt: skip
def test_pod_events_feed_the_pending_pod_detector(
    events: list[tuple[str, dict[str, Any]]], pending_pods: list[str]
) -> None:
    op = operator()
    for kind, obj in events:
        deliver(op, PODS, kind, obj)
    held = [f"{p.namespace}/{p.name} {p.scheduler_name}" for p in op.detector.pods()]
    assert held == pending_pods
    assert queued(op) == [], "a pod event queues no profile"


def _calls(storage: kopf.DiffBaseStorage, body: dict[str, Any]) -> int:
    """The Python function calls ``storage`` makes to build ``body``'s essence and clear it of
    progress fields, as kopf's ``_detect_causes`` does once per watch event: its work."""
    seen = 0

    def count(frame: Any, event: str, arg: Any) -> None:
        nonlocal seen
        if event == "call":
            seen += 1

    progress = kopf.OperatorSettings().persistence.progress_storage
    sys.setprofile(count)
    try:
        essence = storage.build(body=kopf.Body(cast("kopf.RawBody", body)))
        progress.clear(essence=essence)
    finally:
        sys.setprofile(None)
    return seen


def _deployment(containers: int) -> dict[str, Any]:
    spec = {"template": {"spec": {"containers": [{"name": f"c{i}", "args": ["--v=2"] * 8}
                                                 for i in range(containers)]}}}  # fmt: skip
    status = {"conditions": [{"type": f"T{i}", "status": "True"} for i in range(containers)]}
    meta = {"name": "d", "namespace": "ns", "labels": {"a": "b"},
            "managedFields": [{"manager": f"m{i}"} for i in range(containers)]}  # fmt: skip
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": meta, "spec": spec,
            "status": status}  # fmt: skip


def test_no_diff_base_is_built_per_event_as_no_handler_reads_one() -> None:
    """kopf's default diff base deep-copies every watched body on every event, work growing
    with the body; Corral's handlers never read it (no on.create/update/resume, no daemons),
    so the configured storage copies nothing, whatever the body's size."""
    op = operator()
    registry = op.registry()
    assert list(registry._changing.get_all_handlers()) == []
    assert list(registry._spawning.get_all_handlers()) == []
    settings = kopf.OperatorSettings()
    default = settings.persistence.diffbase_storage
    op.configure(settings)
    ours = settings.persistence.diffbase_storage
    small, large = _deployment(10), _deployment(20)
    assert _calls(default, large) > 1.5 * _calls(default, small)  # kopf's: with the body
    assert _calls(ours, small) == _calls(ours, large)  # ours: constant
    assert ours.fetch(body=kopf.Body(cast("kopf.RawBody", large))) is None


@pytest.mark.parametrize("waiting", [False, True], ids=["no pod past the threshold", "one"])
def test_a_detector_pass_reads_the_profiles_only_for_a_pod_past_the_threshold(
    monkeypatch: pytest.MonkeyPatch, waiting: bool
) -> None:
    """Every few seconds for as long as the operator runs: with no pod waiting past the
    threshold, a pass reads no profile, at N profiles as at 2N (it read every one); with one,
    it reads them."""
    reads = 0
    real = pending.served_by

    def counting(body: Any) -> Any:
        nonlocal reads
        reads += 1
        return real(body)

    monkeypatch.setattr(pending, "served_by", counting)
    created = pod()  # 2026-12-01 12:00: long past the threshold
    if not waiting:
        now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        created["metadata"]["creationTimestamp"] = now  # pending for a second at most
    read = []
    for n in (100, 200):
        op = operator()
        for i in range(n):
            op.state.put_profile(profile(f"p{i}"))
        op.detector.put(created)
        reads = 0
        op.detect_once()
        read.append(reads)
    assert read == ([100, 200] if waiting else [0, 0])
