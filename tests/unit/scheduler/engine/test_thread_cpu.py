"""The engine's CPU by thread role, read from /proc at scrape time."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from corral.scheduler.engine import thread_cpu


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
