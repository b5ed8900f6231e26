"""The host state a real node changes, and putting it back.

Contract: everything here changes only what :mod:`corral_dev.hoststate` snapshots, and each
change has its undo beside it: the two bridges (the API server's address on one, the pods'
gateway on the other), the blackhole routes for kwok's fake addresses, the sysctls the kubelet
rewrites (recorded by :func:`read_sysctls` before, written back by :func:`restore_sysctls`),
mounts under the node's directory and the ``/run`` directories containerd makes, the kubelet's
``kubepods`` cgroups and the iptables chains kube-proxy's own cleanup leaves.

Traffic stays on this machine: the API server's address is on a port-less bridge, pods get
addresses on a second bridge with no forwarding (``ip_forward`` is never turned on), and kwok's
fake pod and node addresses are blackholed.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Final

API_ADDRESS: Final = "10.200.0.1"
API_BRIDGE: Final = "corral0"
POD_BRIDGE: Final = "corral-cni0"
POD_SUBNET: Final = "10.245.0.0/24"
POD_GATEWAY: Final = "10.245.0.1"
# kwok's fake pod and node addresses: kube-proxy would DNAT Service traffic to them and the API
# server dials the fake node for logs; blackholed, nothing leaves the machine.
BLACKHOLES: Final = ("10.244.0.0/16", "10.0.0.1/32")
# The kubelet sets these at start (vm.overcommit_memory=1, kernel.panic=10, ...); recorded before
# and restored after. ip_forward is listed to prove it is never touched.
SYSCTLS: Final = (
    "vm.overcommit_memory", "vm.panic_on_oom", "kernel.panic", "kernel.panic_on_oops",
    "kernel.keys.root_maxkeys", "kernel.keys.root_maxbytes", "net.ipv4.ip_forward",
)  # fmt: skip
CGROUP_ROOT: Final = Path("/sys/fs/cgroup")
KUBEPODS: Final = "kubepods"  # the kubelet's top cgroup with the cgroupfs driver
CGROUP_REMOVE_TIMEOUT: Final = 10.0
RUN_NETNS: Final = Path("/run/netns")
RUN_CONTAINERD: Final = Path("/run/containerd")


class RealNodeError(RuntimeError):
    """The real node cannot run here or failed to start; the message says why."""


def say(message: str, progress: bool = True) -> None:
    if progress:
        print(f"[real-node] {message}", file=sys.stderr, flush=True)


def sh(*argv: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    """Run a host command; with ``check``, a failure is a :class:`RealNodeError`."""
    result = subprocess.run(list(argv), capture_output=True, text=True, check=False)
    if check and result.returncode != 0:
        raise RealNodeError(f"{' '.join(argv)} failed: {result.stderr.strip()}")
    return result


# --- sysctls ------------------------------------------------------------------------------------


def _sysctl_path(key: str) -> Path:
    return Path("/proc/sys") / key.replace(".", "/")


def read_sysctls() -> dict[str, str]:
    return {k: _sysctl_path(k).read_text().strip() for k in SYSCTLS if _sysctl_path(k).exists()}


def restore_sysctls(recorded: dict[str, str]) -> None:
    for key, value in recorded.items():
        if _sysctl_path(key).read_text().strip() != value:
            _sysctl_path(key).write_text(value)


# --- links and routes ---------------------------------------------------------------------------


def ensure_bridge(name: str, address: str) -> None:
    """A bridge ``name`` holding ``address``, up. No dummy interfaces in this kernel: a
    port-less bridge holds an address, and a local address is delivered locally whatever its
    link."""
    if sh("ip", "link", "show", name, check=False).returncode != 0:
        sh("ip", "link", "add", name, "type", "bridge")
    sh("ip", "addr", "replace", address, "dev", name)
    sh("ip", "link", "set", name, "up")


def delete_link(name: str) -> None:
    sh("ip", "link", "del", name, check=False)


def add_blackholes() -> None:
    for destination in BLACKHOLES:
        sh("ip", "route", "replace", "blackhole", destination)


def remove_blackholes() -> None:
    for destination in BLACKHOLES:
        sh("ip", "route", "del", "blackhole", destination, check=False)


# --- mounts and /run ----------------------------------------------------------------------------


def mount_targets() -> list[str]:
    targets = []
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        # Field 5 is the mount point, with spaces etc. octal-escaped.
        targets.append(line.split()[4].encode().decode("unicode_escape"))
    return targets


def unmount_under(directory: Path) -> None:
    """Unmount everything mounted under ``directory``, deepest first (lazily if busy)."""
    prefix = str(directory) + "/"
    mounts = [m for m in mount_targets() if m.startswith(prefix)]
    for target in sorted(mounts, reverse=True):
        if sh("umount", target, check=False).returncode != 0:
            sh("umount", "-l", target, check=False)


def restore_run_dirs(
    *, netns_existed: bool, netns_was_mount: bool, containerd_existed: bool
) -> None:
    """Put ``/run/netns`` and ``/run/containerd`` back as they were recorded before the node."""
    # containerd bind-mounts /run/netns onto itself on first use.
    if (
        RUN_NETNS.exists()
        and not netns_was_mount
        and os.path.ismount(RUN_NETNS)
        and not any(RUN_NETNS.iterdir())
    ):
        sh("umount", str(RUN_NETNS), check=False)
    if not netns_existed:
        with contextlib.suppress(OSError):
            RUN_NETNS.rmdir()
    if not containerd_existed:
        shutil.rmtree(RUN_CONTAINERD, ignore_errors=True)


# --- cgroups ------------------------------------------------------------------------------------


def kubepods_cgroups(root: Path = CGROUP_ROOT) -> list[Path]:
    """The tops of the kubelet's cgroup tree (cgroupfs driver) that exist, in any layout:
    ``<root>/<controller>/kubepods`` on cgroup v1 (and v1's ``unified`` v2 mount in hybrid
    mode), ``<root>/kubepods`` on a pure cgroup v2 host."""
    if not root.is_dir():
        return []
    candidates = [root / KUBEPODS, *(h / KUBEPODS for h in sorted(root.iterdir()) if h.is_dir())]
    return [c for c in candidates if c.is_dir()]


def remove_cgroups(*, progress: bool) -> None:
    """Remove every ``kubepods`` tree, bottom-up. A cgroup is removable once its last process
    is reaped, which can trail the kill: retried for :data:`CGROUP_REMOVE_TIMEOUT` s, then the
    trees left are named."""
    deadline = time.monotonic() + CGROUP_REMOVE_TIMEOUT
    while True:
        for top in kubepods_cgroups():
            for directory, _, _ in os.walk(top, topdown=False):  # deepest first, top last
                with contextlib.suppress(OSError):
                    os.rmdir(directory)
        if not (left := kubepods_cgroups()):
            return
        if time.monotonic() > deadline:
            names = ", ".join(str(top) for top in left)
            say(f"could not remove {names}: processes are still in them", progress)
            return
        time.sleep(0.2)


# --- iptables -----------------------------------------------------------------------------------


def remove_kubelet_chains() -> None:
    """The kubelet's canary chains, and kube-proxy's localnet guard that survives
    ``kube-proxy --cleanup`` (v1.36)."""
    for table in ("mangle", "nat", "filter"):
        if sh("iptables", "-t", table, "-F", "KUBE-KUBELET-CANARY", check=False).returncode == 0:
            sh("iptables", "-t", table, "-X", "KUBE-KUBELET-CANARY", check=False)
    sh("iptables", "-t", "mangle", "-X", "KUBE-IPTABLES-HINT", check=False)
    for chain in ("INPUT", "OUTPUT"):
        sh("iptables", "-D", chain, "-j", "KUBE-FIREWALL", check=False)
    if sh("iptables", "-F", "KUBE-FIREWALL", check=False).returncode == 0:
        sh("iptables", "-X", "KUBE-FIREWALL", check=False)
