"""Gangs in the queue stay safe (GenericWorkload): no deadlock between gangs that together
exceed the cluster, no head-of-line blocking by a gang that never fits, a member deleted while
its group is placed, and a leader failover while groups wait."""

from __future__ import annotations

import contextlib
import signal
import time
from collections.abc import Callable
from datetime import datetime

import pytest

from corral.k8s import ApiError, Client
from support.engine_process import EngineProcess, create_all, leader_election, wait_until
from support.gang import bound, condition, member, pod_group

pytestmark = pytest.mark.e2e


def _unschedulable(kube: Client, namespace: str, group: str) -> bool:
    cond = condition(kube, namespace, group)
    return cond is not None and cond["reason"] == "Unschedulable"


def test_two_gangs_that_together_exceed_the_cluster_do_not_deadlock(
    gang_kube: Client,
    gang_namespace: str,
    gang_nodes: Callable[..., list[str]],
    gang_scheduler: tuple[str, EngineProcess],
) -> None:
    """4 cpu for two gangs of 3 x 1 cpu, created interleaved: one gang is placed whole, the
    other binds nothing and says why (no member of each holding room the other needs)."""
    scheduler, _ = gang_scheduler
    gang_nodes(2, cpu="2")
    for g in ("a", "b"):
        gang_kube.create(pod_group(g, gang_namespace, min_count=3))
    create_all(gang_kube, [member(f"{g}-{i}", gang_namespace, scheduler, g)
                           for i in range(3) for g in ("a", "b")])  # fmt: skip

    def settled() -> bool:
        placed = bound(gang_kube, gang_namespace)
        return len(placed) == 3 and any(_unschedulable(gang_kube, gang_namespace, g) for g in "ab")

    wait_until("one gang placed, the other refused", settled, timeout=90)
    placed = bound(gang_kube, gang_namespace)
    groups = {name.split("-")[0] for name in placed}
    assert len(groups) == 1, placed  # whole: three pods of one gang
    # It stays so: the refused gang retries with backoff and never takes a part of the room.
    time.sleep(5)
    assert bound(gang_kube, gang_namespace) == placed


def test_a_gang_that_never_fits_does_not_block_what_follows(
    gang_kube: Client,
    gang_namespace: str,
    gang_nodes: Callable[..., list[str]],
    gang_scheduler: tuple[str, EngineProcess],
) -> None:
    """A gang of 3 x 10 cpu on 2-cpu nodes is first in the queue (created first, retried with
    backoff forever); the pods and the gang created after it are placed anyway."""
    scheduler, _ = gang_scheduler
    gang_nodes(2, cpu="2")
    gang_kube.create(pod_group("huge", gang_namespace, min_count=3))
    create_all(gang_kube, [member(f"huge-{i}", gang_namespace, scheduler, "huge", cpu="10")
                           for i in range(3)])  # fmt: skip
    wait_until("the huge gang refused", lambda: _unschedulable(gang_kube, gang_namespace, "huge"))
    gang_kube.create(pod_group("small", gang_namespace, min_count=2))
    plain = member("plain", gang_namespace, scheduler, "unused")
    del plain["spec"]["schedulingGroup"]
    create_all(gang_kube, [plain, *(member(f"small-{i}", gang_namespace, scheduler, "small")
                                    for i in range(2))])  # fmt: skip
    wait_until("the plain pod and the small gang bound",
               lambda: set(bound(gang_kube, gang_namespace)) == {"plain", "small-0", "small-1"},
               timeout=60)  # fmt: skip


