"""CPU time and peak memory of a process tree, read from /proc (Linux only).

The scheduler under test may fork helpers, so figures are summed over the process and every
live descendant. Read them before stopping the process: a dead process has no /proc entry.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


@dataclass(frozen=True)
class Usage:
    cpu_seconds: float  # utime + stime of the tree
    peak_rss_bytes: int  # sum of VmHWM over the tree


def _stat_fields(pid: int) -> list[str]:
    text = Path(f"/proc/{pid}/stat").read_text()
    # Fields after the parenthesised command (which may contain spaces): state is field 3.
    return text.rsplit(")", 1)[1].split()


def descendants(pid: int) -> list[int]:
    """``pid`` and every live process below it."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            ppid = int(_stat_fields(int(entry.name))[1])
        except (OSError, IndexError, ValueError):
            continue
        children.setdefault(ppid, []).append(int(entry.name))
    tree, stack = [], [pid]
    while stack:
        current = stack.pop()
        tree.append(current)
        stack.extend(children.get(current, []))
    return tree


def cpu_seconds(pid: int) -> float:
    total = 0.0
    for member in descendants(pid):
        try:
            fields = _stat_fields(member)
        except OSError:
            continue
        # utime and stime are fields 14 and 15 (1-based) of /proc/<pid>/stat.
        total += (int(fields[11]) + int(fields[12])) / CLOCK_TICKS
    return total


def peak_rss_bytes(pid: int) -> int:
    total = 0
    for member in descendants(pid):
        try:
            status = Path(f"/proc/{member}/status").read_text()
        except OSError:
            continue
        for line in status.splitlines():
            if line.startswith("VmHWM:"):
                total += int(line.split()[1]) * 1024
    return total


def usage(pid: int) -> Usage:
    return Usage(cpu_seconds(pid), peak_rss_bytes(pid))


def machine() -> dict[str, object]:
    """What the figures were measured on."""
    model = ""
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            model = line.split(":", 1)[1].strip()
            break
    mem_kib = 0
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemTotal:"):
            mem_kib = int(line.split()[1])
    return {
        "cpus": os.cpu_count(),
        "cpu_model": model,
        "memory_gib": round(mem_kib / 1024 / 1024, 1),
        "kernel": os.uname().release,
        "loadavg_at_start": list(os.getloadavg()),
    }
