"""ClusterState routes pod events: an update of a pod whose binding is under way (assumed in
the cache) must not queue it again, as upstream's updatePodInSchedulingQueue skips it; a pod
that is pending and not assumed is requeued by its update. Pods are kept without their
managedFields, as upstream's pod informer keeps them. A deleted pending pod frees what it held:
waiting at Permit it is rejected, assumed past Permit it leaves the cache, and either (or a
nominated one, for pods of lower or equal priority) is an AssignedPodDelete event."""

from __future__ import annotations

import pytest

from corral.scheduler.backend.cache import Cache
from corral.scheduler.backend.pod_labels import PodLabelIndex
from corral.scheduler.backend.queue import SchedulingQueue
from corral.scheduler.engine.handlers import ClusterState
from corral.scheduler.engine.nominator import Nominator
from corral.scheduler.framework import cluster_events as events
from corral.scheduler.framework.cluster_events import ClusterEventWithHint
from corral.scheduler.framework.types import PodInfo
from corral.scheduler.plugins.priority_sort import PrioritySort
from corral.scheduler.plugins.scheduling_gates import SchedulingGates
from corral.testing.builders import node_record, pod, pod_info


def _state() -> ClusterState:
    queue = SchedulingQueue(
        less=PrioritySort().less,
        pre_enqueue=lambda pod, _gating_plugin: SchedulingGates().pre_enqueue(pod),
        events_by_plugin={"SchedulingGates": SchedulingGates().events_to_register()},
    )
    cache = Cache()
    cache.add_node(node_record("n1", cpu="4"))
    return ClusterState(cache, queue, {"default-scheduler"}, lambda _: True)


@pytest.mark.parametrize(
    ("assumed", "where"),
    [
        pytest.param(True, "", id="assumed: binding under way, not queued again"),
        pytest.param(False, "active", id="not assumed: the update queues it"),
    ],
)
def test_an_update_after_the_cycle(assumed: bool, where: str) -> None:
    state = _state()
    raw = pod("p", cpu="1")
    raw["metadata"]["resourceVersion"] = "1"
    state.on_pod("ADDED", raw)
    qpi = state.queue.pop(timeout=0)
    assert qpi is not None
    if assumed:
        state.cache.assume_pod(pod_info("p", cpu="1"), "n1")
    state.queue.done(qpi.pod.uid)
    raw["status"] = {"conditions": [{"type": "PodScheduled", "status": "False"}]}
    raw["metadata"]["resourceVersion"] = "2"
    state.on_pod("MODIFIED", raw)
    assert state.queue.where(qpi.pod.uid) == where


def test_the_nominator_given_is_the_one_used_even_when_empty() -> None:
    """An empty Nominator has length 0 (falsy): the handlers must still share the loop's, or
    nominations the loop records never reach the pods the handlers add (preemption decided
    against a different set of nominated pods than upstream's)."""
    queue = SchedulingQueue(
        less=PrioritySort().less,
        pre_enqueue=SchedulingGates().pre_enqueue,
        events_by_plugin={"SchedulingGates": SchedulingGates().events_to_register()},
    )
    nominator = Nominator()
    state = ClusterState(Cache(), queue, {"default-scheduler"}, lambda _: True, nominator)
    assert state.nominator is nominator


@pytest.mark.parametrize("node", [pytest.param("", id="pending"), pytest.param("n1", id="bound")])
def test_pods_are_kept_without_managed_fields(node: str) -> None:
    state = _state()
    raw = pod("p", cpu="1")
    if node:
        raw["spec"]["nodeName"] = node
    entry = {"manager": "kubectl", "operation": "Update", "fieldsV1": {"f:spec": {}}}
    raw["metadata"]["managedFields"] = [entry]
    state.on_pod("ADDED", raw)
    if node:
        (info,) = state.cache.pods_on(node)
    else:
        qpi = state.queue.pop(timeout=0)
        assert qpi is not None
        info = qpi.pod
    assert "managedFields" not in info.raw["metadata"]
    assert info.raw["metadata"]["name"] == "p"


