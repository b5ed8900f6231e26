"""Client-side rate limiting shared by every request an engine makes (client-go's flowcontrol).

One :class:`TokenBucket` serves the asyncio client and the binding threads alike: ``reserve``
takes a token now and says how long the caller must wait before using it, so the caller sleeps
in whatever way suits it (``time.sleep`` or ``await asyncio.sleep``) and callers are served in
the order they asked. Each reservation names the request's HTTP method, and the bucket's
``observer`` (when set) is told every wait, zero included, as client-go's request path observes
``rest_client_rate_limiter_duration_seconds``; an unlimited bucket observes nothing (client-go
has no rate limiter then).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

WaitObserver = Callable[[str, float], None]  # (HTTP method, seconds it waits for its token)


class TokenBucket:
    """``qps`` tokens a second, at most ``burst`` saved up; ``qps <= 0`` means unlimited."""

    def __init__(
        self, qps: float, burst: int, *, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.qps = qps
        self.burst = max(1, burst)
        self._clock = clock
        self._tokens = float(self.burst)
        self._stamp = clock()
        self._lock = threading.Lock()
        self.observer: WaitObserver | None = None

    def reserve(self, verb: str) -> float:
        """Take one token for a ``verb`` request; return the seconds to wait before acting on
        it (0 if none)."""
        if self.qps <= 0:
            return 0.0
        with self._lock:
            now = self._clock()
            self._tokens = min(self.burst, self._tokens + (now - self._stamp) * self.qps)
            self._stamp = now
            self._tokens -= 1
            # A negative balance is a queue of reservations: the last one waits longest.
            delay = 0.0 if self._tokens >= 0 else -self._tokens / self.qps
        observer = self.observer
        if observer is not None:
            observer(verb, delay)
        return delay

    def wait(self, verb: str) -> None:
        delay = self.reserve(verb)
        if delay:
            time.sleep(delay)
