"""Each plugin's queueing hints, after upstream 1.37's ``Test..._isSchedulableAfter...`` tables
(the case names are upstream's). Wrong object types raise, which the queue turns into Queue."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from corral.scheduler.backend.records import node_from_json, pod_from_json
from corral.scheduler.framework.cluster_events import QueueingHint, QueueingHintFn
from corral.scheduler.framework.types import NodeRecord, PodInfo
from corral.scheduler.plugins import (
    node_affinity,
    node_ports,
    node_resources_fit,
    node_unschedulable,
    pod_topology_spread,
    scheduling_gates,
    taint_toleration,
    volume_restrictions,
    volume_zone,
)
from corral.scheduler.plugins.inter_pod_affinity import queueing as ipa_queueing
from corral.scheduler.plugins.volume_binding import hints as vb_hints
from corral.testing.builders import container, expr, pod_info, required
from corral.testing.framework import FakeHandle

Q, SKIP = QueueingHint.QUEUE, QueueingHint.QUEUE_SKIP
EXT_A, EXT_B = "example.com/aaa", "example.com/bbb"


def _node(
    allocatable: dict[str, str] | None = None,
    *,
    labels: dict[str, str] | None = None,
    taints: list[dict[str, str]] | None = None,
    unschedulable: bool = False,
) -> NodeRecord:
    """A node as upstream's ``st.MakeNode()``: 32 pods, only the given allocatable."""
    spec: dict[str, Any] = {"taints": taints or []}
    if unschedulable:
        spec["unschedulable"] = True
    return node_from_json(
        {
            "metadata": {"name": "n", "labels": labels or {}},
            "spec": spec,
            "status": {"allocatable": {"pods": "32", **(allocatable or {})}},
        }
    )


def _requesting(**requests: str) -> PodInfo:
    return pod_info("p", containers=[container(**requests)])


# --- NodeResourcesFit --------------------------------------------------------------------------


def _fit() -> node_resources_fit.NodeResourcesFit:
    return node_resources_fit.new(None, FakeHandle())


@pytest.mark.parametrize(
    ("deleted", "want"),
    [
        pytest.param(
            pod_info("d", cpu="1", node_name="fake"), Q, id="backoff-on-deleted-assigned-pod"
        ),
        pytest.param(pod_info("d"), SKIP, id="skip-queue-on-unscheduled-pod-deleted"),
    ],
)
def test_fit_after_assigned_pod_delete(deleted: PodInfo, want: QueueingHint) -> None:
    assert _fit().hint_assigned_pod_delete(pod_info("p", cpu="1"), deleted, None) is want


def test_fit_after_nominated_pod_delete() -> None:
    raw = dict(pod_info("d", cpu="2").raw)
    raw["status"] = {"nominatedNodeName": "fake"}
    deleted = pod_from_json(raw)
    assert _fit().hint_assigned_pod_delete(pod_info("p", cpu="1"), deleted, None) is Q


@pytest.mark.parametrize(
    ("pod", "old", "new", "want"),
    [
        pytest.param(
            pod_info("p", cpu="1"),
            pod_info("o", cpu="2"),
            pod_info("o", cpu="1"),
            SKIP,
            id="skip-queue-on-unscheduled-pod",
        ),
        pytest.param(
            pod_info("p", cpu="1"),
            pod_info("o", memory="2", node_name="fake"),
            pod_info("o", memory="1", node_name="fake"),
            SKIP,
            id="skip-queue-on-non-relevant-resource-scale-down",
        ),
        pytest.param(
            pod_info("p", pod_requests={"cpu": "1"}),
            pod_info("o", pod_requests={"memory": "2"}, node_name="fake"),
            pod_info("o", pod_requests={"memory": "1"}, node_name="fake"),
            SKIP,
            id="skip-queue-on-non-relevant-pod-level-resource-scale-down",
        ),
        pytest.param(
            pod_info("p", cpu="1"),
            pod_info("o", cpu="2", node_name="fake"),
            pod_info("o", cpu="1", node_name="fake"),
            Q,
            id="queue-on-relevant-resource-scale-down",
        ),
        pytest.param(
            pod_info("p", pod_requests={"cpu": "1"}),
            pod_info("o", pod_requests={"cpu": "2"}, node_name="fake"),
            pod_info("o", pod_requests={"cpu": "1"}, node_name="fake"),
            Q,
            id="queue-on-relevant-pod-level-resource-scale-down",
        ),
    ],
)
def test_fit_after_assigned_pod_scale_down(
    pod: PodInfo, old: PodInfo, new: PodInfo, want: QueueingHint
) -> None:
    assert _fit().hint_assigned_pod_scale_down(pod, old, new) is want


