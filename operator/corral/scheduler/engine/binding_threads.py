"""The binding cycles' threads: every cycle starts at once, however many others are waiting.

Upstream runs each binding cycle on a goroutine of its own, so a pod held in PreBind (binding
conditions, volume binding: up to ten minutes) or in a Permit wait never delays another pod's
Binding. A fixed pool cannot promise that: with 64 workers, 64 waiting pods stopped every
binding. :class:`ElasticThreads` hands a cycle to an idle thread when there is one (threads are
reused: starting one costs more than a Binding's share of CPU) and starts a new thread
otherwise; a thread idle for :data:`IDLE_SECONDS` ends, down to ``keep``. There is no upper
bound, as there is none on goroutines: the cycles' API calls are paced by the engine's token
bucket, not by the number of threads.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any, Final

from corral.scheduler.engine import thread_cpu

log = logging.getLogger("corral.scheduler")

IDLE_SECONDS: Final = 30.0
_STOP: Final = object()


class _Worker:
    __slots__ = ("ready", "task")

    def __init__(self) -> None:
        self.ready = threading.Event()
        self.task: Any = None


class ElasticThreads:
    """``submit(fn, *args)`` runs ``fn(*args)`` now, on a thread no other call holds."""

    def __init__(
        self, *, keep: int, name: str = "binding", idle_seconds: float = IDLE_SECONDS
    ) -> None:
        self.keep = keep
        self.name = name
        self.idle_seconds = idle_seconds
        self._lock = threading.Lock()
        self._idle: list[_Worker] = []
        self._threads: set[threading.Thread] = set()
        self._stopped = False
        self._started = 0

    @property
    def threads(self) -> int:
        """Threads alive now, busy or idle."""
        with self._lock:
            return len(self._threads)

    def submit(self, fn: Callable[..., object], *args: object) -> None:
        task = (fn, args)
        with self._lock:
            if self._stopped:
                raise RuntimeError("cannot submit after shutdown")
            if self._idle:
                worker = self._idle.pop()
                worker.task = task
                worker.ready.set()
                return
            self._started += 1
            thread = threading.Thread(
                target=self._run, args=(task,), name=f"{self.name}_{self._started}", daemon=True
            )
            self._threads.add(thread)
        thread.start()

    def _run(self, task: Any) -> None:
        worker = _Worker()
        me = threading.current_thread()
        try:
            while task is not _STOP:
                fn, args = task
                try:
                    fn(*args)
                except Exception:  # the caller's cycles handle their own errors; a bug stays one
                    log.exception("a binding thread's call failed")
                task = self._next(worker, me)
        finally:
            with self._lock:
                self._threads.discard(me)
            thread_cpu.retire()  # an idle thread ends: its CPU stays in the role's figure

    def _next(self, worker: _Worker, me: threading.Thread) -> Any:
        """The next task for this thread, or ``_STOP`` (shut down, or idle too long)."""
        with self._lock:
            if self._stopped:
                return _STOP
            worker.task = None
            worker.ready.clear()
            self._idle.append(worker)
        while True:
            if worker.ready.wait(self.idle_seconds):
                return worker.task
            with self._lock:
                if worker.ready.is_set():  # handed a task just as the wait ended
                    return worker.task
                if len(self._threads) > self.keep or self._stopped:
                    self._idle.remove(worker)
                    return _STOP

    def shutdown(self, *, wait: bool = True) -> None:
        """No more submissions; idle threads end; with ``wait``, running calls finish first."""
        with self._lock:
            self._stopped = True
            for worker in self._idle:
                worker.task = _STOP
                worker.ready.set()
            self._idle.clear()
            threads = list(self._threads)
        if wait:
            for thread in threads:
                if thread is not threading.current_thread():
                    thread.join()
