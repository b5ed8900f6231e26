"""NodeVolumeLimits as upstream 1.37's CSILimits: what counts against a driver's limit (CSI PVs,
unbound claims by provisioner, translated in-tree volumes, VolumeAttachments) and
VolumeLimitScaling's missing-driver check."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from corral.scheduler.backend.records import pod_from_json
from corral.scheduler.framework import listers
from corral.scheduler.framework.cycle_state import CycleState
from corral.scheduler.framework.status import Code, Status
from corral.scheduler.plugins import (
    node_volume_limits,
)
from corral.testing.builders import node, pod, snapshot_of
from corral.testing.framework import FakeHandle
from support.storage import csi_driver, pv, pvc, storage_class
from support.volume_pods import (
    PVC_POD,
    UUR,
    claim_pair,
    class_pair,
    pairs_handle,
    pre_filter_status,
)

EXCEEDED = Status.of(Code.UNSCHEDULABLE, node_volume_limits.ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED)
EBS = "ebs.csi.aws.com"


def csi_node(limit: int | None, driver: str = EBS) -> dict[str, Any]:
    entry: dict[str, Any] = {"name": driver}
    if limit is not None:
        entry["allocatable"] = {"count": limit}
    return {"kind": "CSINode", "metadata": {"name": "n"}, "spec": {"drivers": [entry]}}


def csi_pv(name: str, handle: str, driver: str = EBS) -> dict[str, Any]:
    out = pv(name)
    del out["spec"]["hostPath"]
    out["spec"]["csi"] = {"driver": driver, "volumeHandle": handle}
    return out


def ebs_pv(name: str, volume_id: str) -> dict[str, Any]:
    out = pv(name)
    del out["spec"]["hostPath"]
    out["spec"]["awsElasticBlockStore"] = {"volumeID": volume_id}
    return out


def attachment(pv_name: str, node_name: str = "n", attacher: str = EBS) -> dict[str, Any]:
    return {"kind": "VolumeAttachment", "metadata": {"name": f"va-{pv_name}"},
            "spec": {"attacher": attacher, "nodeName": node_name,
                     "source": {"persistentVolumeName": pv_name}}}  # fmt: skip


def with_volumes(name: str, *volumes: dict[str, Any], node_name: str = "") -> dict[str, Any]:
    raw = pod(name)
    raw["spec"]["volumes"] = list(volumes)
    if node_name:
        raw["spec"]["nodeName"] = node_name
    return raw


def claim_volume(claim: str) -> dict[str, Any]:
    return {"name": claim, "persistentVolumeClaim": {"claimName": claim}}


def verdict(objects: list[dict[str, Any]], new: dict[str, Any],
            running: Sequence[dict[str, Any]] = ()) -> Status | None:  # fmt: skip
    plugin = node_volume_limits.new(None, FakeHandle(*objects))
    snapshot = snapshot_of([node("n")], list(running))
    return plugin.filter(CycleState(), pod_from_json(new), snapshot.node_info(0))


BOUND = pvc("a", volume="pv-a", bound=True)
NEW_POD = with_volumes("p", claim_volume("a"))


@pytest.mark.parametrize(
    ("objects", "new", "running", "want"),
    [
        pytest.param([csi_node(1), BOUND, csi_pv("pv-a", "h-a")], NEW_POD, (), None,
                     id="one CSI volume within the limit"),
        pytest.param([csi_node(0), BOUND, csi_pv("pv-a", "h-a")], NEW_POD, (), EXCEEDED,
                     id="limit 0"),
        pytest.param([csi_node(None), BOUND, csi_pv("pv-a", "h-a")], NEW_POD, (), None,
                     id="a driver without a limit"),
        pytest.param([csi_node(1), BOUND, pvc("b", volume="pv-b", bound=True),
                      csi_pv("pv-a", "h-a"), csi_pv("pv-b", "h-b")], NEW_POD,
                     [with_volumes("old", claim_volume("b"), node_name="n")], EXCEEDED,
                     id="a running pod's volume counts"),
        pytest.param([csi_node(1), BOUND, csi_pv("pv-a", "h-a")], NEW_POD,
                     [with_volumes("old", claim_volume("a"), node_name="n")], None,
                     id="a volume shared with a running pod counts once"),
        pytest.param([csi_node(1), BOUND, csi_pv("pv-a", "h-a"), csi_pv("pv-x", "h-x"),
                      attachment("pv-x")], NEW_POD, (), EXCEEDED,
                     id="a VolumeAttachment on the node counts"),
        pytest.param([csi_node(1), BOUND, csi_pv("pv-a", "h-a"), csi_pv("pv-x", "h-x"),
                      attachment("pv-x", node_name="other")], NEW_POD, (), None,
                     id="a VolumeAttachment elsewhere does not"),
        pytest.param([csi_node(0), pvc("a", storage_class="gp3"),
                      storage_class("gp3", EBS)], NEW_POD, (), EXCEEDED,
                     id="an unbound claim counts by its provisioner"),
        pytest.param([csi_node(0), pvc("a", volume="gone", bound=True),
                      storage_class("wffc", EBS)], NEW_POD, (), EXCEEDED,
                     id="a claim whose PV is missing counts by its class"),
        pytest.param([csi_node(0), pvc("a", storage_class="old"),
                      storage_class("old", "kubernetes.io/aws-ebs")], NEW_POD, (), EXCEEDED,
                     id="an in-tree provisioner counts as its CSI driver"),
        pytest.param([csi_node(0), BOUND, ebs_pv("pv-a", "aws://us-east-1a/vol-1")], NEW_POD,
                     (), EXCEEDED, id="an in-tree EBS PV counts as ebs.csi.aws.com"),
        pytest.param([csi_node(0)], with_volumes("p", {"name": "x",
                      "awsElasticBlockStore": {"volumeID": "vol-1"}}), (), EXCEEDED,
                     id="an inline EBS volume counts as ebs.csi.aws.com"),
        pytest.param([BOUND, ebs_pv("pv-a", "vol-1")], NEW_POD, (), None,
                     id="no CSINode: in-tree volumes are not migrated, nothing counts"),
        pytest.param([csi_node(0, "other.csi"), BOUND, csi_pv("pv-a", "h-a"),
                      csi_driver(EBS) | {"spec": {"preventPodSchedulingIfMissing": True}}],
                     NEW_POD, (), Status.of(Code.UNSCHEDULABLE,
                                            f"{EBS} CSI driver is not installed on the node"),
                     id="VolumeLimitScaling: the driver must be on the node"),
        pytest.param([csi_node(None, "other.csi"), BOUND, csi_pv("pv-a", "h-a"),
                      csi_driver(EBS)], NEW_POD, (), None,
                     id="VolumeLimitScaling: a driver that does not opt in"),
    ],
)  # fmt: skip
def test_node_volume_limits(
    objects: list[dict[str, Any]], new: dict[str, Any], running: Sequence[dict[str, Any]],
    want: Status | None,
) -> None:  # fmt: skip
    assert verdict(objects, new, running) == want


def test_node_volume_limits_missing_claim_in_filter() -> None:
    plugin = node_volume_limits.new(None, pairs_handle())
    snapshot = snapshot_of([node("n")])
    status = plugin.filter(CycleState(), pod_from_json(PVC_POD), snapshot.node_info(0))
    assert status == Status.of(
        UUR, 'looking up PVC default/data: persistentvolumeclaim "data" not found'
    )


def test_node_volume_limits_counts_an_unbound_claim_by_provisioner() -> None:
    fake = pairs_handle(
        claim_pair(storage_class="csi"),
        class_pair("csi", provisioner="ebs.csi"),
        (
            listers.CSI_NODE,
            {
                "metadata": {"name": "n"},
                "spec": {"drivers": [{"name": "ebs.csi", "allocatable": {"count": 0}}]},
            },
        ),
    )
    plugin = node_volume_limits.new(None, fake)
    snapshot = snapshot_of([node("n")])
    status = plugin.filter(CycleState(), pod_from_json(PVC_POD), snapshot.node_info(0))
    assert status == Status.of(
        Code.UNSCHEDULABLE, node_volume_limits.ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED
    )


def volume_pod(*volumes: dict[str, Any]) -> dict[str, Any]:
    return {**pod("p"), "spec": {**pod("p")["spec"], "volumes": list(volumes)}}


@pytest.mark.parametrize(
    ("raw", "skipped"),
    [
        pytest.param(pod("p"), True, id="no volumes"),
        pytest.param(volume_pod({"name": "kube-api-access", "projected": {"sources": []}}),
                     True, id="the ServiceAccount token's projected volume"),
        pytest.param(volume_pod({"name": "scratch", "emptyDir": {}}, {"name": "cfg",
                     "configMap": {"name": "c"}}), True, id="emptyDir and configMap"),
        pytest.param(volume_pod({"name": "inline", "csi": {"driver": "d.csi"}}), True,
                     id="CSI inline volumes are not attached"),
        pytest.param(PVC_POD, False, id="a claim"),
        pytest.param(volume_pod({"name": "e", "ephemeral": {"volumeClaimTemplate": {}}}),
                     False, id="a generic ephemeral volume"),
        pytest.param(volume_pod({"name": "pd", "gcePersistentDisk": {"pdName": "x"}}), False,
                     id="a migratable in-tree volume"),
    ],
)  # fmt: skip
def test_node_volume_limits_pre_filter_skips_like_upstream(
    raw: dict[str, Any], skipped: bool
) -> None:
    status = pre_filter_status(node_volume_limits.new(None, pairs_handle()), raw)
    assert (status is not None and status.code is Code.SKIP) is skipped
