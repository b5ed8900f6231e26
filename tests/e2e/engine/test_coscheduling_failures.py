"""Coscheduling's failure modes its users report (issue 40), end to end on the local control
plane: two gangs that together exceed the node, a gang that never fits ahead of a pod, a member
deleted while its group waits at Permit, leader failover with a gang waiting, gated members
(the Permit timeout's release: test_sp_plugins.py). Each test fails when the behaviour it names
is broken (the docstrings say how).
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Iterator

import pytest

from corral.k8s import CONTENT_MERGE_PATCH, JSON, Client
from corral.scheduler.plugins.coscheduling import POD_GROUP_LABEL
from corral.testing import LocalCluster
from support import sp_crds
from support.engine_process import (
    EngineProcess,
    create_all,
    engine_config,
    pod,
    pods_in,
    scheduler_name,
    wait_until,
)

SP_SCHEDULING = sp_crds.SP_SCHEDULING
GATE = "example.com/not-yet"
# The group's own timeout: far beyond every wait below, so nothing here is a Permit timeout.
LONG_TIMEOUT = 600
LEASE, RENEW, RETRY = 4.0, 3.0, 1.0


@pytest.fixture
def pod_group_crd(kube: Client) -> Iterator[None]:
    with sp_crds.pod_group_crd(kube):
        yield


def pod_group(name: str, namespace: str, min_member: int, **spec: object) -> JSON:
    return {"apiVersion": SP_SCHEDULING, "kind": "PodGroup",
            "metadata": {"name": name, "namespace": namespace},
            "spec": {"minMember": min_member, **spec}}  # fmt: skip


def coscheduling(config: JSON, **args: object) -> JSON:
    """Every profile of ``config`` with Coscheduling in place of PrioritySort, its args given."""
    for profile in config["profiles"]:
        profile["plugins"] = {
            "multiPoint": {"enabled": [{"name": "Coscheduling"}],
                           "disabled": [{"name": "PrioritySort"}]},
        }  # fmt: skip
        if args:
            profile["pluginConfig"] = [{"name": "Coscheduling", "args": args}]
    return config


def member(name: str, namespace: str, sched: str, group: str, selector: dict[str, str],
           cpu: str = "1", **spec: object) -> JSON:  # fmt: skip
    return pod(name, namespace, sched, nodeSelector=selector, labels={POD_GROUP_LABEL: group},
               requests={"cpu": cpu}, terminationGracePeriodSeconds=0, **spec)  # fmt: skip


def status_of(kube: Client, namespace: str) -> dict[str, tuple[str, str]]:
    """pod name -> (spec.nodeName, status.nominatedNodeName)."""
    return {
        p["metadata"]["name"]: (
            str(p["spec"].get("nodeName") or ""),
            str((p.get("status") or {}).get("nominatedNodeName") or ""),
        )
        for p in pods_in(kube, namespace)
    }


def bound(kube: Client, namespace: str) -> set[str]:
    return {name for name, (node, _) in status_of(kube, namespace).items() if node}


def waiting_at_permit(kube: Client, namespace: str, names: list[str]) -> bool:
    """The pods are unbound and their nominated node announced: the engine writes it before a
    binding cycle waits at Permit (upstream's binding cycle does the same)."""
    found = status_of(kube, namespace)
    return all(n in found and not found[n][0] and found[n][1] for n in names)


def said(kube: Client, namespace: str, pod_name: str, text: str) -> bool:
    """The pod's PodScheduled condition gives the scheduler's last refusal and it has ``text``.
    (Not its Events: a FailedScheduling Event repeated before the pod's resourceVersion moves
    joins the first one's series and keeps that one's message, as client-go's recorder does.)"""
    found = [p for p in pods_in(kube, namespace) if p["metadata"]["name"] == pod_name]
    conditions = (found[0].get("status") or {}).get("conditions") or [] if found else []
    return any(
        c.get("type") == "PodScheduled" and c.get("status") == "False"
        and text in str(c.get("message") or "")
        for c in conditions
    )  # fmt: skip


def test_a_member_deleted_while_its_group_waits_releases_the_group(
    kube: Client,
    cluster: LocalCluster,
    namespace: str,
    fake_nodes: Callable[..., list[str]],
    engines: Callable[..., EngineProcess],
    pod_group_crd: None,
) -> None:
    """Two of a gang of three wait at Permit (the third fits nowhere; a reject percentage of 50
    keeps PostFilter from rejecting them), holding the node's two cpus. Deleting one of them
    rejects it at Permit (upstream's handleAssumedPodDeletion), its Unreserve rejects its
    sibling, both are forgotten, and the forget is an AssignedPodDelete event: a 2-cpu pod
    parked meanwhile binds at once. Broken (the deleted member left waiting, or the forget not
    queueing the parked pod), the cpus stay held until the 600 s timeout or the pod is not
    retried for minutes."""
    pool = {"pool": namespace}
    (node,) = fake_nodes(1, cpu="2", memory="8Gi", labels=pool)
    name = scheduler_name()
    engines(coscheduling(engine_config(cluster.kubeconfig, name), podGroupRejectPercentage=50))
    kube.create(pod_group("g", namespace, 3, scheduleTimeoutSeconds=LONG_TIMEOUT))
    nowhere = {**pool, "absent": "label"}
    create_all(kube, [member("g-0", namespace, name, "g", pool),
                      member("g-1", namespace, name, "g", pool),
                      member("g-2", namespace, name, "g", nowhere)])  # fmt: skip
    wait_until("two members waiting at Permit",
               lambda: waiting_at_permit(kube, namespace, ["g-0", "g-1"]))  # fmt: skip
    kube.create(pod("x", namespace, name, nodeSelector=pool, requests={"cpu": "2"},
                    terminationGracePeriodSeconds=0))  # fmt: skip
    wait_until("x parked for cpu", lambda: said(kube, namespace, "x", "Insufficient cpu"))

    kube.delete("v1", "Pod", "g-0", namespace)
    wait_until("x bound", lambda: "x" in bound(kube, namespace), timeout=20)
    assert status_of(kube, namespace)["x"][0] == node
    # The sibling was released too: back in the queue, it now misses a member.
    wait_until(
        "g-1 refused for want of siblings",
        lambda: said(kube, namespace, "g-1", "cannot find enough sibling pods, current pods "
                     "number: 2, minMember of group: 3"),
        timeout=30,
    )  # fmt: skip
    assert bound(kube, namespace) == {"x"}


def test_a_new_leader_schedules_a_gang_the_old_one_left_waiting(
    kube: Client,
    cluster: LocalCluster,
    namespace: str,
    fake_nodes: Callable[..., list[str]],
    engines: Callable[..., EngineProcess],
    pod_group_crd: None,
) -> None:
    """Two engines under one Lease; the leader holds two members of a gang of three at Permit
    (the third waits for a node that is not there yet) and is killed (-9: no release, its
    waiting pods die with it). The new leader starts from the API's state: the two members are
    pending again, nominated to the node the old leader announced; it schedules them, and once
    the third's node arrives (room for it alone) the whole gang binds, each member once. Broken
    (a member bound by the dying leader, the stale nominations holding the node against the
    members themselves, or the gang state not rebuilt), a member binds alone, twice, or never."""
    pool = {"pool": namespace}
    fake_nodes(1, cpu="2", memory="8Gi", labels=pool)
    name = scheduler_name()
    election = {"leaderElect": True, "leaseDuration": f"{LEASE:.0f}s",
                "renewDeadline": f"{RENEW:.0f}s", "retryPeriod": f"{RETRY:.0f}s",
                "resourceName": name, "resourceNamespace": namespace}  # fmt: skip
    config = coscheduling(
        engine_config(cluster.kubeconfig, name, leaderElection=election),
        podGroupRejectPercentage=50,
    )
    running = {e.name: e for e in (engines(config, f"{name}-{i}") for i in range(2))}

    def holder() -> str:
        try:
            lease = kube.get("coordination.k8s.io/v1", "Lease", name, namespace)
        except Exception:
            return ""
        return str(lease["spec"].get("holderIdentity") or "")

    wait_until("a leader", lambda: holder() in running, timeout=30)
    kube.create(pod_group("g", namespace, 3, scheduleTimeoutSeconds=LONG_TIMEOUT))
    late = {**pool, "late": "yes"}
    create_all(kube, [member("g-0", namespace, name, "g", pool),
                      member("g-1", namespace, name, "g", pool),
                      member("g-2", namespace, name, "g", late)])  # fmt: skip
    wait_until("two members waiting at Permit",
               lambda: waiting_at_permit(kube, namespace, ["g-0", "g-1"]))  # fmt: skip
    old = holder()
    killed = running.pop(old)
    killed.kill()  # SIGKILL
    wait_until("a new leader", lambda: holder() not in ("", old), timeout=30)
    time.sleep(3.0)  # the new leader has scheduled what it could: still no member bound
    assert bound(kube, namespace) == set()
    # ...and placed the two at once, their own stale nominations not counted against them (a
    # refusal for cpu, then a retry on the next node event, passed unseen: make mutate's
    # nominated-counts-itself).
    assert not [m for m in ("g-0", "g-1") if said(kube, namespace, m, "Insufficient cpu")]

    # Room for the third alone: the other two must bind where the old leader placed them.
    fake_nodes(1, cpu="1", memory="8Gi", labels=late)
    wait_until("the gang bound", lambda: bound(kube, namespace) == {"g-0", "g-1", "g-2"},
               timeout=60)  # fmt: skip

    def scheduled() -> Counter[str]:
        events = kube.list_items("v1", "Event", namespace, field_selector="reason=Scheduled")
        return Counter(e["involvedObject"]["name"] for e in events)

    # The recorder writes Events after the bind returns: wait for the last, then count repeats.
    wait_until("a Scheduled Event per member", lambda: set(scheduled()) == {"g-0", "g-1", "g-2"})
    assert scheduled() == {"g-0": 1, "g-1": 1, "g-2": 1}
    # Only the new leader bound them.
    (engine,) = running.values()

    def binds(e: EngineProcess) -> set[str]:
        lines = [line for line in e.log().splitlines() if "Successfully bound" in line]
        return {f"g-{i}" for i in range(3) if any(f"{namespace}/g-{i}" in x for x in lines)}

    assert (binds(engine), binds(killed)) == ({"g-0", "g-1", "g-2"}, set())


GATED = [
    # id, minMember, whether the ungated members bind while the gate stays, the message the
    # ungated members are refused with (or "")
    pytest.param(3, False, "cannot proceed due to gated pods in the same PodGroup",
                 id="a gated member the group needs: nobody binds until it is ungated"),
    pytest.param(2, True, "", id="slack for the gated one: the two ungated members bind"),
]  # fmt: skip


@pytest.mark.parametrize(("min_member", "binds_gated", "refusal"), GATED)
def test_gated_members(
    kube: Client,
    cluster: LocalCluster,
    namespace: str,
    fake_nodes: Callable[..., list[str]],
    engines: Callable[..., EngineProcess],
    pod_group_crd: None,
    min_member: int,
    binds_gated: bool,
    refusal: str,
) -> None:
    """Three members, one with a scheduling gate (SP 3482c42): with minMember 3 PreFilter
    refuses the other two at once instead of letting them hold the node at Permit; with
    minMember 2 the gated one is the slack and the two bind. Lifting the gate binds the third.
    Broken (gates not counted), the first row's members wait at Permit instead of being
    refused; (gates counted without the slack) the second row's never bind."""
    pool = {"pool": namespace}
    fake_nodes(1, cpu="4", memory="8Gi", labels=pool)
    name = scheduler_name()
    engines(coscheduling(engine_config(cluster.kubeconfig, name)))
    kube.create(pod_group("g", namespace, min_member, scheduleTimeoutSeconds=LONG_TIMEOUT))
    create_all(kube, [member("g-0", namespace, name, "g", pool),
                      member("g-1", namespace, name, "g", pool),
                      member("g-2", namespace, name, "g", pool,
                             schedulingGates=[{"name": GATE}])])  # fmt: skip
    if binds_gated:
        wait_until("the ungated two bound", lambda: bound(kube, namespace) == {"g-0", "g-1"})
    else:
        wait_until("the ungated refused for the gated one",
                   lambda: said(kube, namespace, "g-0", refusal)
                   and said(kube, namespace, "g-1", refusal))  # fmt: skip
        assert not waiting_at_permit(kube, namespace, ["g-0"])
        assert not waiting_at_permit(kube, namespace, ["g-1"])
        assert bound(kube, namespace) == set()
    kube.request("PATCH", f"/api/v1/namespaces/{namespace}/pods/g-2",
                 body={"spec": {"schedulingGates": None}},
                 content_type=CONTENT_MERGE_PATCH)  # fmt: skip
    wait_until("the whole gang bound", lambda: bound(kube, namespace) == {"g-0", "g-1", "g-2"})


TWO_GANGS = [
    # id, podGroupRejectPercentage (100: PostFilter never rejects, QueueSort alone keeps the
    # gangs apart)
    pytest.param(None, id="default args: QueueSort and PostFilter's rejection"),
    pytest.param(100, id="no optimistic rejection: QueueSort alone"),
]  # fmt: skip


@pytest.mark.parametrize("reject_percentage", TWO_GANGS)
def test_two_gangs_that_together_exceed_the_node_do_not_deadlock(
    kube: Client,
    cluster: LocalCluster,
    namespace: str,
    fake_nodes: Callable[..., list[str]],
    engines: Callable[..., EngineProcess],
    pod_group_crd: None,
    reject_percentage: int | None,
) -> None:
    """Two gangs of three 1-cpu members on one 4-cpu node, all pending when the engine starts
    (named so that the API lists them interleaved: m0-a, m0-b, m1-a, ...), with a Permit
    timeout far beyond the test: one gang binds whole, the other binds nothing and stays so.
    QueueSort orders a group's members together (the group's creation time), so one gang is
    placed before the other starts; PostFilter's rejection frees what a gang that cannot
    complete holds. Broken (members sorted one by one, and no rejection), each gang holds two
    cpus at Permit and neither completes for 600 s. (Created while the engine runs, each
    gang's members are refused until its last one arrives, and that order alone keeps them
    apart: the members' sort went unchecked, make mutate's cos-sort-by-pod.)"""
    pool = {"pool": namespace}
    fake_nodes(1, cpu="4", memory="8Gi", labels=pool)
    name = scheduler_name()
    for g in ("a", "b"):
        kube.create(pod_group(g, namespace, 3, scheduleTimeoutSeconds=LONG_TIMEOUT))
        # creationTimestamp has whole seconds: groups of one second tie, and SP's QueueSort
        # then orders their members by pod name, which interleaves these.
        time.sleep(1.1)
    create_all(kube, [member(f"m{i}-{g}", namespace, name, g, pool)
                      for i in range(3) for g in ("a", "b")])  # fmt: skip
    args = {} if reject_percentage is None else {"podGroupRejectPercentage": reject_percentage}
    engines(coscheduling(engine_config(cluster.kubeconfig, name), **args))
    wait_until("one gang bound whole", lambda: len(bound(kube, namespace)) == 3, timeout=60)
    placed = bound(kube, namespace)
    assert len({n.split("-")[1] for n in placed}) == 1, placed
    time.sleep(4)  # the other keeps retrying: it never takes a part of the room
    assert bound(kube, namespace) == placed
    # The other's members may wait at Permit (no rejection in the second row): deleted, they
    # are released now, not at the engine's stop.
    (other,) = {"a", "b"} - {n.split("-")[1] for n in placed}
    for i in range(3):
        kube.delete("v1", "Pod", f"m{i}-{other}", namespace)


def test_a_gang_that_never_fits_does_not_block_the_pod_behind_it(
    kube: Client,
    cluster: LocalCluster,
    namespace: str,
    fake_nodes: Callable[..., list[str]],
    engines: Callable[..., EngineProcess],
    pod_group_crd: None,
) -> None:
    """A gang of three on a 2-cpu node, its third member fitting nowhere, with a Permit timeout
    far beyond the test: two members wait at Permit holding both cpus until the third fails
    Filter and PostFilter rejects them (default podGroupRejectPercentage) and backs the group
    off (podGroupBackoffSeconds, SP's remedy: without it the rejected two are retried at once
    and wait again, while the third, unschedulable, is not retried to reject them, until the
    Permit timeout). A 2-cpu pod created after the rejection binds. Broken (no rejection, or no
    backoff), the waiting members hold the node for 600 s and the pod never binds."""
    pool = {"pool": namespace}
    (node,) = fake_nodes(1, cpu="2", memory="8Gi", labels=pool)
    name = scheduler_name()
    engines(coscheduling(engine_config(cluster.kubeconfig, name), podGroupBackoffSeconds=60))
    kube.create(pod_group("g", namespace, 3, scheduleTimeoutSeconds=LONG_TIMEOUT))
    nowhere = {**pool, "absent": "label"}
    create_all(kube, [member("g-0", namespace, name, "g", pool),
                      member("g-1", namespace, name, "g", pool),
                      member("g-2", namespace, name, "g", nowhere)])  # fmt: skip
    wait_until(
        "the gang rejected once",
        lambda: said(kube, namespace, "g-2", "gets rejected due to Pod g-2"),
    )
    kube.create(pod("x", namespace, name, nodeSelector=pool, requests={"cpu": "2"},
                    terminationGracePeriodSeconds=0))  # fmt: skip
    wait_until("x bound", lambda: "x" in bound(kube, namespace), timeout=30)
    assert status_of(kube, namespace)["x"][0] == node
    assert bound(kube, namespace) == {"x"}
