"""CPU seconds of the engine's threads, by role: where the process's CPU goes beyond the
scheduling thread's phases and the binding spans that :mod:`.timing` clocks.

The roles are the threads' names without a pool's ``_N`` suffix: ``MainThread`` (the event
loop: the informers' watches, Events, pod status writes, leader election, the HTTP server),
``scheduling``, ``binding`` (all binding threads together), ``preemption``... Read at scrape time
from ``/proc/self/task/<native id>/stat`` (user + system time), so the threads pay nothing
while they run. Linux only: elsewhere nothing is exported.

Contract: a role's figure is the sum over its threads alive at the scrape plus the seconds of
its threads that ended after calling :func:`retire` (the elastic binding pool's threads do, as
they end when idle), so the figures only grow, as a counter must. A thread that ends without
``retire`` takes its seconds with it.
"""

from __future__ import annotations

import os
import re
import threading
import time
import weakref
from collections.abc import Iterator
from pathlib import Path
from typing import Final

from prometheus_client.core import CounterMetricFamily
from prometheus_client.registry import Collector

_TICKS: Final = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
_TASKS: Final = Path("/proc/self/task")
_POOL_SUFFIX: Final = re.compile(r"_\d+$")


def role(thread_name: str) -> str:
    """``binding_3`` → ``binding``; other names as they are."""
    return _POOL_SUFFIX.sub("", thread_name)


def cpu_seconds(native_id: int) -> float | None:
    """User + system seconds of one thread of this process; None when it is gone or there is
    no ``/proc``."""
    try:
        stat = (_TASKS / str(native_id) / "stat").read_text()
    except OSError:
        return None
    # The command name (field 2) is in parentheses and may hold spaces: split after it.
    fields = stat[stat.rindex(")") + 2 :].split()
    return (int(fields[11]) + int(fields[12])) / _TICKS  # utime, stime: fields 14 and 15


_RETIRED_LOCK: Final = threading.Lock()
_RETIRED: dict[str, float] = {}  # role -> CPU seconds of its threads that ended
_RETIRING: weakref.WeakSet[threading.Thread] = weakref.WeakSet()  # retired, not yet gone


def retire() -> None:
    """Called by a thread about to end: its CPU seconds stay in its role's figure."""
    me = threading.current_thread()
    seconds = time.thread_time()
    with _RETIRED_LOCK:
        _RETIRED[role(me.name)] = _RETIRED.get(role(me.name), 0.0) + seconds
        _RETIRING.add(me)


def by_role() -> dict[str, float]:
    with _RETIRED_LOCK:
        out = dict(_RETIRED)
        retiring = set(_RETIRING)
    for thread in threading.enumerate():
        if thread.native_id is None or thread in retiring:  # counted in _RETIRED already
            continue
        seconds = cpu_seconds(thread.native_id)
        if seconds is not None:
            name = role(thread.name)
            out[name] = out.get(name, 0.0) + seconds
    return out


class ThreadCpu(Collector):
    def collect(self) -> Iterator[CounterMetricFamily]:
        family = CounterMetricFamily(
            "corral_thread_cpu_seconds",
            "CPU seconds (user + system) of the engine's threads, by role (the thread's name "
            "without a pool's _N suffix).",
            labels=["thread"],
        )
        for name, seconds in sorted(by_role().items()):
            family.add_metric([name], seconds)
        yield family
