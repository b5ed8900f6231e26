"""Coscheduling (scheduler-plugins): transcribed from SP (kubernetes-sigs/scheduler-plugins at
903da7df) ``apis/config/validation/validation_plugingargs_test.go``
(TestValidateCoschedulingArgs), ``apis/config/v1/defaults_test.go``,
``apis/config/scheme/scheme_test.go`` (the unknown-field row),
``pkg/coscheduling/core/core_test.go`` (TestPreFilter, TestPermit, TestCheckClusterResource,
TestMarkAndClearPodGroupScheduleFailure) and ``pkg/coscheduling/coscheduling_test.go``
(TestPodGroupBackoffTime, TestLess, TestPermit, TestLessAfterScheduleFailure, TestPostFilter,
TestPostFilterRejectThreshold); SP's row names are the ids. Rows marked "corral:" are Corral's
own (waiting pods, the pod lister, timeouts, messages)."""

from __future__ import annotations

import datetime
from collections.abc import Sequence
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
import yaml

from corral.api import load_profile
from corral.render import render
from corral.scheduler.backend.objects import ADDED, WATCHED
from corral.scheduler.backend.pod_labels import PodLabelIndex
from corral.scheduler.backend.queue import SchedulingQueue
from corral.scheduler.backend.records import pod_from_json
from corral.scheduler.config import plugin_args
from corral.scheduler.config.declarations import BY_NAME
from corral.scheduler.config.errors import ValidationError
from corral.scheduler.framework import listers
from corral.scheduler.framework.cluster_events import (
    ASSIGNED_POD,
    UNSCHEDULED_POD,
    UNSCHEDULED_POD_ADD,
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    QueueingHint,
)
from corral.scheduler.framework.cycle_state import CycleState
from corral.scheduler.framework.diagnosis import NodeToStatus
from corral.scheduler.framework.runtime.waiting_pods import WaitingPod
from corral.scheduler.framework.status import Code, Status
from corral.scheduler.framework.types import PodInfo, QueuedPodInfo
from corral.scheduler.plugins import coscheduling as cs
from corral.testing.builders import node, pod, snapshot_of
from corral.testing.framework import FakeHandle

LABEL = cs.POD_GROUP_LABEL
NOW = 1_800_000_000.0
LOW, HIGH = 10, 100


def _stamp(at: float) -> str:
    return datetime.datetime.fromtimestamp(at, datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def sp_group(
    name: str,
    namespace: str = "ns",
    min_member: int = 0,
    *,
    min_resources: dict[str, str] | None = None,
    created: float | None = None,
    timeout: int | None = None,
) -> dict[str, Any]:
    """A scheduling.x-k8s.io/v1alpha1 PodGroup (SP test/util MakePodGroup)."""
    spec: dict[str, Any] = {"minMember": min_member}
    if min_resources is not None:
        spec["minResources"] = min_resources
    if timeout is not None:
        spec["scheduleTimeoutSeconds"] = timeout
    meta: dict[str, Any] = {"name": name, "namespace": namespace}
    if created is not None:
        meta["creationTimestamp"] = _stamp(created)
    return {"apiVersion": "scheduling.x-k8s.io/v1alpha1", "kind": "PodGroup", "metadata": meta,
            "spec": spec}  # fmt: skip


def member(name: str, group: str | None = None, namespace: str = "ns", **kw: Any) -> dict[str, Any]:
    return pod(name, namespace=namespace, labels={LABEL: group} if group else None, **kw)


def info(raw: dict[str, Any]) -> PodInfo:
    return pod_from_json(raw)


class Clock:
    def __init__(self, now: float = NOW) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def plugin(
    groups: Sequence[dict[str, Any]] = (),
    pods: Sequence[dict[str, Any]] = (),
    *,
    args: dict[str, Any] | None = None,
    clock: Clock | None = None,
) -> tuple[cs.Coscheduling, FakeHandle]:
    """The plugin over an object store holding ``groups`` and a pod lister holding ``pods``."""
    index = PodLabelIndex([LABEL])
    for raw in pods:
        index.put(info(raw))
    handle = FakeHandle(pod_lister=index)
    for g in groups:
        handle.objects.apply(listers.SP_POD_GROUP, ADDED, g)
    typed = plugin_args(cs.NAME, args)
    return cs.Coscheduling(typed, handle, clock=clock or Clock(), wall_offset=0.0), handle


def _codes(status: Status | None) -> tuple[Code, tuple[str, ...]]:
    return (Code.SUCCESS, ()) if status is None else (status.code, tuple(status.reasons))


# --- args -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "message"),
    [
        pytest.param(
            {"permitWaitingTimeSeconds": 30, "podGroupBackoffSeconds": 60,
             "podGroupRejectPercentage": 10},
            None,
            id="correct config with valid values",
        ),
        pytest.param(
            {"permitWaitingTimeSeconds": 30, "podGroupBackoffSeconds": 0,
             "podGroupRejectPercentage": 0},
            None,
            id="valid PodGroupRejectPercentage at boundaries",
        ),
        pytest.param(
            {"permitWaitingTimeSeconds": 30, "podGroupBackoffSeconds": 0,
             "podGroupRejectPercentage": 100},
            None,
            id="valid PodGroupRejectPercentage at upper boundary",
        ),
        pytest.param(
            {"permitWaitingTimeSeconds": -10, "podGroupBackoffSeconds": 60,
             "podGroupRejectPercentage": 10},
            ["permitWaitingTimeSeconds: -10: must be greater than 0"],
            id="invalid PermitWaitingTimeSeconds (negative value)",
        ),
        pytest.param(
            {"permitWaitingTimeSeconds": 30, "podGroupBackoffSeconds": -20,
             "podGroupRejectPercentage": 10},
            ["podGroupBackoffSeconds: -20: must be greater than 0"],
            id="invalid PodGroupBackoffSeconds (negative value)",
        ),
        pytest.param(
            {"permitWaitingTimeSeconds": 30, "podGroupBackoffSeconds": 0,
             "podGroupRejectPercentage": -1},
            ["podGroupRejectPercentage: -1: must be between 0 and 100"],
            id="invalid PodGroupRejectPercentage (negative value)",
        ),
        pytest.param(
            {"permitWaitingTimeSeconds": 30, "podGroupBackoffSeconds": 0,
             "podGroupRejectPercentage": 150},
            ["podGroupRejectPercentage: 150: must be between 0 and 100"],
            id="invalid PodGroupRejectPercentage (greater than 100)",
        ),
        pytest.param(
            {"permitWaitingTimeSeconds": -30, "podGroupBackoffSeconds": -20,
             "podGroupRejectPercentage": 10},
            ["permitWaitingTimeSeconds: -30: must be greater than 0",
             "podGroupBackoffSeconds: -20: must be greater than 0"],
            id="both PermitWaitingTimeSeconds and PodGroupBackoffSeconds are negative",
        ),
        pytest.param(
            {"kubeConfigPath": "/var/run/kubernetes/kube.config"},
            ["kubeConfigPath: unknown field; allowed fields: permitWaitingTimeSeconds, "
             "podGroupBackoffSeconds, podGroupRejectPercentage"],
            id="coscheduling plugin args illegal to get validation error",
        ),
    ],
)  # fmt: skip
def test_coscheduling_validate_args(args: dict[str, Any], message: list[str] | None) -> None:
    if message is None:
        cs.new(args, FakeHandle())
        return
    with pytest.raises(ValidationError) as err:
        cs.new(args, FakeHandle())
    got = [str(e) for e in err.value.errors]
    assert got == message


