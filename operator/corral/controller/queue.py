"""A work queue of profile names, with client-go's workqueue semantics.

Contract:
- A name is queued at most once; adding a queued name is a no-op (events coalesce).
- A name is never processed by two workers at once; adding it while it is processed queues it
  again for after (nothing is lost).
- A failed name is re-added after a per-name delay doubling from ``base`` to ``cap``; a success
  resets the delay.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Final

BASE_DELAY: Final = 0.5
MAX_DELAY: Final = 60.0

log = logging.getLogger(__name__)


class WorkQueue:
    def __init__(self, *, base: float = BASE_DELAY, cap: float = MAX_DELAY) -> None:
        self._queue: asyncio.Queue[str] = asyncio.Queue()
        self._queued: set[str] = set()
        self._active: set[str] = set()
        self._dirty: set[str] = set()
        self._failures: dict[str, int] = {}
        self._timers: dict[str, asyncio.TimerHandle] = {}
        self.base = base
        self.cap = cap

    def add(self, name: str) -> None:
        if name in self._active:
            self._dirty.add(name)
            return
        if name in self._queued:
            return
        self._queued.add(name)
        self._queue.put_nowait(name)

    def add_after(self, name: str, delay: float) -> None:
        if name in self._timers:
            return
        loop = asyncio.get_running_loop()

        def fire() -> None:
            self._timers.pop(name, None)
            self.add(name)

        self._timers[name] = loop.call_later(delay, fire)

    def backoff(self, name: str) -> float:
        failures = self._failures.get(name, 0)
        self._failures[name] = failures + 1
        return float(min(self.cap, self.base * 2**failures))

    def __len__(self) -> int:
        return len(self._queued) + len(self._active)

    def __contains__(self, name: object) -> bool:
        """Whether ``name`` is queued or being processed."""
        return name in self._queued or name in self._active

    async def worker(self, process: Callable[[str], Awaitable[None]]) -> None:
        """Take names forever; ``process`` raising means "failed, retry later"."""
        while True:
            name = await self._queue.get()
            self._queued.discard(name)
            self._active.add(name)
            try:
                await process(name)
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                delay = self.backoff(name)
                log.warning("reconcile of %s failed, retrying in %.1fs: %s", name, delay, exc)
                self.add_after(name, delay)
            else:
                self._failures.pop(name, None)
            finally:
                self._active.discard(name)
                if name in self._dirty:
                    self._dirty.discard(name)
                    self.add(name)

    def close(self) -> None:
        for timer in self._timers.values():
            timer.cancel()
        self._timers.clear()