@pytest.mark.parametrize(
    ("pod", "old", "new", "want"),
    [
        pytest.param(
            _requesting(memory="2"),
            None,
            _node({"memory": "1"}),
            SKIP,
            id="skip-queue-on-node-add-without-sufficient-resources",
        ),
        pytest.param(
            _requesting(**{EXT_A: "1"}),
            None,
            _node({EXT_B: "1"}),
            SKIP,
            id="skip-queue-on-node-add-without-required-resource-type",
        ),
        pytest.param(
            _requesting(memory="2", **{EXT_A: "1"}),
            None,
            _node({"memory": "4", EXT_A: "2"}),
            Q,
            id="queue-on-node-add-with-sufficient-resources",
        ),
        pytest.param(
            _requesting(memory="2", **{EXT_A: "1"}),
            _node({"memory": "2", EXT_A: "2"}),
            _node({"memory": "2", EXT_A: "1", EXT_B: "2"}),
            SKIP,
            id="skip-queue-on-node-unrelated-changes",
        ),
        pytest.param(
            _requesting(memory="2", **{EXT_A: "1"}),
            _node({"memory": "2", EXT_A: "1"}),
            _node({"memory": "2", EXT_A: "2"}),
            Q,
            id="queue-on-pod-requested-resources-increase",
        ),
        pytest.param(
            _requesting(memory="2", **{EXT_A: "1"}),
            _node({"memory": "4", EXT_A: "2"}),
            _node({"memory": "1", EXT_A: "2"}),
            SKIP,
            id="skip-queue-on-node-changes-from-suitable-to-unsuitable",
        ),
        pytest.param(
            _requesting(memory="2", **{EXT_A: "1"}),
            _node({"memory": "1", EXT_A: "2"}),
            _node({"memory": "4", EXT_A: "2"}),
            Q,
            id="queue-on-node-changes-from-unsuitable-to-suitable",
        ),
        pytest.param(
            _requesting(),
            _node({"memory": "1"}, labels={"a": "b"}),
            _node({"memory": "1"}),
            SKIP,
            id="corral: a label change adds no capacity",
        ),
    ],
)
def test_fit_after_node_change(
    pod: PodInfo, old: NodeRecord | None, new: NodeRecord, want: QueueingHint
) -> None:
    assert _fit().hint_node_change(pod, old, new) is want


@pytest.mark.parametrize(
    ("old", "new"),
    [
        pytest.param(None, "not-a-node", id="backoff-wrong-new-object"),
        pytest.param("not-a-node", _node(), id="backoff-wrong-old-object"),
    ],
)
def test_fit_refuses_objects_that_are_not_nodes(old: object, new: object) -> None:
    with pytest.raises(TypeError, match="expected NodeRecord, got str"):
        _fit().hint_node_change(pod_info("p"), old, new)


# --- NodeAffinity -------------------------------------------------------------------------------

_FOO_BAR = {"affinity": required({"matchExpressions": [expr("foo", "In", "bar")]})}
_ADDED = {
    "addedAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [{"matchExpressions": [expr("foo", "In", "bar")]}]
        }
    }
}


@pytest.mark.parametrize(
    ("args", "pod_kwargs", "old", "new", "want"),
    [
        pytest.param(None, _FOO_BAR, None, _node(), SKIP, id="skip-queue-on-add"),
        pytest.param(None, _FOO_BAR, None, _node(labels={"foo": "bar"}), Q, id="queue-on-add"),
        pytest.param(
            None, _FOO_BAR, _node(), _node({"cpu": "1"}), SKIP, id="skip-unrelated-changes"
        ),
        pytest.param(
            None,
            _FOO_BAR,
            _node(),
            _node(labels={"k": "v"}),
            SKIP,
            id="skip-unrelated-changes-on-labels",
        ),
        pytest.param(
            None,
            _FOO_BAR,
            _node(labels={"foo": "bar"}),
            _node(labels={"k": "v"}),
            SKIP,
            id="skip-labels-changes-on-node-from-suitable-to-unsuitable",
        ),
        pytest.param(
            None,
            _FOO_BAR,
            _node(),
            _node(labels={"foo": "bar"}),
            Q,
            id="queue-on-labels-change-makes-pod-schedulable",
        ),
        pytest.param(
            None,
            _FOO_BAR,
            _node(labels={"foo": "bar"}),
            _node({"cpu": "1"}, labels={"foo": "bar"}),
            SKIP,
            id="skip-unrelated-change-that-keeps-pod-schedulable",
        ),
        pytest.param(
            _ADDED, {}, None, _node(), SKIP, id="skip-queue-on-add-scheduler-enforced-node-affinity"
        ),
        pytest.param(
            _ADDED,
            {},
            None,
            _node(labels={"foo": "bar"}),
            Q,
            id="queue-on-add-scheduler-enforced-node-affinity",
        ),
        pytest.param(
            None,
            {"node_selector": {"foo": "bar"}},
            _node(),
            _node(labels={"foo": "bar"}),
            Q,
            id="corral: nodeSelector now matches",
        ),
    ],
)
def test_node_affinity_after_node_change(
    args: Any,
    pod_kwargs: dict[str, Any],
    old: NodeRecord | None,
    new: NodeRecord,
    want: QueueingHint,
) -> None:
    plugin = node_affinity.new(args, FakeHandle())
    assert plugin.hint_node_change(pod_info("p", **pod_kwargs), old, new) is want