@pytest.mark.parametrize(
    ("args", "want"),
    [
        pytest.param(None, (60, 0, 0.1), id="empty config CoschedulingArgs"),
        pytest.param(
            {"permitWaitingTimeSeconds": 60, "podGroupBackoffSeconds": 20,
             "podGroupRejectPercentage": 50},
            (60, 20, 0.5),
            id="set non default CoschedulingArgs",
        ),
    ],
)  # fmt: skip
def test_coscheduling_args_defaults(
    args: dict[str, Any] | None, want: tuple[int, int, float]
) -> None:
    p = cs.new(args, FakeHandle())
    assert (p.permit_waiting_time_seconds, p.backoff_seconds, p.reject_threshold) == want


# --- PreFilter (core_test.go TestPreFilter) ---------------------------------------------------

_NODES_4CPU = [node("node-a", cpu="4"), node("node-b", cpu="4")]


@pytest.mark.parametrize(
    ("target", "pending", "groups", "success"),
    [
        pytest.param(
            pod("p"),
            [member("p1", "pg1"), member("p2", "pg2")],
            [sp_group("pg1", min_member=1), sp_group("pg2", min_member=1)],
            True,
            id="pod does not belong to any pg",
        ),
        pytest.param(
            member("p", "pg-non-existent"), [], [sp_group("pg1", min_member=1)], True,
            id="pod belongs to a non-existent pg",
        ),
        pytest.param(
            member("p", "pg1"),
            [member("pg2-1", "pg2")],
            [sp_group("pg1", min_member=2), sp_group("pg2", min_member=2)],
            False,
            id="pod count less than minMember",
        ),
        pytest.param(
            member("p1a", "pg1"),
            [member("p1b", "pg1"), member("p1c", "pg1")],
            [sp_group("pg1", min_member=2), sp_group("pg2", min_member=2)],
            True,
            id="pod count equal minMember",
        ),
        pytest.param(
            member("p1a", "pg1"),
            [member("p1b", "pg1"), member("p1c", "pg1")],
            [sp_group("pg1", min_member=2), sp_group("pg2", min_member=2)],
            True,
            id="pod count more than minMember",
        ),
        pytest.param(
            member("p1a", "pg1"),
            [member("p1b", "pg1"), member("p1c", "pg1", gates=["example-gate"])],
            [sp_group("pg1", min_member=2)],
            True,
            id="gated pods but still meeting quorum (minMember < replicas)",
        ),
        pytest.param(
            member("p1a", "pg1"),
            [member("p1b", "pg1", gates=["example-gate"]), member("p1c", "pg1")],
            [sp_group("pg1", min_member=3)],
            False,
            id="gated pods push group below quorum",
        ),
        pytest.param(
            member("p1a", "pg1"),
            [member("p1b", "pg1", gates=["example-gate"]),
             member("p1c", "pg1", gates=["example-gate"])],
            [sp_group("pg1", min_member=2)],
            False,
            id="all sibling pods are gated",
        ),
        pytest.param(
            member("p1a", "pg1"),
            [member("p1b", "pg1"), member("p1c", "pg1")],
            [sp_group("pg1", min_member=2, min_resources={"cpu": "6"})],
            True,
            id="cluster's resource satisfies minResource",
        ),
        pytest.param(
            member("p1a", "pg1"),
            [member("p1b", "pg1"), member("p1c", "pg1")],
            [sp_group("pg1", min_member=2, min_resources={"cpu": "10"})],
            False,
            id="cluster's resource cannot satisfy minResource",
        ),
    ],
)  # fmt: skip
def test_coscheduling_core_pre_filter(
    target: dict[str, Any],
    pending: list[dict[str, Any]],
    groups: list[dict[str, Any]],
    success: bool,
) -> None:
    p, _ = plugin(groups, [*pending, target])
    _, status = p.pre_filter(CycleState(), info(target), snapshot_of(_NODES_4CPU))
    assert (status is None) == success, status
    if status is not None:
        assert status.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE


