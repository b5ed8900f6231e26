"""SliceIndex.pools_for: the pools gather_pools finds, kept per node (and per labels when a
slice selects nodes by them); a pool's candidates in slice and device order."""

from __future__ import annotations

import pytest

from corral.scheduler.plugins.dynamic_resources.pools import DeviceID, SliceIndex, gather_pools

from .dra_builders import (
    DRIVER_A,
    NODE1,
    NODE2,
    POOL1,
    POOL2,
    REGION1,
    REGION2,
    device,
    label_selector,
    node,
    resource_slice,
)

LOCAL = resource_slice("local", NODE1, POOL1, DRIVER_A, device("d-1"), device("d-2"))
BY_REGION = resource_slice("regional", label_selector("region", REGION1), POOL2, DRIVER_A,
                           device("r-1"))  # fmt: skip


@pytest.mark.parametrize(
    ("slices", "first", "second", "same"),
    [
        pytest.param([LOCAL], node(NODE1), node(NODE1), True, id="same node"),
        pytest.param([LOCAL], node(NODE1), node(NODE1, REGION2), True,
                     id="labels do not matter without a selecting slice"),
        pytest.param([LOCAL, BY_REGION], node(NODE1), node(NODE1, REGION2), False,
                     id="labels matter with one"),
        pytest.param([LOCAL], node(NODE1), node(NODE2), False, id="another node"),
    ],
)  # fmt: skip
def test_pools_for_keeps_what_gather_pools_finds(
    slices: list[dict[str, object]], first: object, second: object, same: bool
) -> None:
    index = SliceIndex(slices)
    pools = index.pools_for(first)  # type: ignore[arg-type]
    assert pools == gather_pools(index, first)  # type: ignore[arg-type]
    again = index.pools_for(second)  # type: ignore[arg-type]
    assert (again is pools) == same
    assert again == gather_pools(index, second)  # type: ignore[arg-type]


def test_candidates_in_slice_and_device_order_built_once() -> None:
    second = resource_slice("local-2", NODE1, POOL1, DRIVER_A, device("d-3"), count=2)
    first = resource_slice("local-1", NODE1, POOL1, DRIVER_A, device("d-1"), device("d-2"),
                           count=2)  # fmt: skip
    [pool] = SliceIndex([first, second]).pools_for(node(NODE1))
    candidates = pool.candidates()
    assert [c.id for c in candidates] == [DeviceID(DRIVER_A, POOL1, f"d-{i}") for i in (1, 2, 3)]
    assert [c.slice["metadata"]["name"] for c in candidates] == ["local-1", "local-1", "local-2"]
    assert pool.candidates() is candidates
