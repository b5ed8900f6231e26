"""PreBind's writes to a claim that several pods share: they queue on the claim instead of
racing for its ``resourceVersion``, and each starts from the newest copy this scheduler knows,
so the writes that upstream's ``bindClaim`` would retry after a conflict and a GET succeed the
first time. A write by someone else still conflicts, and is retried as upstream's is."""

from __future__ import annotations

import copy
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import cast

import pytest

from corral.scheduler.framework import listers
from corral.scheduler.framework.cycle_state import CycleState
from corral.scheduler.framework.interface import Handle
from corral.scheduler.plugins.dynamic_resources import plugin as dra
from corral.scheduler.plugins.dynamic_resources import writes
from corral.scheduler.plugins.dynamic_resources.claims import reserved_for
from corral.testing.builders import snapshot_of

from .dra_builders import Json
from .test_plugin import GPU_CLASS, NODES, SLICE_A, claim, claiming_pod, store

CLAIM = listers.RESOURCE_CLAIM
_RESULT = {"request": "gpu", "driver": "gpu.example.com", "pool": "node-a", "device": "gpu-0"}
_ON_NODE_A = {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["node-a"]}]}
ALLOCATION: Json = {
    "devices": {"results": [_RESULT]},
    "nodeSelector": {"nodeSelectorTerms": [_ON_NODE_A]},
}


def _shared(rv: int, *reserved: str) -> Json:
    out = claim("shared", allocation=copy.deepcopy(ALLOCATION))
    out["metadata"]["resourceVersion"] = str(rv)
    out["metadata"]["uid"] = "uid-shared"
    out["status"]["reservedFor"] = [{"resource": "pods", "name": n, "uid": n} for n in reserved]
    return out


def _uid(pod_name: str) -> str:
    return f"uid-default-{pod_name}"  # support.builders.pod's


class _Server:
    """The API server's side: one stored claim, optimistic concurrency on ``resourceVersion``
    (a stale write is a 409), each write slow enough for concurrent writers to overlap."""

    def __init__(self, stored: Json) -> None:
        self._lock = threading.Lock()
        self.stored = copy.deepcopy(dict(stored))
        self.gets = 0
        self.conflicts = 0

    def get(self, namespace: str, name: str) -> Json:
        with self._lock:
            self.gets += 1
            return copy.deepcopy(self.stored)

    def update_status(self, obj: Json) -> Json:
        time.sleep(0.01)
        with self._lock:
            if obj["metadata"]["resourceVersion"] != self.stored["metadata"]["resourceVersion"]:
                self.conflicts += 1
                raise listers.WriteError("the object has been modified", conflict=True)
            out = copy.deepcopy(dict(obj))
            out["metadata"]["resourceVersion"] = str(int(obj["metadata"]["resourceVersion"]) + 1)
            self.stored = out
            return copy.deepcopy(out)

    def bump(self) -> None:
        """Someone else (a controller) writes the claim: a version this scheduler never saw."""
        with self._lock:
            rv = int(self.stored["metadata"]["resourceVersion"])
            self.stored["metadata"]["resourceVersion"] = str(rv + 1)


def _pre_filtered(plugin: dra.DynamicResources, names: list[str]) -> list[CycleState]:
    states = []
    for name in names:
        state = CycleState()
        assert plugin.pre_filter(state, claiming_pod(name, "shared"), snapshot_of(NODES)) == (
            None,
            None,
        )
        states.append(state)
    return states


@pytest.mark.parametrize(
    ("informer_rv", "outside_write", "want_gets", "want_conflicts"),
    [
        pytest.param(5, False, 0, 0, id="four pods at once from one stale copy: no conflict"),
        pytest.param(5, True, 1, 1, id="someone else wrote meanwhile: one conflict, one GET"),
    ],
)  # fmt: skip
def test_pods_sharing_a_claim_write_it_in_turn(
    informer_rv: int, outside_write: bool, want_gets: int, want_conflicts: int
) -> None:
    handle = store(GPU_CLASS, SLICE_A, (CLAIM, _shared(informer_rv, "first")))
    server = _Server(_shared(informer_rv, "first"))
    handle.claim_writer = cast(listers.ResourceClaimWriter, server)
    plugin = dra.DynamicResources(cast(Handle, handle))
    names = ["p1", "p2", "p3", "p4"]
    states = _pre_filtered(plugin, names)  # each read the claim at the informer's version
    if outside_write:
        server.bump()

    def bind(i: int) -> object:
        return plugin.pre_bind(states[i], claiming_pod(names[i], "shared"), "node-a")

    with ThreadPoolExecutor(len(names)) as pool:
        assert list(pool.map(bind, range(len(names)))) == [None] * len(names)
    assert (server.conflicts, server.gets) == (want_conflicts, want_gets)
    assert all(reserved_for(server.stored, _uid(n)) for n in names)
    assert len(server.stored["status"]["reservedFor"]) == 1 + len(names)