@pytest.mark.parametrize(
    ("target", "pending", "groups", "want"),
    [
        pytest.param(
            member("p", "pg1"), [member("pg2-1", "pg2")],
            [sp_group("pg1", min_member=2)],
            "pre-filter pod p cannot find enough sibling pods, current pods number: 1, "
            "minMember of group: 2",
            id="corral: the siblings' message",
        ),
        pytest.param(
            member("p1a", "pg1"), [member("p1b", "pg1", gates=["g"])],
            [sp_group("pg1", min_member=2)],
            "pre-filter pod p1a cannot proceed due to gated pods in the same PodGroup",
            id="corral: the gated message",
        ),
        pytest.param(
            member("p1a", "pg1"), [member("p1b", "pg1")],
            [sp_group("pg1", min_member=2, min_resources={"cpu": "10", "memory": "1Gi"})],
            "resource gap: map[cpu:2]",
            id="corral: the resource gap's message names what is still missing",
        ),
        pytest.param(
            member("p1a", "pg1"), [member("p1b", "pg1")],
            [sp_group("pg1", min_member=300)],
            "pre-filter pod p1a cannot find enough sibling pods, current pods number: 2, "
            "minMember of group: 300",
            id="corral: pods count toward minResources (minMember pods) only after the count",
        ),
        pytest.param(
            member("p1a", "pg1"), [member("p1b", "pg1")],
            [sp_group("pg1", min_member=2, min_resources={"nvidia.com/gpu": "1"})],
            "resource gap: map[nvidia.com/gpu:1]",
            id="corral: a resource no node has is the whole gap",
        ),
    ],
)  # fmt: skip
def test_coscheduling_pre_filter_messages(
    target: dict[str, Any], pending: list[dict[str, Any]], groups: list[dict[str, Any]], want: str
) -> None:
    p, _ = plugin(groups, [*pending, target])
    nodes = [node("node-a", cpu="4", pods="110"), node("node-b", cpu="4")]
    _, status = p.pre_filter(CycleState(), info(target), snapshot_of(nodes))
    assert _codes(status) == (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (want,))


def test_coscheduling_min_resources_pass_is_remembered_for_permit_waiting_time() -> None:
    # corral: SP caches a minResources pass (permittedPG) for permitWaitingTimeSeconds; the
    # nodes filling up meanwhile does not fail the group again until it expires.
    clock = Clock()
    group = sp_group("pg1", min_member=1, min_resources={"cpu": "6"})
    target = member("p", "pg1")
    p, _ = plugin([group], [target], args={"permitWaitingTimeSeconds": 10}, clock=clock)
    assert p.pre_filter(CycleState(), info(target), snapshot_of(_NODES_4CPU))[1] is None
    full = snapshot_of(_NODES_4CPU, [pod("x", cpu="4", node_name="node-a")])
    clock.now += 9
    assert p.pre_filter(CycleState(), info(target), full)[1] is None
    clock.now += 2
    assert _codes(p.pre_filter(CycleState(), info(target), full)[1]) == (
        Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ("resource gap: map[cpu:2]",),
    )  # fmt: skip


# --- CheckClusterResource (core_test.go) ------------------------------------------------------

_NODES_3CPU = [node("node-a", cpu="3"), node("node-b", cpu="3")]


@pytest.mark.parametrize(
    ("existing", "want"),
    [
        pytest.param(
            [pod("p1", cpu="2", node_name="node-a", namespace="ns")], True,
            id="Cluster resource enough",
        ),
        pytest.param(
            [pod("p1", cpu="2", node_name="node-a", namespace="ns"),
             pod("p2", cpu="1", node_name="node-b", namespace="ns")],
            False,
            id="Cluster resource not enough",
        ),
        pytest.param(
            [member("p1", "pg1", cpu="2", node_name="node-a"),
             pod("p2", cpu="1", node_name="node-b", namespace="ns")],
            True,
            id="Cluster resource enough as p1's resource needs to be excluded from minResources",
        ),
    ],
)  # fmt: skip
def test_coscheduling_check_cluster_resource(existing: list[dict[str, Any]], want: bool) -> None:
    nodes = snapshot_of(_NODES_3CPU, existing).node_infos()
    got = cs.check_cluster_resource(nodes, {"cpu": Fraction(4)}, "ns/pg1")
    assert (got is None) == want, got


# --- Permit ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("target", "existing", "groups", "want"),
    [
        pytest.param(
            pod("p", namespace="ns"), [], [sp_group("pg1", min_member=2)], Code.SUCCESS,
            id="pod does not belong to any pg",
        ),
        pytest.param(
            member("p", "pg-non-existent"), [], [sp_group("pg1", min_member=2)],
            Code.UNSCHEDULABLE,
            id="pod specifies a non-existent pg",
        ),
        pytest.param(
            member("p", "pg1"), [], [sp_group("pg1", min_member=2)], Code.WAIT,
            id="pod belongs to a pg that doesn't have quorum",
        ),
        pytest.param(
            member("p1a", "pg1"), [member("p1b", "pg1", node_name="node")],
            [sp_group("pg1", min_member=2)], Code.SUCCESS,
            id="pod belongs to a pg that have quorum satisfied",
        ),
        # coscheduling_test.go TestPermit
        pytest.param(
            pod("p", namespace="ns"), [],
            [sp_group("pg1", min_member=1), sp_group("pg2", min_member=2)], Code.SUCCESS,
            id="pods do not belong to any podGroup",
        ),
        pytest.param(
            member("p", "pg2"), [],
            [sp_group("pg1", min_member=1), sp_group("pg2", min_member=2)], Code.WAIT,
            id="pods belong to a pg1, but quorum not satisfied",
        ),
        pytest.param(
            member("p", "pg1"), [],
            [sp_group("pg1", min_member=1), sp_group("pg2", min_member=2)], Code.SUCCESS,
            id="pods belong to a podGroup, and quorum satisfied",
        ),
    ],
)  # fmt: skip
def test_coscheduling_permit(
    target: dict[str, Any],
    existing: list[dict[str, Any]],
    groups: list[dict[str, Any]],
    want: Code,
) -> None:
    p, _ = plugin(groups, [*existing, target])
    status, _ = p.permit(CycleState(), info(target), "node")
    assert _codes(status)[0] == want
    if want == Code.UNSCHEDULABLE:
        assert _codes(status) == (Code.UNSCHEDULABLE, (cs.ERR_POD_GROUP_NOT_FOUND,))


@pytest.mark.parametrize(
    ("group_timeout", "args_timeout", "want"),
    [
        pytest.param(5, 30, 5.0, id="corral: the PodGroup's scheduleTimeoutSeconds first"),
        pytest.param(None, 30, 30.0, id="corral: else permitWaitingTimeSeconds"),
        pytest.param(None, 0, 60.0, id="corral: else 60 seconds"),
        pytest.param(0, 30, 0.0, id="corral: a zero scheduleTimeoutSeconds is kept"),
    ],
)  # fmt: skip
def test_coscheduling_permit_wait_time(
    group_timeout: int | None, args_timeout: int, want: float
) -> None:
    target = member("p", "pg1")
    p, _ = plugin(
        [sp_group("pg1", min_member=2, timeout=group_timeout)], [target, member("q", "pg1")],
        args={"permitWaitingTimeSeconds": args_timeout},
    )  # fmt: skip
    status, wait = p.permit(CycleState(), info(target), "node")
    assert _codes(status)[0] == Code.WAIT
    assert wait == want


