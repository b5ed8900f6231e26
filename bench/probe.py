"""How fast this machine's CPU is right now: a fixed pure-Python loop, timed in thread CPU time.

On a shared virtual machine the same work costs a different number of CPU seconds from one
minute to the next (other tenants on the host's cores and caches); the guest cannot see why,
but it can measure it. The probe runs ``TRIALS`` times and keeps the fastest trial, so that a
trial interrupted by the guest's own processes does not count; what is left is the host's
speed. It costs about 0.1 s, outside the measured phase.
"""

from __future__ import annotations

import time
from typing import Final

TRIALS: Final = 15
LOOP: Final = 200_000


def _work() -> int:
    total = 0
    for i in range(LOOP):
        total += i * i % 7
    return total


def cpu_ms() -> float:
    """Thread CPU milliseconds of the fixed loop, fastest of ``TRIALS``."""
    best = float("inf")
    for _ in range(TRIALS):
        start = time.thread_time()
        _work()
        best = min(best, time.thread_time() - start)
    return best * 1000
