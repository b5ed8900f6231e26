"""The real node's daemons: containerd, the kubelet and kube-proxy, their configuration, and
how they are named and stopped.

Contract: a daemon is named by its pid *and* its start time (:class:`Daemon`), so stopping it
never signals a later process that got the pid; every path a configuration names is under the
node's own directory (``<cluster dir>/node``), and no value in them comes from user input.

Environment facts the configurations rely on (``docs/real-node.md``): cgroup v1
(``failCgroupV1: false``, cgroupfs driver, no systemd), no CAP_SYS_RESOURCE (containerd's
``restrict_oom_score_adj``, kube-proxy ``oomScoreAdj: 0``), no image registry (images are
imported; the kubelet must never garbage-collect them).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from corral.testing.processes import is_running, start_time, terminate
from corral_dev.realnode.host import API_ADDRESS, POD_BRIDGE, POD_GATEWAY, POD_SUBNET

NODE_NAME: Final = "realnode"
# The real node's static-token identities (kubeconfig name -> user, groups): the kubelet as a
# member of system:nodes (the Node authorizer and NodeRestriction confine it to its own node and
# pods) and kube-proxy (bootstrap RBAC binds system:kube-proxy to system:node-proxier).
NODE_IDENTITIES: Final[dict[str, tuple[str, tuple[str, ...]]]] = {
    "kubelet": (f"system:node:{NODE_NAME}", ("system:nodes",)),
    "kube-proxy": ("system:kube-proxy", ()),
}
KUBELET_PORT: Final = 20250
KUBELET_HEALTHZ_PORT: Final = 20248
PROXY_HEALTHZ_PORT: Final = 20256
PROXY_METRICS_PORT: Final = 20249
CNI_BIN_DIR: Final = Path("/usr/lib/cni")
RUNC: Final = Path("/usr/sbin/runc")


@dataclass
class Daemon:
    name: str
    pid: int
    executable: str
    started: int  # processes.start_time: with the pid, names this process and no later one


def started(pid: int) -> int:
    """``pid``'s start time, or -1 (a start no process has) if it is gone already."""
    when = start_time(pid)
    return -1 if when is None else when


def stop(daemon: Daemon) -> None:
    """Stop ``daemon`` if its pid still names it (executable and start time)."""
    terminate(daemon.pid, daemon.executable, started=daemon.started)


def kill(pid: int) -> None:
    """SIGKILL one process (not its group) and wait until it is gone."""
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + 5
    while is_running(pid) and time.monotonic() < deadline:
        time.sleep(0.05)


def node_ready(kubectl: Sequence[str]) -> bool:
    result = subprocess.run(
        [*kubectl, "get", "node", NODE_NAME, "-o",
         'jsonpath={.status.conditions[?(@.type=="Ready")].status}'],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    return result.stdout.strip() == "True"


def cni_config(node_dir: Path) -> dict[str, Any]:
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
                    "dataDir": str(node_dir / "cni" / "ipam"),
                },
            },
            {"type": "portmap", "capabilities": {"portMappings": True}},
            {"type": "loopback"},
        ],
    }  # fmt: skip


def containerd_config(node_dir: Path, socket: Path, pause_image: str) -> str:
    c = node_dir / "containerd"
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
        "[grpc]", f"  address = {json.dumps(str(socket))}",
        "[ttrpc]", f"  address = {json.dumps(str(socket) + '.ttrpc')}",
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
        f"    conf_dir = {json.dumps(str(node_dir / 'cni' / 'net.d'))}",
        "",
    ])  # fmt: skip


def kubelet_config(socket: Path, client_ca: Path) -> dict[str, Any]:
    """The kubelet's configuration. Its API authenticates every caller: the API server by its
    client certificate (``client_ca``, the local control plane's), anyone else by a bearer token
    the API server reviews (TokenReview); each request is authorized by the API server too
    (SubjectAccessReview on ``nodes/proxy``, ``nodes/log``, ...). No anonymous access."""
    return {
        "apiVersion": "kubelet.config.k8s.io/v1beta1",
        "kind": "KubeletConfiguration",
        "failCgroupV1": False,  # the host is cgroup v1; 1.35+ refuses it by default
        "cgroupDriver": "cgroupfs",  # no systemd
        "containerRuntimeEndpoint": f"unix://{socket}",
        "address": API_ADDRESS, "port": KUBELET_PORT, "readOnlyPort": 0,
        "healthzBindAddress": "127.0.0.1", "healthzPort": KUBELET_HEALTHZ_PORT,
        "authentication": {
            "anonymous": {"enabled": False},
            "webhook": {"enabled": True, "cacheTTL": "30s"},
            "x509": {"clientCAFile": str(client_ca)},
        },
        "authorization": {"mode": "Webhook"},
        "failSwapOn": False,
        # Imported images cannot be pulled back: never garbage-collect them.
        "imageGCHighThresholdPercent": 100, "imageGCLowThresholdPercent": 99,
        "evictionHard": {"memory.available": "100Mi", "nodefs.available": "1%",
                         "imagefs.available": "1%", "nodefs.inodesFree": "1%"},
        "maxPods": 30,
    }  # fmt: skip


def proxy_config(cluster_dir: Path) -> dict[str, Any]:
    return {
        "apiVersion": "kubeproxy.config.k8s.io/v1alpha1",
        "kind": "KubeProxyConfiguration",
        "mode": "iptables",
        "clientConnection": {"kubeconfig": str(cluster_dir / "kube-proxy.kubeconfig")},
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