def _wait(handle: FakeHandle, raw: dict[str, Any], clock: Clock) -> WaitingPod:
    waiting = WaitingPod(info(raw), {cs.NAME: 60.0}, clock)
    handle.waiting[waiting.pod.uid] = waiting
    return waiting


def test_coscheduling_quorum_allows_every_waiting_sibling_only() -> None:
    # corral: the pod completing minMember allows the group's waiting pods, not another
    # group's, nor a same-named group in another namespace.
    clock = Clock()
    a, b, c = member("a", "pg1"), member("b", "pg1"), member("c", "pg1")
    other, elsewhere = member("o", "pg2"), member("e", "pg1", namespace="ns2")
    p, handle = plugin(
        [sp_group("pg1", min_member=3), sp_group("pg2", min_member=2),
         sp_group("pg1", "ns2", min_member=2)],
        [a, b, c, other, elsewhere],
    )  # fmt: skip
    for raw in (a, b, other, elsewhere):
        assert _codes(p.permit(CycleState(), info(raw), "n")[0])[0] == Code.WAIT
        _wait(handle, raw, clock)
    waiting = dict(handle.waiting)
    assert p.permit(CycleState(), info(c), "n")[0] is None
    assert waiting[info(a).uid].pending_plugins() == []
    assert waiting[info(b).uid].pending_plugins() == []
    assert waiting[info(other).uid].pending_plugins() == [cs.NAME]
    assert waiting[info(elsewhere).uid].pending_plugins() == [cs.NAME]


def test_coscheduling_first_assigned_pod_activates_its_pending_siblings_once() -> None:
    # corral (SP #682): only the first assigned pod activates the others; bound ones are not.
    a, b, c = member("a", "pg1"), member("b", "pg1"), member("c", "pg1")
    bound = member("d", "pg1", node_name="node")
    p, handle = plugin([sp_group("pg1", min_member=5)], [a, b, c, bound])
    # The bound pod is assigned already, so the first pod permitted here is the second one.
    p.permit(CycleState(), info(a), "n")
    assert handle.activated == []
    clock = Clock()
    q, handle = plugin([sp_group("pg1", min_member=5)], [a, b, c], clock=clock)
    q.permit(CycleState(), info(a), "n")
    _wait(handle, a, clock)
    assert sorted(handle.activated) == sorted([info(b).uid, info(c).uid])
    q.permit(CycleState(), info(b), "n")
    assert sorted(handle.activated) == sorted([info(b).uid, info(c).uid])


def test_coscheduling_deleted_pod_stops_counting_as_assigned() -> None:
    # corral: a permitted pod the lister no longer has (deleted) is not assigned any more.
    a, b = member("a", "pg1"), member("b", "pg1")
    p, handle = plugin([sp_group("pg1", min_member=2)], [a, b])
    p.permit(CycleState(), info(a), "n")
    assert handle.pod_lister is not None
    assert isinstance(handle.pod_lister, PodLabelIndex)
    handle.pod_lister.remove(info(a).uid)
    assert p.assigned_count("ns/pg1", p.siblings(info(b))) == 0
    assert _codes(p.permit(CycleState(), info(b), "n")[0])[0] == Code.WAIT


def test_coscheduling_unreserve_rejects_the_waiting_siblings() -> None:
    # corral: Unreserve (a member timed out or failed to bind) rejects the group's waiting pods
    # with SP's message and records the failure time.
    clock = Clock()
    a, b, c = member("a", "pg1"), member("b", "pg1"), member("c", "pg1")
    other = member("o", "pg2")
    p, handle = plugin(
        [sp_group("pg1", min_member=3), sp_group("pg2", min_member=2)], [a, b, c, other],
        clock=clock,
    )  # fmt: skip
    for raw in (a, b, other):
        p.permit(CycleState(), info(raw), "n")
    wb, wo = _wait(handle, b, clock), _wait(handle, other, clock)
    clock.now += 1
    p.unreserve(CycleState(), info(a), "n")
    assert _codes(wb.wait()) == (Code.UNSCHEDULABLE, (cs.REJECTED_IN_UNRESERVE,))
    assert wo.pending_plugins() == [cs.NAME]
    assert p.assigned_count("ns/pg1", p.siblings(info(a))) == 0  # b was rejected: not counted
    assert p._group_time(QueuedPodInfo(info(c), timestamp=0.0)) == NOW + 1


def _rejected_in_post_filter(p: cs.Coscheduling, handle: FakeHandle, clock: Clock) -> None:
    p.post_filter(CycleState(), info(member("c", "pg1")), NodeToStatus())


def _rejected_in_unreserve(p: cs.Coscheduling, handle: FakeHandle, clock: Clock) -> None:
    p.unreserve(CycleState(), info(member("c", "pg1")), "n")


def _timed_out_unseen(p: cs.Coscheduling, handle: FakeHandle, clock: Clock) -> None:
    clock.now += 3  # its binding cycle has not woken up to the timeout yet


def _timed_out_and_gone(p: cs.Coscheduling, handle: FakeHandle, clock: Clock) -> None:
    clock.now += 3
    handle.waiting.pop(info(member("a", "pg1")).uid).wait()  # the binding cycle saw it


def _rejected_by_another_plugin(p: cs.Coscheduling, handle: FakeHandle, clock: Clock) -> None:
    handle.waiting[info(member("a", "pg1")).uid].reject("Other", "preempted")  # while waiting


def _still_waiting(p: cs.Coscheduling, handle: FakeHandle, clock: Clock) -> None:
    clock.now += 2.5


def _let_through_and_binding(p: cs.Coscheduling, handle: FakeHandle, clock: Clock) -> None:
    # a and d made a quorum of 2 earlier: both allowed, a out of the waiting map (PreBind/Bind)
    d = member("d", "pg1")
    assert p.permit(CycleState(), info(d), "n")[0] is None
    handle.waiting.pop(info(member("a", "pg1")).uid).wait()


