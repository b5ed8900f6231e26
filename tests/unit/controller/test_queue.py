"""The operator's work queue keeps client-go's workqueue contract (controller/queue.py): a name
is queued once, never processed twice at once, re-queued when added while processed, and a
failure is retried after a doubling, capped, per-name delay that a success resets."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

import pytest

from corral.controller.queue import WorkQueue


async def _drain(
    queue: WorkQueue, process: Callable[[str], Awaitable[None]], *, until: float
) -> None:
    worker = asyncio.create_task(queue.worker(process))
    await asyncio.sleep(until)
    worker.cancel()
    with pytest.raises(asyncio.CancelledError):
        await worker
    queue.close()


def test_adding_a_queued_name_coalesces() -> None:
    async def run() -> list[str]:
        queue, seen = WorkQueue(), []
        for name in ("a", "b", "a", "a"):
            queue.add(name)
        assert len(queue) == 2

        async def process(name: str) -> None:
            seen.append(name)

        await _drain(queue, process, until=0.05)
        return seen

    assert asyncio.run(run()) == ["a", "b"]


def test_a_name_added_while_processed_runs_again_after_never_alongside() -> None:
    async def run() -> list[str]:
        queue, log = WorkQueue(), []
        running: set[str] = set()

        async def process(name: str) -> None:
            assert name not in running, "processed twice at once"
            running.add(name)
            log.append(f"start {name}")
            if log.count(f"start {name}") == 1:
                queue.add(name)  # an event arrives mid-reconcile
                queue.add(name)  # and another: still one more run
            await asyncio.sleep(0.01)
            log.append(f"end {name}")
            running.discard(name)

        queue.add("a")
        workers = [asyncio.create_task(queue.worker(process)) for _ in range(2)]
        await asyncio.sleep(0.1)
        for w in workers:
            w.cancel()
        await asyncio.gather(*workers, return_exceptions=True)
        queue.close()
        return log

    assert asyncio.run(run()) == ["start a", "end a", "start a", "end a"]


@pytest.mark.parametrize(
    ("failures", "want"),
    [
        pytest.param(1, [0.5], id="first retry after base"),
        pytest.param(3, [0.5, 1.0, 2.0], id="doubles"),
        pytest.param(6, [0.5, 1.0, 2.0, 3.0, 3.0, 3.0], id="capped"),
    ],
)
def test_backoff_doubles_to_the_cap(failures: int, want: list[float]) -> None:
    queue = WorkQueue(base=0.5, cap=3.0)
    assert [queue.backoff("a") for _ in range(failures)] == want
    assert queue.backoff("b") == 0.5  # per name


def test_a_failure_is_retried_and_a_success_resets_the_delay() -> None:
    async def run() -> tuple[list[str], float]:
        queue, attempts = WorkQueue(base=0.01, cap=0.05), []

        async def process(name: str) -> None:
            attempts.append(name)
            if len(attempts) < 3:
                raise RuntimeError("apply refused")

        queue.add("a")
        await _drain(queue, process, until=0.2)
        return attempts, queue.backoff("a")

    attempts, next_delay = asyncio.run(run())
    assert attempts == ["a", "a", "a"]
    assert next_delay == 0.01  # the success reset it


def test_add_after_arms_one_timer_per_name_and_close_cancels_it() -> None:
    async def run() -> int:
        queue = WorkQueue()
        queue.add_after("a", 0.01)
        queue.add_after("a", 0.01)
        await asyncio.sleep(0.05)
        assert len(queue) == 1
        queue.add_after("b", 0.01)
        queue.close()
        await asyncio.sleep(0.05)
        return len(queue)

    assert asyncio.run(run()) == 1


def test_a_name_is_in_the_queue_while_queued_or_processed() -> None:
    async def run() -> list[tuple[bool, bool]]:
        queue, seen = WorkQueue(), []
        queue.add("a")

        async def process(name: str) -> None:
            seen.append((name in queue, "b" in queue))

        await _drain(queue, process, until=0.05)
        seen.append(("a" in queue, "b" in queue))
        return seen

    assert asyncio.run(run()) == [(True, False), (False, False)]
