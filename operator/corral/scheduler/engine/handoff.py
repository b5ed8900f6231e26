"""What the engine's threads and handlers hand to the asyncio event loop.

- :class:`LoopHandoff`: calls from the scheduling and binding threads run on the event loop (the
  only thread that talks to the API asynchronously), in the order they were handed over, with one
  loop wakeup per batch: each ``call_soon_threadsafe`` writes to the loop's self-pipe, and one per
  pod cost 8% of the engine's CPU. Until a loop is attached (and after it closed), calls are
  dropped: an engine that is not running posts nothing.
- :class:`TaskSet`: the tasks the engine spawns on the loop, kept referenced until they end and
  cancelled together at shutdown.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
from collections import deque
from collections.abc import Callable, Coroutine
from typing import Any

log = logging.getLogger("corral.scheduler")


class LoopHandoff:
    def __init__(self) -> None:
        self.loop: asyncio.AbstractEventLoop | None = None
        # Calls waiting for the loop, in order.
        self._pending: deque[tuple[Callable[..., object], tuple[object, ...]]] = deque()
        self._lock = threading.Lock()
        self._wakeup_sent = False

    def attach(self, loop: asyncio.AbstractEventLoop) -> None:
        """Calls handed over from now on run on ``loop``."""
        self.loop = loop

    def on_loop(self, fn: Callable[..., object], *args: object) -> None:
        """Run ``fn(*args)`` on the loop, after every call handed over before it; any thread."""
        loop = self.loop
        if loop is None or loop.is_closed():
            return
        with self._lock:
            self._pending.append((fn, args))
            if self._wakeup_sent:
                return
            self._wakeup_sent = True
        with contextlib.suppress(RuntimeError):  # closed meanwhile (shutdown): nothing to do
            loop.call_soon_threadsafe(self._drain)

    def _drain(self) -> None:
        """On the loop: run every pending call, including those added while draining."""
        while True:
            with self._lock:
                if not self._pending:
                    self._wakeup_sent = False
                    return
                batch = list(self._pending)
                self._pending.clear()
            for fn, args in batch:
                try:
                    fn(*args)
                except Exception:  # one failed report must not stall the ones after it
                    log.exception("reporting a scheduling outcome failed")


class TaskSet:
    def __init__(self) -> None:
        self._tasks: set[asyncio.Task[Any]] = set()

    def spawn(self, coro: Coroutine[Any, Any, Any]) -> asyncio.Task[Any]:
        """Start ``coro`` on the running loop; called on the loop."""
        task = asyncio.create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    async def cancel_all(self) -> None:
        """Cancel every task still running and wait for them to end."""
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