def test_the_first_write_starts_from_the_informers_newer_copy() -> None:
    """The informers delivered a newer version after PreFilter read the claim: PreBind writes
    from that one, not from the cycle's stale copy."""
    handle = store(GPU_CLASS, SLICE_A, (CLAIM, _shared(5, "first")))
    plugin = dra.DynamicResources(cast(Handle, handle))
    (state,) = _pre_filtered(plugin, ["p1"])
    handle.objects.apply(CLAIM, "MODIFIED", _shared(6, "first", "other"))
    server = _Server(_shared(6, "first", "other"))
    handle.claim_writer = cast(listers.ResourceClaimWriter, server)
    assert plugin.pre_bind(state, claiming_pod("p1", "shared"), "node-a") is None
    assert (server.conflicts, server.gets) == (0, 0)
    assert [r["name"] for r in server.stored["status"]["reservedFor"]] == ["first", "other", "p1"]


class _Recorder:
    """A writer that stores what it is sent and answers it back with a new resourceVersion."""

    def __init__(self) -> None:
        self.sent: list[tuple[str, Json]] = []

    def update(self, obj: Json) -> Json:
        return self._answer("update", obj)

    def update_status(self, obj: Json) -> Json:
        return self._answer("update_status", obj)

    def _answer(self, verb: str, obj: Json) -> Json:
        body = copy.deepcopy(dict(obj))  # as the wire would carry it
        self.sent.append((verb, body))
        out = copy.deepcopy(body)
        out["metadata"]["resourceVersion"] = str(int(out["metadata"]["resourceVersion"]) + 1)
        return out


def _informers_claim(*, allocated: bool, finalized: bool, stamped: bool) -> Json:
    allocation = copy.deepcopy(ALLOCATION)
    if stamped:
        allocation["allocationTimestamp"] = "2026-01-01T00:00:00Z"
    out = claim("c", allocation=allocation if allocated else None, resourceVersion="7")
    out.setdefault("status", {})["reservedFor"] = [
        {"resource": "pods", "name": "other", "uid": "other"}
    ]
    if finalized:
        out["metadata"]["finalizers"] = [writes.FINALIZER]
    return out


@pytest.mark.parametrize(
    ("allocated", "finalized", "stamped", "verbs"),
    [
        pytest.param(False, False, False, ["update", "update_status"], id="allocate-add-finalizer"),
        pytest.param(False, True, False, ["update_status"], id="allocate-finalized"),
        pytest.param(True, True, True, ["update_status"], id="reserve-only"),
        pytest.param(True, True, False, ["update_status"], id="reserve-stamps-allocation-time"),
    ],
)  # fmt: skip
def test_binding_a_claim_leaves_the_informers_copy_alone(
    allocated: bool, finalized: bool, stamped: bool, verbs: list[str]
) -> None:
    """The claim PreBind starts from is the informer's: the writes go out in copies (the
    informer sees them only when the API server's answer arrives by the watch)."""
    informers = _informers_claim(allocated=allocated, finalized=finalized, stamped=stamped)
    before = copy.deepcopy(informers)
    writer = _Recorder()
    pod = claiming_pod("p", "c")
    stored = writes.bind_claim(
        cast(listers.ResourceClaimWriter, writer), informers, None if allocated else ALLOCATION, pod
    )
    assert informers == before
    assert [verb for verb, _ in writer.sent] == verbs
    _, last = writer.sent[-1]
    assert [r["uid"] for r in last["status"]["reservedFor"]] == ["other", pod.uid]
    assert last["status"]["allocation"]["devices"] == ALLOCATION["devices"]
    assert last["status"]["allocation"]["allocationTimestamp"]
    assert writes.FINALIZER in last["metadata"]["finalizers"]
    assert stored["metadata"]["resourceVersion"] == str(7 + len(verbs))