STALE_ASSIGNED = [
    # id, what happens to the waiting member a (of pg1, minMember 2, Coscheduling not at
    # Reserve: no Unreserve for a) before its sibling b reaches Permit, b's Permit code
    pytest.param(_rejected_in_post_filter, Code.WAIT,
                 id="corral: a rejected in PostFilter (sibling c failed Filter) no longer counts"),
    pytest.param(_rejected_in_unreserve, Code.WAIT,
                 id="corral: a rejected in a sibling's Unreserve no longer counts"),
    pytest.param(_timed_out_unseen, Code.WAIT,
                 id="corral: a past its Permit timeout (binding cycle not woken) no longer counts"),
    pytest.param(_timed_out_and_gone, Code.WAIT,
                 id="corral: a timed out at Permit, gone from the waiting pods, no longer counts"),
    pytest.param(_rejected_by_another_plugin, Code.WAIT,
                 id="corral: a rejected while waiting by another plugin no longer counts"),
    pytest.param(_still_waiting, Code.SUCCESS,
                 id="corral: a still waiting within its timeout counts: b completes the quorum"),
    pytest.param(_let_through_and_binding, Code.SUCCESS,
                 id="corral: a let through at quorum and binding counts"),
]  # fmt: skip


@pytest.mark.parametrize(("happens", "want"), STALE_ASSIGNED)
def test_coscheduling_a_member_that_left_permit_unallowed_stops_counting_as_assigned(
    happens: Any, want: Code
) -> None:
    # corral: SP keeps a permitted pod in its assigned set until its Unreserve, which runs only
    # with Coscheduling at Reserve (SP's integration test enables it at PreFilter, PostFilter
    # and Permit only): a member rejected or timed out while waiting kept counting, and a
    # later sibling completed a quorum of pods that were not there (e2e
    # test_sp_coscheduling_table: two of pg7-2's four members bound on the one node, so pg7-1
    # never fit). Whatever unseats a waiting member, it stops counting at once.
    clock = Clock()
    a, b, c, d = (member(n, "pg1") for n in "abcd")
    p, handle = plugin([sp_group("pg1", min_member=2, timeout=3)], [a, b, c, d], clock=clock)
    assert _codes(p.permit(CycleState(), info(a), "n")[0])[0] == Code.WAIT
    handle.waiting[info(a).uid] = WaitingPod(info(a), {cs.NAME: 3.0}, clock)
    happens(p, handle, clock)
    assert _codes(p.permit(CycleState(), info(b), "n")[0])[0] == want


def _a_times_out(handle: FakeHandle, clock: Clock, a: PodInfo) -> None:
    clock.now += 3
    handle.waiting.pop(a.uid).wait()  # its binding cycle saw the timeout: a is requeued


def _a_preempted(handle: FakeHandle, clock: Clock, a: PodInfo) -> None:
    handle.waiting[a.uid].reject("DefaultPreemption", "preempted")


def _a_keeps_waiting(handle: FakeHandle, clock: Clock, a: PodInfo) -> None:
    clock.now += 2


LOST_MEMBER = [
    # id, what happens to waiting a (b waits too, c and d pending) before c's Permit, the pods
    # c's Permit activates, then the pods d's Permit activates
    pytest.param(_a_times_out, ["a", "b", "d"], [],
                 id="corral: a timed out at Permit: c's Permit activates the siblings, once"),
    pytest.param(_a_preempted, ["a", "b", "d"], [],
                 id="corral: a rejected while waiting: c's Permit activates the siblings, once"),
    pytest.param(_a_keeps_waiting, [], [],
                 id="corral: no member lost: only the first assigned activates (SP #682)"),
]  # fmt: skip


@pytest.mark.parametrize(("happens", "by_c", "by_d"), LOST_MEMBER)
def test_coscheduling_the_first_permit_after_a_member_was_lost_activates_the_siblings(
    happens: Any, by_c: list[str], by_d: list[str]
) -> None:
    # corral: a member rejected or timed out at Permit waits in unschedulablePods for an event
    # (Coscheduling: a pod added, a PodGroup changed) that its group, all created, will not
    # send; SP's stale count let a sibling bind without it and that bind (an AssignedPod add)
    # woke it. Counted right, the group's next permitted member wakes it (e2e
    # test_sp_coscheduling_table row 7: pg7-1's three timed out in turn and waited 5 min).
    clock = Clock()
    a, b, c, d = (member(n, "pg1") for n in "abcd")
    p, handle = plugin([sp_group("pg1", min_member=4)], [a, b, c, d], clock=clock)
    for raw, timeout in ((a, 3.0), (b, 4.0)):
        p.permit(CycleState(), info(raw), "n")
        handle.waiting[info(raw).uid] = WaitingPod(info(raw), {cs.NAME: timeout}, clock)
    handle.activated.clear()  # a was the first assigned: it activated b, c, d
    happens(handle, clock, info(a))
    assert _codes(p.permit(CycleState(), info(c), "n")[0])[0] == Code.WAIT
    handle.waiting[info(c).uid] = WaitingPod(info(c), {cs.NAME: 3.0}, clock)
    assert sorted(handle.activated) == sorted(info(x).uid for x in (a, b, c, d)
                                              if x["metadata"]["name"] in by_c)  # fmt: skip
    handle.activated.clear()
    p.permit(CycleState(), info(d), "n")
    assert sorted(handle.activated) == sorted(info(x).uid for x in (a, b, c, d)
                                              if x["metadata"]["name"] in by_d)  # fmt: skip


# --- PostFilter -----------------------------------------------------------------------------

_REJECT = (
    Code.UNSCHEDULABLE,
    ("PodGroup ns/pg1 gets rejected due to Pod p is unschedulable even after PostFilter",),
)
_NO_REJECT = (Code.UNSCHEDULABLE, ())


