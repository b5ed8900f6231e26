"""A snapshot of the host state a real node touches, to prove ``down`` restores it.

Contract: two snapshots compare equal when the host is as it was. The snapshot covers what
:mod:`corral_dev.realnode` may change: processes running the node's binaries or naming a
directory, mounts (except the image builder's private store), every iptables rule of the
filter, nat and mangle tables, the ``kubepods`` cgroups, links, addresses, routes, the sysctls
the kubelet rewrites, and ``/run/netns`` and ``/run/containerd``. Other engineers' processes
and loopback-only clusters do not show in it.
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass, fields
from pathlib import Path

from corral.testing.processes import processes_mentioning
from corral_dev.realnode.host import kubepods_cgroups, mount_targets, read_sysctls


@dataclass(frozen=True)
class HostState:
    processes: frozenset[str]
    mounts: frozenset[str]
    iptables: frozenset[str]
    cgroups: frozenset[str]
    links: frozenset[str]
    addresses: frozenset[str]
    routes: frozenset[str]
    sysctls: frozenset[str]
    run_dirs: frozenset[str]

    def diff(self, later: HostState) -> list[str]:
        """One line per difference: ``<field>: -gone`` / ``<field>: +new``."""
        lines = []
        for f in fields(self):
            before, after = getattr(self, f.name), getattr(later, f.name)
            lines += [f"{f.name}: -{item}" for item in sorted(before - after)]
            lines += [f"{f.name}: +{item}" for item in sorted(after - before)]
        return lines


def _lines(*argv: str) -> frozenset[str]:
    result = subprocess.run(list(argv), capture_output=True, text=True, check=False)
    return frozenset(line.strip() for line in result.stdout.splitlines() if line.strip())


def snapshot(watched: tuple[str, ...] = ()) -> HostState:
    """The host now; ``watched`` are directories (node binaries, cluster dirs) whose
    processes count."""
    processes: set[str] = set()
    for needle in watched:
        for pid in processes_mentioning(needle):
            try:
                argv = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ")
            except OSError:
                continue
            processes.add(f"{pid} {argv.decode(errors='replace').strip()}")
    mounts = frozenset(
        m for m in mount_targets() if "/.cache/corral/images/" not in m and "buildah" not in m
    )
    iptables: set[str] = set()
    for table in ("filter", "nat", "mangle"):
        iptables |= {f"{table}: {rule}" for rule in _lines("iptables", "-t", table, "-S")}
    cgroups = frozenset(str(top) for top in kubepods_cgroups())
    run_dirs = frozenset(
        f"{p}: {sorted(x.name for x in Path(p).iterdir()) if Path(p).is_dir() else 'absent'}"
        for p in ("/run/netns", "/run/containerd")
    )
    return HostState(
        processes=frozenset(processes),
        mounts=mounts,
        iptables=frozenset(iptables),
        cgroups=cgroups,
        links=frozenset(
            line.split(":")[1].strip().split("@")[0] for line in _lines("ip", "-o", "link")
        ),
        addresses=frozenset(" ".join(line.split()[1:4]) for line in _lines("ip", "-o", "addr")),
        routes=_lines("ip", "route", "show", "table", "all"),
        sysctls=frozenset(f"{k}={v}" for k, v in read_sysctls().items()),
        run_dirs=run_dirs,
    )
