"""NodeDeclaredFeatures: upstream 1.37.2's inference of what a pod needs, its PreFilter and Filter
tables (``nodedeclaredfeatures_test.go``, with the real features for its mock ones) and the
FailedScheduling message through the whole engine (``corral simulate``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from corral.cli import main
from corral.scheduler.backend.records import pod_from_json
from corral.scheduler.framework.cycle_state import CycleState
from corral.scheduler.framework.status import Code, Status
from corral.scheduler.plugins import node_declared_features as ndf
from corral.testing.builders import node, pod, snapshot_of
from corral.testing.framework import FakeHandle

JSON = dict[str, Any]
RESTART = ndf.RESTART_ALL_CONTAINERS
USERNS = ndf.USER_NAMESPACES_HOST_NETWORK
MOUNT = ndf.VOLUME_BIND_MOUNT_OPTIONS
REJECTED = Status.of(
    Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "node(s) didn't match Pod's required features"
)

RESTART_ALL = {"restartPolicyRules": [{"action": "RestartAllContainers"}]}
BIND_MOUNT = {"volumeMounts": [{"name": "v", "mountPath": "/v", "bindMountOptions": ["ro"]}]}


def spec(**fields: Any) -> JSON:
    return {"containers": [{"name": "c"}], **fields}


@pytest.mark.parametrize(
    ("pod_spec", "want"),
    [
        pytest.param(spec(), set(), id="plain pod needs nothing"),
        pytest.param(spec(containers=[{"name": "c", **RESTART_ALL}]), {RESTART}, id="restart all"),
        pytest.param(
            spec(initContainers=[{"name": "i", **RESTART_ALL}]), {RESTART}, id="restart all (init)"
        ),
        pytest.param(
            spec(containers=[{"name": "c", "restartPolicyRules": [{"action": "Restart"}]}]),
            set(),
            id="other restart action",
        ),
        pytest.param(spec(hostNetwork=True, hostUsers=False), {USERNS}, id="userns host network"),
        pytest.param(spec(hostNetwork=True), set(), id="host network, host users unset"),
        pytest.param(spec(hostUsers=False), set(), id="user namespace without host network"),
        pytest.param(spec(hostNetwork=True, hostUsers=True), set(), id="host users true"),
        pytest.param(spec(containers=[{"name": "c", **BIND_MOUNT}]), {MOUNT}, id="bind mount"),
        pytest.param(
            spec(ephemeralContainers=[{"name": "e", **BIND_MOUNT}]), {MOUNT}, id="bind mount (eph)"
        ),
        pytest.param(
            spec(containers=[{"name": "c", "volumeMounts": [{"name": "v", "mountPath": "/v"}]}]),
            set(),
            id="mount without options",
        ),
        pytest.param(
            spec(
                hostNetwork=True,
                hostUsers=False,
                initContainers=[{"name": "i", **RESTART_ALL, **BIND_MOUNT}],
            ),
            {RESTART, USERNS, MOUNT},
            id="all three",
        ),
    ],
)
def test_required_features(pod_spec: JSON, want: set[str]) -> None:
    assert ndf.required_features(pod_spec) == want


def pod_needing(*features: str) -> JSON:
    fields: JSON = {}
    container: JSON = {"name": "c"}
    if RESTART in features:
        container.update(RESTART_ALL)
    if MOUNT in features:
        container.update(BIND_MOUNT)
    if USERNS in features:
        fields = {"hostNetwork": True, "hostUsers": False}
    raw = pod("p")
    raw["spec"].update(fields, containers=[container])
    return raw


def declaring(name: str, *features: str) -> JSON:
    raw = node(name)
    raw["status"]["declaredFeatures"] = list(features)
    return raw


@pytest.mark.parametrize(
    ("features", "skip"),
    [
        pytest.param((RESTART,), False, id="Pod with feature requirements"),
        pytest.param((RESTART, MOUNT), False, id="Pod with multiple feature requirements"),
        pytest.param((), True, id="Pod with no requirements"),
    ],
)
def test_pre_filter(features: tuple[str, ...], skip: bool) -> None:
    plugin = ndf.new(None, FakeHandle())
    state = CycleState()
    result, status = plugin.pre_filter(
        state, pod_from_json(pod_needing(*features)), snapshot_of([])
    )
    assert result is None
    assert (status is not None and status.is_skip) is skip


@pytest.mark.parametrize(
    ("required", "declared", "want"),
    [
        pytest.param((RESTART,), (RESTART, MOUNT), None, id="Node matches requirements"),
        pytest.param((RESTART,), (MOUNT,), REJECTED, id="Node does not match requirements"),
        pytest.param(
            (RESTART, MOUNT),
            (RESTART, MOUNT, USERNS),
            None,
            id="Node with multiple features, pod requires subset",
        ),
        pytest.param((RESTART,), (), REJECTED, id="Node has no declared features"),
        pytest.param(
            (RESTART, MOUNT), (RESTART,), REJECTED, id="Node with some but not all features"
        ),
        pytest.param(
            (RESTART,), (RESTART, "SomeFutureFeature"), None, id="unknown node features ignored"
        ),
    ],
)
def test_filter(required: tuple[str, ...], declared: tuple[str, ...], want: Status | None) -> None:
    plugin = ndf.new(None, FakeHandle())
    snapshot = snapshot_of([declaring("n1", *declared), node("n2")])
    info = pod_from_json(pod_needing(*required))
    state = CycleState()
    _, status = plugin.pre_filter(state, info, snapshot)
    assert status is None
    slot = snapshot.slot_of["n1"]
    assert plugin.filter(state, info, snapshot.node_info(slot)) == want
    verdict = plugin.filter_batch(state, info, snapshot)
    assert bool(np.asarray(verdict.passed)[slot]) is (want is None)
    assert not np.asarray(verdict.passed)[snapshot.slot_of["n2"]]


def test_filter_without_pre_filter_state_is_an_error() -> None:
    plugin = ndf.new(None, FakeHandle())
    snapshot = snapshot_of([node("n1")])
    status = plugin.filter(CycleState(), pod_from_json(pod("p")), snapshot.node_info(0))
    assert status is not None
    assert status.code is Code.ERROR


CLUSTER = """\
kind: Node
metadata: {name: old}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
---
kind: Node
metadata: {name: older}
status:
  allocatable: {cpu: "4", memory: 8Gi, pods: "110"}
  declaredFeatures: [VolumeBindMountOptions]
