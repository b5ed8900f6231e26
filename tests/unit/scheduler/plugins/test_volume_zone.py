"""VolumeZone: PreFilter and its queueing hints, after upstream 1.37's tables."""

from __future__ import annotations

from typing import Any

import pytest

from corral.scheduler.framework.cluster_events import QueueingHint
from corral.scheduler.framework.status import Status
from corral.scheduler.plugins import (
    volume_zone,
)
from corral.testing.framework import FakeHandle
from support.hints import CLAIM, SKIP, Q, with_volumes
from support.volume_pods import (
    PVC_POD,
    UUR,
    claim_pair,
    class_pair,
    pairs_handle,
    pre_filter_status,
)

_ZONE_LABEL = "topology.kubernetes.io/zone"


_VZ_RESOURCES = {
    "claim": "PersistentVolumeClaim",
    "class": "StorageClass",
    "volume": "PersistentVolume",
}


def _pv(**labels: str) -> dict[str, Any]:
    return {"metadata": {"name": "pv", "labels": dict(labels)}}


@pytest.mark.parametrize(
    ("hint", "old", "new", "want"),
    [
        pytest.param(
            "claim",
            None,
            {"metadata": {"name": "claim", "namespace": "default"}},
            Q,
            id="queue-on-pvc-requested-by-the-pod",
        ),
        pytest.param(
            "claim",
            None,
            {"metadata": {"name": "other", "namespace": "default"}},
            SKIP,
            id="skip-queue-on-unrelated-pvc",
        ),
        pytest.param(
            "class",
            None,
            {"metadata": {"name": "sc"}, "volumeBindingMode": "WaitForFirstConsumer"},
            Q,
            id="queue-on-wffc-storage-class-added",
        ),
        pytest.param(
            "class",
            None,
            {"metadata": {"name": "sc"}, "volumeBindingMode": "Immediate"},
            SKIP,
            id="skip-queue-on-immediate-storage-class-added",
        ),
        pytest.param("volume", None, _pv(**{_ZONE_LABEL: "a"}), Q, id="queue-on-pv-added"),
        pytest.param(
            "volume",
            _pv(**{_ZONE_LABEL: "a"}),
            _pv(**{_ZONE_LABEL: "b"}),
            Q,
            id="queue-on-pv-topology-changed",
        ),
        pytest.param(
            "volume",
            _pv(**{_ZONE_LABEL: "a"}),
            _pv(**{_ZONE_LABEL: "a", "x": "y"}),
            SKIP,
            id="skip-queue-on-unrelated-pv-label-change",
        ),
    ],
)
def test_volume_zone_hints(hint: str, old: object, new: object, want: QueueingHint) -> None:
    plugin = volume_zone.new(None, FakeHandle())
    regs = {r.event.resource: r.hint for r in plugin.events_to_register()}
    fn = regs[_VZ_RESOURCES[hint]]
    assert fn is not None
    assert fn(with_volumes("p", CLAIM), old, new) is want


@pytest.mark.parametrize(
    ("objects", "want"),
    [
        pytest.param(
            (claim_pair(volume="pv-1"),),
            Status.of(UUR, 'persistentvolume "pv-1" not found'),
            id="missing PV",
        ),
        pytest.param(
            (claim_pair(storage_class="gone"),),
            Status.of(UUR, 'storageclass.storage.k8s.io "gone" not found'),
            id="missing StorageClass",
        ),
        pytest.param(
            (
                claim_pair(storage_class="wffc"),
                class_pair("wffc", volumeBindingMode="WaitForFirstConsumer"),
            ),
            None,
            id="unbound wait-for-first-consumer is passed over",
        ),
    ],
)
def test_volume_zone_pre_filter(
    objects: tuple[tuple[str, dict[str, Any]], ...], want: Status | None
) -> None:
    assert pre_filter_status(volume_zone.new(None, pairs_handle(*objects)), PVC_POD) == want