def test_the_pod_label_index_follows_the_pods_the_handlers_keep() -> None:
    """Handle.pod_lister (Coscheduling's siblings): pending pods this engine serves and bound
    pods of any scheduler are listed; a pod leaves when deleted, terminal or no longer ours."""
    key = "scheduling.x-k8s.io/pod-group"
    state = _state()
    state.labels = PodLabelIndex([key])
    labels = {key: "pg"}
    ours, other = pod("ours", labels=labels), pod("other", labels=labels)
    other["spec"]["schedulerName"] = "someone-else"
    bound = pod("bound", labels=labels, node_name="n1")
    bound["spec"]["schedulerName"] = "someone-else"
    for raw in (ours, other, bound):
        state.on_pod("ADDED", raw)

    def listed() -> list[str]:
        return sorted(p.name for p in state.labels.labelled("default", key, "pg"))

    assert listed() == ["bound", "ours"]
    state.on_pod("DELETED", bound)
    assert listed() == ["ours"]
    ours["spec"]["schedulerName"] = "someone-else"  # no longer ours
    state.on_pod("MODIFIED", ours)
    assert listed() == []
    ours["spec"]["schedulerName"] = "default-scheduler"
    state.on_pod("MODIFIED", ours)
    ours["status"] = {"phase": "Succeeded"}
    state.on_pod("MODIFIED", ours)
    assert listed() == []


def test_the_pod_lister_finds_every_pod_kept_by_name() -> None:
    """Handle.pod_lister.get (VolumeBinding's check that the pod it binds still exists):
    any pod the handlers keep, labelled or not; None once deleted; a pod recreated under the
    same name stays found when its predecessor's deletion arrives late."""
    state = _state()
    state.labels = PodLabelIndex(["scheduling.x-k8s.io/pod-group"])
    plain, bound = pod("plain"), pod("bound", node_name="n1")
    for raw in (plain, bound):
        state.on_pod("ADDED", raw)

    def found(name: str) -> str | None:
        got = state.labels.get("default", name)
        return None if got is None else got.uid

    assert (found("plain"), found("bound"), found("nobody")) == (
        plain["metadata"]["uid"],
        bound["metadata"]["uid"],
        None,
    )
    state.on_pod("DELETED", plain)
    assert found("plain") is None
    again = pod("bound", node_name="n1")
    again["metadata"]["uid"] = "u-again"
    state.on_pod("ADDED", again)
    state.on_pod("DELETED", bound)  # the old one's deletion, seen after the new one's add
    assert found("bound") == "u-again"


