"""Running fuzz cases against an entry point in a watched worker process, and tallying them.

Contract: an entry point is a top-level function ``entry(case) -> (outcome, text)`` with
``outcome`` ``"accepted"`` or ``"rejected"`` and ``text`` what the user would read. It runs in a
forked worker with an address-space limit, so a hang (a regex that backtracks for ever, an exec
plugin that never returns) or a blow-up (a YAML alias bomb) is observed, not suffered: the
parent waits at most ``timeout`` seconds per case, then kills the worker and forks a new one.

Each case is classified once:
- accepted;
- rejected: the text is one or more clear lines (see :func:`unclear_line`);
- crashed: an exception escaped, the worker died, or the text is not clear;
- hung: no answer within :data:`CPU_TIMEOUT` seconds of the worker's CPU, or
  :data:`WALL_TIMEOUT` of wall time (a case blocked on a FIFO uses no CPU);
- blew up: memory ran out (``MemoryError`` under the worker's address-space limit).

Hangs are judged by the worker's CPU time (read from ``/proc``) first: on a loaded machine a
case of a few seconds' work can take minutes of wall time, which is not a hang.
"""

from __future__ import annotations

import json
import multiprocessing
import multiprocessing.connection
import os
import resource
import time
import traceback
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

Entry = Callable[[Any], tuple[str, str]]

# Per case: far above what the largest accepted input takes (a 9 MiB cluster file parses in
# about 6 s of CPU); a hang never answers. Wall time only catches a case that blocks.
CPU_TIMEOUT: Final = 30.0
WALL_TIMEOUT: Final = 600.0
CASE_TIMEOUT: Final = CPU_TIMEOUT  # the name callers pass
# Above what the worker already maps (NumPy, the plugins): room for honest work, not a bomb.
MEMORY_HEADROOM: Final = 1536 * 2**20
MAX_LINE: Final = 1000
SAMPLES: Final = 5


def budget(default: int) -> int:
    """Cases per entry point: ``default`` in ``make test``, scaled by ``CORRAL_FUZZ_SCALE``."""
    return max(1, int(default * float(os.environ.get("CORRAL_FUZZ_SCALE", "1"))))


