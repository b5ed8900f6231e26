"""DynamicResources' accounting of shared devices: allocated claims' shares (from the informer)
and in-flight ones (between Reserve and the informer seeing PreBind's write) count against a
device's capacity for every other pod."""

from __future__ import annotations

import pytest

from corral.scheduler.framework import listers
from corral.scheduler.framework.cycle_state import CycleState
from corral.scheduler.framework.status import Code, Status
from corral.scheduler.plugins.dynamic_resources import plugin as dra
from corral.testing.builders import snapshot_of

from .dra_builders import Json, device_class, request, resource_slice
from .test_plugin import DRIVER, NODES, claim, claiming_pod, node_infos, run_filter, store

SHARED_CLASS = (
    listers.DEVICE_CLASS,
    device_class("vgpu", DRIVER, selectors=("device.allowMultipleAllocations",)),
)
SHARED_SLICE = (
    listers.RESOURCE_SLICE,
    resource_slice(
        "node-a-vgpu",
        "node-a",
        "node-a",
        DRIVER,
        {
            "name": "vgpu-0",
            "allowMultipleAllocations": True,
            "capacity": {"memory": {"value": "4Gi"}},
        },
    ),
)
CANNOT = Status.of(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "cannot allocate all claims")


def two_gi(name: str, **more: Json) -> tuple[str, Json]:
    wants = request("vgpu", "vgpu", 1, capacity={"requests": {"memory": "2Gi"}})
    return (listers.RESOURCE_CLAIM, claim(name, wants, **more))


def share(memory: str, share_id: str = "aaaaaaaa-aaaa-aaaa-aaaa-aaaaaaaaaaaa") -> Json:
    result = {"request": "vgpu", "driver": DRIVER, "pool": "node-a", "device": "vgpu-0"}
    return {
        "devices": {
            "results": [{**result, "shareID": share_id, "consumedCapacity": {"memory": memory}}]
        }
    }


def test_in_flight_shares_fill_the_device_until_unreserved() -> None:
    handle = store(SHARED_CLASS, SHARED_SLICE, two_gi("c1"), two_gi("c2"), two_gi("c3"))
    first, second, third = (
        claiming_pod(p, c) for p, c in (("p1", "c1"), ("p2", "c2"), ("p3", "c3"))
    )
    plugin, state1, verdicts = run_filter(handle, first)
    assert verdicts["node-a"] is None
    assert plugin.reserve(state1, first, "node-a") is None

    state2 = CycleState()
    assert plugin.pre_filter(state2, second, snapshot_of(NODES)) == (None, None)
    infos = node_infos()
    assert plugin.filter(state2, second, infos["node-a"]) is None  # 2Gi + 2Gi of 4Gi
    assert plugin.reserve(state2, second, "node-a") is None
    chosen = state2.read(dra.STATE_KEY, dra._State)
    assert chosen is not None
    (result,) = chosen.chosen[0]["devices"]["results"]
    assert result["consumedCapacity"] == {"memory": "2Gi"}
    assert len(result["shareID"]) == 36

    state3 = CycleState()
    plugin.pre_filter(state3, third, snapshot_of(NODES))
    assert plugin.filter(state3, third, infos["node-a"]) == CANNOT

    plugin.unreserve(state2, second, "node-a")
    retry = CycleState()
    plugin.pre_filter(retry, third, snapshot_of(NODES))
    assert plugin.filter(retry, third, infos["node-a"]) is None


@pytest.mark.parametrize(
    ("held", "fits"),
    [
        pytest.param("2Gi", True, id="half-held"),
        pytest.param("3Gi", False, id="too-little-left"),
    ],
)
def test_allocated_shares_count_against_the_device(held: str, fits: bool) -> None:
    holder = (listers.RESOURCE_CLAIM, claim("holder", allocation=share(held)))
    handle = store(SHARED_CLASS, SHARED_SLICE, holder, two_gi("c1"))
    _, _, verdicts = run_filter(handle, claiming_pod("p1", "c1"))
    assert verdicts["node-a"] == (None if fits else CANNOT)


def test_a_dedicated_allocation_of_a_shareable_device_holds_it_whole() -> None:
    """A result without a shareID holds the device alone, allowMultipleAllocations or not."""
    allocation = share("1Gi")
    del allocation["devices"]["results"][0]["shareID"]
    holder = (listers.RESOURCE_CLAIM, claim("holder", allocation=allocation))
    handle = store(SHARED_CLASS, SHARED_SLICE, holder, two_gi("c1"))
    _, _, verdicts = run_filter(handle, claiming_pod("p1", "c1"))
    assert verdicts["node-a"] == CANNOT
