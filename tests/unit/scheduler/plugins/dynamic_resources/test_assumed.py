"""DynamicResources' claim assume cache: the claims as PreBind wrote them, read over the
informers' until these catch up; so a pod sharing a claim sees it allocated as soon as the
first pod's PreBind wrote it (upstream ``AssumeClaimAfterAPICall``)."""

from __future__ import annotations

import copy
from typing import Any, cast

import pytest

from corral.scheduler.backend.objects import ObjectStore
from corral.scheduler.framework import listers
from corral.scheduler.framework.cycle_state import CycleState
from corral.scheduler.framework.interface import Handle
from corral.scheduler.framework.status import Code, Status
from corral.scheduler.plugins.dynamic_resources import plugin as dra
from corral.scheduler.plugins.dynamic_resources.assumed import AssumedClaims
from corral.testing.builders import snapshot_of

from .dra_builders import Json
from .test_plugin import GPU_CLASS, NODES, SLICE_A, claim, claiming_pod, node_infos, store

CLAIM = listers.RESOURCE_CLAIM


def _at(obj: Json, rv: int, uid: str = "uid-c", **status: Any) -> Json:
    out = copy.deepcopy(obj)
    out["metadata"]["resourceVersion"] = str(rv)
    out["metadata"]["uid"] = uid
    if status:
        out["status"] = status
    return out


BASE = claim("c")


@pytest.mark.parametrize(
    ("informer", "written", "assumed", "read"),
    [
        pytest.param(5, 6, True, 6, id="the write is newer: read it"),
        pytest.param(5, 5, True, 5, id="the same version: the informer's copy"),
        pytest.param(7, 6, False, 7, id="the informer is already newer: refused"),
        pytest.param(None, 6, False, None, id="a claim the informer does not know: refused"),
    ],
)  # fmt: skip
def test_assume_and_read(
    informer: int | None, written: int, assumed: bool, read: int | None
) -> None:
    objects = ObjectStore()
    if informer is not None:
        objects.apply(CLAIM, "ADDED", _at(BASE, informer))
    claims = AssumedClaims(objects)
    assert claims.assume(_at(BASE, written, allocation={"devices": {}})) is assumed
    got = claims.get(CLAIM, "default", "c")
    assert (None if got is None else int(got["metadata"]["resourceVersion"])) == read
    assert [int(c["metadata"]["resourceVersion"]) for c in claims.list(CLAIM)] == (
        [] if read is None else [read]
    )


@pytest.mark.parametrize(
    ("event", "read"),
    [
        pytest.param(("MODIFIED", _at(BASE, 6)), 6, id="the informer catches up: its copy"),
        pytest.param(("MODIFIED", _at(BASE, 8)), 8, id="the informer moves past: its copy"),
        pytest.param(("DELETED", _at(BASE, 9)), None, id="deleted: gone"),
        pytest.param(("ADDED", _at(BASE, 3, uid="uid-new")), 3, id="replaced by another uid"),
    ],
)  # fmt: skip
def test_an_assumption_ends_when_the_informer_has_caught_up(
    event: tuple[str, Json], read: int | None
) -> None:
    objects = ObjectStore()
    objects.apply(CLAIM, "ADDED", _at(BASE, 5))
    claims = AssumedClaims(objects)
    assert claims.assume(_at(BASE, 6, allocation={"devices": {}}))
    before = claims.generation(CLAIM)
    if event[0] == "ADDED":
        objects.apply(CLAIM, "DELETED", _at(BASE, 5))
    objects.apply(CLAIM, *event)
    got = claims.get(CLAIM, "default", "c")
    assert (None if got is None else int(got["metadata"]["resourceVersion"])) == read
    assert got is None or "allocation" not in (got.get("status") or {})
    assert claims.generation(CLAIM) > before


def test_restore_drops_the_assumption_and_other_kinds_pass_through() -> None:
    objects = ObjectStore()
    objects.apply(CLAIM, "ADDED", _at(BASE, 5))
    objects.apply(*GPU_CLASS[:1], "ADDED", GPU_CLASS[1])
    claims = AssumedClaims(objects)
    claims.assume(_at(BASE, 6))
    generation = claims.generation(CLAIM)
    claims.restore("default", "c")
    assert claims.get(CLAIM, "default", "c") == _at(BASE, 5)
    assert claims.generation(CLAIM) > generation
    assert claims.list(listers.DEVICE_CLASS) == objects.list(listers.DEVICE_CLASS)
    assert claims.generation(listers.DEVICE_CLASS) == objects.generation(listers.DEVICE_CLASS)


class _Writer:
    """The API server's side of PreBind's writes: each stores a new resourceVersion (not into
    the informers' store, which lags)."""

    def __init__(self) -> None:
        self.version = 100
        self.writes: list[str] = []

    def _stored(self, obj: Json, what: str) -> Json:
        self.version += 1
        self.writes.append(what)
        out = copy.deepcopy(dict(obj))
        out["metadata"]["resourceVersion"] = str(self.version)
        return out

    def update(self, obj: Json) -> Json:
        return self._stored(obj, "update")

    def update_status(self, obj: Json) -> Json:
        return self._stored(obj, "update_status")


def test_a_pod_sharing_the_claim_sees_it_allocated_once_pre_bind_wrote_it() -> None:
    handle = store(GPU_CLASS, SLICE_A, (CLAIM, _at(claim("shared"), 5, uid="uid-shared")))
    writer = _Writer()
    handle.claim_writer = cast(listers.ResourceClaimWriter, writer)
    plugin = dra.DynamicResources(cast(Handle, handle))
    first, second = claiming_pod("first", "shared"), claiming_pod("second", "shared")
    state = CycleState()
    assert plugin.pre_filter(state, first, snapshot_of(NODES))[1] is None
    assert plugin.filter(state, first, node_infos()["node-a"]) is None
    assert plugin.reserve(state, first, "node-a") is None
    # In flight: the second pod waits, as upstream's.
    assert plugin.pre_filter(CycleState(), second, snapshot_of(NODES))[1] == Status.of(
        Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
        "resource claim default/shared is in the process of being allocated",
    )
    assert plugin.pre_bind(state, first, "node-a") is None
    assert writer.writes == ["update", "update_status"]  # the finalizer, then the allocation
    # Written: the informers have not seen it yet, and the second pod goes on all the same,
    # restricted to the allocation's node.
    assert handle.objects.get(CLAIM, "default", "shared")["metadata"]["resourceVersion"] == "5"
    other = CycleState()
    assert plugin.pre_filter(other, second, snapshot_of(NODES)) == (None, None)
    seen = other.read(dra.STATE_KEY, dra._State)
    assert seen is not None
    assert seen.to_allocate == []  # nothing to allocate: the claim is allocated
    assert seen.claims[0]["metadata"]["resourceVersion"] == "102"
    verdicts = {n: plugin.filter(other, second, info) for n, info in node_infos().items()}
    assert verdicts["node-a"] is None
    assert all(v is not None for n, v in verdicts.items() if n != "node-a")
