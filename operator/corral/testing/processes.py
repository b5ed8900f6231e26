"""Starting, watching and stopping the control plane's processes.

Each process runs in its own session (so a Ctrl-C in the shell that ran ``dev-cluster up`` does
not reach it) with its output in ``<dir>/logs/<name>.log``. A process is identified by its pid
*and* its executable, so a recycled pid is never signalled by mistake.
"""

from __future__ import annotations

import contextlib
import os
import random
import signal
import socket
import subprocess
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Final


class ProcessError(RuntimeError):
    """A component died or never became ready; the message carries the end of its log."""


EPHEMERAL_RANGE: Final = Path("/proc/sys/net/ipv4/ip_local_port_range")
# Listening ports are drawn from this many ports just below the kernel's ephemeral range.
_BELOW_EPHEMERAL: Final = 12_000


def ephemeral_range(path: Path = EPHEMERAL_RANGE) -> tuple[int, int]:
    """The ports the kernel gives outgoing connections (Linux's default when unreadable)."""
    try:
        low, high = (int(v) for v in path.read_text().split())
    except (OSError, ValueError):
        return 32768, 60999
    return low, high


def free_port(address: str = "127.0.0.1", *, ephemeral: tuple[int, int] | None = None) -> int:
    """A currently free TCP port on ``address`` for a server about to start.

    Drawn at random below the kernel's ephemeral range: a port the kernel picks (bind to 0) is
    an ephemeral one, which any outgoing connection may take as its source port before the
    server binds it (a benchmark lost a run to kube-apiserver's "bind: address already in
    use" that way). Falls back to the kernel's choice when the range leaves no room below it.
    """
    low, _ = ephemeral or ephemeral_range()
    first = max(1025, low - _BELOW_EPHEMERAL)
    rng = random.SystemRandom()
    for _ in range(64 if low - first >= 1000 else 0):
        port = rng.randrange(first, low)
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
            try:
                sock.bind((address, port))
            except OSError:
                continue
            return port
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((address, 0))
        chosen: int = sock.getsockname()[1]
        return chosen


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


def is_running(pid: int, executable: str | None = None) -> bool:
    """True if ``pid`` is a live (non-zombie) process, running ``executable`` if given."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return False
    # Field 3, after the parenthesised command name (which may itself contain spaces).
    state = stat.rsplit(")", 1)[1].split()[0]
    if state in ("Z", "X"):
        _reap(pid)
        return False
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


def _reap(pid: int) -> None:
    # Only our own children can be reaped; anything else is init's business.
    with contextlib.suppress(ChildProcessError, OSError):
        os.waitpid(pid, os.WNOHANG)


def terminate(pid: int, executable: str | None, *, grace: float = 10.0) -> None:
    """SIGTERM the process group, then SIGKILL whatever is left after ``grace`` seconds."""
    if not is_running(pid, executable):
        return
    for sig, wait in ((signal.SIGTERM, grace), (signal.SIGKILL, 5.0)):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pid, sig)
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline:
            if not is_running(pid):
                return
            time.sleep(0.05)
    if is_running(pid):
        raise ProcessError(f"process {pid} ({executable}) survived SIGKILL")


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
