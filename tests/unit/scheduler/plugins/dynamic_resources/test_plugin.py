"""DynamicResources' scheduling cycle over claims, slices and classes held in the engine's
ObjectStore: PreEnqueue, PreFilter and Filter verdicts with upstream's texts, Score for
prioritized lists, and Reserve/Unreserve keeping in-flight devices from other pods."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, cast

import pytest

from corral.scheduler.backend.objects import ADDED, ObjectStore
from corral.scheduler.backend.records import pod_from_json
from corral.scheduler.framework import listers
from corral.scheduler.framework.cycle_state import CycleState
from corral.scheduler.framework.interface import Handle, MutableSnapshot
from corral.scheduler.framework.podgroup import PodGroupRecord
from corral.scheduler.framework.status import Code, Status
from corral.scheduler.framework.types import NodeInfo, PodInfo
from corral.scheduler.plugins.dynamic_resources import plugin as dra
from corral.testing.builders import node, pod, snapshot_of

from .dra_builders import (
    Json,
    device,
    device_class,
    first_available,
    request,
    resource_slice,
    sub_request,
)

DRIVER = "gpu.example.com"
NODES = [node("node-a", labels={"zone": "a"}), node("node-b", labels={"zone": "b"})]


@dataclass
class _Handle:
    """What DynamicResources asks of the framework: the object lister (no API writes here)."""

    objects: ObjectStore = field(default_factory=ObjectStore)
    claim_writer: listers.ResourceClaimWriter | None = None


def claim(name: str, *requests: Json, allocation: Json | None = None, **meta: Any) -> Json:
    out: dict[str, Any] = {
        "metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}", **meta},
        "spec": {"devices": {"requests": list(requests) or [request("gpu", "gpu")]}},
    }
    if allocation is not None:
        out["status"] = {"allocation": allocation}
    return out


def claiming_pod(
    name: str, *claims: str, template: str = "", statuses: Sequence[Json] = ()
) -> PodInfo:
    raw = pod(name)
    entries: list[Json] = [{"name": c, "resourceClaimName": c} for c in claims]
    if template:
        entries.append({"name": "gpu", "resourceClaimTemplateName": template})
    raw["spec"]["resourceClaims"] = entries
    if statuses:
        raw["status"] = {"resourceClaimStatuses": list(statuses)}
    return pod_from_json(raw)


def store(*objects: tuple[str, Json]) -> _Handle:
    handle = _Handle()
    for kind, obj in objects:
        handle.objects.apply(kind, ADDED, obj)
    return handle


def gpu_slice(node_name: str, *names: str) -> Json:
    return resource_slice(
        f"{node_name}-gpu", node_name, node_name, DRIVER, *(device(n) for n in names)
    )


GPU_CLASS = (listers.DEVICE_CLASS, device_class("gpu", DRIVER))
SLICE_A = (listers.RESOURCE_SLICE, gpu_slice("node-a", "gpu-0"))


def node_infos() -> dict[str, NodeInfo]:
    snap = snapshot_of(NODES)
    return {info.name: info for info in snap.node_infos()}


def run_filter(
    handle: _Handle, p: PodInfo
) -> tuple[dra.DynamicResources, CycleState, dict[str, Status | None]]:
    plugin = dra.DynamicResources(cast(Handle, handle))
    state = CycleState()
    _, status = plugin.pre_filter(state, p, snapshot_of(NODES))
    assert status is None, status
    return plugin, state, {n: plugin.filter(state, p, info) for n, info in node_infos().items()}


@pytest.mark.parametrize(
    ("objects", "p", "want"),
    [
        pytest.param((), pod_from_json(pod("plain")), None, id="no claims"),
        pytest.param(
            (),
            claiming_pod("p", template="tmpl"),
            'pod "default/p": ResourceClaim not created yet',
            id="template claim not created yet",
        ),
        pytest.param(
            (),
            claiming_pod("p", "c"),
            'resourceclaim.resource.k8s.io "c" not found',
            id="claim missing",
        ),
        pytest.param(
            ((listers.RESOURCE_CLAIM, claim("p-gpu")),),
            claiming_pod(
                "p", template="tmpl", statuses=[{"name": "gpu", "resourceClaimName": "p-gpu"}]
            ),
            "ResourceClaim default/p-gpu was not created for Pod default/p (Pod is not owner)",
            id="generated claim not owned by the pod",
        ),
        pytest.param(
            ((listers.RESOURCE_CLAIM, claim("c", deletionTimestamp="2026-01-01T00:00:00Z")),),
            claiming_pod("p", "c"),
            'resourceclaim "c" is being deleted',
            id="claim being deleted",
        ),
        pytest.param(
            (),
            claiming_pod("p", template="tmpl", statuses=[{"name": "gpu"}]),
            None,
            id="template claim not needed",
        ),
    ],
)
def test_pre_enqueue(objects: tuple[tuple[str, Json], ...], p: PodInfo, want: str | None) -> None:
    status = dra.DynamicResources(cast(Handle, store(*objects))).pre_enqueue(p)
    if want is None:
        assert status is None
    else:
        assert status == Status.of(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, want)


def test_unallocated_claim_fits_only_where_a_device_is() -> None:
    handle = store(GPU_CLASS, SLICE_A, (listers.RESOURCE_CLAIM, claim("c")))
    _, _, verdicts = run_filter(handle, claiming_pod("p", "c"))
    assert verdicts["node-a"] is None
    assert verdicts["node-b"] == Status.of(
        Code.UNSCHEDULABLE_AND_UNRESOLVABLE, dra.ERR_CANNOT_ALLOCATE
    )


def test_allocated_claim_restricts_the_pod_to_its_nodes() -> None:
    allocation = {
        "devices": {
            "results": [{"request": "gpu", "driver": DRIVER, "pool": "node-a", "device": "gpu-0"}]
        },
        "nodeSelector": {
            "nodeSelectorTerms": [
                {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["node-a"]}]}
            ]
        },
    }
    handle = store(GPU_CLASS, SLICE_A, (listers.RESOURCE_CLAIM, claim("c", allocation=allocation)))
    plugin, state, verdicts = run_filter(handle, claiming_pod("p", "c"))
    assert verdicts["node-a"] is None
    assert verdicts["node-b"] == Status.of(
        Code.UNSCHEDULABLE_AND_UNRESOLVABLE, dra.ERR_NOT_AVAILABLE
    )
    # Without an API client PostFilter cannot deallocate: plain Unschedulable, no reason.
    _, post = plugin.post_filter(state, claiming_pod("p", "c"), {})  # type: ignore[arg-type]
    assert post == Status(Code.UNSCHEDULABLE)


@pytest.mark.parametrize(
    ("requests", "want"),
    [
        pytest.param(
            [request("gpu", "missing")],
            Status.of(
                Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                "request gpu: device class missing does not exist",
            ),
            id="unknown class",
        ),
        pytest.param(
            [first_available("gpu", sub_request("big", "gpu"), sub_request("small", "missing"))],
            Status.of(
                Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                "request gpu/small: device class missing does not exist",
            ),
            id="unknown class of a subrequest",
        ),
        pytest.param(
            [request("gpu", "")],
            Status.error("request gpu: unsupported request type"),
            id="no class name",
        ),
    ],
)
def test_pre_filter_checks_the_classes(requests: list[Json], want: Status) -> None:
    handle = store(GPU_CLASS, (listers.RESOURCE_CLAIM, claim("c", *requests)))
    _, status = dra.DynamicResources(cast(Handle, handle)).pre_filter(
        CycleState(), claiming_pod("p", "c"), snapshot_of(NODES)
    )
    assert status == want


def test_selector_error_is_an_error_not_a_verdict() -> None:
    handle = store(
        GPU_CLASS,
        SLICE_A,
        (listers.RESOURCE_CLAIM, claim("c", request("gpu", "gpu", 1, "device.nope.x == 1"))),
    )
    _, _, verdicts = run_filter(handle, claiming_pod("p", "c"))
    status = verdicts["node-a"]
    assert status is not None
    assert status.code is Code.ERROR
    assert status.message.startswith(
        "claim default/c: selector #0 on device gpu.example.com/node-a/gpu-0:"
    )


def test_in_flight_allocation_keeps_the_device_from_other_pods() -> None:
    handle = store(
        GPU_CLASS,
        SLICE_A,
        (listers.RESOURCE_CLAIM, claim("c1")),
        (listers.RESOURCE_CLAIM, claim("c2")),
    )
    first = claiming_pod("first", "c1")
    plugin, state, verdicts = run_filter(handle, first)
    assert verdicts["node-a"] is None
    assert plugin.reserve(state, first, "node-a") is None

    second = claiming_pod("second", "c2")
    other = CycleState()
    assert plugin.pre_filter(other, second, snapshot_of(NODES)) == (None, None)
    infos = node_infos()
    assert plugin.filter(other, second, infos["node-a"]) == Status.of(
        Code.UNSCHEDULABLE_AND_UNRESOLVABLE, dra.ERR_CANNOT_ALLOCATE
    )
    # The first pod's own claim is being allocated: it may not be scheduled twice meanwhile.
    _, again = plugin.pre_filter(CycleState(), first, snapshot_of(NODES))
    assert again == Status.of(
        Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
        "resource claim default/c1 is in the process of being allocated",
    )

    plugin.unreserve(state, first, "node-a")
    retry = CycleState()
    plugin.pre_filter(retry, second, snapshot_of(NODES))
    assert plugin.filter(retry, second, infos["node-a"]) is None


def test_score_prefers_earlier_subrequests() -> None:
    handle = store(
        (
            listers.DEVICE_CLASS,
            device_class("big", DRIVER, selectors=('device.attributes["gpu.example.com"].big',)),
        ),
        GPU_CLASS,
        (
            listers.RESOURCE_SLICE,
            resource_slice(
                "a", "node-a", "node-a", DRIVER, device("g", attributes={"big": {"bool": True}})
            ),
        ),
        (
            listers.RESOURCE_SLICE,
            resource_slice(
                "b", "node-b", "node-b", DRIVER, device("g", attributes={"big": {"bool": False}})
            ),
        ),
        (
            listers.RESOURCE_CLAIM,
            claim(
                "c", first_available("gpu", sub_request("big", "big"), sub_request("any", "gpu"))
            ),
        ),
    )
    p = claiming_pod("p", "c")
    plugin, state, verdicts = run_filter(handle, p)
    assert verdicts == {"node-a": None, "node-b": None}
    assert plugin.pre_score(state, p, snapshot_of(NODES), None) is None  # type: ignore[arg-type]
    infos = node_infos()
    assert plugin.score(state, p, infos["node-a"]) == (dra.FIRST_AVAILABLE_MAX, None)
    assert plugin.score(state, p, infos["node-b"]) == (dra.FIRST_AVAILABLE_MAX - 1, None)


def test_pre_score_skips_without_a_prioritized_list() -> None:
    """Every node scores 0 then (only a chosen subrequest scores): skipping adds the same."""
    handle = store(GPU_CLASS, SLICE_A, (listers.RESOURCE_CLAIM, claim("c")))
    p = claiming_pod("p", "c")
    plugin, state, verdicts = run_filter(handle, p)
    assert verdicts["node-a"] is None
    assert plugin.score(state, p, node_infos()["node-a"]) == (0, None)
    assert plugin.pre_score(state, p, snapshot_of(NODES), None) == Status(Code.SKIP)  # type: ignore[arg-type]


def test_reserve_keeps_only_the_chosen_nodes_allocation() -> None:
    handle = store(
        GPU_CLASS, SLICE_A, (listers.RESOURCE_SLICE, gpu_slice("node-b", "gpu-0")),
        (listers.RESOURCE_CLAIM, claim("c")),
    )  # fmt: skip
    p = claiming_pod("p", "c")
    plugin, state, verdicts = run_filter(handle, p)
    assert verdicts == {"node-a": None, "node-b": None}
    s = state.read(dra.STATE_KEY, dra._State)
    assert s is not None
    assert set(s.found) == {"node-a", "node-b"}
    assert plugin.reserve(state, p, "node-b") is None
    assert (s.found, s.allocator) == ({}, None)
    (chosen,) = s.chosen.values()
    assert chosen["devices"]["results"][0]["pool"] == "node-b"
    plugin.unreserve(state, p, "node-b")  # still finds what it undoes
    assert plugin.pre_filter(CycleState(), p, snapshot_of(NODES))[1] is None


def test_post_filter_without_pre_filter_state_is_upstreams_error() -> None:
    """An earlier PreFilter plugin rejected the pod: upstream's PostFilter fails reading its
    state, and that error alone is the PostFilter part of the FailedScheduling text."""
    plugin = dra.DynamicResources(cast(Handle, store()))
    _, status = plugin.post_filter(CycleState(), pod_from_json(pod("p")), {})  # type: ignore[arg-type]
    assert status == Status.error("not found")
    state = CycleState()
    plugin.pre_filter(state, pod_from_json(pod("p")), snapshot_of(NODES))
    _, status = plugin.post_filter(state, pod_from_json(pod("p")), {})  # type: ignore[arg-type]
    assert status == Status(Code.UNSCHEDULABLE)


def test_pre_bind_pre_flight_says_whether_pre_bind_will_act() -> None:
    handle = store(GPU_CLASS, SLICE_A, (listers.RESOURCE_CLAIM, claim("c1")))
    plugin = dra.DynamicResources(cast(Handle, handle))
    plain, state = pod_from_json(pod("plain")), CycleState()
    assert plugin.pre_filter(state, plain, snapshot_of(NODES)) == (None, Status(Code.SKIP))
    assert plugin.pre_bind_pre_flight(state, plain, "node-a") == Status(Code.SKIP)
    assert plugin.pre_bind_pre_flight(CycleState(), plain, "node-a") == Status(Code.SKIP)
    claiming = claiming_pod("p", "c1")
    plugin, state, verdicts = run_filter(handle, claiming)
    assert verdicts["node-a"] is None
    assert plugin.reserve(state, claiming, "node-a") is None
    assert plugin.pre_bind_pre_flight(state, claiming, "node-a") is None


def test_pod_group_post_filter_always_says_claims_were_released() -> None:
    """GenericWorkload: upstream's PodGroupPostFilter answers Unschedulable "deallocation and
    deletion of ResourceClaims completed" whether or not a member had claims, or got to
    PreFilter at all; the group's message carries it before DefaultPreemption's part."""
    plugin = dra.DynamicResources(cast(Handle, store()))
    plain = pod_from_json(pod("p"))
    state = CycleState()
    plugin.pre_filter(state, plain, snapshot_of(NODES))
    group, fork = cast(PodGroupRecord, None), cast(MutableSnapshot, None)
    for states in ({}, {plain.uid: state}):
        _, status = plugin.pod_group_post_filter(group, [plain], fork, lambda: ([], None), states)
        assert status == Status.of(Code.UNSCHEDULABLE, dra.MSG_GROUP_RELEASED)
