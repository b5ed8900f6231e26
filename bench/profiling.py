"""Where a Python scheduler's time goes: py-spy sampling during the measured phase only.

``py-spy record --format raw`` writes collapsed stacks (``frame;frame;... count``); the summary
ranks functions by self samples (the leaf frame) and by inclusive samples (anywhere on the
stack, counted once per stack). py-spy samples every thread without slowing the target much,
unlike cProfile. It needs ptrace rights over the target (root, or a child of the harness).
"""

from __future__ import annotations

import re
import shutil
import signal
import subprocess
import sys
from collections import Counter
from pathlib import Path

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