def draw(strategy: st.SearchStrategy[Any], count: int) -> list[Any]:
    """``count`` cases drawn by hypothesis, the same ones on every run (derandomized)."""
    cases: list[Any] = []

    @settings(
        max_examples=count,
        derandomize=True,
        database=None,
        deadline=None,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @given(strategy)
    def collect(case: Any) -> None:
        cases.append(case)

    collect()
    return cases


def unclear_line(line: str) -> str | None:
    """Why ``line`` is not a clear error line (``None`` when it is): it must name where the
    problem is (``where: what``), fit on a screen, and show no Python internals."""
    if not line.strip():
        return "empty line"
    if len(line) > MAX_LINE:
        return f"{len(line)} characters long"
    if ": " not in line:
        return "no 'where: what'"
    for marker in ("Traceback", "object at 0x", "<class ", 'File "'):
        if marker in line:
            return f"shows Python internals ({marker!r})"
    return None


@dataclass
class Tally:
    entry: str
    cases: int = 0
    accepted: int = 0
    rejected: int = 0
    crashed: int = 0
    hung: int = 0
    blew_up: int = 0
    samples: dict[str, list[str]] = field(default_factory=dict)

    def add(self, verdict: str, detail: str = "") -> None:
        self.cases += 1
        setattr(self, verdict, getattr(self, verdict) + 1)
        if verdict in ("crashed", "hung", "blew_up"):
            kept = self.samples.setdefault(verdict, [])
            if len(kept) < SAMPLES:
                kept.append(detail[:600])

    def counts(self) -> dict[str, int]:
        return {
            "cases": self.cases,
            "accepted": self.accepted,
            "rejected": self.rejected,
            "crashed": self.crashed,
            "hung": self.hung,
            "blew_up": self.blew_up,
        }

    def summary(self) -> str:
        lines = [f"{self.entry}: {json.dumps(self.counts())}"]
        for verdict, details in self.samples.items():
            lines += [f"  {verdict}: {d}" for d in details]
        return "\n".join(lines)

    def record(self) -> None:
        """Append the counts to ``$CORRAL_FUZZ_REPORT`` (JSON lines), when set."""
        target = os.environ.get("CORRAL_FUZZ_REPORT")
        if target:
            with Path(target).open("a", encoding="utf-8") as out:
                out.write(json.dumps({"entry": self.entry, **self.counts()}) + "\n")


def _vm_size() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmSize:"):
            return int(line.split()[1]) * 1024
    return 0


def _serve(entry: Entry, conn: multiprocessing.connection.Connection) -> None:
    limit = _vm_size() + MEMORY_HEADROOM
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    while True:
        case = conn.recv()
        try:
            outcome, text = entry(case)
            conn.send(("ok", outcome, text))
        except MemoryError:
            conn.send(("blew_up", "", "memory blow-up (MemoryError)"))
        except BaseException as exc:
            where = traceback.extract_tb(exc.__traceback__)[-1:]
            at = f" at {where[0].filename}:{where[0].lineno}" if where else ""
            conn.send(("crash", "", f"{type(exc).__name__}: {exc}"[:300] + at))


class _Worker:
    def __init__(self, entry: Entry) -> None:
        ctx = multiprocessing.get_context("fork")
        self.conn, child = ctx.Pipe()
        self.proc = ctx.Process(target=_serve, args=(entry, child), daemon=True)
        self.proc.start()
        child.close()

    def ask(self, case: Any, timeout: float) -> tuple[str, str, str] | None:
        """The worker's answer, or ``None`` past ``timeout`` s of its CPU (or the wall bound)."""
        self.conn.send(case)
        start_cpu, start_wall = self._cpu(), time.monotonic()
        while not self.conn.poll(0.5):
            if self._cpu() - start_cpu > timeout or time.monotonic() - start_wall > WALL_TIMEOUT:
                return None
        answer: tuple[str, str, str] = self.conn.recv()
        return answer

    def _cpu(self) -> float:
        """The worker's user and system CPU seconds so far."""
        try:
            fields = Path(f"/proc/{self.proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            return 0.0
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def stop(self) -> None:
        if self.proc.is_alive():
            self.proc.kill()
        self.proc.join()
        self.conn.close()


def run_cases(
    name: str, entry: Entry, cases: Iterable[Any], timeout: float = CASE_TIMEOUT
) -> Tally:
    tally = Tally(name)
    worker = _Worker(entry)
    try:
        for case in cases:
            try:
                answer = worker.ask(case, timeout)
            except (EOFError, OSError):
                answer = ("crash", "", f"the worker died (exit code {worker.proc.exitcode})")
            if answer is None:
                tally.add("hung", f"no answer in {timeout:g} s of CPU: {_show(case)}")
            else:
                kind, outcome, text = answer
                if kind == "crash":
                    tally.add("crashed", f"{text}: {_show(case)}")
                elif kind == "blew_up":
                    tally.add("blew_up", f"{text}: {_show(case)}")
                elif outcome == "accepted":
                    tally.add("accepted")
                else:
                    tally.add(*_judge(text, case))
            if answer is None or (answer[0] != "ok" and not worker.proc.is_alive()):
                worker.stop()
                worker = _Worker(entry)
    finally:
        worker.stop()
    tally.record()
    return tally


def _judge(text: str, case: Any) -> tuple[str, str]:
    lines = text.strip().splitlines() or [""]
    for line in lines:
        why = unclear_line(line)
        if why is not None:
            return "crashed", f"unclear message ({why}): {line[:200]!r}: {_show(case)}"
    return "rejected", ""


def _show(case: Any) -> str:
    text = case if isinstance(case, str) else repr(case)
    return repr(text[:160]) + ("..." if len(text) > 160 else "")