@pytest.mark.parametrize(
    ("target", "existing", "groups", "want"),
    [
        pytest.param(
            pod("p", namespace="ns"), [], [sp_group("pg1", min_member=2)],
            (Code.UNSCHEDULABLE, ("can not find pod group",)),
            id="pod does not belong to any pod group",
        ),
        pytest.param(
            member("p", "pg1"), [member("p1", "pg1", node_name="node")],
            [sp_group("pg1", min_member=1)], (Code.UNSCHEDULABLE, ()),
            id="enough pods assigned, do not reject all",
        ),
        pytest.param(
            member("p", "pg1"), [member("p1", "pg1", node_name="node")],
            [sp_group("pg1", min_member=2)],
            _REJECT,
            id="pod failed at filter phase, reject all pods",
        ),
    ],
)  # fmt: skip
def test_coscheduling_post_filter(
    target: dict[str, Any],
    existing: list[dict[str, Any]],
    groups: list[dict[str, Any]],
    want: tuple[Code, tuple[str, ...]],
) -> None:
    p, _ = plugin(groups, [*existing, target])
    result, status = p.post_filter(CycleState(), info(target), NodeToStatus())
    assert result is None  # SP's empty PostFilterResult: the nomination is left as it is
    assert _codes(status) == want


@pytest.mark.parametrize(
    ("percentage", "min_member", "assigned", "want"),
    [
        pytest.param(10, 10, 9, _NO_REJECT,
                     id="default 10%: 9/10 assigned (10% gap) → no rejection"),
        pytest.param(10, 10, 8, _REJECT, id="default 10%: 8/10 assigned (20% gap) → rejection"),
        pytest.param(0, 10, 9, _REJECT,
                     id="0%: 9/10 assigned (10% gap) → rejection (always reject)"),
        pytest.param(100, 10, 0, _NO_REJECT,
                     id="100%: 0/10 assigned (100% gap) → no rejection (never reject)"),
        pytest.param(50, 10, 6, _NO_REJECT, id="50%: 6/10 assigned (40% gap) → no rejection"),
        pytest.param(50, 10, 4, _REJECT, id="50%: 4/10 assigned (60% gap) → rejection"),
    ],
)  # fmt: skip
def test_coscheduling_post_filter_reject_threshold(
    percentage: int, min_member: int, assigned: int, want: tuple[Code, tuple[str, ...]]
) -> None:
    bound = [member(f"assigned-{i}", "pg1", node_name="node") for i in range(assigned)]
    target = member("p", "pg1")
    p, _ = plugin(
        [sp_group("pg1", min_member=min_member)], [*bound, target],
        args={"podGroupRejectPercentage": percentage},
    )  # fmt: skip
    assert _codes(p.post_filter(CycleState(), info(target), NodeToStatus())[1]) == want


def test_coscheduling_post_filter_rejects_waiting_siblings() -> None:
    # corral: the optimistic rejection reaches the group's waiting pods, with SP's message.
    clock = Clock()
    a, b, c = member("a", "pg1"), member("b", "pg1"), member("c", "pg1")
    p, handle = plugin([sp_group("pg1", min_member=3)], [a, b, c], clock=clock)
    p.permit(CycleState(), info(a), "n")
    wa = _wait(handle, a, clock)
    assert _codes(p.post_filter(CycleState(), info(c), NodeToStatus())[1]) == (
        Code.UNSCHEDULABLE,
        ("PodGroup ns/pg1 gets rejected due to Pod c is unschedulable even after PostFilter",),
    )
    assert _codes(wa.wait()) == (Code.UNSCHEDULABLE, (cs.REJECTED_IN_POST_FILTER,))


# --- backoff (coscheduling_test.go TestPodGroupBackoffTime) -----------------------------------


def test_coscheduling_prevent_pod_falling_into_infinite_scheduling_loop() -> None:
    clock = Clock()
    pods = [member(f"pod{i}", "pg1") for i in (1, 2, 3)]
    p, handle = plugin(
        [sp_group("pg1", min_member=3)], pods, args={"podGroupBackoffSeconds": 1}, clock=clock
    )
    status, _ = p.permit(CycleState(), info(pods[0]), "test")
    assert _codes(status)[0] == Code.WAIT
    assert sorted(handle.activated) == [info(pods[1]).uid, info(pods[2]).uid]
    p.post_filter(CycleState(), info(pods[1]), NodeToStatus())
    _, status = p.pre_filter(CycleState(), info(pods[2]), snapshot_of([node("node")]))
    assert _codes(status) == (
        Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
        ("podGroup ns/pg1 failed recently",),
    )
    clock.now += 1  # corral: the backoff is over after podGroupBackoffSeconds
    assert p.pre_filter(CycleState(), info(pods[2]), snapshot_of([node("node")]))[1] is None


# --- QueueSort (coscheduling_test.go TestLess, TestLessAfterScheduleFailure) ------------------


def _q(
    name: str, namespace: str, priority: int, group: str | None = None, at: float | None = None
) -> QueuedPodInfo:
    raw = member(name, group, namespace=namespace, priority=priority)
    return QueuedPodInfo(info(raw), timestamp=0.0, initial_attempt_timestamp=at)