def test_a_member_deleted_while_its_group_is_placed(
    gang_kube: Client,
    gang_namespace: str,
    gang_nodes: Callable[..., list[str]],
    gang_scheduler: tuple[str, EngineProcess],
) -> None:
    """One of a gang's 4 members is deleted as soon as the members exist (before, during or
    after its group's cycle, as the race goes): whichever way, the engine keeps going and its
    cache holds no room for the deleted pod — a pod of exactly the room left is placed."""
    scheduler, engine = gang_scheduler
    gang_nodes(2, cpu="2")
    gang_kube.create(pod_group("g", gang_namespace, min_count=4))
    create_all(gang_kube, [member(f"g-{i}", gang_namespace, scheduler, "g") for i in range(4)])
    gang_kube.delete("v1", "Pod", "g-3", gang_namespace)
    # Either the group lost a member before its cycle (3 < minCount: it waits, nothing bound)
    # or after its placement (3 bound, the fourth's binding found no pod).
    with contextlib.suppress(AssertionError):
        wait_until("3 members bound", lambda: len(bound(gang_kube, gang_namespace)) == 3,
                   timeout=20)  # fmt: skip
    placed = bound(gang_kube, gang_namespace)
    assert set(placed) in ({"g-0", "g-1", "g-2"}, set()), placed
    room = "1" if placed else "4"
    filler = member("filler", gang_namespace, scheduler, "unused", cpu=room)
    del filler["spec"]["schedulingGroup"]
    if not placed:  # one pod of the whole 4 cpu does not fit a 2-cpu node: two of 2 cpu
        filler["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "2"
        second = member("filler-2", gang_namespace, scheduler, "unused", cpu="2")
        del second["spec"]["schedulingGroup"]
        create_all(gang_kube, [filler, second])
        want = {"filler", "filler-2"}
    else:
        create_all(gang_kube, [filler])
        want = {"filler"}
    wait_until("the room the deleted member left is used",
               lambda: want <= set(bound(gang_kube, gang_namespace)), timeout=60)  # fmt: skip
    assert engine.alive()


def _holder(kube: Client, namespace: str, lease: str) -> str:
    try:
        found = kube.get("coordination.k8s.io/v1", "Lease", lease, namespace)
    except ApiError:
        return ""
    return str(found["spec"].get("holderIdentity") or "")


def test_leader_failover_while_groups_wait(
    gang_kube: Client,
    gang_namespace: str,
    gang_nodes: Callable[..., list[str]],
    gang_engines: Callable[..., EngineProcess],
) -> None:
    """Two engines, one leader: a gang waits (it does not fit), a second waits for its
    minCount; the leader is killed; the new leader places both once room and the missing
    member come, and writes the group's condition."""
    gang_nodes(1, cpu="2")
    scheduler = f"corral-failover-{datetime.now().strftime('%H%M%S')}"
    election = leader_election(scheduler, gang_namespace, lease=4, renew=3, retry=1)
    running = {}
    for i in range(2):
        engine = gang_engines(scheduler, name=f"{scheduler}-{i}", leaderElection=election)
        running[engine.name] = engine
    wait_until("a leader", lambda: _holder(gang_kube, gang_namespace, scheduler) in running,
               timeout=30)  # fmt: skip
    gang_kube.create(pod_group("wide", gang_namespace, min_count=3))
    create_all(gang_kube, [member(f"wide-{i}", gang_namespace, scheduler, "wide")
                           for i in range(3)])  # fmt: skip
    gang_kube.create(pod_group("short", gang_namespace, min_count=2))
    create_all(gang_kube, [member("short-0", gang_namespace, scheduler, "short")])
    wait_until("the wide gang refused", lambda: _unschedulable(gang_kube, gang_namespace, "wide"))
    leader = _holder(gang_kube, gang_namespace, scheduler)
    running[leader].kill(signal.SIGKILL)
    standby = next(n for n in running if n != leader)

    def standby_leads() -> bool:
        return _holder(gang_kube, gang_namespace, scheduler) == standby

    wait_until("the standby leads", standby_leads, timeout=30)
    assert bound(gang_kube, gang_namespace) == {}
    gang_nodes(2, cpu="2")
    create_all(gang_kube, [member("short-1", gang_namespace, scheduler, "short")])
    wait_until("both gangs placed whole by the new leader",
               lambda: len(bound(gang_kube, gang_namespace)) == 5, timeout=90)  # fmt: skip
    cond = condition(gang_kube, gang_namespace, "short")
    assert cond is not None
    assert (cond["status"], cond["reason"]) == ("True", "Scheduled")
