"""The engine's CPU by thread role, read from /proc at scrape time."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from corral.scheduler.engine import thread_cpu
from corral.scheduler.engine.binding_threads import ElasticThreads


@pytest.mark.parametrize(
    ("name", "want"),
    [
        pytest.param("binding_0", "binding", id="a pool's thread"),
        pytest.param("binding_12", "binding", id="two digits"),
        pytest.param("preemption-call_3", "preemption-call", id="a dashed pool name"),
        pytest.param("scheduling", "scheduling", id="a single thread"),
        pytest.param("MainThread", "MainThread", id="the event loop's"),
        pytest.param("Thread-3 (run)", "Thread-3 (run)", id="an anonymous thread as it is"),
    ],
)  # fmt: skip
def test_role(name: str, want: str) -> None:
    assert thread_cpu.role(name) == want


def _spin(seconds: float) -> None:
    end = time.thread_time() + seconds
    while time.thread_time() < end:
        pass


def test_a_busy_pool_is_counted_under_its_role_and_idle_threads_barely() -> None:
    idle = threading.Event()
    sleeper = threading.Thread(target=idle.wait, name="sleeper", daemon=True)
    sleeper.start()
    try:
        with ThreadPoolExecutor(2, thread_name_prefix="busy") as pool:
            before = thread_cpu.by_role().get("busy", 0.0)
            list(pool.map(_spin, [0.3, 0.3]))
            after = thread_cpu.by_role()
        # Ticks are 10 ms: 0.6 s of spinning reads as at least 0.5 s.
        assert after["busy"] - before >= 0.5
        assert after["sleeper"] < 0.1
    finally:
        idle.set()
        sleeper.join()


def test_the_collector_exports_every_role() -> None:
    (family,) = list(thread_cpu.ThreadCpu().collect())
    assert family.name == "corral_thread_cpu_seconds"
    roles = {s.labels["thread"]: s.value for s in family.samples}
    assert "MainThread" in roles
    assert all(v >= 0 for v in roles.values())


def test_a_thread_that_is_gone_reads_as_none() -> None:
    assert thread_cpu.cpu_seconds(2**31 - 1) is None


def test_the_binding_threads_read_as_one_role() -> None:
    """The elastic binding pool names its threads like a pool, so the bench's per-role table
    has one ``binding`` column however many threads the cycles started."""
    threads = ElasticThreads(keep=0, idle_seconds=10.0, name="bind-probe")
    gate = threading.Event()
    try:
        for _ in range(3):
            threads.submit(gate.wait, 10)
        names = {t.name for t in threading.enumerate() if t.name.startswith("bind-probe")}
        assert len(names) == 3
        assert {thread_cpu.role(n) for n in names} == {"bind-probe"}
    finally:
        gate.set()
        threads.shutdown()


def test_a_pool_thread_that_ends_keeps_its_seconds_in_its_role() -> None:
    """An idle binding thread ends (the pool shrinks to ``keep``): the role's counter must not
    fall, so the thread's CPU stays in it."""
    threads = ElasticThreads(keep=0, idle_seconds=0.05, name="retire-probe")
    threads.submit(_spin, 0.3)

    def alive() -> list[threading.Thread]:
        return [t for t in threading.enumerate() if t.name.startswith("retire-probe")]

    deadline = time.monotonic() + 10
    while alive() and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not alive()
    assert thread_cpu.by_role()["retire-probe"] >= 0.25
    threads.shutdown()
