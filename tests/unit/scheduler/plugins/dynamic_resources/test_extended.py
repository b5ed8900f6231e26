"""The claim for extended resources backed by DRA: device requests and container mappings
(upstream's ``createRequestsAndMappings`` test tables), the per-node claim and its verdicts, and
DynamicResources' cycle for such a pod (PreFilter, Filter, Reserve keeping the devices in flight,
PostFilter)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, cast

import pytest

from corral.scheduler.backend.objects import ADDED, ObjectStore
from corral.scheduler.backend.records import pod_from_json
from corral.scheduler.framework import listers
from corral.scheduler.framework.cycle_state import CycleState
from corral.scheduler.framework.interface import Handle
from corral.scheduler.framework.status import Code, Status
from corral.scheduler.framework.types import NodeInfo, PodInfo
from corral.scheduler.plugins.dynamic_resources import extended
from corral.scheduler.plugins.dynamic_resources import plugin as dra
from corral.scheduler.plugins.helper.dra_extended_resources import DeviceClassResolver
from corral.testing.builders import node, pod, snapshot_of

from .dra_builders import Json
from .test_plugin import DRIVER, _Handle, gpu_slice, store

EXT = "example.com/gpu"
INIT = EXT + "init"
IMPLICIT = "deviceclass.resource.kubernetes.io/classInit"


def cls(name: str, resource: str | None = None, selector: str = "") -> dict[str, Any]:
    spec: dict[str, Any] = {
        "selectors": [{"cel": {"expression": selector}}] if selector else [],
    }
    if resource is not None:
        spec["extendedResourceName"] = resource
    return {"metadata": {"name": name, "creationTimestamp": "2026-01-01T00:00:00Z"}, "spec": spec}


def resolver(*classes: dict[str, Any]) -> DeviceClassResolver:
    store = ObjectStore()
    for c in classes:
        store.apply(listers.DEVICE_CLASS, ADDED, c)
    return DeviceClassResolver(store)


def c(name: str, requests: Mapping[str, str], sidecar: bool = False) -> Json:
    out: dict[str, Any] = {"name": name, "resources": {"requests": dict(requests)}}
    if sidecar:
        out["restartPolicy"] = "Always"
    return out


def raw_pod(containers: Sequence[Json], init: Sequence[Json] = ()) -> Json:
    return {"spec": {"containers": list(containers), "initContainers": list(init)}}


POD1 = raw_pod([c("con0", {EXT: "1", EXT + "1": "2"})])
POD2 = raw_pod([c("con0", {EXT: "1"}), c("con1", {EXT + "1": "2"})])
POD_INIT = raw_pod([c("con0", {EXT: "1"})], [c("init-con0", {INIT: "2"})])
POD_INIT2 = raw_pod(
    [c("con0", {EXT: "1"})], [c("init-con0", {INIT: "1"}), c("init-con1", {INIT: "2"})]
)
POD_INIT3 = raw_pod(
    [c("con0", {EXT: "1"})],
    [
        c("init-con0", {INIT: "1"}),
        c("sidecar-con1", {INIT: "1"}, True),
        c("init-con2", {INIT: "2"}),
    ],
)
POD1_INIT_IMPLICIT = raw_pod([], [c("init-con0", {INIT: "1", IMPLICIT: "2"})])
POD_INIT_IMPLICIT = raw_pod(
    [c("con0", {EXT: "1"})], [c("init-con0", {INIT: "1"}), c("init-con1", {IMPLICIT: "2"})]
)
CLASSES = (cls("class", EXT), cls("class1", EXT + "1"))
CLASSES_INIT = (cls("class", EXT), cls("classInit", INIT))


def req(name: str, class_name: str, count: int) -> tuple[str, str, int]:
    return (name, class_name, count)


@pytest.mark.parametrize(
    ("raw", "resources", "classes", "want"),
    [
        pytest.param(POD1, {}, (), [], id="nil"),
        pytest.param(
            POD1,
            {EXT: 1},
            (cls("class", EXT),),
            [req("container-0-request-0", "class", 1)],
            id="one resource match",
        ),
        pytest.param(
            POD1,
            {EXT: 1, EXT + "1": 2},
            (cls("class", EXT),),
            [req("container-0-request-0", "class", 1)],
            id="one resource match, one resource not match",
        ),
        pytest.param(
            POD1,
            {EXT: 1, EXT + "1": 2},
            CLASSES,
            [req("container-0-request-0", "class", 1), req("container-0-request-1", "class1", 2)],
            id="two resources match",
        ),
        pytest.param(
            POD2,
            {EXT: 1, EXT + "1": 2},
            CLASSES,
            [req("container-0-request-0", "class", 1), req("container-1-request-0", "class1", 2)],
            id="two containers match",
        ),
        pytest.param(
            POD_INIT,
            {EXT: 1, INIT: 2},
            CLASSES_INIT,
            [
                req("container-0-request-0", "classInit", 2),
                req("container-1-request-0", "class", 1),
            ],
            id="one init container, one regular container",
        ),
        pytest.param(
            POD_INIT2,
            {EXT: 1, INIT: 2},
            CLASSES_INIT,
            [
                req("container-1-request-0", "classInit", 2),
                req("container-2-request-0", "class", 1),
            ],
            id="two init containers, one regular container",
        ),
        pytest.param(
            POD_INIT3,
            {EXT: 1, INIT: 2},
            CLASSES_INIT,
            [
                req("container-1-request-0", "classInit", 1),
                req("container-2-request-0", "classInit", 2),
                req("container-3-request-0", "class", 1),
            ],
            id="three init containers, one sidecar, one regular container",
        ),
    ],
)
def test_requests(
    raw: Json,
    resources: dict[str, int],
    classes: tuple[dict[str, Any], ...],
    want: list[tuple[str, str, int]],
) -> None:
    requests, _ = extended.requests_and_mappings(raw, resources, resolver(*classes))
    got = [(r["name"], r["exactly"]["deviceClassName"], r["exactly"]["count"]) for r in requests]
    assert got == want
    assert all(r["exactly"]["allocationMode"] == "ExactCount" for r in requests)


def m(container: str, resource: str, request: str) -> tuple[str, str, str]:
    return (request, container, resource)


@pytest.mark.parametrize(
    ("raw", "resources", "classes", "want"),
    [
        pytest.param(
            POD1,
            {EXT: 1, EXT + "1": 2},
            CLASSES,
            [
                m("con0", EXT, "container-0-request-0"),
                m("con0", EXT + "1", "container-0-request-1"),
            ],
            id="one container, two requests",
        ),
        pytest.param(
            POD1_INIT_IMPLICIT,
            {EXT: 1, INIT: 2, IMPLICIT: 2},
            CLASSES_INIT,
            [
                m("init-con0", IMPLICIT, "container-0-request-0"),
                m("init-con0", INIT, "container-0-request-1"),
            ],
            id="one container, one explicit and one implicit request",
        ),
        pytest.param(
            POD2,
            {EXT: 1, EXT + "1": 2},
            CLASSES,
            [
                m("con0", EXT, "container-0-request-0"),
                m("con1", EXT + "1", "container-1-request-0"),
            ],
            id="two containers, two requests",
        ),
        pytest.param(
            POD_INIT,
            {EXT: 1, INIT: 2},
            CLASSES_INIT,
            [
                m("init-con0", INIT, "container-0-request-0"),
                m("con0", EXT, "container-1-request-0"),
            ],
            id="one init container, one regular container, one request",
        ),
        pytest.param(
            POD_INIT2,
            {EXT: 1, INIT: 2},
            CLASSES_INIT,
            [
                m("init-con0", INIT, "container-1-request-0"),
                m("init-con1", INIT, "container-1-request-0"),
                m("con0", EXT, "container-2-request-0"),
            ],
            id="three containers (two are init container), two requests",
        ),
        pytest.param(
            POD_INIT_IMPLICIT,
            {EXT: 1, INIT: 2, IMPLICIT: 2},
            CLASSES_INIT,
            [
                m("init-con0", INIT, "container-0-request-0"),
                m("init-con1", IMPLICIT, "container-1-request-0"),
                m("con0", EXT, "container-2-request-0"),
            ],
            id="three containers (two are init container), both explicit and implicit resources",
        ),
        pytest.param(
            POD_INIT3,
            {EXT: 1, INIT: 2},
            CLASSES_INIT,
            [
                m("init-con0", INIT, "container-1-request-0"),
                m("sidecar-con1", INIT, "container-1-request-0"),
                m("init-con2", INIT, "container-2-request-0"),
                m("con0", EXT, "container-3-request-0"),
            ],
            id="four containers (two are init container, one sidecar), three requests",
        ),
    ],
)
def test_mappings(
    raw: Json,
    resources: dict[str, int],
    classes: tuple[dict[str, Any], ...],
    want: list[tuple[str, str, str]],
) -> None:
    _, mappings = extended.requests_and_mappings(raw, resources, resolver(*classes))
    got = sorted((x["requestName"], x["containerName"], x["resourceName"]) for x in mappings)
    assert got == want


# --- the per-node claim -------------------------------------------------------------------

GPU_CLASS = cls("gpu", EXT, f'device.driver == "{DRIVER}"')


def gpu_pod(name: str = "p", count: str = "1", **extra: str) -> PodInfo:
    raw = pod(name)
    raw["metadata"]["uid"] = f"uid-{name}"
    raw["spec"]["containers"] = [c("c", {"cpu": "100m", EXT: count, **extra})]
    return pod_from_json(raw)


NODES = [node("dra-node"), node("plugin-node", extra={EXT: "1"})]


def node_info(name: str) -> NodeInfo:
    return {i.name: i for i in snapshot_of(NODES).node_infos()}[name]


OBJECTS = (
    (listers.DEVICE_CLASS, GPU_CLASS),
    (listers.RESOURCE_SLICE, gpu_slice("dra-node", "gpu-0")),
)


def test_special_claim_is_in_memory_until_prebind() -> None:
    p = gpu_pod()
    claim = extended.special_claim(p, [])
    meta = claim["metadata"]
    assert meta["name"] == extended.SPECIAL_CLAIM_NAME
    assert meta["generateName"] == "p-extended-resources-"
    assert meta["annotations"] == {extended.ANNOTATION: "true"}
    assert meta["ownerReferences"] == [
        {"apiVersion": "v1", "kind": "Pod", "name": "p", "uid": "uid-p", "controller": True}
    ]
    assert extended.is_special(claim)
    assert extended.special_claim(p, [])["metadata"]["uid"] != meta["uid"]


def prior_claim(owner_uid: str = "uid-p", annotated: bool = True) -> Json:
    return {
        "metadata": {
            "name": "p-extended-resources-abcde",
            "namespace": "default",
            "uid": "uid-prior",
            "annotations": {extended.ANNOTATION: "true"} if annotated else {},
            "ownerReferences": [{"name": "p", "uid": owner_uid, "controller": True}],
        },
        "spec": {"devices": {"requests": [{"name": "container-0-request-0"}]}},
    }


@pytest.mark.parametrize(
    ("claims", "found"),
    [
        pytest.param([prior_claim()], True, id="the pod's annotated claim"),
        pytest.param([prior_claim(owner_uid="other")], False, id="another pod's"),
        pytest.param([prior_claim(annotated=False)], False, id="not annotated"),
    ],
)
def test_find_claim(claims: list[Json], found: bool) -> None:
    assert (extended.find_claim(gpu_pod(), claims) is not None) is found


@pytest.mark.parametrize(
    ("claim", "node_name", "classes", "has_user_claims", "want"),
    [
        pytest.param(
            None,
            "dra-node",
            (GPU_CLASS,),
            False,
            [("container-0-request-1", "gpu", 1)],
            id="dra node",
        ),
        pytest.param(
            None, "plugin-node", (GPU_CLASS,), False, None, id="device plugin node: nothing to do"
        ),
        pytest.param(
            None, "plugin-node", (GPU_CLASS,), True, [], id="device plugin node, user claims"
        ),
        pytest.param(
            prior_claim(),
            "dra-node",
            (GPU_CLASS,),
            False,
            extended.ERR_STALE_CLAIM,
            id="claim of a prior cycle",
        ),
        pytest.param(
            None, "dra-node", (), False, extended.ERR_CANNOT_FIT, id="no class, not advertised"
        ),
    ],
)
def test_node_claim(
    claim: Json | None,
    node_name: str,
    classes: tuple[dict[str, Any], ...],
    has_user_claims: bool,
    want: list[tuple[str, str, int]] | str | None,
) -> None:
    p = gpu_pod()
    info = node_info(node_name)
    special = claim if claim is not None else extended.special_claim(p, [])
    if isinstance(want, str):
        with pytest.raises(extended.NodeRejectedError, match=want):
            extended.node_claim(special, p, info, resolver(*classes), has_user_claims)
        return
    got = extended.node_claim(special, p, info, resolver(*classes), has_user_claims)
    if want is None:
        assert got is None
        return
    assert got is not None
    requests = got.claim["spec"]["devices"]["requests"]
    assert [
        (r["name"], r["exactly"]["deviceClassName"], r["exactly"]["count"]) for r in requests
    ] == want
    assert got.claim["metadata"]["name"] == extended.SPECIAL_CLAIM_NAME


def cycle(
    h: _Handle, p: PodInfo
) -> tuple[dra.DynamicResources, CycleState, dict[str, Status | None]]:
    plugin = dra.DynamicResources(cast(Handle, h))
    state = CycleState()
    snapshot = snapshot_of(NODES)
    _, status = plugin.pre_filter(state, p, snapshot)
    assert status is None, status
    return plugin, state, {i.name: plugin.filter(state, p, i) for i in snapshot.node_infos()}


def test_pod_without_a_backed_resource_is_skipped() -> None:
    plugin = dra.DynamicResources(cast(Handle, store((listers.DEVICE_CLASS, cls("gpu")))))
    _, status = plugin.pre_filter(CycleState(), gpu_pod(), snapshot_of(NODES))
    assert status == Status(Code.SKIP)


def test_filter_allocates_on_dra_nodes_and_passes_device_plugin_nodes() -> None:
    _, state, verdicts = cycle(store(*OBJECTS), gpu_pod())
    assert verdicts == {"dra-node": None, "plugin-node": None}
    s = state.read(dra.STATE_KEY, dra._State)
    assert s is not None
    (allocation,) = s.allocations_on("dra-node") or ()
    (result,) = allocation["devices"]["results"]
    assert (result["request"], result["device"]) == ("container-0-request-1", "gpu-0")
    assert s.allocations_on("plugin-node") is None
    assert s.node_claims["dra-node"].mappings == (
        {"containerName": "c", "resourceName": EXT, "requestName": "container-0-request-1"},
    )


def test_more_devices_than_the_node_has() -> None:
    _, _, verdicts = cycle(store(*OBJECTS), gpu_pod(count="2"))
    assert verdicts["dra-node"] == Status.of(
        Code.UNSCHEDULABLE_AND_UNRESOLVABLE, dra.ERR_CANNOT_ALLOCATE
    )


def test_unbacked_extended_resource_cannot_fit_in_dra() -> None:
    p = gpu_pod(**{"example.com/other": "1"})
    _, _, verdicts = cycle(store(*OBJECTS), p)
    want = Status.of(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, extended.ERR_CANNOT_FIT)
    assert verdicts == {"dra-node": want, "plugin-node": want}


def test_stale_claim_fails_every_node() -> None:
    h = store(*OBJECTS, (listers.RESOURCE_CLAIM, prior_claim()))
    _, _, verdicts = cycle(h, gpu_pod())
    want = Status.of(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, extended.ERR_STALE_CLAIM)
    assert verdicts == {"dra-node": want, "plugin-node": want}


def test_reserved_devices_stay_in_flight_until_the_claim_exists() -> None:
    h = store(*OBJECTS)
    plugin, state, _ = cycle(h, gpu_pod("first"))
    assert plugin.reserve(state, gpu_pod("first"), "dra-node") is None
    # The next pod sees the device taken although no claim holds it in the API yet.
    state2 = CycleState()
    second = gpu_pod("second")
    _, status = plugin.pre_filter(state2, second, snapshot_of(NODES))
    assert status is None
    dra_node = node_info("dra-node")
    assert plugin.filter(state2, second, dra_node) == Status.of(
        Code.UNSCHEDULABLE_AND_UNRESOLVABLE, dra.ERR_CANNOT_ALLOCATE
    )
    plugin.unreserve(state, gpu_pod("first"), "dra-node")
    state3 = CycleState()
    plugin.pre_filter(state3, second, snapshot_of(NODES))
    assert plugin.filter(state3, second, dra_node) is None


def test_reserve_on_a_device_plugin_node_needs_no_allocation() -> None:
    plugin, state, _ = cycle(store(*OBJECTS), gpu_pod())
    assert plugin.reserve(state, gpu_pod(), "plugin-node") is None
