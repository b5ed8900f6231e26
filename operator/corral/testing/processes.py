"""Starting, watching and stopping the control plane's processes.

Each process runs in its own session (so a Ctrl-C in the shell that ran ``dev-cluster up`` does
not reach it) with its output in ``<dir>/logs/<name>.log``. A process is identified by its pid,
its executable and, where a record keeps it, its start time, so a recycled pid is never
signalled by mistake.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Final

from corral.ports import ephemeral_range, free_port

# free_port and ephemeral_range are re-exported: the harness takes its servers' ports from here.
__all__ = [
    "ProcessError",
    "boot_id",
    "ephemeral_range",
    "free_port",
    "is_running",
    "is_same_process",
    "kill",
    "log_tail",
    "processes_mentioning",
    "recorded_alive",
    "spawn",
    "start_time",
    "terminate",
    "wait_for",
]


# Field 22 of /proc/<pid>/stat (the start time) in the fields after the command name (from 3).
START_TIME_FIELD: Final = 19


class ProcessError(RuntimeError):
    """A component died or never became ready; the message carries the end of its log."""


def spawn(name: str, argv: Sequence[str], log_dir: Path, cwd: Path) -> subprocess.Popen[bytes]:
    log_dir.mkdir(parents=True, exist_ok=True)
    with (log_dir / f"{name}.log").open("ab") as log:
        return subprocess.Popen(
            list(argv),
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            cwd=cwd,
            start_new_session=True,
        )


def _stat(pid: int) -> list[str] | None:
    """The fields of ``/proc/<pid>/stat`` after the parenthesised command name (which may
    itself contain spaces), from field 3 (the state) on; None if there is no such process."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return None
    return stat.rsplit(")", 1)[1].split()


def is_running(pid: int, executable: str | None = None) -> bool:
    """True if ``pid`` is a live (non-zombie) process, running ``executable`` if given; a zombie
    leader whose other threads still run counts as live when no ``executable`` is asked."""
    return _is_live(pid, _stat(pid), executable)


def _is_live(pid: int, fields: list[str] | None, executable: str | None) -> bool:
    if fields is None:
        return False
    if fields[0] in ("Z", "X"):
        _reap(pid)
        # A dead leader of threads still exiting (a multi-threaded process SIGKILLed: its
        # first thread is a zombie before the others are gone) still holds its files, e.g.
        # the listening socket a restart on the same port needs.
        return executable is None and _threads_live(pid)
    if executable is None:
        return True
    try:
        argv0 = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0", 1)[0].decode()
    except OSError:
        return False
    if argv0:
        return argv0 == executable
    # An empty command line: the process is still inside execve. Popen returns once the child
    # has switched to the new image, before the ELF loader has placed its arguments (with a
    # large Go binary on a busy machine, for milliseconds); /proc/<pid>/exe is already the new
    # binary. (A process past exit_mm also reads empty; its exe link is gone, so it is False.)
    try:
        return os.path.samefile(f"/proc/{pid}/exe", executable)
    except OSError:
        return False


def _threads_live(pid: int) -> bool:
    """True if a thread of ``pid`` other than a zombie is left (``/proc/<pid>/task``)."""
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return False
    for task in tasks:
        try:
            stat = Path(f"/proc/{pid}/task/{task}/stat").read_text()
        except OSError:
            continue
        if stat.rsplit(")", 1)[1].split()[0] not in ("Z", "X"):
            return True
    return False


def boot_id() -> str:
    """This boot's random id: a pid recorded under another boot (a rebooted machine, or a
    machine restored from a copy of its disk) names nothing now."""
    return Path("/proc/sys/kernel/random/boot_id").read_text().strip()


def start_time(pid: int) -> int | None:
    """When ``pid`` started, in clock ticks since boot (field 22 of ``/proc/<pid>/stat``), or
    None if there is no such process. It survives ``execve``."""
    fields = _stat(pid)
    return None if fields is None else int(fields[START_TIME_FIELD])


def is_same_process(pid: int, started: int, executable: str | None = None) -> bool:
    """True if the live process ``pid`` is the one that started at ``started`` (see
    :func:`start_time`): pids are recycled, a start time within one boot is not."""
    fields = _stat(pid)  # one read: the state and the start time of the same process
    return (
        fields is not None
        and int(fields[START_TIME_FIELD]) == started
        and _is_live(pid, fields, executable)
    )


def recorded_alive(pid: int, started: int, executable: str | None, boot: str) -> bool:
    """True if the process a record names still runs: the record was written under this boot
    (:func:`boot_id`; a pid of another boot names nothing now) and ``pid`` is the process that
    started at ``started``, running ``executable`` if given (:func:`is_same_process`). How to
    judge a record that kept no start time or boot (written by older code) is the caller's call."""
    return boot == boot_id() and is_same_process(pid, started, executable)


def _reap(pid: int) -> None:
    # Only our own children can be reaped; anything else is init's business.
    with contextlib.suppress(ChildProcessError, OSError):
        os.waitpid(pid, os.WNOHANG)


def terminate(
    pid: int,
    executable: str | None,
    *,
    started: int | None = None,
    grace: float = 10.0,
    first: signal.Signals = signal.SIGTERM,
) -> None:
    """Send ``first`` (SIGTERM) to the process group, then SIGKILL whatever is left after
    ``grace`` seconds. Nothing is signalled unless ``pid`` runs ``executable`` and, if
    ``started`` is given, is the process that started then (:func:`is_same_process`)."""
    ours = (
        is_running(pid, executable)
        if started is None
        else is_same_process(pid, started, executable)
    )
    if not ours:
        return
    for sig, wait in ((first, grace), (signal.SIGKILL, 5.0)):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pid, sig)
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline:
            if not is_running(pid):
                return
            time.sleep(0.05)
    if is_running(pid):
        raise ProcessError(f"process {pid} ({executable}) survived SIGKILL")


def kill(pid: int, executable: str | None, *, started: int | None = None) -> None:
    """SIGKILL the process group at once (a crash: no graceful shutdown) and wait until it is
    gone; the same identity checks as :func:`terminate`."""
    terminate(pid, executable, started=started, grace=0.0, first=signal.SIGKILL)


def processes_mentioning(text: str) -> list[int]:
    """Pids of live processes whose command line contains ``text`` (for leak checks)."""
    needle = text.encode()
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        if needle in cmdline and is_running(int(entry.name)):
            found.append(int(entry.name))
    return found


def log_tail(log_dir: Path, name: str, lines: int = 25) -> str:
    path = log_dir / f"{name}.log"
    try:
        text = path.read_text(errors="replace").splitlines()[-lines:]
    except FileNotFoundError:
        return f"(no log at {path})"
    return "\n".join(f"    {line}" for line in text)


def wait_for(
    what: str,
    check: Callable[[], bool],
    *,
    timeout: float,
    alive: Callable[[], str | None] = lambda: None,
    interval: float = 0.2,
) -> None:
    """Poll ``check`` until it is true. ``alive`` returns an error text if a component died,
    which aborts the wait at once instead of running into the timeout."""
    deadline = time.monotonic() + timeout
    last_error: Exception | None = None
    while True:
        try:
            if check():
                return
        except Exception as exc:  # any failure of the probe means "not yet"; keep the last one
            last_error = exc
        dead = alive()
        if dead:
            raise ProcessError(f"while waiting for {what}: {dead}")
        if time.monotonic() > deadline:
            detail = f" (last error: {last_error})" if last_error else ""
            raise ProcessError(f"timed out after {timeout:.0f}s waiting for {what}{detail}")
        time.sleep(interval)