@pytest.mark.parametrize(
    ("p1", "p2", "groups", "want"),
    [
        pytest.param(_q("p1", "ns1", LOW), _q("p2", "ns2", HIGH), [], False,
                     id="p1.priority less than p2.priority"),
        pytest.param(_q("p1", "ns1", HIGH), _q("p2", "ns2", LOW), [], True,
                     id="p1.priority greater than p2.priority"),
        pytest.param(_q("p1", "ns1", HIGH, at=NOW + 1), _q("p2", "ns2", HIGH, at=NOW + 2), [],
                     True, id="equal priority. p1 is added to schedulingQ earlier than p2"),
        pytest.param(_q("p1", "ns1", HIGH, at=NOW + 2), _q("p2", "ns2", HIGH, at=NOW + 1), [],
                     False, id="equal priority. p2 is added to schedulingQ earlier than p1"),
        pytest.param(_q("p1", "ns1", LOW, "pg1"), _q("p2", "ns2", HIGH),
                     [sp_group("pg1", "ns1")], False,
                     id="p1.priority less than p2.priority, p1 belongs to pg1"),
        pytest.param(_q("p1", "ns1", HIGH, "pg1"), _q("p2", "ns2", LOW),
                     [sp_group("pg1", "ns1")], True,
                     id="p1.priority greater than p2.priority, p1 belongs to pg1"),
        pytest.param(_q("p1", "ns1", HIGH, "pg1", NOW + 1), _q("p2", "ns2", HIGH, at=NOW + 2),
                     [sp_group("pg1", "ns1", created=NOW + 1)], True,
                     id="equal priority. p1 is added to schedulingQ earlier than p2, "
                     "p1 belongs to pg1"),
        pytest.param(_q("p1", "ns1", HIGH, "pg1", NOW + 2), _q("p2", "ns2", HIGH, at=NOW + 1),
                     [sp_group("pg1", "ns1", created=NOW + 2)], False,
                     id="equal priority. p2 is added to schedulingQ earlier than p1, "
                     "p1 belongs to pg1"),
        pytest.param(_q("p1", "ns1", LOW, "pg1"), _q("p2", "ns2", HIGH, "pg2"),
                     [sp_group("pg1", "ns1", created=NOW + 1),
                      sp_group("pg2", "ns2", created=NOW + 2)], False,
                     id="p1.priority less than p2.priority, p1 belongs to pg1 and p2 belongs "
                     "to pg2"),
        pytest.param(_q("p1", "ns1", HIGH, "pg1"), _q("p2", "ns2", LOW, "pg1"),
                     [sp_group("pg1", "ns1", created=NOW + 1),
                      sp_group("pg2", "ns2", created=NOW + 2)], True,
                     id="p1.priority greater than p2.priority, p1 belongs to pg1 and and p2 "
                     "belongs to pg2"),
        pytest.param(_q("p1", "ns1", HIGH, "pg1", NOW + 1), _q("p2", "ns2", HIGH, "pg2", NOW + 2),
                     [sp_group("pg1", "ns1", created=NOW + 1),
                      sp_group("pg2", "ns2", created=NOW + 2)], True,
                     id="equal priority. p1 is added to schedulingQ earlier than p2, p1 belongs "
                     "to pg1 and p2 belongs to pg2"),
        pytest.param(_q("p1", "ns", LOW, "pg2", NOW + 1), _q("p2", "ns", HIGH, "pg1", NOW + 2),
                     [sp_group("pg1", "ns", created=NOW + 1),
                      sp_group("pg2", "ns", created=NOW + 2)], False,
                     id="equal priority. p2 is added to schedulingQ earlier than p1, p1 belongs "
                     "to pg2 and p2 belongs to pg1"),
        pytest.param(_q("p1", "ns1", HIGH, "pg2", NOW + 1), _q("p2", "ns2", HIGH, "pg2", NOW + 1),
                     [sp_group("pg1", "ns1", created=NOW + 1),
                      sp_group("pg2", "ns2", created=NOW + 2)], True,
                     id="equal priority and creation time, p1 belongs pg1 and p2 belong to pg2"),
        pytest.param(_q("p1", "ns1", HIGH, at=NOW + 1), _q("p2", "ns2", HIGH, "pg2", NOW + 1),
                     [sp_group("pg2", "ns2", created=NOW + 2)], True,
                     id="equal priority and creation time, and p2 belong to pg2"),
        pytest.param(_q("p2", "ns", HIGH, at=NOW), _q("p1", "ns", HIGH, at=NOW), [], False,
                     id="corral: equal times: namespace/name decides"),
    ],
)  # fmt: skip
def test_coscheduling_less(
    p1: QueuedPodInfo, p2: QueuedPodInfo, groups: list[dict[str, Any]], want: bool
) -> None:
    p, _ = plugin(groups)
    assert p.less(p1, p2) is want


def test_coscheduling_less_after_schedule_failure() -> None:
    # TestLessAfterScheduleFailure and TestMarkAndClearPodGroupScheduleFailure.
    clock = Clock()
    p, _ = plugin(
        [sp_group("pg1", min_member=3, created=NOW - 10),
         sp_group("pg2", min_member=3, created=NOW - 5)],
        clock=clock,
    )  # fmt: skip
    p1, p2 = _q("p1", "ns", HIGH, "pg1", NOW), _q("p2", "ns", HIGH, "pg2", NOW)
    assert p._group_time(p1) == NOW - 10
    assert p.less(p1, p2)
    p.mark_failure("ns/pg1")
    assert p._group_time(p1) > NOW - 10
    assert not p.less(p1, p2)
    assert p.less(p2, p1)
    p.clear_failure("ns/pg1")
    assert p._group_time(p1) == NOW - 10
    assert p.less(p1, p2)


def test_coscheduling_group_times_move_onto_the_queue_clock() -> None:
    # corral: the queue's timestamps are monotonic; a PodGroup's creationTimestamp is wall
    # time, moved by the offset measured at start.
    _, handle = plugin([sp_group("pg1", created=NOW)])
    shifted = cs.Coscheduling(
        plugin_args(cs.NAME, None), handle, clock=Clock(), wall_offset=NOW - 100
    )
    assert shifted._group_time(_q("p1", "ns", HIGH, "pg1", 5.0)) == 100.0


def test_coscheduling_registers_pod_add_and_pod_group_add_update() -> None:
    """SP's Pod/Add (a bound pod, and a pending one judged by the sibling hint) and PodGroup
    Add/Update, the two without hints."""
    p, _ = plugin()
    assert tuple(p.events_to_register()) == (
        ClusterEvent(ASSIGNED_POD, ActionType.ADD),
        ClusterEventWithHint(
            ClusterEvent(UNSCHEDULED_POD, ActionType.ADD), p.sibling_added, cs.SIBLINGS
        ),
        ClusterEvent(listers.SP_POD_GROUP, ActionType.ADD | ActionType.UPDATE),
    )


SIBLING_ADDED = [
    # id, the refused pod's (namespace, group), the added pod's (namespace, group), the pods
    # of pg1 in ns the lister knows (the added one among them), the hint
    pytest.param(("ns", "pg1"), ("ns", "pg1"), 3, QueueingHint.QUEUE,
                 id="corral: the sibling that makes minMember arrived"),
    pytest.param(("ns", "pg1"), ("ns", "pg1"), 4, QueueingHint.QUEUE,
                 id="corral: a sibling beyond minMember arrived"),
    pytest.param(("ns", "pg1"), ("ns", "pg1"), 2, QueueingHint.QUEUE_SKIP,
                 id="corral: a sibling arrived, still one short of minMember"),
    pytest.param(("ns", "pg1"), ("ns", "pg2"), 3, QueueingHint.QUEUE_SKIP,
                 id="corral: a pod of another group"),
    pytest.param(("ns", "pg1"), ("other", "pg1"), 3, QueueingHint.QUEUE_SKIP,
                 id="corral: the group's name in another namespace"),
    pytest.param(("ns", "pg1"), ("ns", None), 3, QueueingHint.QUEUE_SKIP,
                 id="corral: a pod of no group"),
    pytest.param(("ns", "gone"), ("ns", "gone"), 3, QueueingHint.QUEUE_SKIP,
                 id="corral: no PodGroup (its Add requeues the member)"),
]  # fmt: skip


