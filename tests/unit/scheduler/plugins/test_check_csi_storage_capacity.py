"""CheckCSIStorageCapacity (Corral): which claims count, how a class's CSIStorageCapacity
objects are matched to a node, the reason and code."""

from __future__ import annotations

from typing import Any

import pytest

from corral.scheduler.backend.records import pod_from_json
from corral.scheduler.framework.cycle_state import CycleState
from corral.scheduler.framework.status import Code, Status
from corral.scheduler.plugins import check_csi_storage_capacity as csi
from corral.testing.builders import node, pod, snapshot_of
from support.capacity_objects import (
    ZONE,
    Obj,
    U,
    capacity,
    claim,
    csi_driver,
    handle,
    pod_with,
    storage_class,
)

CSI_BASE: tuple[Obj, ...] = (storage_class("fast", "csi.example"), csi_driver("csi.example"))


NOT_ENOUGH = Status.of(U, csi.reason("fast"))


def run_csi(objects: tuple[Obj, ...], raw: dict[str, Any], zone: str) -> tuple[str, Status | None]:
    """('skip' | 'filter'), and the zone-labelled node's status (PreFilter's if it failed)."""
    plugin = csi.new(None, handle(*objects))
    state, info = CycleState(), pod_from_json(raw)
    snapshot = snapshot_of([node("n", labels={ZONE: zone})])
    _, status = plugin.pre_filter(state, info, snapshot)
    if status is not None and status.code == Code.SKIP:
        return "skip", None
    if status is not None:
        return "pre_filter", status
    return "filter", plugin.filter(state, info, snapshot.node_info(0))


@pytest.mark.parametrize(
    ("objects", "raw", "want"),
    [
        pytest.param(CSI_BASE, pod("p"), ("skip", None), id="no volumes"),
        pytest.param(
            (*CSI_BASE, claim("a", "fast"), capacity("c", "fast", "10Gi", "a")),
            pod_with("a"),
            ("filter", None),
            id="fits in the node's zone",
        ),
        pytest.param(
            (*CSI_BASE, claim("a", "fast"), capacity("c", "fast", "10Gi", "b")),
            pod_with("a"),
            ("filter", NOT_ENOUGH),
            id="capacity only in another zone",
        ),
        pytest.param(
            (*CSI_BASE, claim("a", "fast", "20Gi"), capacity("c", "fast", "10Gi", "a")),
            pod_with("a"),
            ("filter", NOT_ENOUGH),
            id="too small",
        ),
        pytest.param(
            (*CSI_BASE, claim("a", "fast", "10Gi"), capacity("c", "fast", "10Gi", "a")),
            pod_with("a"),
            ("filter", None),
            id="exactly enough",
        ),
        pytest.param(
            (
                *CSI_BASE,
                claim("a", "fast", "6Gi"),
                claim("b", "fast", "6Gi"),
                capacity("c", "fast", "10Gi", "a"),
            ),
            pod_with("a", "b"),
            ("filter", NOT_ENOUGH),
            id="claims of one class are summed (upstream checks each alone)",
        ),
        pytest.param(
            (*CSI_BASE, claim("a", "fast", "6Gi"), capacity("c", "fast", "10Gi", "a", "5Gi")),
            pod_with("a"),
            ("filter", NOT_ENOUGH),
            id="largest claim over maximumVolumeSize",
        ),
        pytest.param(
            (*CSI_BASE, claim("a", "fast", "5Gi"), capacity("c", "fast", "10Gi", "a", "5Gi")),
            pod_with("a"),
            ("filter", None),
            id="within maximumVolumeSize and capacity",
        ),
        pytest.param(
            (*CSI_BASE, claim("a", "fast"), capacity("c", "fast", None, "a", "5Gi")),
            pod_with("a"),
            ("filter", NOT_ENOUGH),
            id="capacity unset: cannot hold anything",
        ),
        pytest.param(
            (*CSI_BASE, claim("a", "fast"), capacity("c", "fast", "10Gi", None)),
            pod_with("a"),
            ("filter", NOT_ENOUGH),
            id="nodeTopology unset selects no node",
        ),
        pytest.param(
            (*CSI_BASE, claim("a", "fast"), capacity("c", "other", "10Gi", "a")),
            pod_with("a"),
            ("filter", NOT_ENOUGH),
            id="capacity of another class",
        ),
        pytest.param(
            (*CSI_BASE, claim("a", "fast", volume="pv-1")),
            pod_with("a"),
            ("skip", None),
            id="bound claim: nothing to provision",
        ),
        pytest.param(
            (storage_class("fast", "csi.example", "Immediate"), claim("a", "fast")),
            pod_with("a"),
            ("skip", None),
            id="immediate class: provisioned before scheduling",
        ),
        pytest.param(
            (storage_class("fast", "csi.example"), claim("a", "fast")),
            pod_with("a"),
            ("skip", None),
            id="no CSIDriver object: capacity not tracked",
        ),
        pytest.param(
            (
                storage_class("fast", "csi.example"),
                csi_driver("csi.example", False),
                claim("a", "fast"),
            ),
            pod_with("a"),
            ("skip", None),
            id="CSIDriver without storageCapacity",
        ),
        pytest.param(
            (*CSI_BASE, claim("a", "fast", None)),
            pod_with("a"),
            ("skip", None),
            id="claim requests no storage",
        ),
        pytest.param(
            (claim("a", "missing"),),
            pod_with("a"),
            ("skip", None),
            id="class not found: nobody provisions it",
        ),
        pytest.param(
            CSI_BASE,
            pod_with("a"),
            (
                "pre_filter",
                Status.of(
                    Code.UNSCHEDULABLE_AND_UNRESOLVABLE, 'persistentvolumeclaim "a" not found'
                ),
            ),
            id="missing claim",
        ),
        pytest.param(
            (*CSI_BASE, capacity("c", "fast", "1Gi", "a")),
            pod_with(
                ephemeral={
                    "volumeClaimTemplate": {
                        "spec": {
                            "storageClassName": "fast",
                            "resources": {"requests": {"storage": "2Gi"}},
                        }
                    }
                }
            ),
            ("filter", NOT_ENOUGH),
            id="ephemeral claim not created yet: its template counts",
        ),
    ],
)
def test_check_csi_storage_capacity(
    objects: tuple[Obj, ...], raw: dict[str, Any], want: tuple[str, Status | None]
) -> None:
    assert run_csi(objects, raw, "a") == want


def test_check_csi_storage_capacity_filter_without_pre_filter() -> None:
    objects = (*CSI_BASE, claim("a", "fast", "2Gi"), capacity("c", "fast", "1Gi", "a"))
    plugin = csi.new(None, handle(*objects))
    snapshot = snapshot_of([node("n", labels={ZONE: "a"})])
    status = plugin.filter(CycleState(), pod_from_json(pod_with("a")), snapshot.node_info(0))
    assert status == NOT_ENOUGH


def test_check_csi_storage_capacity_names_the_plugin_and_class() -> None:
    assert csi.reason("fast") == (
        'node(s) did not have enough CSI storage capacity for StorageClass "fast" '
        "(CheckCSIStorageCapacity)"
    )
