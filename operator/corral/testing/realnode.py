"""One real Kubernetes node beside the kwok nodes: containerd + runc + CNI bridge, kubelet and
kube-proxy (iptables), joined to a :class:`~corral.testing.controlplane.LocalCluster` started
with ``real_node=True``.

Contract:
- Everything the node writes lives under ``<cluster dir>/node/`` (containerd's root, state and
  socket, runc state, pod netns, kubelet root, CNI config and IPAM, logs).
- The host state it must change is recorded first and restored by :meth:`RealNode.down` and
  :meth:`RealNode.release_host`: processes (stopped by recorded pid, shims found by our socket
  path, never by name), mounts, kube-proxy's and the kubelet's iptables chains, the ``kubepods``
  cgroups, the two bridges and the blackhole routes, and the sysctls the kubelet rewrites.
- Only one real node fits on a machine (iptables chains, ``/kubepods``, the ports and
  :data:`API_ADDRESS` are host-global): :meth:`RealNode.claim` takes the machine-wide ownership
  under an ``flock`` on :data:`LOCK_FILE`, so two runs serialize instead of fighting.
- Traffic stays on this machine: the API server's address is on a port-less bridge, pods get
  addresses on a second bridge with no forwarding (``ip_forward`` is never turned on), and
  kwok's fake pod and node addresses are blackholed.

Environment facts this relies on (``docs/real-node.md``): cgroup v1 (``failCgroupV1: false``,
cgroupfs driver, no systemd), no CAP_SYS_RESOURCE (containerd's ``restrict_oom_score_adj``,
kube-proxy ``oomScoreAdj: 0``), no dummy interfaces (a bridge holds the address), no image
registry (images are imported; the kubelet must never garbage-collect them).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Final, TypeVar

from corral.testing import images as local_images
from corral.testing import statefile
from corral.testing.binaries import NodeBinaries, ensure_node_binaries
from corral.testing.credentials import NODE_NAME
from corral.testing.hostpackages import ensure_packages
from corral.testing.processes import (
    boot_id,
    is_running,
    log_tail,
    processes_mentioning,
    recorded_alive,
    spawn,
    start_time,
    terminate,
    wait_for,
)

API_ADDRESS: Final = "10.200.0.1"
API_BRIDGE: Final = "corral0"
POD_BRIDGE: Final = "corral-cni0"
POD_SUBNET: Final = "10.245.0.0/24"
POD_GATEWAY: Final = "10.245.0.1"
# kwok's fake pod and node addresses: kube-proxy would DNAT Service traffic to them and the API
# server dials the fake node for logs; blackholed, nothing leaves the machine.
BLACKHOLES: Final = ("10.244.0.0/16", "10.0.0.1/32")
KUBELET_PORT: Final = 20250
KUBELET_HEALTHZ_PORT: Final = 20248
PROXY_HEALTHZ_PORT: Final = 20256
PROXY_METRICS_PORT: Final = 20249
# The kubelet sets these at start (vm.overcommit_memory=1, kernel.panic=10, ...); recorded before
# and restored after. ip_forward is listed to prove it is never touched.
SYSCTLS: Final = (
    "vm.overcommit_memory", "vm.panic_on_oom", "kernel.panic", "kernel.panic_on_oops",
    "kernel.keys.root_maxkeys", "kernel.keys.root_maxbytes", "net.ipv4.ip_forward",
)  # fmt: skip
CNI_BIN_DIR: Final = Path("/usr/lib/cni")
RUNC: Final = Path("/usr/sbin/runc")
LOCK_FILE: Final = Path("/run/corral-realnode.lock")
OWNER_FILE: Final = Path("/run/corral-realnode.owner")
STATE_FILE: Final = "node.json"
READY_TIMEOUT: Final = 120.0
CGROUP_ROOT: Final = Path("/sys/fs/cgroup")
KUBEPODS: Final = "kubepods"  # the kubelet's top cgroup with the cgroupfs driver
CGROUP_REMOVE_TIMEOUT: Final = 10.0
OWNER_POLL: Final = 2.0  # seconds between looks at a live owner that may go

_T = TypeVar("_T")


class RealNodeError(RuntimeError):
    """The real node cannot run here or failed to start; the message says why."""


def _say(message: str, progress: bool = True) -> None:
    if progress:
        print(f"[real-node] {message}", file=sys.stderr, flush=True)


def _sh(*argv: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(list(argv), capture_output=True, text=True, check=False)
    if check and result.returncode != 0:
        raise RealNodeError(f"{' '.join(argv)} failed: {result.stderr.strip()}")
    return result


def _sysctl_path(key: str) -> Path:
    return Path("/proc/sys") / key.replace(".", "/")


def _started(pid: int) -> int:
    started = start_time(pid)
    return -1 if started is None else started  # gone already: a start no process has


def read_sysctls() -> dict[str, str]:
    return {k: _sysctl_path(k).read_text().strip() for k in SYSCTLS if _sysctl_path(k).exists()}


@dataclass
class Daemon:
    name: str
    pid: int
    executable: str
    started: int  # processes.start_time: with the pid, names this process and no later one


def _stop(daemon: Daemon) -> None:
    """Stop ``daemon`` if its pid still names it (executable and start time)."""
    terminate(daemon.pid, daemon.executable, started=daemon.started)


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
        daemons = [Daemon(**{"started": -1, **d}) for d in data.pop("daemons")]
        return cls(daemons=daemons, **{"claimed_since": -1, "boot": "", **data})

    @classmethod
    def claimed_now(cls, directory: Path) -> NodeState:
        """A fresh record claimed by this process."""
        pid = os.getpid()
        return cls(str(directory), pid, _started(pid), boot_id())

    def alive(self) -> bool:
        """Whether the claimer or one of the daemons still runs
        (:func:`processes.recorded_alive`; a record :meth:`load` found without start times
        names no boot, so it is dead)."""
        return recorded_alive(self.claimed_by, self.claimed_since, None, self.boot) or any(
            recorded_alive(d.pid, d.started, d.executable, self.boot) for d in self.daemons
        )


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


def _when_free(
    take: Callable[[Path | None, RealNode | None], _T],
    *,
    timeout: float,
    busy: Callable[[Path], str],
    mine: Path | None = None,
    progress: bool = False,
) -> _T:
    """``take(dead, stale)``'s result, called under :func:`machine_lock` once no live real node
    holds the machine but ``mine``'s. ``dead`` is the other cluster directory :data:`OWNER_FILE`
    names if its node is dead (None when no one or ``mine`` holds the machine), ``stale`` that
    node if it left a record, for ``take`` to clean up. Looks again every :data:`OWNER_POLL` s
    (the lock is not held in between); past ``timeout`` s raises :class:`RealNodeError` with
    ``busy(owner)``. With ``progress``, says once that it waits."""
    deadline = time.monotonic() + timeout
    announced = False
    while True:
        with machine_lock():
            owner = current_owner()
            if owner is None or owner == mine:
                return take(None, None)
            other = RealNode.attach(owner)
            if other is None or not other.state.alive():
                return take(owner, other)
        if time.monotonic() > deadline:
            raise RealNodeError(busy(owner))
        if not announced:
            _say(f"waiting for the real node of {owner} to go (one per machine)", progress)
            announced = True
        time.sleep(OWNER_POLL)


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
        if not CGROUP_ROOT.is_dir():
            raise RealNodeError(f"a real node needs cgroups ({CGROUP_ROOT} is missing)")
        return _when_free(
            lambda dead, stale: cls._claim_locked(cluster_dir, dead, stale, progress=progress),
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
        """Under :func:`machine_lock`, on a machine free but for ``dead``'s dead node (see
        :func:`_when_free`): clean up after it and record ``cluster_dir`` as the owner."""
        _clean_up_after(dead, stale, progress=progress)
        OWNER_FILE.write_text(str(cluster_dir))
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

    def prepare_host(self) -> None:
        """Packages, binaries, the recorded host state and the API server's address."""
        pins_binaries = ensure_node_binaries()
        ensure_packages(pins_binaries.pins.packages, progress=self.progress)
        self.state.binaries = str(pins_binaries.directory)
        self.state.sysctls = read_sysctls()
        run_netns = Path("/run/netns")
        self.state.run_netns_existed = run_netns.exists()
        self.state.run_netns_was_mount = run_netns.exists() and os.path.ismount(run_netns)
        self.state.run_containerd_existed = Path("/run/containerd").exists()
        self.state.save(self.dir)
        # No dummy interfaces in this kernel: a port-less bridge holds the address, and a local
        # address is delivered locally whatever its link.
        _ensure_bridge(API_BRIDGE, f"{API_ADDRESS}/32")

    def release_host(self) -> None:
        """After the control plane stopped: drop the API address and the ownership."""
        with machine_lock():
            self._release_host_locked()

    def _release_host_locked(self) -> None:
        # For callers already under machine_lock: an flock belongs to an open file, so taking
        # the lock again through a second open would wait for ever.
        _sh("ip", "link", "del", API_BRIDGE, check=False)
        if current_owner() == self.cluster_dir:
            OWNER_FILE.unlink(missing_ok=True)
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
        daemon = Daemon(name, process.pid, executable, _started(process.pid))
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
        _ensure_bridge(POD_BRIDGE, f"{POD_GATEWAY}/{POD_SUBNET.split('/')[1]}")
        for destination in BLACKHOLES:
            _sh("ip", "route", "replace", "blackhole", destination)
        (self.dir / "cni/net.d/10-corral.conflist").write_text(json.dumps(self._cni_config()))
        config = self.dir / "containerd" / "config.toml"
        config.write_text(self._containerd_config(b.pins.pause_image))
        _say(f"starting containerd {b.pins.containerd}", self.progress)
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
        kubelet_config.write_text(json.dumps(self._kubelet_config()))
        _say(f"starting kubelet {b.pins.kube} as node {NODE_NAME}", self.progress)
        self._start("kubelet", [
            str(b["kubelet"]), f"--config={kubelet_config}",
            f"--kubeconfig={self.cluster_dir / 'kubelet.kubeconfig'}",
            f"--root-dir={self.dir / 'kubelet'}", f"--hostname-override={NODE_NAME}",
            f"--node-ip={API_ADDRESS}", "--v=1",
        ])  # fmt: skip
        wait_for(
            f"node {NODE_NAME} Ready",
            lambda: _node_ready(kubectl),
            timeout=READY_TIMEOUT,
            alive=self._alive,
        )
        proxy_config = self.dir / "kube-proxy-config.yaml"
        proxy_config.write_text(json.dumps(self._proxy_config()))
        _say("starting kube-proxy (iptables)", self.progress)
        self._start("kube-proxy", [str(b["kube-proxy"]), f"--config={proxy_config}", "--v=1"])
        wait_for(
            "kube-proxy programming the kubernetes Service",
            lambda: "default/kubernetes:https" in _sh("iptables", "-t", "nat", "-S").stdout,
            timeout=READY_TIMEOUT,
            alive=self._alive,
        )
        _say(f"node {NODE_NAME} Ready in {time.monotonic() - started:.1f}s", self.progress)

    def load_image(self, archive: Path) -> str:
        """Import a docker archive into the node's containerd; returns ctr's output."""
        if not archive.is_file():
            raise RealNodeError(f"no image archive at {archive}")
        result = _sh(*self.ctr("images", "import", str(archive)), check=False)
        if result.returncode != 0:
            raise RealNodeError(f"importing {archive} failed: {result.stderr.strip()}")
        _say(f"imported {archive.name}", self.progress)
        return result.stdout

    def _cni_config(self) -> dict[str, Any]:
        # isGateway false: the bridge already holds the gateway address, and the plugin would
        # otherwise turn on net.ipv4.ip_forward host-wide. No masquerading: pods talk only to
        # this host's addresses.
        return {
            "cniVersion": "1.0.0",
            "name": "corral-pods",
            "plugins": [
                {
                    "type": "bridge", "bridge": POD_BRIDGE, "isGateway": False,
                    "ipMasq": False, "hairpinMode": True,
                    "ipam": {
                        "type": "host-local",
                        "ranges": [[{"subnet": POD_SUBNET, "gateway": POD_GATEWAY}]],
                        "routes": [{"dst": "0.0.0.0/0"}],
                        "dataDir": str(self.dir / "cni" / "ipam"),
                    },
                },
                {"type": "portmap", "capabilities": {"portMappings": True}},
                {"type": "loopback"},
            ],
        }  # fmt: skip

    def _containerd_config(self, pause_image: str) -> str:
        c = self.dir / "containerd"
        disabled = ", ".join(
            f'"io.containerd.snapshotter.v1.{s}"'
            for s in ("btrfs", "zfs", "devmapper", "blockfile", "erofs")
        )
        cri = '"io.containerd.cri.v1.runtime"'
        # TOML strings below are paths this module made (JSON-quoted), never user input.
        return "\n".join([
            "version = 3",
            f"root = {json.dumps(str(c / 'root'))}",
            f"state = {json.dumps(str(c / 'state'))}",
            f"disabled_plugins = [{disabled}]",
            "[grpc]", f"  address = {json.dumps(str(self.socket))}",
            "[ttrpc]", f"  address = {json.dumps(str(self.socket) + '.ttrpc')}",
            "[debug]", f"  address = {json.dumps(str(c / 'debug.sock'))}",
            "[metrics]", '  address = ""',
            '[plugins."io.containerd.internal.v1.opt"]',
            f"  path = {json.dumps(str(c / 'opt'))}",
            '[plugins."io.containerd.cri.v1.images"]',
            '  snapshotter = "overlayfs"',
            '  [plugins."io.containerd.cri.v1.images".pinned_images]',
            f"    sandbox = {json.dumps(pause_image)}",
            f"[plugins.{cri}]",
            "  enable_selinux = false",
            "  restrict_oom_score_adj = true",  # no CAP_SYS_RESOURCE: negative values fail
            "  netns_mounts_under_state_dir = true",  # pod netns under our state dir
            f"  [plugins.{cri}.containerd]",
            '    default_runtime_name = "runc"',
            f"    [plugins.{cri}.containerd.runtimes.runc]",
            '      runtime_type = "io.containerd.runc.v2"',
            f"      [plugins.{cri}.containerd.runtimes.runc.options]",
            "        SystemdCgroup = false",
            f"        BinaryName = {json.dumps(str(RUNC))}",
            f"        Root = {json.dumps(str(c / 'runc'))}",
            f"  [plugins.{cri}.cni]",
            f"    bin_dirs = [{json.dumps(str(CNI_BIN_DIR))}]",
            f"    conf_dir = {json.dumps(str(self.dir / 'cni' / 'net.d'))}",
            "",
        ])  # fmt: skip

    def _kubelet_config(self) -> dict[str, Any]:
        return {
            "apiVersion": "kubelet.config.k8s.io/v1beta1",
            "kind": "KubeletConfiguration",
            "failCgroupV1": False,  # the host is cgroup v1; 1.35+ refuses it by default
            "cgroupDriver": "cgroupfs",  # no systemd
            "containerRuntimeEndpoint": f"unix://{self.socket}",
            "address": API_ADDRESS, "port": KUBELET_PORT, "readOnlyPort": 0,
            "healthzBindAddress": "127.0.0.1", "healthzPort": KUBELET_HEALTHZ_PORT,
            # The API server presents no client certificate to kubelets here; the kubelet API
            # listens only on the private address.
            "authentication": {"anonymous": {"enabled": True}, "webhook": {"enabled": False}},
            "authorization": {"mode": "AlwaysAllow"},
            "failSwapOn": False,
            # Imported images cannot be pulled back: never garbage-collect them.
            "imageGCHighThresholdPercent": 100, "imageGCLowThresholdPercent": 99,
            "evictionHard": {"memory.available": "100Mi", "nodefs.available": "1%",
                             "imagefs.available": "1%", "nodefs.inodesFree": "1%"},
            "maxPods": 30,
        }  # fmt: skip

    def _proxy_config(self) -> dict[str, Any]:
        return {
            "apiVersion": "kubeproxy.config.k8s.io/v1alpha1",
            "kind": "KubeProxyConfiguration",
            "mode": "iptables",
            "clientConnection": {"kubeconfig": str(self.cluster_dir / "kube-proxy.kubeconfig")},
            "hostnameOverride": NODE_NAME,
            "bindAddress": "127.0.0.1",
            "healthzBindAddress": f"127.0.0.1:{PROXY_HEALTHZ_PORT}",
            "metricsBindAddress": f"127.0.0.1:{PROXY_METRICS_PORT}",
            "clusterCIDR": POD_SUBNET,
            "nodePortAddresses": [f"{API_ADDRESS}/32"],
            "oomScoreAdj": 0,
            # Leave route_localnet and the conntrack sysctls alone.
            "iptables": {"localhostNodePorts": False},
            "conntrack": {"maxPerCore": 0, "min": 0, "tcpEstablishedTimeout": "0s",
                          "tcpCloseWaitTimeout": "0s"},
        }  # fmt: skip

    # --- down -----------------------------------------------------------------------------------

    def down(self, *, cluster_kubectl: Sequence[str] | None) -> None:
        """Stop the node and restore the host, except the API address (``release_host``)."""
        started = time.monotonic()
        daemons = {d.name: d for d in self.state.daemons}
        kubelet = daemons.get("kubelet")
        if cluster_kubectl is not None and kubelet and is_running(kubelet.pid):
            # Through the API, so the kubelet stops the containers and CNI DEL releases veths
            # and IP leases (killing tasks with ctr alone would leave them behind).
            _say("draining the node", self.progress)
            kc = [*cluster_kubectl, "--request-timeout=10s"]
            subprocess.run([*kc, "cordon", NODE_NAME], capture_output=True, check=False)
            subprocess.run(
                [*kc, "delete", "pods", "-A", f"--field-selector=spec.nodeName={NODE_NAME}",
                 "--grace-period=1", "--wait=true", "--timeout=90s"],
                capture_output=True, check=False,
            )  # fmt: skip
            with contextlib.suppress(Exception):
                wait_for("the node's containers to stop", self._no_tasks, timeout=60)
        if "kube-proxy" in daemons:
            _stop(daemons["kube-proxy"])
            binaries = Path(self.state.binaries)
            subprocess.run(
                [str(binaries / "kube-proxy"), "--cleanup", "--v=0"], capture_output=True,
                check=False,
            )  # fmt: skip
        if kubelet:
            _stop(kubelet)
        self._kill_tasks()
        if "containerd" in daemons:
            _stop(daemons["containerd"])
        for pid in processes_mentioning(str(self.socket)):  # the shims, each its own group
            _kill(pid)
        self._unmount()
        self._remove_cgroups()
        _remove_kubelet_chains()
        _sh("ip", "link", "del", POD_BRIDGE, check=False)
        for destination in BLACKHOLES:
            _sh("ip", "route", "del", "blackhole", destination, check=False)
        for key, value in self.state.sysctls.items():
            if _sysctl_path(key).read_text().strip() != value:
                _sysctl_path(key).write_text(value)
        self.state.daemons = []
        self.state.save(self.dir)
        _say(f"node stopped and host restored in {time.monotonic() - started:.1f}s", self.progress)

    def _no_tasks(self) -> bool:
        result = _sh(*self.ctr("tasks", "ls", "-q"), check=False)
        return result.returncode != 0 or not result.stdout.strip()

    def _kill_tasks(self) -> None:
        if not self.socket.exists() or not Path(self.state.binaries, "ctr").exists():
            return
        ctr = [str(Path(self.state.binaries, "ctr")), "--address", str(self.socket), "-n", "k8s.io"]
        tasks = _sh(*ctr, "tasks", "ls", "-q", check=False).stdout.split()
        for task in tasks:
            _sh(*ctr, "tasks", "kill", "-s", "SIGKILL", task, check=False)
        for task in tasks:
            for _ in range(10):  # a killed task is deletable once its process is reaped
                if _sh(*ctr, "tasks", "delete", "-f", task, check=False).returncode == 0:
                    break
                time.sleep(0.5)

    def _unmount(self) -> None:
        prefix = str(self.dir) + "/"
        mounts = [m for m in mount_targets() if m.startswith(prefix)]
        for target in sorted(mounts, reverse=True):  # deepest first
            if _sh("umount", target, check=False).returncode != 0:
                _sh("umount", "-l", target, check=False)
        run_netns = Path("/run/netns")
        # containerd bind-mounts /run/netns onto itself on first use.
        if (
            run_netns.exists()
            and not self.state.run_netns_was_mount
            and os.path.ismount(run_netns)
            and not any(run_netns.iterdir())
        ):
            _sh("umount", str(run_netns), check=False)
        if not self.state.run_netns_existed:
            with contextlib.suppress(OSError):
                run_netns.rmdir()
        if not self.state.run_containerd_existed:
            shutil.rmtree("/run/containerd", ignore_errors=True)

    def _remove_cgroups(self) -> None:
        # A cgroup is removable once its last process is reaped, which can trail the kill.
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
                _say(f"could not remove {names}: processes are still in them", self.progress)
                return
            time.sleep(0.2)


