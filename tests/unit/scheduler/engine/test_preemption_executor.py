"""The asynchronous preemption executor's bookkeeping: the scheduling thread never waits, the
preemptor counts as preempting until its last victim is going, a failure or a last victim gone
before our calls re-activates it.

The API calls are recorded by a stand-in for the client (the real calls, against a real API
server, are exercised by tests/e2e/engine/test_preemption.py)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

import pytest

from corral.k8s import ApiError
from corral.k8s.ratelimit import TokenBucket
from corral.scheduler.backend.queue import SchedulingQueue
from corral.scheduler.backend.records import pod_from_json
from corral.scheduler.engine.leaderelection import WriteFence
from corral.scheduler.engine.nominator import Nominator
from corral.scheduler.engine.preemption import ApiPreemptionExecutor
from corral.scheduler.framework.cluster_events import ASSIGNED_POD_DELETE
from corral.scheduler.framework.runtime.framework import Framework
from corral.scheduler.framework.types import PodInfo
from corral.scheduler.plugins.registry import default_profile, in_tree_registry
from corral.testing.builders import pod, pod_info


class Calls:
    """Records requests; ``hold`` blocks the ``hold_method`` request of that pod until released."""

    def __init__(
        self, fail: dict[str, int] | None = None, hold: str = "", hold_method: str = "DELETE"
    ) -> None:
        self.fail = fail or {}  # pod name -> HTTP status its DELETE answers
        self.hold = hold
        self.hold_method = hold_method
        self.release = threading.Event()
        self.holding = threading.Event()
        self.sent: list[tuple[str, str]] = []
        self._lock = threading.Lock()

    def request(self, method: str, path: str, **_kw: object) -> dict[str, object]:
        name = path.split("/")[6]
        with self._lock:
            self.sent.append((method, name))
        if method == self.hold_method and name == self.hold:
            self.holding.set()
            assert self.release.wait(5)
        if method == "DELETE" and name in self.fail:
            raise ApiError(self.fail[name], "x", f"{name} refused")
        return {}


class Harness:
    """``alive`` is the engine's cache: a victim leaves it when its DELETE succeeds (the
    informer's removal event), unless ``informer_lags``."""

    def __init__(
        self, calls: Calls, fence: WriteFence | None = None, *, informer_lags: bool = False
    ) -> None:
        self.calls = calls
        self.alive: dict[str, PodInfo] = {}
        send = calls.request

        def request(method: str, path: str, **kw: object) -> dict[str, object]:
            out = send(method, path, **kw)
            if method == "DELETE" and not informer_lags:
                name = path.split("/")[6]
                for uid in [u for u, p in self.alive.items() if p.name == name]:
                    del self.alive[uid]
            return out

        calls.request = request  # type: ignore[method-assign]
        self.activated: list[str] = []
        self.events: list[str] = []
        self.executor = ApiPreemptionExecutor(
            calls,  # type: ignore[arg-type]
            TokenBucket(1000.0, 1000),
            Nominator(),
            lambda pod, *_: self.events.append(pod.name),
            lookup=self.alive.get,
            activate=lambda pod: self.activated.append(pod.name),
            fence=fence,
        )

    def victims(self, *names: str, deleting: bool = False) -> list[PodInfo]:
        raws = [pod(n, node_name="n1") for n in names]
        for raw in raws if deleting else ():
            raw["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
            raw["metadata"]["deletionGracePeriodSeconds"] = 30
        pods = [pod_from_json(raw) for raw in raws]
        self.alive.update({p.uid: p for p in pods})
        return pods

    def wait(self, condition: Callable[[], bool]) -> None:
        deadline = time.monotonic() + 5
        while not condition():
            assert time.monotonic() < deadline, "timed out"
            time.sleep(0.005)


PREEMPTOR = pod_info("vip", priority=100)


def test_the_scheduling_thread_does_not_wait_and_the_gate_follows_the_last_victim() -> None:
    h = Harness(Calls(hold="v2"))
    victims = h.victims("v1", "v2")
    assert h.executor.preempt(PREEMPTOR, "n1", victims, []) is None  # returned at once
    assert h.executor.is_running_preemption(PREEMPTOR.uid)
    assert h.calls.holding.wait(5)  # the last victim's DELETE is under way
    assert ("DELETE", "v1") in h.calls.sent
    assert h.executor.is_running_preemption(PREEMPTOR.uid)  # v2 still in the cache
    del h.alive[victims[1].uid]  # its deletion reached the informer first
    assert not h.executor.is_running_preemption(PREEMPTOR.uid)
    h.calls.release.set()
    h.wait(lambda: sorted(h.events) == ["v1", "v2"])
    h.wait(lambda: not h.executor._preempting)
    assert h.activated == []
    h.executor.close()


@pytest.mark.parametrize(
    ("fail", "victims", "deleted", "events", "activated"),
    [
        pytest.param({"v1": 500}, ["v1", "v2"], ["v1"], [], ["vip"],
                     id="a first victim fails: the last is spared, the preemptor activated"),
        pytest.param({"v2": 500}, ["v1", "v2"], ["v1", "v2"], ["v1"], ["vip"],
                     id="the last victim fails: activated"),
        pytest.param({"v1": 404}, ["v1", "v2"], ["v1", "v2"], ["v2"], [],
                     id="a victim already gone is not an error"),
        pytest.param({"v2": 404}, ["v1", "v2"], ["v1", "v2"], ["v1"], ["vip"],
                     id="the last victim already gone: activated, its deletion event may "
                        "have reached the queue while the preemptor was gated"),
        pytest.param({"v1": 409}, ["v1"], ["v1"], [], ["vip"],
                     id="the last victim replaced by a namesake (uid precondition): not an "
                        "error, but no deletion event of ours follows: activated"),
    ],
)  # fmt: skip
def test_outcomes(
    fail: dict[str, int],
    victims: list[str],
    deleted: list[str],
    events: list[str],
    activated: list[str],
) -> None:
    h = Harness(Calls(fail=fail))
    h.executor.preempt(PREEMPTOR, "n1", h.victims(*victims), [])
    h.wait(lambda: not h.executor.is_running_preemption(PREEMPTOR.uid))
    h.wait(lambda: not h.executor._preempting)
    h.executor.close()
    assert sorted(n for m, n in h.calls.sent if m == "DELETE") == deleted
    assert sorted(h.events) == events
    assert h.activated == activated


def test_victims_already_terminating_get_no_call_and_no_gate() -> None:
    h = Harness(Calls())
    h.executor.preempt(PREEMPTOR, "n1", h.victims("v1", deleting=True), [])
    assert not h.executor.is_running_preemption(PREEMPTOR.uid)
    h.executor.close()
    assert h.calls.sent == []


def test_lower_priority_nominations_are_cleared_first() -> None:
    h = Harness(Calls())
    nominated = pod_info("low", priority=1)
    h.executor.preempt(PREEMPTOR, "n1", h.victims("v1"), [nominated])
    h.wait(lambda: not h.executor._preempting)
    h.executor.close()
    assert h.calls.sent[0] == ("PATCH", "low")


def test_a_preemptor_whose_last_victim_went_while_it_was_gated_is_not_stranded() -> None:
    """A PreemptionBasic run stalled so (199 of 200 bound, then nothing for 60 s): a cycle
    chose a victim the informer still showed alive; its deletion event reached the queue while
    the preemptor's preemption waited for a worker, so the gate kept the preemptor; the worker
    then found the victim gone and no event was left to requeue it but the 5-minute flush."""
    calls = Calls(fail={"v1": 404}, hold="low", hold_method="PATCH")
    h = Harness(calls)
    # The engine's wiring: the default profile's PreEnqueue (DefaultPreemption's gate asks the
    # executor) and its plugins' events and hints.
    fwk = Framework(default_profile(), in_tree_registry(), preemption_executor=h.executor)
    queue = SchedulingQueue(
        less=fwk.less, pre_enqueue=fwk.run_pre_enqueue, events_by_plugin=fwk.events_by_plugin()
    )
    h.executor.activate = lambda pod: queue.activate(pod.uid)
    queue.add(PREEMPTOR)
    qpi = queue.pop(timeout=0)
    assert qpi is not None
    (victim,) = h.victims("v1")
    h.executor.preempt(PREEMPTOR, "n1", [victim], [pod_info("low", priority=1)])
    assert calls.holding.wait(5)  # the worker has not reached the victim yet
    del h.alive[victim.uid]  # someone else's delete reached the informer
    queue.move_all_to_active_or_backoff(ASSIGNED_POD_DELETE, victim, None)
    qpi.unschedulable_plugins = frozenset({"NodeResourcesFit"})
    queue.add_unschedulable_if_not_present(qpi, queue.scheduling_cycle)
    assert queue.where(PREEMPTOR.uid) == "gated"  # the event came, the gate was shut
    calls.release.set()
    h.wait(lambda: queue.where(PREEMPTOR.uid) == "active")
    h.executor.close()


def test_an_engine_that_lost_its_lease_evicts_nothing() -> None:
    """The fence closed (leadership lost) before the worker's calls: no DELETE, no Event, and
    the preemptor is activated (no deletion event of ours will requeue it)."""
    fence = WriteFence()
    fence.close()
    h = Harness(Calls(), fence)
    h.executor.preempt(PREEMPTOR, "n1", h.victims("v1", "v2"), [])
    h.wait(lambda: not h.executor._preempting)
    h.executor.close()
    assert h.calls.sent == []
    assert h.events == []
    assert h.activated == ["vip"]


def _seen(victim: PodInfo, state: str) -> PodInfo | None:
    """``victim`` as the cache shows it in ``state``."""
    if state == "gone":
        return None
    raw = pod(victim.name, node_name="n1")
    assert pod_from_json(raw).uid == victim.uid
    if state != "alive":
        raw["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
        raw["metadata"]["deletionGracePeriodSeconds"] = 30 if state == "graceful" else 0
        if state == "no-grace-finalizer":
            raw["metadata"]["finalizers"] = ["example.com/keep"]
    return pod_from_json(raw)


@pytest.mark.parametrize(
    ("state", "running"),
    [
        pytest.param("alive", True,
                     id="the cache still shows the last victim: gated until it goes"),
        pytest.param("no-grace", True,
                     id="terminating with no grace period: its removal event follows"),
        pytest.param("no-grace-finalizer", False,
                     id="terminating, held by a finalizer: going, as upstream"),
        pytest.param("graceful", False, id="a graceful deletion: going, as upstream"),
        pytest.param("gone", False, id="out of the cache"),
    ],
)  # fmt: skip
def test_after_its_calls_the_gate_follows_the_cache(state: str, running: bool) -> None:
    h = Harness(Calls(), informer_lags=True)
    (victim,) = h.victims("v1")
    h.executor.preempt(PREEMPTOR, "n1", [victim], [])
    h.wait(lambda: PREEMPTOR.uid in h.executor._finished)  # the calls are done
    seen = _seen(victim, state)
    if seen is None:
        del h.alive[victim.uid]
    else:
        h.alive[victim.uid] = seen
    assert h.executor.is_running_preemption(PREEMPTOR.uid) is running
    h.alive.pop(victim.uid, None)  # its removal event, at last
    assert not h.executor.is_running_preemption(PREEMPTOR.uid)
    assert not h.executor._preempting  # forgotten
    assert not h.executor._finished
    h.executor.close()


def test_a_preemptor_waits_for_its_last_victim_to_leave_the_cache() -> None:
    """PreemptionBasic at 200 nodes: another victim's deletion event let a preemptor through
    while its own last victim, deleted by then, was still in the lagging cache; its cycle failed
    ("not eligible due to a terminating pod on the nominated node"). Now it waits for that
    victim's removal event."""
    h = Harness(Calls(), informer_lags=True)
    fwk = Framework(default_profile(), in_tree_registry(), preemption_executor=h.executor)
    queue = SchedulingQueue(
        less=fwk.less, pre_enqueue=fwk.run_pre_enqueue, events_by_plugin=fwk.events_by_plugin()
    )
    queue.add(PREEMPTOR)
    qpi = queue.pop(timeout=0)
    assert qpi is not None
    (victim,) = h.victims("v1")
    other = pod_from_json(pod("other", node_name="n2"))
    h.executor.preempt(PREEMPTOR, "n1", [victim], [])
    qpi.unschedulable_plugins = frozenset({"NodeResourcesFit"})
    queue.add_unschedulable_if_not_present(qpi, queue.scheduling_cycle)
    h.wait(lambda: PREEMPTOR.uid in h.executor._finished)  # the DELETE answered
    h.alive[victim.uid] = _seen(victim, "no-grace")  # the informer saw it marked, not removed
    queue.move_all_to_active_or_backoff(ASSIGNED_POD_DELETE, other, None)
    assert queue.where(PREEMPTOR.uid) == "gated"
    del h.alive[victim.uid]
    queue.move_all_to_active_or_backoff(ASSIGNED_POD_DELETE, victim, None)
    assert queue.where(PREEMPTOR.uid) in {"active", "backoff"}
    h.executor.close()
