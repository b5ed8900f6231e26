"""One real Kubernetes node beside the kwok nodes: containerd + runc + CNI bridge, kubelet and
kube-proxy (iptables), joined to a :class:`~corral.testing.controlplane.LocalCluster` started
with :class:`~corral_dev.realnode.RealNodes` as its node provider.

Contract:
- Everything the node writes lives under ``<cluster dir>/node/`` (containerd's root, state and
  socket, runc state, pod netns, kubelet root, CNI config and IPAM, logs).
- The host state it must change is recorded first (:meth:`RealNode.prepare_host`, in
  :class:`NodeState`) and restored by :meth:`RealNode.down` and :meth:`RealNode.release_host`
  (:mod:`.host`): processes (stopped by recorded pid, shims found by our socket path, never by
  name), mounts, kube-proxy's and the kubelet's iptables chains, the ``kubepods`` cgroups, the
  two bridges and the blackhole routes, and the sysctls the kubelet rewrites.
- Only one real node fits on a machine: :meth:`RealNode.claim` takes the machine-wide ownership
  (:mod:`.lock`), so two runs serialize instead of fighting.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Final

from corral.testing import statefile
from corral.testing.processes import (
    boot_id,
    is_running,
    log_tail,
    processes_mentioning,
    recorded_alive,
    spawn,
    wait_for,
)
from corral_dev import images as local_images
from corral_dev.builds import NodeBinaries, ensure_node_binaries
from corral_dev.hostpackages import ensure_packages
from corral_dev.realnode import daemons, host, lock
from corral_dev.realnode.daemons import NODE_NAME, Daemon
from corral_dev.realnode.host import API_ADDRESS, RealNodeError, say

STATE_FILE: Final = "node.json"
READY_TIMEOUT: Final = 120.0


@dataclass
class NodeState:
    """What :meth:`RealNode.down` needs to undo; written before each change it records.

    The claimer and the daemons are named by pid *and* start time under :attr:`boot`, so a
    record left by a killed run never looks alive because its pids were handed out again (a
    restored machine reuses them all)."""

    directory: str
    claimed_by: int
    claimed_since: int
    boot: str
    sysctls: dict[str, str] = field(default_factory=dict)
    run_netns_existed: bool = False
    run_netns_was_mount: bool = False
    run_containerd_existed: bool = False
    daemons: list[Daemon] = field(default_factory=list)
    binaries: str = ""

    def save(self, node_dir: Path) -> None:
        statefile.write(node_dir / STATE_FILE, asdict(self))

    @classmethod
    def load(cls, node_dir: Path) -> NodeState:
        """The record in ``node_dir``; one written before pids carried start times loads as a
        record of no boot, so it is dead (its pids prove nothing)."""
        data = statefile.read(node_dir / STATE_FILE)
        recorded = [Daemon(**{"started": -1, **d}) for d in data.pop("daemons")]
        return cls(daemons=recorded, **{"claimed_since": -1, "boot": "", **data})

    @classmethod
    def claimed_now(cls, directory: Path) -> NodeState:
        """A fresh record claimed by this process."""
        pid = os.getpid()
        return cls(str(directory), pid, daemons.started(pid), boot_id())

    def alive(self) -> bool:
        """Whether the claimer or one of the daemons still runs
        (:func:`processes.recorded_alive`; a record :meth:`load` found without start times
        names no boot, so it is dead)."""
        return recorded_alive(self.claimed_by, self.claimed_since, None, self.boot) or any(
            recorded_alive(d.pid, d.started, d.executable, self.boot) for d in self.daemons
        )


class RealNode:
    """The real node of one cluster directory (its files under ``<dir>/node``)."""

    def __init__(self, cluster_dir: Path, state: NodeState, *, progress: bool = True) -> None:
        self.cluster_dir = cluster_dir
        self.dir = cluster_dir / "node"
        self.state = state
        self.progress = progress

    # --- ownership ------------------------------------------------------------------------------

    @classmethod
    def claim(cls, cluster_dir: Path, *, timeout: float = 0.0, progress: bool = True) -> RealNode:
        """Become the machine's real node, waiting up to ``timeout`` s for the current one."""
        if os.geteuid() != 0:
            raise RealNodeError("a real node needs root (kubelet, containerd, iptables, cgroups)")
        if not host.CGROUP_ROOT.is_dir():
            raise RealNodeError(f"a real node needs cgroups ({host.CGROUP_ROOT} is missing)")
        return lock.when_free(
            lambda dead, stale: cls._claim_locked(cluster_dir, dead, stale, progress=progress),
            attach=cls.attach,
            timeout=timeout,
            busy=lambda owner: (
                f"this machine's one real node belongs to the cluster in {owner}; "
                f"`hack/dev-cluster down --dir {owner}` frees it"
            ),
            mine=cluster_dir,
            progress=progress,
        )

    @classmethod
    def _claim_locked(
        cls, cluster_dir: Path, dead: Path | None, stale: RealNode | None, *, progress: bool
    ) -> RealNode:
        """Under :func:`lock.machine_lock`, on a machine free but for ``dead``'s dead node (see
        :func:`lock.when_free`): clean up after it and record ``cluster_dir`` as the owner."""
        _clean_up_after(dead, stale, progress=progress)
        lock.take_ownership(cluster_dir)
        state = NodeState.claimed_now(cluster_dir)
        node = cls(cluster_dir, state, progress=progress)
        state.save(node.dir)
        return node

    @classmethod
    def attach(cls, cluster_dir: Path, *, progress: bool = True) -> RealNode | None:
        try:
            state = NodeState.load(cluster_dir / "node")
        except FileNotFoundError:
            return None
        return cls(cluster_dir, state, progress=progress)

    def alive(self) -> bool:
        return self.state.alive()

    def prepare_host(self) -> None:
        """Packages, binaries, the recorded host state and the API server's address."""
        pins_binaries = ensure_node_binaries()
        ensure_packages(pins_binaries.pins.packages, progress=self.progress)
        self.state.binaries = str(pins_binaries.directory)
        self.state.sysctls = host.read_sysctls()
        self.state.run_netns_existed = host.RUN_NETNS.exists()
        self.state.run_netns_was_mount = host.RUN_NETNS.exists() and os.path.ismount(host.RUN_NETNS)
        self.state.run_containerd_existed = host.RUN_CONTAINERD.exists()
        self.state.save(self.dir)
        host.ensure_bridge(host.API_BRIDGE, f"{API_ADDRESS}/32")

    def release_host(self) -> None:
        """After the control plane stopped: drop the API address and the ownership."""
        with lock.machine_lock():
            self._release_host_locked()

    def _release_host_locked(self) -> None:
        # For callers already under machine_lock: an flock belongs to an open file, so taking
        # the lock again through a second open would wait for ever.
        host.delete_link(host.API_BRIDGE)
        lock.drop_ownership(self.cluster_dir)
        (self.dir / STATE_FILE).unlink(missing_ok=True)

    # --- up -------------------------------------------------------------------------------------

    @property
    def binaries(self) -> NodeBinaries:
        return ensure_node_binaries(build=False)

    @property
    def socket(self) -> Path:
        return self.dir / "containerd" / "containerd.sock"

    def ctr(self, *args: str) -> list[str]:
        return [str(self.binaries["ctr"]), "--address", str(self.socket), "-n", "k8s.io", *args]

    def _start(self, name: str, argv: Sequence[str], env: dict[str, str] | None = None) -> Daemon:
        if env:
            argv = ["env", *(f"{k}={v}" for k, v in env.items()), *argv]
        process = spawn(name, argv, self.dir / "logs", self.dir)
        # `env` execs in place, so the pid runs the daemon itself once it started.
        executable = str(argv[len(env) + 1] if env else argv[0])
        daemon = Daemon(name, process.pid, executable, daemons.started(process.pid))
        self.state.daemons.append(daemon)
        self.state.save(self.dir)
        return daemon

    def _alive(self) -> str | None:
        for d in self.state.daemons:
            if not is_running(d.pid):
                return f"{d.name} exited:\n" + log_tail(self.dir / "logs", d.name)
        return None

    def up(self, kubectl: Sequence[str], images: Sequence[Path]) -> None:
        started = time.monotonic()
        b = self.binaries
        for sub in ("containerd", "cni/net.d", "cni/ipam", "kubelet", "logs", "images"):
            (self.dir / sub).mkdir(parents=True, exist_ok=True)
        host.ensure_bridge(host.POD_BRIDGE, f"{host.POD_GATEWAY}/{host.POD_SUBNET.split('/')[1]}")
        host.add_blackholes()
        cni = daemons.cni_config(self.dir)
        (self.dir / "cni/net.d/10-corral.conflist").write_text(json.dumps(cni))
        config = self.dir / "containerd" / "config.toml"
        config.write_text(daemons.containerd_config(self.dir, self.socket, b.pins.pause_image))
        say(f"starting containerd {b.pins.containerd}", self.progress)
        self._start(
            "containerd",
            [str(b["containerd"]), "--config", str(config)],
            env={"PATH": f"{b.directory}:{os.environ.get('PATH', '/usr/bin:/bin')}"},
        )
        wait_for("containerd's socket", self.socket.exists, timeout=30, alive=self._alive)
        pause = local_images.pause_image(b, self.dir / "images" / "pause.tar")
        for archive in (pause, *images):
            self.load_image(archive)

        kubelet_config = self.dir / "kubelet-config.yaml"
        client_ca = self.cluster_dir / "pki" / "kubelet-client-ca.crt"
        kubelet_config.write_text(json.dumps(daemons.kubelet_config(self.socket, client_ca)))
        say(f"starting kubelet {b.pins.kube} as node {NODE_NAME}", self.progress)
        self._start("kubelet", [
            str(b["kubelet"]), f"--config={kubelet_config}",
            f"--kubeconfig={self.cluster_dir / 'kubelet.kubeconfig'}",
            f"--root-dir={self.dir / 'kubelet'}", f"--hostname-override={NODE_NAME}",
            f"--node-ip={API_ADDRESS}", "--v=1",
        ])  # fmt: skip
        wait_for(
            f"node {NODE_NAME} Ready",
            lambda: daemons.node_ready(kubectl),
            timeout=READY_TIMEOUT,
            alive=self._alive,
        )
        proxy_config = self.dir / "kube-proxy-config.yaml"
        proxy_config.write_text(json.dumps(daemons.proxy_config(self.cluster_dir)))
        say("starting kube-proxy (iptables)", self.progress)
        self._start("kube-proxy", [str(b["kube-proxy"]), f"--config={proxy_config}", "--v=1"])
        wait_for(
            "kube-proxy programming the kubernetes Service",
            lambda: "default/kubernetes:https" in host.sh("iptables", "-t", "nat", "-S").stdout,
            timeout=READY_TIMEOUT,
            alive=self._alive,
        )
        say(f"node {NODE_NAME} Ready in {time.monotonic() - started:.1f}s", self.progress)

    def load_image(self, archive: Path) -> str:
        """Import a docker archive into the node's containerd; returns ctr's output."""
        if not archive.is_file():
            raise RealNodeError(f"no image archive at {archive}")
        result = host.sh(*self.ctr("images", "import", str(archive)), check=False)
        if result.returncode != 0:
            raise RealNodeError(f"importing {archive} failed: {result.stderr.strip()}")
        say(f"imported {archive.name}", self.progress)
        return result.stdout

    # --- down -----------------------------------------------------------------------------------

    def down(self, *, cluster_kubectl: Sequence[str] | None) -> None:
        """Stop the node and restore the host, except the API address (``release_host``)."""
        started = time.monotonic()
        running = {d.name: d for d in self.state.daemons}
        kubelet = running.get("kubelet")
        if cluster_kubectl is not None and kubelet and is_running(kubelet.pid):
            # Through the API, so the kubelet stops the containers and CNI DEL releases veths
            # and IP leases (killing tasks with ctr alone would leave them behind).
            say("draining the node", self.progress)
            kc = [*cluster_kubectl, "--request-timeout=10s"]
            subprocess.run([*kc, "cordon", NODE_NAME], capture_output=True, check=False)
            subprocess.run(
                [*kc, "delete", "pods", "-A", f"--field-selector=spec.nodeName={NODE_NAME}",
                 "--grace-period=1", "--wait=true", "--timeout=90s"],
                capture_output=True, check=False,
            )  # fmt: skip
            with contextlib.suppress(Exception):
                wait_for("the node's containers to stop", self._no_tasks, timeout=60)
        if "kube-proxy" in running:
            daemons.stop(running["kube-proxy"])
            binaries = Path(self.state.binaries)
            subprocess.run(
                [str(binaries / "kube-proxy"), "--cleanup", "--v=0"], capture_output=True,
                check=False,
            )  # fmt: skip
        if kubelet:
            daemons.stop(kubelet)
        self._kill_tasks()
        if "containerd" in running:
            daemons.stop(running["containerd"])
        for pid in processes_mentioning(str(self.socket)):  # the shims, each its own group
            daemons.kill(pid)
        host.unmount_under(self.dir)
        host.restore_run_dirs(
            netns_existed=self.state.run_netns_existed,
            netns_was_mount=self.state.run_netns_was_mount,
            containerd_existed=self.state.run_containerd_existed,
        )
        host.remove_cgroups(progress=self.progress)
        host.remove_kubelet_chains()
        host.delete_link(host.POD_BRIDGE)
        host.remove_blackholes()
        host.restore_sysctls(self.state.sysctls)
        self.state.daemons = []
        self.state.save(self.dir)
        say(f"node stopped and host restored in {time.monotonic() - started:.1f}s", self.progress)

    def _no_tasks(self) -> bool:
        result = host.sh(*self.ctr("tasks", "ls", "-q"), check=False)
        return result.returncode != 0 or not result.stdout.strip()

    def _kill_tasks(self) -> None:
        if not self.socket.exists() or not Path(self.state.binaries, "ctr").exists():
            return
        ctr = [str(Path(self.state.binaries, "ctr")), "--address", str(self.socket), "-n", "k8s.io"]
        tasks = host.sh(*ctr, "tasks", "ls", "-q", check=False).stdout.split()
        for task in tasks:
            host.sh(*ctr, "tasks", "kill", "-s", "SIGKILL", task, check=False)
        for task in tasks:
            for _ in range(10):  # a killed task is deletable once its process is reaped
                if host.sh(*ctr, "tasks", "delete", "-f", task, check=False).returncode == 0:
                    break
                time.sleep(0.5)


def wait_until_free(timeout: float, *, progress: bool = True) -> None:
    """Wait until no real node holds this machine, cleaning up after a dead one, so that a
    snapshot taken next shows the host as no node left it (a dead run's kubepods cgroups in a
    'before' snapshot once hid that a test's node made them)."""
    lock.when_free(
        lambda dead, stale: _clean_up_after(dead, stale, progress=progress),
        attach=RealNode.attach,
        timeout=timeout,
        busy=lambda owner: f"the real node of {owner} did not go within {timeout:.0f}s",
        progress=progress,
    )


def _clean_up_after(dead: Path | None, stale: RealNode | None, *, progress: bool) -> None:
    """Under :func:`lock.machine_lock`: stop ``dead``'s node, restore the host and drop its
    ownership (see :func:`lock.when_free` for the arguments)."""
    if dead is None:
        return
    say(f"taking over from a dead real node of {dead}", progress)
    if stale is not None:
        stale.down(cluster_kubectl=None)
        stale._release_host_locked()
    lock.drop_ownership(dead)
