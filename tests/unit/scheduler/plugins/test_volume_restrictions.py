"""VolumeRestrictions: PreFilter (claims, access modes) and its queueing hints, after upstream
1.37's tables."""

from __future__ import annotations

from typing import Any

import pytest

from corral.scheduler.framework.cluster_events import QueueingHint
from corral.scheduler.framework.types import PodInfo
from corral.scheduler.plugins import (
    volume_restrictions,
)
from corral.testing.framework import FakeHandle
from support.hints import BOUND, CLAIM, SKIP, Q, with_volumes

_GCE = {"name": "v", "gcePersistentDisk": {"pdName": "disk"}}


_OTHER_GCE = {"name": "v", "gcePersistentDisk": {"pdName": "other"}}


_OTHER_CLAIM = {"name": "c", "persistentVolumeClaim": {"claimName": "other"}}


@pytest.mark.parametrize(
    ("pod", "deleted", "want"),
    [
        pytest.param(
            with_volumes("p", _GCE),
            with_volumes("d", _GCE, **BOUND),
            Q,
            id="queue-on-deleted-pod-with-conflicting-volume",
        ),
        pytest.param(
            with_volumes("p", _GCE),
            with_volumes("d", _OTHER_GCE, **BOUND),
            SKIP,
            id="skip-queue-on-deleted-pod-without-conflict",
        ),
        pytest.param(
            with_volumes("p", CLAIM),
            with_volumes("d", CLAIM, **BOUND),
            Q,
            id="queue-on-deleted-pod-using-the-same-pvc",
        ),
        pytest.param(
            with_volumes("p", CLAIM),
            with_volumes("d", _OTHER_CLAIM, **BOUND),
            SKIP,
            id="skip-queue-on-deleted-pod-using-another-pvc",
        ),
        pytest.param(
            with_volumes("p", CLAIM),
            with_volumes("d", CLAIM, namespace="other", **BOUND),
            SKIP,
            id="skip-queue-on-deleted-pod-in-another-namespace",
        ),
    ],
)
def test_volume_restrictions_after_assigned_pod_deleted(
    pod: PodInfo, deleted: PodInfo, want: QueueingHint
) -> None:
    plugin = volume_restrictions.new(None, FakeHandle())
    assert plugin.hint_assigned_pod_deleted(pod, deleted, None) is want


@pytest.mark.parametrize(
    ("claim", "want"),
    [
        pytest.param(
            {"metadata": {"name": "claim", "namespace": "default"}},
            Q,
            id="queue-on-the-pods-pvc-added",
        ),
        pytest.param(
            {"metadata": {"name": "other", "namespace": "default"}},
            SKIP,
            id="skip-queue-on-another-pvc-added",
        ),
        pytest.param(
            {"metadata": {"name": "claim", "namespace": "other"}},
            SKIP,
            id="skip-queue-on-pvc-in-another-namespace",
        ),
    ],
)
def test_volume_restrictions_after_claim_added(claim: dict[str, Any], want: QueueingHint) -> None:
    plugin = volume_restrictions.new(None, FakeHandle())
    assert plugin.hint_claim_added(with_volumes("p", CLAIM), None, claim) is want