@pytest.mark.parametrize(("refused", "added", "known", "want"), SIBLING_ADDED)
def test_coscheduling_a_pending_pod_requeues_its_siblings_once_min_member_are_there(
    refused: tuple[str, str], added: tuple[str, str | None], known: int, want: QueueingHint
) -> None:
    waiting = info(member("w", refused[1], namespace=refused[0]))
    new = info(member("n", added[1], namespace=added[0]))
    pods = [member(f"k-{i}", "pg1") for i in range(known)]
    p, _ = plugin([sp_group("pg1", min_member=3), sp_group("gone", "elsewhere", 1)], pods)
    assert p.sibling_added(waiting, None, new) is want
    # The narrowing never leaves out a pod the hint would queue.
    shared = cs.SIBLINGS.pod_keys(waiting) & (cs.SIBLINGS.event_keys(None, new) or frozenset())
    assert shared or want is QueueingHint.QUEUE_SKIP


def test_coscheduling_members_refused_for_want_of_siblings_are_requeued_as_the_last_arrives() -> (
    None
):
    """corral: two members of minMember 3 refused; a pod of another group, then the third
    member (which may fit nowhere) arrive: only the third's add moves the two (SP: they waited
    for the 5-minute flush)."""
    pods = [member(f"g-{i}", "g") for i in range(2)]
    p, handle = plugin([sp_group("g", min_member=3)], pods)
    queue = SchedulingQueue(less=p.less, events_by_plugin={cs.NAME: list(p.events_to_register())})
    refused = [info(raw) for raw in pods]
    for one in refused:
        queue.add(one)
        qpi = queue.pop(timeout=0)
        assert qpi is not None
        qpi.unschedulable_plugins = frozenset({cs.NAME})
        queue.add_unschedulable_if_not_present(qpi, queue.scheduling_cycle)
    stranger = info(member("x-0", "x"))
    assert queue.move_all_to_active_or_backoff(UNSCHEDULED_POD_ADD, None, stranger) == 0
    third = info(member("g-2", "g"))
    index = handle.pod_lister
    assert isinstance(index, PodLabelIndex)
    index.put(third)  # as the engine's handler files it before the event
    assert queue.move_all_to_active_or_backoff(UNSCHEDULED_POD_ADD, None, third) == 2
    assert {queue.where(one.uid) for one in refused} <= {"backoff", "active"}


# --- the pod lister ---------------------------------------------------------------------------


def test_pod_label_index_files_only_indexed_keys_and_refiles_on_update() -> None:
    index = PodLabelIndex([LABEL])
    a = info(member("a", "pg1"))
    index.put(info(pod("plain", namespace="ns", labels={"app": "x"})))
    index.put(a)
    assert [p.name for p in index.labelled("ns", LABEL, "pg1")] == ["a"]
    assert index.labelled("ns", "app", "x") == []
    assert len(index) == 1
    index.put(info(member("a", "pg2")))  # its label changed
    assert index.labelled("ns", LABEL, "pg1") == []
    assert [p.name for p in index.labelled("ns", LABEL, "pg2")] == ["a"]
    index.put(info(pod("a", namespace="ns")))  # the label removed
    assert index.labelled("ns", LABEL, "pg2") == []
    assert len(index) == 0
    index.put(a)
    index.remove(a.uid)
    assert index.labelled("ns", LABEL, "pg1") == []


# --- the CRD and the declaration --------------------------------------------------------------

CRD = (
    Path(__file__).resolve().parents[4]
    / "crds/scheduler-plugins/podgroups.scheduling.x-k8s.io.yaml"
)


def test_coscheduling_crd_serves_what_the_plugin_declares_and_reads() -> None:
    crd = yaml.safe_load(CRD.read_text())
    group, plural = crd["spec"]["group"], crd["spec"]["names"]["plural"]
    (version,) = crd["spec"]["versions"]
    declaration = BY_NAME[cs.NAME]
    assert declaration.cluster_reads == ((group, plural),)
    assert WATCHED[(group, plural)] == (
        listers.SP_POD_GROUP, f"/apis/{group}/{version['name']}/{plural}",
    )  # fmt: skip
    assert f"{plural}.{version['name']}.{group}" == listers.SP_POD_GROUP  # SP's event resource
    spec = version["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]
    assert set(spec) == {"minMember", "minResources", "scheduleTimeoutSeconds"}
    assert spec["minMember"]["minimum"] == 1
    assert declaration.indexed_pod_labels == (LABEL,)


def test_coscheduling_scheduler_is_granted_the_pod_group_reads() -> None:
    profile = load_profile(
        {
            "apiVersion": "corral.dev/v1alpha1",
            "kind": "SchedulerProfile",
            "metadata": {"name": "gangs", "uid": "u"},
            "spec": {
                "plugins": {
                    "multiPoint": {
                        "enabled": [{"name": cs.NAME}],
                        "disabled": [{"name": "PrioritySort"}],
                    }
                }
            },
        }
    )
    granted = {
        (g, r, v)
        for obj in render(profile).objects
        for rule in obj.get("rules", [])
        for g in rule["apiGroups"]
        for r in rule["resources"]
        for v in rule["verbs"]
    }
    assert {("scheduling.x-k8s.io", "podgroups", v) for v in ("get", "list", "watch")} <= granted


def test_coscheduling_pod_group_from_json_reads_the_spec() -> None:
    got = cs.pod_group_from_json(
        sp_group("pg", min_member=3, min_resources={"cpu": "500m", "memory": "1Gi"},
                 created=NOW, timeout=7)
    )  # fmt: skip
    assert got == cs.PodGroup(
        "ns", "pg", 3, {"cpu": Fraction(1, 2), "memory": Fraction(2**30)}, 7, NOW
    )
    assert got.full_name == "ns/pg"
