"""What plugins read from an object's raw JSON is shape-checked where the object enters.

A record (``PodInfo``) keeps the pod's JSON for plugins, which read fields the record does not
(``spec.resourceClaims``, ``spec.volumes``, ...). Each of them, of the wrong type, is refused when
the record is built, with one line naming its path; the other watched kinds are checked whole
where their watch events enter (``ObjectEvents``). Before this, ``spec.resourceClaims: 5`` built
a record and raised a TypeError in DynamicResources' PreEnqueue.
"""

from __future__ import annotations

import copy
import itertools
import logging
from typing import Any

import pytest

from corral.scheduler.backend import shapes
from corral.scheduler.backend.objects import ObjectStore
from corral.scheduler.backend.records import POD_RAW_READS, MalformedObjectError, pod_from_json
from corral.scheduler.engine.object_events import ObjectEvents
from corral.testing.builders import pod

E = shapes.EVERY
# A pod with every raw-read field present and well formed: it must stay accepted.
WELL_FORMED: dict[str, Any] = {
    **pod("p", namespace="d"),
    "metadata": {
        "name": "p",
        "namespace": "d",
        "uid": "u1",
        "ownerReferences": [
            {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "r", "uid": "r1"}
        ],
        "finalizers": ["x/y"],
        "deletionGracePeriodSeconds": 30,
    },
}
WELL_FORMED["spec"] = {
    "containers": [
        {
            "name": "c",
            "image": "i",
            "restartPolicyRules": [{"action": "RestartAllContainers"}],
            "volumeMounts": [{"name": "v", "mountPath": "/v"}],
        }
    ],
    "initContainers": [{"name": "s", "restartPolicy": "Always"}],
    "ephemeralContainers": [{"name": "e", "volumeMounts": [{"name": "v", "mountPath": "/v"}]}],
    "volumes": [{"name": "v", "persistentVolumeClaim": {"claimName": "pvc"}}],
    "resourceClaims": [{"name": "gpu", "resourceClaimName": "claim"}],
    "topologySpreadConstraints": [
        {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"}
    ],
    "priorityClassName": "high",
    "hostNetwork": False,
    "hostUsers": True,
}
WELL_FORMED["status"] = {
    "conditions": [{"type": "PodScheduled", "status": "False"}],
    "resourceClaimStatuses": [{"name": "gpu", "resourceClaimName": "claim"}],
    "extendedResourceClaimStatus": {"resourceClaimName": "x", "requestMappings": []},
}

# (path in POD_RAW_READS, the value put at its end, the line's field path and message)
ROWS = [
    pytest.param(("metadata", "ownerReferences"), 5, "metadata.ownerReferences: must be a list",
                 id="metadata.ownerReferences number"),
    pytest.param(("metadata", "finalizers"), [5], "metadata.finalizers[0]: must be a string",
                 id="metadata.finalizers item number"),
    pytest.param(("metadata", "deletionGracePeriodSeconds"), "30",
                 "metadata.deletionGracePeriodSeconds: must be an integer",
                 id="metadata.deletionGracePeriodSeconds string"),
    pytest.param(("spec", "containers", E, "name"), 5, "spec.containers[0].name: must be a string",
                 id="spec.containers[].name number"),
    pytest.param(("spec", "containers", E, "restartPolicy"), ["Always"],
                 "spec.containers[0].restartPolicy: must be a string",
                 id="spec.containers[].restartPolicy list"),
    pytest.param(("spec", "containers", E, "restartPolicyRules"), {"action": "x"},
                 "spec.containers[0].restartPolicyRules: must be a list",
                 id="spec.containers[].restartPolicyRules object"),
    pytest.param(("spec", "containers", E, "volumeMounts"), ["v"],
                 "spec.containers[0].volumeMounts[0]: must be an object",
                 id="spec.containers[].volumeMounts item string"),
    pytest.param(("spec", "initContainers", E, "name"), True,
                 "spec.initContainers[0].name: must be a string",
                 id="spec.initContainers[].name boolean"),
    pytest.param(("spec", "initContainers", E, "restartPolicy"), 1,
                 "spec.initContainers[0].restartPolicy: must be a string",
                 id="spec.initContainers[].restartPolicy number"),
    pytest.param(("spec", "initContainers", E, "restartPolicyRules"), [7],
                 "spec.initContainers[0].restartPolicyRules[0]: must be an object",
                 id="spec.initContainers[].restartPolicyRules item number"),
    pytest.param(("spec", "initContainers", E, "volumeMounts"), "v",
                 "spec.initContainers[0].volumeMounts: must be a list",
                 id="spec.initContainers[].volumeMounts string"),
    pytest.param(("spec", "ephemeralContainers", E, "volumeMounts"), 3,
                 "spec.ephemeralContainers[0].volumeMounts: must be a list",
                 id="spec.ephemeralContainers[].volumeMounts number"),
    pytest.param(("spec", "volumes"), [{"name": "v", "csi": 5}],
                 "spec.volumes[0].csi: must be an object", id="spec.volumes[].csi number"),
    pytest.param(("spec", "resourceClaims"), 5, "spec.resourceClaims: must be a list",
                 id="spec.resourceClaims number (the fuzz's crash)"),
    pytest.param(("spec", "topologySpreadConstraints"), [{"maxSkew": "1"}],
                 "spec.topologySpreadConstraints[0].maxSkew: must be an integer",
                 id="spec.topologySpreadConstraints[].maxSkew string"),
    pytest.param(("spec", "priorityClassName"), {"name": "high"},
                 "spec.priorityClassName: must be a string", id="spec.priorityClassName object"),
    pytest.param(("spec", "hostNetwork"), "true", "spec.hostNetwork: must be a boolean",
                 id="spec.hostNetwork string"),
    pytest.param(("spec", "hostUsers"), 0, "spec.hostUsers: must be a boolean",
                 id="spec.hostUsers number"),
    pytest.param(("status", "conditions"), "Ready", "status.conditions: must be a list",
                 id="status.conditions string"),
    pytest.param(("status", "resourceClaimStatuses"), [{"name": 5}],
                 "status.resourceClaimStatuses[0].name: must be a string",
                 id="status.resourceClaimStatuses[].name number"),
    pytest.param(("status", "extendedResourceClaimStatus"), [],
                 "status.extendedResourceClaimStatus: must be an object",
                 id="status.extendedResourceClaimStatus list"),
]  # fmt: skip


def _with(path: shapes.Path, value: Any) -> dict[str, Any]:
    """WELL_FORMED with ``value`` at ``path`` (EVERY: the first item)."""
    out = copy.deepcopy(WELL_FORMED)
    at: Any = out
    for step, after in itertools.pairwise(path):
        key = 0 if step == E else step
        if after == E and not at.get(key):
            at[key] = [{}]
        at = at[key]
    at[0 if path[-1] == E else path[-1]] = value
    return out


def test_the_well_formed_pod_is_accepted() -> None:
    assert pod_from_json(WELL_FORMED).has_resource_claims


def test_every_raw_read_has_a_row() -> None:
    assert sorted(map(str, (r.values[0] for r in ROWS))) == sorted(map(str, POD_RAW_READS))


@pytest.mark.parametrize(("path", "value", "line"), ROWS)
def test_a_raw_read_of_the_wrong_type_refuses_the_pod(
    path: shapes.Path, value: Any, line: str
) -> None:
    with pytest.raises(MalformedObjectError) as err:
        pod_from_json(_with(path, value))
    assert str(err.value).startswith(f"Pod d/p: {line}, got "), str(err.value)
    assert "\n" not in str(err.value)


class _Queue:
    def __init__(self) -> None:
        self.events: list[Any] = []

    def move_all_to_active_or_backoff(self, event: Any, old: Any, new: Any) -> None:
        self.events.append(event)


CLAIM: dict[str, Any] = {
    "apiVersion": "resource.k8s.io/v1",
    "kind": "ResourceClaim",
    "metadata": {"name": "claim", "namespace": "d"},
    "spec": {"devices": {"requests": [{"name": "r", "exactly": {"deviceClassName": "gpu"}}]}},
}


@pytest.mark.parametrize(
    ("kind", "obj", "line"),
    [
        pytest.param("ResourceClaim", {**CLAIM, "spec": {"devices": {"requests": 5}}},
                     "ResourceClaim d/claim: spec.devices.requests: must be a list, got number",
                     id="ResourceClaim spec.devices.requests number"),
        pytest.param("ResourceClaim", {**CLAIM, "status": {"reservedFor": [{"uid": 1}]}},
                     "ResourceClaim d/claim: status.reservedFor[0].uid: must be a string,"
                     " got number",
                     id="ResourceClaim status.reservedFor[].uid number"),
        pytest.param("PersistentVolumeClaim",
                     {"metadata": {"name": "pvc", "namespace": "d"},
                      "spec": {"volumeName": ["pv"]}},
                     "PersistentVolumeClaim d/pvc: spec.volumeName: must be a string, got list",
                     id="PersistentVolumeClaim spec.volumeName list (a listed item: no kind)"),
        pytest.param("StorageClass", {"metadata": {"name": "fast"}, "allowedTopologies": {}},
                     "StorageClass fast: allowedTopologies: must be a list, got object",
                     id="StorageClass allowedTopologies object"),
    ],
)  # fmt: skip
def test_a_watched_object_of_the_wrong_shape_is_ignored(
    kind: str, obj: dict[str, Any], line: str, caplog: pytest.LogCaptureFixture
) -> None:
    store, queue = ObjectStore(), _Queue()
    handle = ObjectEvents(store, queue).handler(kind)  # type: ignore[arg-type]
    meta = obj["metadata"]
    with caplog.at_level(logging.WARNING):
        handle("ADDED", obj)
    assert store.get(kind, meta.get("namespace", ""), meta["name"]) is None
    assert queue.events == []
    assert [r.getMessage() for r in caplog.records] == [
        f"ignoring a malformed {kind} event: {line}"
    ]
    assert not any(r.exc_info for r in caplog.records)


def test_a_well_formed_watched_object_is_kept() -> None:
    store, queue = ObjectStore(), _Queue()
    ObjectEvents(store, queue).handler("ResourceClaim")("ADDED", CLAIM)  # type: ignore[arg-type]
    assert store.get("ResourceClaim", "d", "claim") is CLAIM
    assert len(queue.events) == 1
