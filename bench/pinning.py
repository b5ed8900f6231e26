"""CPU pinning for measured runs: the scheduler under test on its own core, everything else
(etcd, kube-apiserver, the harness) on the others, identically for both schedulers.

Affinity is inherited across fork and exec, so nothing is pinned after the fact (which would
race with threads being created): the harness pins its own main thread to the control-plane
cores before it starts anything, and starts the scheduler inside :func:`on_cpus`, which moves
the calling thread to the scheduler's core for the spawn only. Go programs size GOMAXPROCS
from the affinity they start with, so kube-scheduler runs with one P, as the Python engine
runs its threads on one core. :func:`allowed` reads back what a process actually got, which
each run records.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path


class PinningError(ValueError):
    """A ``--pin`` value this machine cannot honour; the message names it."""


@dataclass(frozen=True)
class Pinning:
    scheduler: frozenset[int]
    rest: frozenset[int]

    def to_json(self) -> dict[str, list[int]]:
        return {"scheduler": sorted(self.scheduler), "rest": sorted(self.rest)}


def _cpus(text: str, option: str) -> frozenset[int]:
    cpus: set[int] = set()
    for part in filter(None, text.split(",")):
        low, sep, high = part.partition("-")
        if not low.isdigit() or (sep and not high.isdigit()):
            raise PinningError(f"{option}: {text!r} is not a CPU list like 1 or 0,2-3")
        cpus.update(range(int(low), int(high if sep else low) + 1))
    if not cpus:
        raise PinningError(f"{option}: no CPU in {text!r}")
    return frozenset(cpus)


def parse(text: str, available: frozenset[int] | None = None) -> Pinning | None:
    """``off``; ``auto`` (the scheduler on the highest CPU, the rest on the others); or
    ``SCHED:REST`` as CPU lists, e.g. ``1:0``. ``available`` defaults to this process's CPUs."""
    cpus = available if available is not None else frozenset(os.sched_getaffinity(0))
    if text == "off":
        return None
    if text == "auto":
        if len(cpus) < 2:
            raise PinningError(f"--pin auto: needs at least 2 CPUs, this process has {len(cpus)}")
        top = max(cpus)
        return Pinning(frozenset({top}), cpus - {top})
    sched, sep, rest = text.partition(":")
    if not sep:
        raise PinningError(f"--pin: {text!r} is not off, auto or SCHED:REST (e.g. 1:0)")
    pin = Pinning(_cpus(sched, "--pin"), _cpus(rest, "--pin"))
    if pin.scheduler & pin.rest:
        raise PinningError(f"--pin: {text!r} gives CPU(s) {sorted(pin.scheduler & pin.rest)} "
                           "to both the scheduler and the rest")  # fmt: skip
    missing = (pin.scheduler | pin.rest) - cpus
    if missing:
        raise PinningError(f"--pin: {text!r} names CPU(s) {sorted(missing)}; this process can "
                           f"use {sorted(cpus)}")  # fmt: skip
    return pin


def pin_self(cpus: frozenset[int]) -> None:
    """Pin the calling thread (and so everything it starts from now on)."""
    os.sched_setaffinity(0, cpus)


@contextlib.contextmanager
def on_cpus(cpus: frozenset[int] | None) -> Iterator[None]:
    """Run the block (a spawn) with the calling thread on ``cpus``, then move it back."""
    if cpus is None:
        yield
        return
    before = os.sched_getaffinity(0)
    os.sched_setaffinity(0, cpus)
    try:
        yield
    finally:
        os.sched_setaffinity(0, before)


def allowed(pid: int) -> str:
    """The CPUs ``pid`` may run on, as /proc shows them (e.g. ``1`` or ``0-1``)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("Cpus_allowed_list:"):
            return line.split(":", 1)[1].strip()
    return "?"
