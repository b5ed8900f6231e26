"""The machine-wide ownership of the one real node a machine has room for.

Contract: the iptables chains, ``/kubepods``, the node's ports and its API address are
host-global, so one cluster directory at a time owns the machine's real node. :data:`OWNER_FILE`
names it, and it is read and written only under :func:`machine_lock` (an ``flock`` on
:data:`LOCK_FILE`), so two runs serialize instead of fighting. An owner whose node is dead
(its claimer and daemons gone) is cleaned up after by the next claimer.
"""

from __future__ import annotations

import contextlib
import fcntl
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Final, Protocol, TypeVar

from corral_dev.realnode.host import RealNodeError, say

LOCK_FILE: Final = Path("/run/corral-realnode.lock")
OWNER_FILE: Final = Path("/run/corral-realnode.owner")
OWNER_POLL: Final = 2.0  # seconds between looks at a live owner that may go

_T = TypeVar("_T")


class Holder(Protocol):
    """The record of an owner's node, enough to tell whether it still runs."""

    def alive(self) -> bool: ...


_H = TypeVar("_H", bound=Holder)


@contextlib.contextmanager
def machine_lock() -> Iterator[None]:
    """The machine-wide lock over :data:`OWNER_FILE` and the owner's record. Not reentrant."""
    LOCK_FILE.parent.mkdir(parents=True, exist_ok=True)
    with LOCK_FILE.open("a+") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def current_owner() -> Path | None:
    """The cluster directory holding this machine's real node, if any."""
    try:
        return Path(OWNER_FILE.read_text().strip())
    except FileNotFoundError:
        return None


def take_ownership(cluster_dir: Path) -> None:
    """Under :func:`machine_lock`: record ``cluster_dir`` as the owner."""
    OWNER_FILE.write_text(str(cluster_dir))


def drop_ownership(cluster_dir: Path) -> None:
    """Under :func:`machine_lock`: forget the owner if it is ``cluster_dir``."""
    if current_owner() == cluster_dir:
        OWNER_FILE.unlink(missing_ok=True)


def when_free(
    take: Callable[[Path | None, _H | None], _T],
    *,
    attach: Callable[[Path], _H | None],
    timeout: float,
    busy: Callable[[Path], str],
    mine: Path | None = None,
    progress: bool = False,
) -> _T:
    """``take(dead, stale)``'s result, called under :func:`machine_lock` once no live real node
    holds the machine but ``mine``'s. ``dead`` is the other cluster directory :data:`OWNER_FILE`
    names if its node is dead (None when no one or ``mine`` holds the machine), ``stale`` that
    node's record (``attach(dead)``) if it left one, for ``take`` to clean up. Looks again every
    :data:`OWNER_POLL` s (the lock is not held in between); past ``timeout`` s raises
    :class:`RealNodeError` with ``busy(owner)``. With ``progress``, says once that it waits."""
    deadline = time.monotonic() + timeout
    announced = False
    while True:
        with machine_lock():
            owner = current_owner()
            if owner is None or owner == mine:
                return take(None, None)
            other = attach(owner)
            if other is None or not other.alive():
                return take(owner, other)
        if time.monotonic() > deadline:
            raise RealNodeError(busy(owner))
        if not announced:
            say(f"waiting for the real node of {owner} to go (one per machine)", progress)
            announced = True
        time.sleep(OWNER_POLL)
