"""Binding cycles never wait for one another: 200 pods held in PreBind (binding conditions,
volume binding) do not delay the Binding of the next pod, as upstream's goroutine per binding
cycle does not; threads are reused, and the idle ones end down to those kept."""

from __future__ import annotations

import random
import threading
import time
from typing import Any

from corral.scheduler.backend.queue import SchedulingQueue
from corral.scheduler.engine.binding_threads import ElasticThreads
from corral.scheduler.engine.loop import Failure, SchedulingLoop, Success
from corral.scheduler.framework.cycle_state import CycleState
from corral.scheduler.framework.profile import ResolvedProfile
from corral.scheduler.framework.runtime.framework import Framework
from corral.scheduler.framework.runtime.schedule_pod import PodScheduler
from corral.scheduler.framework.status import Status
from corral.scheduler.framework.types import PodInfo
from corral.testing.builders import build_cache, node, pod_info
from support.scheduler_fakes import FakeBind, registry_of

HELD = 200  # far more than the 64 workers of the fixed pool this replaced


class HoldingPreBind:
    """PreBind that holds every pod named ``held-*`` until released, as binding conditions
    hold a pod until its device is ready."""

    name = "HoldingPreBind"

    def __init__(self) -> None:
        self.release = threading.Event()
        self.holding = 0
        self._lock = threading.Lock()

    def pre_bind(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        if pod.name.startswith("held-"):
            with self._lock:
                self.holding += 1
            assert self.release.wait(60)
        return None


class Outcomes:
    def __init__(self) -> None:
        self.bound: list[str] = []
        self.failed: list[str] = []
        self.changed = threading.Condition()

    def scheduled(self, outcome: Success) -> None:
        with self.changed:
            self.bound.append(outcome.pod.name)
            self.changed.notify_all()

    def failed(self, outcome: Failure) -> None:
        with self.changed:
            self.failed.append(f"{outcome.pod.name}: {outcome.message}")
            self.changed.notify_all()


def _wait(condition: Any, seconds: float = 30) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.01)
    return False


def test_pods_held_in_prebind_do_not_delay_the_next_binding() -> None:
    holder = HoldingPreBind()
    binder = FakeBind("FakeBind", None)
    profile = ResolvedProfile(
        scheduler_name="default-scheduler",
        queue_sort=("FakeQueueSort",),
        pre_bind=(holder.name,),
        bind=("FakeBind",),
    )
    registry = {**registry_of(holder), "FakeBind": lambda _a, _h: binder}
    fwk = Framework(profile, registry)
    scheduler = PodScheduler(fwk, rng=random.Random(0))
    queue = SchedulingQueue(less=lambda a, b: a.timestamp < b.timestamp)
    cache = build_cache([node("n1", cpu="1000", pods="1000")])
    outcomes = Outcomes()
    schedulers = {"default-scheduler": scheduler}
    loop = SchedulingLoop(queue, cache, schedulers, outcomes, binding_workers=4)
    for i in range(HELD):
        queue.add(pod_info(f"held-{i}"))
    loop.start()
    try:
        assert _wait(lambda: holder.holding == HELD), f"{holder.holding} of {HELD} held"
        queue.add(pod_info("next"))
        assert _wait(lambda: "next" in outcomes.bound), outcomes.failed[:3]
        assert len(outcomes.bound) == 1  # the held ones are still held
    finally:
        holder.release.set()
        assert _wait(lambda: len(outcomes.bound) == HELD + 1)
        loop.stop()
    assert not outcomes.failed


def test_threads_are_reused_and_the_idle_ones_end_down_to_those_kept() -> None:
    threads = ElasticThreads(keep=2, idle_seconds=0.2)
    gate = threading.Event()
    done: list[int] = []
    lock = threading.Lock()

    def work(i: int) -> None:
        gate.wait(10)
        with lock:
            done.append(i)

    for i in range(10):
        threads.submit(work, i)
    assert threads.threads == 10  # none was idle: one each
    gate.set()
    assert _wait(lambda: len(done) == 10)
    assert _wait(lambda: threads.threads == 2, 5)  # idle past 0.2 s: down to keep
    for i in range(2):
        threads.submit(work, 10 + i)  # taken by the two kept threads, none started
    assert _wait(lambda: len(done) == 12)
    assert threads.threads == 2
    threads.shutdown()
    assert threads.threads == 0