# --- NodePorts ----------------------------------------------------------------------------------


def _with_port(name: str, port: int, node_name: str | None = "fake") -> PodInfo:
    ports = [{"containerPort": port, "hostPort": port, "protocol": "TCP"}]
    return pod_info(name, containers=[{"name": "c", "ports": ports}], node_name=node_name)


@pytest.mark.parametrize(
    ("deleted", "want"),
    [
        pytest.param(_with_port("d", 8080), Q, id="queue-on-released-hostport"),
        pytest.param(_with_port("d", 8081), SKIP, id="skip-queue-on-unrelated-hostport"),
        pytest.param(pod_info("d", node_name="fake"), SKIP, id="skip-queue-on-non-hostport"),
        pytest.param(_with_port("d", 8080, None), SKIP, id="skip-queue-on-unscheduled"),
    ],
)
def test_node_ports_after_assigned_pod_deleted(deleted: PodInfo, want: QueueingHint) -> None:
    plugin = node_ports.new(None, FakeHandle())
    pod = _with_port("p", 8080, None)
    assert plugin.hint_assigned_pod_deleted(pod, deleted, None) is want


# --- NodeUnschedulable, TaintToleration, SchedulingGates ----------------------------------------

_TOLERATE_UNSCHEDULABLE = {"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}


@pytest.mark.parametrize(
    ("old", "new", "want"),
    [
        pytest.param(None, _node(), Q, id="queue-on-schedulable-node-added"),
        pytest.param(
            None, _node(unschedulable=True), SKIP, id="skip-queue-on-unschedulable-node-added"
        ),
        pytest.param(
            _node(unschedulable=True), _node(), Q, id="queue-on-unschedulable-field-change"
        ),
        pytest.param(
            _node(), _node(unschedulable=True), SKIP, id="corral: skip-node-became-unschedulable"
        ),
        pytest.param(
            _node(unschedulable=True),
            _node(unschedulable=True, labels={"a": "b"}),
            SKIP,
            id="skip-unrelated-change-unschedulable-true",
        ),
    ],
)
def test_node_unschedulable_after_node_change(
    old: NodeRecord | None, new: NodeRecord, want: QueueingHint
) -> None:
    plugin = node_unschedulable.new(None, FakeHandle())
    assert plugin.hint_node_change(pod_info("p"), old, new) is want


@pytest.mark.parametrize(
    ("tolerations", "want"),
    [
        pytest.param([_TOLERATE_UNSCHEDULABLE], Q, id="queue-when-the-unsched-pod-gets-toleration"),
        pytest.param(
            [{"key": "other", "operator": "Exists"}],
            SKIP,
            id="skip-when-the-unsched-pod-gets-unrelated-toleration",
        ),
    ],
)
def test_node_unschedulable_after_pod_toleration_change(
    tolerations: list[dict[str, str]], want: QueueingHint
) -> None:
    plugin = node_unschedulable.new(None, FakeHandle())
    old, new = pod_info("p"), pod_info("p", tolerations=tolerations)
    assert plugin.hint_target_pod_toleration_change(old, old, new) is want


_TAINT = {"key": "foo", "value": "bar", "effect": "NoSchedule"}


@pytest.mark.parametrize(
    ("tolerations", "old", "new", "want"),
    [
        pytest.param(
            [], None, _node(taints=[_TAINT]), SKIP, id="skip-queue-on-untoleratedtaint-node-added"
        ),
        pytest.param([], None, _node(), Q, id="corral: queue-on-node-added-without-taints"),
        pytest.param(
            [{"key": "foo", "operator": "Equal", "value": "bar", "effect": "NoSchedule"}],
            None,
            _node(taints=[_TAINT]),
            Q,
            id="queue-on-toleratedtaint-node-added",
        ),
        pytest.param([], _node(taints=[_TAINT]), _node(), Q, id="queue-on-taint-change"),
        pytest.param([], _node(), _node(labels={"a": "b"}), SKIP, id="skip-unrelated-change"),
        pytest.param(
            [],
            _node(taints=[_TAINT]),
            _node(taints=[_TAINT, {"key": "x", "effect": "NoExecute"}]),
            SKIP,
            id="corral: skip-still-untolerated",
        ),
    ],
)
def test_taint_toleration_after_node_change(
    tolerations: list[dict[str, str]],
    old: NodeRecord | None,
    new: NodeRecord,
    want: QueueingHint,
) -> None:
    plugin = taint_toleration.new(None, FakeHandle())
    pod = pod_info("p", tolerations=tolerations)
    assert plugin.hint_node_change(pod, old, new) is want


def test_scheduling_gates_register_the_pods_own_gate_removal_without_a_hint() -> None:
    plugin = scheduling_gates.new(None, FakeHandle())
    (registration,) = plugin.events_to_register()
    assert registration.hint is None  # always Queue


# --- InterPodAffinity ---------------------------------------------------------------------------


def _term(key: str, topology: str, *values: str, op: str = "In") -> dict[str, Any]:
    return {
        "labelSelector": {
            "matchExpressions": [{"key": key, "operator": op, "values": list(values)}]
        },
        "topologyKey": topology,
    }


def _ipa_pod(
    name: str = "p",
    *,
    affinity: Sequence[dict[str, Any]] = (),
    anti: Sequence[dict[str, Any]] = (),
    **kwargs: Any,
) -> PodInfo:
    req = "requiredDuringSchedulingIgnoredDuringExecution"
    spec: dict[str, Any] = {}
    if affinity:
        spec["podAffinity"] = {req: list(affinity)}
    if anti:
        spec["podAntiAffinity"] = {req: list(anti)}
    return pod_info(name, affinity=spec or None, **kwargs)


def _nominated(pod: PodInfo) -> PodInfo:
    return pod_from_json({**pod.raw, "status": {"nominatedNodeName": "fake-node"}})


_SCAN = _term("service", "region", "securityscan", "value2")
_EXISTS_AAA = _term("aaa", "hostname", op="Exists")
_EXISTS_BBB = _term("bbb", "hostname", op="Exists")
_BOUND = {"node_name": "fake-node"}


@pytest.mark.parametrize(
    ("pod", "old", "new", "want"),
    [
        pytest.param(
            _ipa_pod(affinity=[_SCAN]),
            None,
            _ipa_pod("o", labels={"service": "securityscan"}, **_BOUND),
            Q,
            id="add a pod which matches the pod affinity",
        ),
        pytest.param(
            _ipa_pod(affinity=[_SCAN]),
            None,
            _ipa_pod("o", labels={"service": "securityscan"}),
            SKIP,
            id="add an un-scheduled pod",
        ),
        pytest.param(
            _ipa_pod(affinity=[_SCAN]),
            None,
            _ipa_pod("o", labels={"aaa": "a"}, **_BOUND),
            SKIP,
            id="add a pod which doesn't match the pod affinity",
        ),
        pytest.param(
            _ipa_pod(affinity=[_SCAN]),
            _ipa_pod("o", labels={"aaa": "a"}, **_BOUND),
            _ipa_pod("o", labels={"service": "securityscan"}, **_BOUND),
            Q,
            id="update a pod from non-match to match pod affinity",
        ),
        pytest.param(
            _ipa_pod(affinity=[_SCAN]),
            _ipa_pod("o", labels={"service": "value2"}, **_BOUND),
            _ipa_pod("o", labels={"service": "securityscan"}, **_BOUND),
            SKIP,
            id="the updating pod matches target pod's affinity both before and after label changes",
        ),
        pytest.param(
            _ipa_pod(affinity=[_SCAN]),
            _ipa_pod("o", labels={"aaa": "a"}),
            _ipa_pod("o", labels={"service": "securityscan"}),
            SKIP,
            id="update an un-scheduled pod",
        ),
        pytest.param(
            _ipa_pod(affinity=[_SCAN]),
            _ipa_pod("o", labels={"service": "securityscan"}, **_BOUND),
            _ipa_pod("o", labels={"aaa": "a"}, **_BOUND),
            SKIP,
            id="update a pod from match to non-match the pod affinity",
        ),
        pytest.param(
            _ipa_pod(affinity=[_EXISTS_AAA, _EXISTS_BBB]),
            _ipa_pod("o", labels={"aaa": "a"}, **_BOUND),
            _ipa_pod("o", labels={"service": "securityscan"}, **_BOUND),
            SKIP,
            id="update a pod from match to non-match pod's affinity - multiple terms case",
        ),
        pytest.param(
            _ipa_pod(affinity=[_EXISTS_AAA, _EXISTS_BBB]),
            _ipa_pod("o", labels={"aaa": "a"}, **_BOUND),
            _ipa_pod("o", labels={"aaa": "", "bbb": ""}, **_BOUND),
            Q,
            id="update a pod from non-match to match pod's affinity - multiple terms case",
        ),
        pytest.param(
            _ipa_pod(anti=[_SCAN]),
            _ipa_pod("o", labels={"service": "securityscan"}, **_BOUND),
            _ipa_pod("o", labels={"service": "aaaa"}, **_BOUND),
            Q,
            id="modify pod label to change it from satisfying pod anti-affinity to not "
            "satisfying anti-affinity",
        ),
        pytest.param(
            _ipa_pod(anti=[_SCAN]),
            _ipa_pod("o", labels={"service": "bbb"}, **_BOUND),
            _ipa_pod("o", labels={"service": "securityscan"}, **_BOUND),
            SKIP,
            id="modify pod label to change it from not satisfying pod anti-affinity to "
            "satisfying anti-affinity",
        ),
        pytest.param(
            _ipa_pod(anti=[_SCAN]),
            _ipa_pod("o", labels={"aaa": "a"}, **_BOUND),
            None,
            SKIP,
            id="delete a pod which doesn't match pod's anti-affinity",
        ),
        pytest.param(
            _ipa_pod(anti=[_SCAN]),
            _ipa_pod("o", labels={"service": "securityscan"}, **_BOUND),
            None,
            Q,
            id="delete a pod which matches pod's anti-affinity",
        ),
        pytest.param(
            _ipa_pod(labels={"service": "securityscan"}),
            _ipa_pod("o", anti=[_SCAN], **_BOUND),
            None,
            Q,
            id="delete a pod with anti-affinity that matches pending pod",
        ),
        pytest.param(
            _ipa_pod(labels={"service": "foo"}),
            _ipa_pod("o", anti=[_SCAN], **_BOUND),
            None,
            SKIP,
            id="delete a pod with anti-affinity that doesn't match pending pod",
        ),
        pytest.param(
            _ipa_pod(anti=[_SCAN]),
            _nominated(_ipa_pod("o", labels={"aaa": "a"})),
            None,
            SKIP,
            id="delete a nominated pod which doesn't match pod's anti-affinity",
        ),
        pytest.param(
            _ipa_pod(anti=[_SCAN]),
            _nominated(_ipa_pod("o", labels={"service": "securityscan"})),
            None,
            Q,
            id="delete a nominated pod which matches pod's anti-affinity",
        ),
    ],
)
def test_inter_pod_affinity_after_assigned_pod_change(
    pod: PodInfo, old: PodInfo | None, new: PodInfo | None, want: QueueingHint
) -> None:
    assert ipa_queueing.after_assigned_pod_change(pod, old, new) is want


_ZONE_AFF = _ipa_pod(affinity=[_term("service", "zone", "securityscan", "value2")])
_REGION_AFF = _ipa_pod(affinity=[_SCAN])
_ZONE_ANTI = _ipa_pod(
    anti=[{"labelSelector": {"matchLabels": {"another": "label"}}, "topologyKey": "zone"}]
)


@pytest.mark.parametrize(
    ("pod", "old", "new", "want"),
    [
        pytest.param(
            _ZONE_AFF,
            None,
            _node(labels={"zone": "zone1"}),
            Q,
            id="add a new node with matched pod affinity topologyKey",
        ),
        pytest.param(
            _REGION_AFF,
            None,
            _node(labels={"zone": "zone1"}),
            SKIP,
            id="add a new node without matched topologyKey",
        ),
        pytest.param(
            _ZONE_AFF,
            _node(labels={"aaa": "a"}),
            _node(labels={"aaa": "b"}),
            SKIP,
            id="update node label but not topologyKey",
        ),
        pytest.param(
            _ZONE_AFF,
            _node(labels={"zone": "zone1"}),
            _node(labels={"zone": "zone1", "unrelated-label": "unrelated"}),
            SKIP,
            id="update node label that isn't related to the pod affinity",
        ),
        pytest.param(
            _ZONE_AFF,
            _node(labels={"zone": "zone1"}),
            _node(labels={"zone": "zone2"}),
            Q,
            id="update node with different affinity topologyKey value",
        ),
        pytest.param(
            _ZONE_AFF,
            _node(labels={"aaa": "a"}),
            _node(labels={"zone": "zone1"}),
            Q,
            id="update node to have the affinity topology label",
        ),
        pytest.param(
            _ZONE_ANTI,
            None,
            _node(labels={"zone": "zone1"}),
            Q,
            id="add a new node with matched pod anti-affinity topologyKey",
        ),
        pytest.param(
            _ZONE_ANTI,
            None,
            _node(),
            Q,
            id="add a new node without matched pod anti-affinity topologyKey",
        ),
        pytest.param(
            _ZONE_ANTI,
            _node(labels={"zone": "zone1"}),
            _node(labels={"zone": "zone1", "unrelated-label": "unrelated"}),
            SKIP,
            id="update node label that isn't related to the pod anti-affinity",
        ),
        pytest.param(
            _ZONE_ANTI,
            _node(labels={"zone": "zone1"}),
            _node(labels={"zone": "zone2"}),
            Q,
            id="update node with different anti-affinity topologyKey value",
        ),
        pytest.param(
            _ZONE_ANTI,
            _node(labels={"aaa": "a"}),
            _node(labels={"zone": "zone1"}),
            SKIP,
            id="update node to have the anti-affinity topology label",
        ),
        pytest.param(
            _ZONE_ANTI,
            _node(labels={"zone": "zone1"}),
            _node(labels={"aaa": "a"}),
            Q,
            id="update node label not to have anti-affinity topology label",
        ),
    ],
)
def test_inter_pod_affinity_after_node_change(
    pod: PodInfo, old: NodeRecord | None, new: NodeRecord, want: QueueingHint
) -> None:
    assert ipa_queueing.after_node_change(pod, old, new) is want


# --- PodTopologySpread --------------------------------------------------------------------------


def _spread(*keys: str, **kwargs: Any) -> PodInfo:
    constraints = [
        {
            "maxSkew": 1,
            "topologyKey": key,
            "whenUnsatisfiable": "DoNotSchedule",
            "labelSelector": {"matchExpressions": [{"key": "foo", "operator": "Exists"}]},
        }
        for key in keys
    ]
    raw = dict(pod_info("p", **kwargs).raw)
    raw["spec"] = {**raw["spec"], "topologySpreadConstraints": constraints}
    return pod_from_json(raw)


_NO_SCHEDULE = "NoSchedule"


@pytest.mark.parametrize(
    ("pod", "old", "new", "want"),
    [
        pytest.param(
            _spread("zone"),
            _node(labels={"zone": "zone1"}),
            _node(labels={"zone": "zone2"}),
            Q,
            id="node updates label which matches topologyKey",
        ),
        pytest.param(
            _spread("zone"),
            _node(labels={"foo": "bar1"}),
            _node(labels={"foo": "bar2"}),
            SKIP,
            id="node that doesn't match topologySpreadConstraints updates non-related label",
        ),
        pytest.param(
            _spread("zone", "node"),
            _node(labels={"zone": "zone1", "node": "node1", "foo": "bar"}),
            _node(labels={"zone": "zone1", "node": "node1"}),
            SKIP,
            id="node that match topologySpreadConstraints adds non-related label",
        ),
        pytest.param(
            _spread("zone"),
            None,
            _node(labels={"foo": "bar"}),
            SKIP,
            id="create node with non-related labels",
        ),
        pytest.param(
            _spread("zone"),
            None,
            _node(labels={"zone": "zone1"}),
            Q,
            id="create node with related labels",
        ),
        pytest.param(
            _spread("zone"),
            _node(labels={"foo": "bar"}),
            None,
            SKIP,
            id="delete node with non-related labels",
        ),
        pytest.param(
            _spread("zone"),
            _node(labels={"zone": "zone1"}),
            None,
            Q,
            id="delete node with related labels",
        ),
        pytest.param(
            _spread("zone", "node"),
            None,
            _node(labels={"zone": "zone1"}),
            SKIP,
            id="add node with related labels that only match one of topologySpreadConstraints",
        ),
        pytest.param(
            _spread("zone", "node"),
            None,
            _node(labels={"zone": "zone1", "node": "node1"}),
            Q,
            id="add node with related labels that match all topologySpreadConstraints",
        ),
        pytest.param(
            _spread("zone", "node"),
            _node(labels={"zone": "zone1"}),
            _node(labels={"zone": "zone1"}),
            SKIP,
            id="update node with related labels that only match one of topologySpreadConstraints",
        ),
        pytest.param(
            _spread("zone", "node"),
            _node(labels={"zone": "zone1", "node": "node1"}),
            _node(labels={"zone": "zone1", "node": "node2"}),
            Q,
            id="update node with related labels that match all topologySpreadConstraints",
        ),
        pytest.param(
            _spread("zone", "node"),
            _node(
                labels={"zone": "zone1", "node": "node1"},
                taints=[{"key": "aaa", "value": "bbb", "effect": _NO_SCHEDULE}],
            ),
            _node(
                labels={"zone": "zone1", "node": "node1"},
                taints=[{"key": "ccc", "value": "bbb", "effect": _NO_SCHEDULE}],
            ),
            Q,
            id="update node with different taints that match all topologySpreadConstraints",
        ),
        pytest.param(
            _spread("zone", "node"),
            _node(
                labels={"node": "node1"},
                taints=[{"key": "aaa", "value": "bbb", "effect": _NO_SCHEDULE}],
            ),
            _node(
                labels={"node": "node1"},
                taints=[{"key": "ccc", "value": "bbb", "effect": _NO_SCHEDULE}],
            ),
            SKIP,
            id="update node with different taints that only match one of topologySpreadConstraints",
        ),
    ],
)
def test_pod_topology_spread_after_node_change(
    pod: PodInfo, old: NodeRecord | None, new: NodeRecord | None, want: QueueingHint
) -> None:
    plugin = pod_topology_spread.new(None, FakeHandle())
    assert plugin.hint_node_change(pod, old, new) is want


_PTS_BOUND = {"node_name": "fake-node"}


@pytest.mark.parametrize(
    ("old", "new", "want"),
    [
        pytest.param(
            None,
            pod_info("o", labels={"foo": ""}, **_PTS_BOUND),
            Q,
            id="add pod with labels match topologySpreadConstraints selector",
        ),
        pytest.param(None, pod_info("o", labels={"foo": ""}), SKIP, id="add un-scheduled pod"),
        pytest.param(
            None,
            pod_info("o", labels={"bar": ""}, **_PTS_BOUND),
            SKIP,
            id="add pod with labels don't match topologySpreadConstraints selector",
        ),
        pytest.param(
            None,
            pod_info("o", namespace="other", labels={"foo": ""}, **_PTS_BOUND),
            SKIP,
            id="add pod with different namespace",
        ),
        pytest.param(
            pod_info("o", labels={"foo": ""}, **_PTS_BOUND),
            None,
            Q,
            id="delete pod with labels that match topologySpreadConstraints selector",
        ),
        pytest.param(
            pod_info("o", labels={"bar": ""}, **_PTS_BOUND),
            None,
            SKIP,
            id="delete pod with labels that don't match topologySpreadConstraints selector",
        ),
        pytest.param(
            pod_info("o", labels={"foo": ""}, **_PTS_BOUND),
            pod_info("o", labels={"bar": ""}, **_PTS_BOUND),
            Q,
            id="delete pod label that matches topologySpreadConstraints selector",
        ),
        pytest.param(
            pod_info("o", labels={"foo": "a"}, **_PTS_BOUND),
            pod_info("o", labels={"foo": "b"}, **_PTS_BOUND),
            SKIP,
            id="change pod's label that matches topologySpreadConstraints selector",
        ),
        pytest.param(
            pod_info("o", labels={"foo": ""}, **_PTS_BOUND),
            pod_info("o", labels={"foo": "", "bar": ""}, **_PTS_BOUND),
            SKIP,
            id="update pod's non-related label",
        ),
    ],
)
def test_pod_topology_spread_after_assigned_pod_change(
    old: PodInfo | None, new: PodInfo | None, want: QueueingHint
) -> None:
    plugin = pod_topology_spread.new(None, FakeHandle())
    assert plugin.hint_assigned_pod_change(_spread("zone"), old, new) is want


@pytest.mark.parametrize(
    ("old", "new", "want"),
    [
        pytest.param(
            pod_info("p", labels={"foo": ""}),
            pod_info("p", labels={"bar": ""}),
            Q,
            id="pod's labels no longer match the selector",
        ),
        pytest.param(
            pod_info("p", labels={"foo": "a"}),
            pod_info("p", labels={"foo": "b"}),
            SKIP,
            id="pod's labels still match the selector",
        ),
    ],
)
def test_pod_topology_spread_after_target_pod_change(
    old: PodInfo, new: PodInfo, want: QueueingHint
) -> None:
    plugin = pod_topology_spread.new(None, FakeHandle())
    assert plugin.hint_target_pod_change(_spread("zone"), old, new) is want


# --- VolumeRestrictions -------------------------------------------------------------------------


def _with_volumes(name: str, *vols: dict[str, Any], **kwargs: Any) -> PodInfo:
    raw = dict(pod_info(name, **kwargs).raw)
    raw["spec"] = {**raw["spec"], "volumes": list(vols)}
    return pod_from_json(raw)


_GCE = {"name": "v", "gcePersistentDisk": {"pdName": "disk"}}
_OTHER_GCE = {"name": "v", "gcePersistentDisk": {"pdName": "other"}}
_CLAIM = {"name": "c", "persistentVolumeClaim": {"claimName": "claim"}}
_OTHER_CLAIM = {"name": "c", "persistentVolumeClaim": {"claimName": "other"}}


@pytest.mark.parametrize(
    ("pod", "deleted", "want"),
    [
        pytest.param(
            _with_volumes("p", _GCE),
            _with_volumes("d", _GCE, **_BOUND),
            Q,
            id="queue-on-deleted-pod-with-conflicting-volume",
        ),
        pytest.param(
            _with_volumes("p", _GCE),
            _with_volumes("d", _OTHER_GCE, **_BOUND),
            SKIP,
            id="skip-queue-on-deleted-pod-without-conflict",
        ),
        pytest.param(
            _with_volumes("p", _CLAIM),
            _with_volumes("d", _CLAIM, **_BOUND),
            Q,
            id="queue-on-deleted-pod-using-the-same-pvc",
        ),
        pytest.param(
            _with_volumes("p", _CLAIM),
            _with_volumes("d", _OTHER_CLAIM, **_BOUND),
            SKIP,
            id="skip-queue-on-deleted-pod-using-another-pvc",
        ),
        pytest.param(
            _with_volumes("p", _CLAIM),
            _with_volumes("d", _CLAIM, namespace="other", **_BOUND),
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
    assert plugin.hint_claim_added(_with_volumes("p", _CLAIM), None, claim) is want


# --- VolumeZone ---------------------------------------------------------------------------------

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
    assert fn(_with_volumes("p", _CLAIM), old, new) is want


# --- VolumeBinding ------------------------------------------------------------------------------

_EPHEMERAL = {"name": "scratch", "ephemeral": {"volumeClaimTemplate": {"spec": {}}}}
_INLINE_CSI = {"name": "i", "csi": {"driver": "csi.example.com"}}


def _obj(name: str, namespace: str | None = None, **fields: Any) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name}
    if namespace is not None:
        meta["namespace"] = namespace
    return {"metadata": meta, **fields}


def _capacity(**fields: str) -> dict[str, Any]:
    return _obj("cap", "kube-system", **fields)


def _driver(capacity: bool) -> dict[str, Any]:
    return _obj("csi.example.com", spec={"storageCapacity": capacity})


_VB_POD = _with_volumes("p", _CLAIM, _EPHEMERAL, _INLINE_CSI)


@pytest.mark.parametrize(
    ("hint", "old", "new", "want"),
    [
        pytest.param(
            vb_hints.after_claim_change,
            None,
            _obj("claim", "default"),
            Q,
            id="queue-on-pvc-the-pod-uses",
        ),
        pytest.param(
            vb_hints.after_claim_change,
            None,
            _obj("p-scratch", "default"),
            Q,
            id="queue-on-generic-ephemeral-pvc",
        ),
        pytest.param(
            vb_hints.after_claim_change,
            None,
            _obj("claim", "other"),
            SKIP,
            id="skip-queue-on-pvc-in-another-namespace",
        ),
        pytest.param(
            vb_hints.after_claim_change,
            None,
            _obj("other", "default"),
            SKIP,
            id="skip-queue-on-unrelated-pvc",
        ),
        pytest.param(
            vb_hints.after_class_change, None, _obj("sc"), Q, id="queue-on-storage-class-added"
        ),
        pytest.param(
            vb_hints.after_class_change,
            _obj("sc", allowedTopologies=[]),
            _obj("sc", allowedTopologies=[{"matchLabelExpressions": []}]),
            Q,
            id="queue-on-allowed-topologies-changed",
        ),
        pytest.param(
            vb_hints.after_class_change,
            _obj("sc", parameters={"a": "1"}),
            _obj("sc", parameters={"a": "2"}),
            SKIP,
            id="skip-queue-on-unrelated-storage-class-change",
        ),
        pytest.param(
            vb_hints.after_csi_node_change, None, _obj("n"), Q, id="queue-on-csinode-added"
        ),
        pytest.param(
            vb_hints.after_csi_node_change,
            _obj("n"),
            {"metadata": {"name": "n", "annotations": {vb_hints.MIGRATED_PLUGINS: "x"}}},
            Q,
            id="queue-on-migrated-plugins-changed",
        ),
        pytest.param(
            vb_hints.after_csi_node_change,
            _obj("n"),
            _obj("n", spec={}),
            SKIP,
            id="skip-queue-on-unrelated-csinode-change",
        ),
        pytest.param(
            vb_hints.after_capacity_change,
            None,
            _capacity(capacity="1Gi"),
            Q,
            id="queue-on-capacity-added",
        ),
        pytest.param(
            vb_hints.after_capacity_change,
            _capacity(capacity="1Gi"),
            _capacity(capacity="2Gi"),
            Q,
            id="queue-on-capacity-increased",
        ),
        pytest.param(
            vb_hints.after_capacity_change,
            _capacity(capacity="2Gi"),
            _capacity(capacity="1Gi"),
            SKIP,
            id="skip-queue-on-capacity-decreased",
        ),
        pytest.param(
            vb_hints.after_capacity_change,
            _capacity(capacity="1Gi", maximumVolumeSize="1Gi"),
            _capacity(capacity="5Gi", maximumVolumeSize="1Gi"),
            SKIP,
            id="skip-queue-on-capacity-increased-but-maximum-volume-size-same",
        ),
        pytest.param(
            vb_hints.after_csi_driver_change,
            _driver(True),
            _driver(False),
            Q,
            id="queue-on-csidriver-storage-capacity-disabled",
        ),
        pytest.param(
            vb_hints.after_csi_driver_change,
            _driver(False),
            _driver(True),
            SKIP,
            id="skip-queue-on-csidriver-storage-capacity-enabled",
        ),
    ],
)
def test_volume_binding_hints(
    hint: QueueingHintFn, old: object, new: object, want: QueueingHint
) -> None:
    assert hint(_VB_POD, old, new) is want
