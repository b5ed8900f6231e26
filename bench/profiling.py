"""Where a Python scheduler's time goes: py-spy sampling during the measured phase only; and
where the API server's goes (:class:`ApiServerProfile`, Go's CPU profile of kube-apiserver).

``py-spy record --format raw`` writes collapsed stacks (``frame;frame;... count``); the summary
ranks functions by self samples (the leaf frame) and by inclusive samples (anywhere on the
stack, counted once per stack). py-spy samples every thread without slowing the target much,
unlike cProfile. It needs ptrace rights over the target (root, or a child of the harness).
"""

from __future__ import annotations

import re
import shutil
import signal
import ssl
import subprocess
import sys
import threading
import time
import urllib.request
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from corral.k8s import Client

FRAME = re.compile(r"^(?P<func>.*?) \((?P<file>[^:()]*)(?::\d+)?\)$")


def py_spy() -> str | None:
    beside = Path(sys.executable).parent / "py-spy"
    return str(beside) if beside.exists() else shutil.which("py-spy")


class Profiler:
    def __init__(self, pid: int, output: Path, rate: int = 100) -> None:
        executable = py_spy()
        if executable is None:
            raise RuntimeError("py-spy not found: install the `bench` extra")
        output.parent.mkdir(parents=True, exist_ok=True)
        self.output = output
        self.process = subprocess.Popen(
            [executable, "record", "--pid", str(pid), "--format", "raw", "--rate", str(rate),
             "--nonblocking", "--subprocesses", "--output", str(output)],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        )  # fmt: skip

    def stop(self) -> Path:
        self.process.send_signal(signal.SIGINT)  # py-spy writes its output on SIGINT
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
        return self.output


def _name(frame: str) -> str:
    match = FRAME.match(frame.strip())
    if not match:
        return frame.strip()
    file = match["file"].split("site-packages/")[-1].split("/operator/")[-1]
    return f"{match['func']} ({file})"


def summarize(raw: Path, top: int = 20) -> str:
    self_samples: Counter[str] = Counter()
    inclusive: Counter[str] = Counter()
    total = 0
    for line in raw.read_text(errors="replace").splitlines():
        stack, _, count = line.rpartition(" ")
        if not stack or not count.isdigit():
            continue
        samples = int(count)
        frames = [_name(f) for f in stack.split(";")[1:]]  # the first entry is the thread
        if not frames:
            continue
        total += samples
        self_samples[frames[-1]] += samples
        for name in set(frames):
            inclusive[name] += samples
    if not total:
        return "(no samples)\n"
    lines = [f"{total} samples", "", "| self % | function |", "|---|---|"]
    lines += [f"| {n / total:.1%} | `{f}` |" for f, n in self_samples.most_common(top)]
    lines += ["", "| inclusive % | function |", "|---|---|"]
    lines += [f"| {n / total:.1%} | `{f}` |" for f, n in inclusive.most_common(top)]
    return "\n".join(lines) + "\n"


@dataclass(frozen=True)
class ApiServerPprof:
    """Profile kube-apiserver for ``seconds`` of each measured phase into ``directory``."""

    directory: Path
    seconds: int


class ApiServerProfile:
    """kube-apiserver's CPU profile (``/debug/pprof/profile``, needs ``--profiling``) over
    ``seconds`` from ``delay`` after the measured phase starts, fetched on a thread; read it
    with ``go tool pprof -top -cum FILE`` (``-diff_base=OTHER`` to compare two schedulers)."""

    def __init__(self, admin: Client, output: Path, seconds: int, *, delay: float = 2.0) -> None:
        self.output = output
        self.error: str | None = None
        output.parent.mkdir(parents=True, exist_ok=True)
        url = f"{admin.server.rstrip('/')}/debug/pprof/profile?seconds={seconds}"
        request = urllib.request.Request(url)
        if (auth := admin.authorization()) is not None:
            request.add_header("Authorization", auth)
        context = ssl.create_default_context(cafile=admin.ca_file)
        self._thread = threading.Thread(
            target=self._fetch, args=(request, context, delay, seconds + 30.0), daemon=True
        )
        self._thread.start()

    def _fetch(
        self, request: urllib.request.Request, context: ssl.SSLContext, delay: float, limit: float
    ) -> None:
        time.sleep(delay)  # past the first creations' burst
        try:
            with urllib.request.urlopen(request, context=context, timeout=limit) as answer:
                self.output.write_bytes(answer.read())
        except OSError as exc:  # URLError, timeouts: the run goes on without a profile
            self.error = f"kube-apiserver profile not taken: {exc}"

    def wait(self, timeout: float) -> str | None:
        """Wait for the profile; the reason it is missing, if it is."""
        self._thread.join(timeout)
        if self._thread.is_alive():
            return "kube-apiserver profile still being taken when the run ended"
        return self.error
