"""The hand-off gives calls from worker threads to the event loop in order, with one loop wakeup
per batch; a failing call does not stall later ones; nothing runs before a loop is attached."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest

from corral.scheduler.engine.handoff import LoopHandoff, TaskSet


@pytest.mark.parametrize("fail_at", [None, 3], ids=["all succeed", "the fourth report raises"])
def test_reports_reach_the_loop_in_order(fail_at: int | None) -> None:
    got: list[int] = []

    def report(i: int) -> None:
        if i == fail_at:
            raise RuntimeError("boom")
        got.append(i)

    async def main() -> int:
        reporter = LoopHandoff()
        loop = asyncio.get_running_loop()
        reporter.attach(loop)
        wakeups = 0
        original = loop.call_soon_threadsafe

        def counting(*args: Any, **kwargs: Any) -> Any:
            nonlocal wakeups
            wakeups += 1
            return original(*args, **kwargs)

        loop.call_soon_threadsafe = counting  # type: ignore[method-assign]

        def worker() -> None:
            for i in range(200):
                reporter.on_loop(report, i)

        thread = threading.Thread(target=worker)
        thread.start()
        await asyncio.to_thread(thread.join)
        await asyncio.sleep(0.05)
        reporter.on_loop(report, 200)  # after a drain: a new wakeup is sent
        await asyncio.sleep(0.05)
        return wakeups

    wakeups = asyncio.run(main())
    assert got == [i for i in range(201) if i != fail_at]
    assert 2 <= wakeups < 150  # batched: one per report would be 201


def test_calls_before_a_loop_is_attached_are_dropped() -> None:
    got: list[int] = []
    handoff = LoopHandoff()
    handoff.on_loop(got.append, 1)  # an engine that is not running posts nothing

    async def main() -> None:
        handoff.attach(asyncio.get_running_loop())
        handoff.on_loop(got.append, 2)
        await asyncio.sleep(0.01)

    asyncio.run(main())
    assert got == [2]


def test_task_set_cancels_what_still_runs() -> None:
    async def main() -> tuple[bool, bool]:
        tasks = TaskSet()
        finished = tasks.spawn(asyncio.sleep(0))
        forever = tasks.spawn(asyncio.Event().wait())
        await asyncio.sleep(0.01)
        await tasks.cancel_all()
        return finished.cancelled(), forever.cancelled()

    assert asyncio.run(main()) == (False, True)