DELETED_PENDING = [
    # id, the deleted pod is assumed, it waits at Permit, nominated, its priority; the
    # deleted pod still in the cache after the event; the parked pod moved
    pytest.param(True, True, False, 0, True, True,
                 id="assumed, waiting at Permit: rejected there, its binding cycle forgets it"),
    pytest.param(True, False, False, 0, False, True,
                 id="assumed, past Permit: out of the cache at once"),
    pytest.param(False, False, True, 0, False, True,
                 id="nominated: its node's room is for lower or equal priority"),
    pytest.param(False, False, True, -1, False, False,
                 id="nominated, lower priority than the parked pod: nothing moves"),
    pytest.param(False, False, False, 0, False, False, id="neither: nothing moves"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("assumed", "waiting", "nominated", "priority", "kept", "moved"), DELETED_PENDING
)
def test_a_deleted_pending_pod_frees_what_it_held(
    assumed: bool, waiting: bool, nominated: bool, priority: int, kept: bool, moved: bool
) -> None:
    """Upstream deletePodFromSchedulingQueue / handleAssumedPodDeletion."""
    rejected: list[str] = []

    def reject_waiting(pod: PodInfo) -> bool:
        rejected.append(pod.uid)
        return waiting

    registrations = {"Fit": [ClusterEventWithHint(events.ASSIGNED_POD_DELETE)]}
    queue = SchedulingQueue(less=PrioritySort().less, events_by_plugin=registrations)
    cache = Cache()
    cache.add_node(node_record("n1", cpu="4"))
    state = ClusterState(cache, queue, {"default-scheduler"}, lambda _: True,
                         reject_waiting=reject_waiting)  # fmt: skip
    parked = pod_info("parked", cpu="3")
    queue.add(parked)
    qpi = queue.pop(timeout=0)
    assert qpi is not None
    qpi.unschedulable_plugins = frozenset({"Fit"})
    queue.add_unschedulable_if_not_present(qpi, queue.scheduling_cycle)
    raw = pod("gone", cpu="3")
    raw["spec"]["priority"] = priority
    if nominated:
        raw["status"] = {"nominatedNodeName": "n1"}
    state.on_pod("ADDED", raw)
    gone = state.queue.pop(timeout=0)
    assert gone is not None
    assert gone.pod.name == "gone"
    if assumed:
        cache.assume_pod(gone.pod, "n1")
    state.on_pod("DELETED", raw)
    assert rejected == ([gone.pod.uid] if assumed else [])
    assert (cache.get_pod(gone.pod.uid) is not None) is kept
    assert queue.where(parked.uid) == ("backoff" if moved else "unschedulable")


@pytest.mark.parametrize("generic_workload", [False, True], ids=["gate off", "GenericWorkload"])
def test_a_new_pending_pod_is_an_unscheduled_pod_add(generic_workload: bool) -> None:
    """Sent with the gate off too (upstream only with it): a plugin registered for it (as
    Coscheduling is) has the pods it refused moved; the queue drops it for the others."""
    registrations = {"Sib": [ClusterEventWithHint(events.UNSCHEDULED_POD_ADD)]}
    queue = SchedulingQueue(less=PrioritySort().less, events_by_plugin=registrations)
    state = ClusterState(Cache(), queue, {"default-scheduler"}, lambda _: True,
                         generic_workload=generic_workload)  # fmt: skip
    parked = pod_info("parked", cpu="1")
    queue.add(parked)
    qpi = queue.pop(timeout=0)
    assert qpi is not None
    qpi.unschedulable_plugins = frozenset({"Sib"})
    queue.add_unschedulable_if_not_present(qpi, queue.scheduling_cycle)
    state.on_pod("ADDED", pod("sibling", cpu="1"))
    assert queue.where(parked.uid) == "backoff"


NOMINATIONS = [
    # id, status.nominatedNodeName of the informer's previous and new pod, the nomination the
    # engine holds before the update ("" none), the one it holds after
    pytest.param("", "", "n1", "n1", id="none on either: ours kept (our patch not landed yet)"),
    pytest.param("n1", "", "n1", "", id="the API cleared it: gone (upstream UpdateNominatedPod)"),
    pytest.param("", "n1", "", "n1", id="the API set it: taken"),
    pytest.param("n1", "n2", "n1", "n2", id="the API moved it: followed"),
]  # fmt: skip


@pytest.mark.parametrize(("before", "after", "ours", "held"), NOMINATIONS)
def test_a_pending_pods_update_carries_its_nomination(
    before: str, after: str, ours: str, held: str
) -> None:
    """A gang member rejected at Permit had its announced node come back after its forget, then
    cleared by the failure's patch: kept, it held the node against every pod of its priority
    while its group was backed off."""
    state = _state()
    state.cache.add_node(node_record("n2", cpu="4"))
    raw = pod("p", cpu="1")
    raw["metadata"]["resourceVersion"] = "1"
    raw["status"] = {"nominatedNodeName": before} if before else {}
    state.on_pod("ADDED", raw)
    if ours:
        state.nominator.nominate(pod_info("p", cpu="1"), ours)
    raw = pod("p", cpu="1")
    raw["metadata"]["resourceVersion"] = "2"
    raw["status"] = {"nominatedNodeName": after} if after else {}
    state.on_pod("MODIFIED", raw)
    nodes = state.nominator.nominated_node_names()
    assert list(nodes) == ([held] if held else [])
