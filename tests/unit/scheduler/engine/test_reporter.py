"""The engine's reporter hands outcomes from worker threads to the event loop in order, with
one loop wakeup per batch, and a failing report does not stall later ones."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest

from corral.scheduler.engine.app import _Reporter


@pytest.mark.parametrize("fail_at", [None, 3], ids=["all succeed", "the fourth report raises"])
def test_reports_reach_the_loop_in_order(fail_at: int | None) -> None:
    got: list[int] = []

    def report(i: int) -> None:
        if i == fail_at:
            raise RuntimeError("boom")
        got.append(i)

    async def main() -> int:
        reporter = _Reporter(engine=None)  # type: ignore[arg-type]
        loop = asyncio.get_running_loop()
        reporter.loop = loop
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
