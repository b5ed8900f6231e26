"""Pods held at Permit: each waits until every waiting plugin allows it, one rejects it, or a
plugin's timeout passes (then the pod is rejected as Unschedulable, as upstream).

Thread model: the binding cycle blocks in :meth:`WaitingPod.wait` on its worker thread; plugins
or other threads call ``allow``/``reject``. The clock is injectable; waiting itself sleeps on a
condition variable with the remaining time.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from typing import Final

from corral.scheduler.framework.status import Code, Status
from corral.scheduler.framework.types import PodInfo

# Upstream caps a Permit wait at 15 minutes.
MAX_PERMIT_TIMEOUT: Final = 15 * 60.0


def go_duration(seconds: float) -> str:
    """Seconds in Go's ``time.Duration`` notation (``10s``, ``1.5s``, ``100ms``)."""
    if seconds >= 1 or seconds == 0:
        text = f"{seconds:.9f}".rstrip("0").rstrip(".")
        return f"{text}s"
    millis = seconds * 1000
    text = f"{millis:.6f}".rstrip("0").rstrip(".")
    return f"{text}ms"


class WaitingPod:
    def __init__(
        self, pod: PodInfo, timeouts: dict[str, float], clock: Callable[[], float]
    ) -> None:
        self._pod = pod
        self._clock = clock
        now = clock()
        self._timeouts = dict(timeouts)
        self._deadlines = {name: now + t for name, t in timeouts.items()}
        self._cond = threading.Condition()
        self._done = False
        self._result: Status | None = None

    @property
    def pod(self) -> PodInfo:
        return self._pod

    def pending_plugins(self) -> list[str]:
        with self._cond:
            return list(self._deadlines)

    def rejected(self) -> bool:
        """Whether the wait ended, or will end, in a rejection: a plugin rejected the pod, or a
        plugin's timeout has passed though the binding cycle has not woken to see it yet."""
        with self._cond:
            if self._done:
                return self._result is not None
            now = self._clock()
            return any(deadline <= now for deadline in self._deadlines.values())

    def allow(self, plugin: str) -> None:
        with self._cond:
            if self._done:
                return
            self._deadlines.pop(plugin, None)
            if not self._deadlines:
                self._finish(None)

    def reject(self, plugin: str, message: str) -> None:
        with self._cond:
            if not self._done:
                self._finish(Status(Code.UNSCHEDULABLE, (message,), plugin))

    def _finish(self, result: Status | None) -> None:
        self._done = True
        self._result = result
        self._cond.notify_all()

    def wait(self) -> Status | None:
        """Block until allowed (``None``) or rejected (an Unschedulable status)."""
        with self._cond:
            while not self._done:
                plugin, deadline = min(self._deadlines.items(), key=lambda kv: kv[1])
                remaining = deadline - self._clock()
                if remaining <= 0:
                    self._time_out(plugin)
                    break
                self._cond.wait(timeout=remaining)
            return self._result

    def decided(self) -> bool:
        """Whether the wait is over: allowed, or rejected by a plugin (a timeout that passed
        unseen counts once :meth:`wait` or :meth:`time_out` sees it)."""
        with self._cond:
            return self._done

    def remaining(self) -> float:
        """Seconds until the first plugin's timeout (0 when decided or already past)."""
        with self._cond:
            if self._done or not self._deadlines:
                return 0.0
            return max(0.0, min(self._deadlines.values()) - self._clock())

    def time_out(self) -> None:
        """End the wait as its first timeout would (the simulator's clock, not this one's,
        has passed it): rejected with the timeout's message."""
        with self._cond:
            if not self._done and self._deadlines:
                self._time_out(min(self._deadlines.items(), key=lambda kv: kv[1])[0])

    def _time_out(self, plugin: str) -> None:
        waited = go_duration(self._timeouts[plugin])
        msg = f"rejected due to timeout after waiting {waited} at plugin {plugin}"
        self._finish(Status(Code.UNSCHEDULABLE, (msg,), plugin))


class WaitingPods:
    """uid → WaitingPod, thread-safe."""

    def __init__(self) -> None:
        self._pods: dict[str, WaitingPod] = {}
        self._lock = threading.Lock()

    def add(self, wp: WaitingPod) -> None:
        with self._lock:
            self._pods[wp.pod.uid] = wp

    def remove(self, uid: str) -> None:
        with self._lock:
            self._pods.pop(uid, None)

    def get(self, uid: str) -> WaitingPod | None:
        with self._lock:
            return self._pods.get(uid)

    def __iter__(self) -> Iterator[WaitingPod]:
        with self._lock:
            return iter(list(self._pods.values()))


def monotonic() -> float:
    return time.monotonic()