def kubepods_cgroups(root: Path = CGROUP_ROOT) -> list[Path]:
    """The tops of the kubelet's cgroup tree (cgroupfs driver) that exist, in any layout:
    ``<root>/<controller>/kubepods`` on cgroup v1 (and v1's ``unified`` v2 mount in hybrid
    mode), ``<root>/kubepods`` on a pure cgroup v2 host."""
    if not root.is_dir():
        return []
    candidates = [root / KUBEPODS, *(h / KUBEPODS for h in sorted(root.iterdir()) if h.is_dir())]
    return [c for c in candidates if c.is_dir()]


def _kill(pid: int) -> None:
    """SIGKILL one process (not its group) and wait until it is gone."""
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + 5
    while is_running(pid) and time.monotonic() < deadline:
        time.sleep(0.05)


def _ensure_bridge(name: str, address: str) -> None:
    if _sh("ip", "link", "show", name, check=False).returncode != 0:
        _sh("ip", "link", "add", name, "type", "bridge")
    _sh("ip", "addr", "replace", address, "dev", name)
    _sh("ip", "link", "set", name, "up")


def _node_ready(kubectl: Sequence[str]) -> bool:
    result = subprocess.run(
        [*kubectl, "get", "node", NODE_NAME, "-o",
         'jsonpath={.status.conditions[?(@.type=="Ready")].status}'],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    return result.stdout.strip() == "True"


def mount_targets() -> list[str]:
    targets = []
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        # Field 5 is the mount point, with spaces etc. octal-escaped.
        targets.append(line.split()[4].encode().decode("unicode_escape"))
    return targets


def _remove_kubelet_chains() -> None:
    # The kubelet's canary chains, and kube-proxy's localnet guard that survives
    # `kube-proxy --cleanup` (v1.36).
    for table in ("mangle", "nat", "filter"):
        if _sh("iptables", "-t", table, "-F", "KUBE-KUBELET-CANARY", check=False).returncode == 0:
            _sh("iptables", "-t", table, "-X", "KUBE-KUBELET-CANARY", check=False)
    _sh("iptables", "-t", "mangle", "-X", "KUBE-IPTABLES-HINT", check=False)
    for chain in ("INPUT", "OUTPUT"):
        _sh("iptables", "-D", chain, "-j", "KUBE-FIREWALL", check=False)
    if _sh("iptables", "-F", "KUBE-FIREWALL", check=False).returncode == 0:
        _sh("iptables", "-X", "KUBE-FIREWALL", check=False)


def wait_until_free(timeout: float, *, progress: bool = True) -> None:
    """Wait until no real node holds this machine, cleaning up after a dead one, so that a
    snapshot taken next shows the host as no node left it (a dead run's kubepods cgroups in a
    'before' snapshot once hid that a test's node made them)."""
    _when_free(
        lambda dead, stale: _clean_up_after(dead, stale, progress=progress),
        timeout=timeout,
        busy=lambda owner: f"the real node of {owner} did not go within {timeout:.0f}s",
        progress=progress,
    )


def _clean_up_after(dead: Path | None, stale: RealNode | None, *, progress: bool) -> None:
    """Under :func:`machine_lock`: stop ``dead``'s node, restore the host and drop its
    ownership (see :func:`_when_free` for the arguments)."""
    if dead is None:
        return
    _say(f"taking over from a dead real node of {dead}", progress)
    if stale is not None:
        stale.down(cluster_kubectl=None)
        stale._release_host_locked()
    if current_owner() == dead:
        OWNER_FILE.unlink(missing_ok=True)