---
kind: Node
metadata: {name: new}
status:
  allocatable: {cpu: "4", memory: 8Gi, pods: "110"}
  declaredFeatures: [RestartAllContainersOnContainerExits]
---
kind: Pod
metadata: {name: restarts, namespace: ns}
spec:
  containers:
  - {name: c, image: x, restartPolicyRules: [{action: RestartAllContainers}]}
---
kind: Pod
metadata: {name: mounts, namespace: ns}
spec:
  hostNetwork: true
  hostUsers: false
  containers: [{name: c, image: x}]
"""


NO_POST_FILTER = """\
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- plugins:
    postFilter:
      disabled: [{name: "*"}]
"""


def test_failed_scheduling_message_through_the_engine(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cluster, config = tmp_path / "cluster.yaml", tmp_path / "config.yaml"
    cluster.write_text(CLUSTER)
    # The default profile without its PostFilter plugins, whose own part of the message
    # (DynamicResources, DefaultPreemption) is not this plugin's.
    config.write_text(NO_POST_FILTER)
    # Exit 3: a pod not placed (docs/cli.md).
    assert main(["simulate", "-f", str(cluster), "--config", str(config)]) == 3
    assert capsys.readouterr().out.splitlines() == [
        "ns/restarts -> new  (evaluated 3 nodes, 1 feasible)",
        "ns/mounts: unschedulable: 0/3 nodes are available: "
        "3 node(s) didn't match Pod's required features.",
    ]
