"""``down`` leaves the host as it was: a full real-node cycle with a real pod behind a Service,
then the host compared with its state before (processes, mounts, iptables, cgroups, links,
addresses, routes, sysctls, /run dirs). And a node left by a killed run is taken over at once,
the host as it was."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest

from corral.testing import LocalCluster
from corral.testing.processes import wait_for
from corral_dev import devcluster, hoststate, realnode
from corral_dev.builds import ensure_node_binaries
from corral_dev.hostpackages import ensure_packages
from corral_dev.realnode import RealNodes, host, lock

# Waiting for the machine's real node (the lock) and cold builds take minutes on two cores.
pytestmark = pytest.mark.timeout(1800)


def pause_pod(image: str) -> dict[str, object]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "sleeper", "namespace": "default", "labels": {"app": "sleeper"}},
        "spec": {
            "nodeSelector": {"kubernetes.io/hostname": realnode.NODE_NAME},
            "containers": [{"name": "pause", "image": image, "imagePullPolicy": "Never"}],
        },
    }


SERVICE = {
    "apiVersion": "v1",
    "kind": "Service",
    "metadata": {"name": "sleeper", "namespace": "default"},
    "spec": {"selector": {"app": "sleeper"}, "ports": [{"port": 80}]},
}


def test_down_restores_the_host(tmp_path: Path, lock_wait: Callable[[], float]) -> None:
    node = ensure_node_binaries()
    ensure_packages(node.pins.packages)  # iptables for the snapshot, on a fresh machine
    directory = tmp_path / "c"
    watched = (str(node.directory) + "/", str(directory) + "/")
    realnode.wait_until_free(lock_wait())
    before = hoststate.snapshot(watched)
    # No node's cgroups yet, else the node's own could hide in them (a dead run's once did).
    assert before.cgroups == frozenset()
    cluster = LocalCluster.up(
        directory, with_kube_scheduler=True, nodes=RealNodes(lock_timeout=lock_wait())
    )
    try:
        cluster.admin.create(pause_pod(node.pins.pause_image))
        cluster.admin.create(SERVICE)

        def running() -> bool:
            pod = cluster.admin.get("v1", "Pod", "sleeper", "default")
            return pod.get("status", {}).get("phase") == "Running"

        wait_for("the pod on the real node", running, timeout=120)
        wait_for(
            "kube-proxy's rules for the Service",
            lambda: any("default/sleeper" in r for r in hoststate.snapshot(watched).iptables),
            timeout=60,
        )
        # hack/dev-cluster load-image imports an archive into the running node's containerd.
        archive = directory / "node" / "images" / "pause.tar"
        assert devcluster.main(["load-image", "--dir", str(directory), str(archive)]) == 0
        node_handle = realnode.RealNode.attach(directory.resolve())
        assert node_handle is not None
        listed = subprocess.run(
            node_handle.ctr("images", "ls", "-q"), capture_output=True, text=True, check=True
        )
        assert node.pins.pause_image in listed.stdout.split()
        changed = {line.split(":")[0] for line in before.diff(hoststate.snapshot(watched))}
    finally:
        cluster.down()
    # The snapshot sees what the node changes (else the comparison below proves nothing).
    assert {"processes", "mounts", "iptables", "cgroups", "links", "routes"} <= changed
    assert before.diff(hoststate.snapshot(watched)) == []


def leave_a_killed_runs_record(killed: Path, binaries: Path) -> None:
    """The owner record a killed run leaves, its claimer's pid handed out again (here: this
    process, with another start time)."""
    with lock.machine_lock():
        record = realnode.NodeState.claimed_now(killed)
        record = replace(
            record,
            claimed_since=record.claimed_since + 1,
            sysctls=host.read_sysctls(),
            run_netns_existed=Path("/run/netns").exists(),
            run_netns_was_mount=os.path.ismount("/run/netns"),
            run_containerd_existed=Path("/run/containerd").exists(),
            binaries=str(binaries),
        )
        record.save(killed / "node")
        lock.OWNER_FILE.write_text(str(killed))


def test_a_killed_runs_node_is_taken_over_at_once(
    tmp_path: Path, lock_wait: Callable[[], float]
) -> None:
    """A killed run's record must neither hold the machine nor hang the next claim: that cost
    a CI run three 30-minute waits, and the takeover path then took the machine lock twice and
    waited for ever."""
    realnode.wait_until_free(lock_wait())
    node = ensure_node_binaries()
    watched = (str(node.directory) + "/", str(tmp_path) + "/")
    before = hoststate.snapshot(watched)
    killed = tmp_path / "killed"
    leave_a_killed_runs_record(killed, node.directory)
    claimed = realnode.RealNode.claim(tmp_path / "next", timeout=0, progress=False)
    try:
        assert lock.current_owner() == tmp_path / "next"
        assert not (killed / "node" / realnode.STATE_FILE).exists()
    finally:
        claimed.release_host()
    assert lock.current_owner() is None
    assert before.diff(hoststate.snapshot(watched)) == []


def test_waiting_for_the_machine_cleans_up_after_a_killed_run(
    tmp_path: Path, lock_wait: Callable[[], float]
) -> None:
    """wait_until_free, before a 'before' snapshot, leaves no dead run's record or ownership
    behind: what a dead node left would otherwise be in the snapshot (a CI run's 'before' held
    a dead run's kubepods cgroups and hid that the test's node made them)."""
    realnode.wait_until_free(lock_wait())
    node = ensure_node_binaries()
    killed = tmp_path / "killed"
    leave_a_killed_runs_record(killed, node.directory)
    # A real cgroup as the dead node's kubelet would have left it (one v1 hierarchy, or the
    # v2 root), made after the wait so only the cleanup below can remove it.
    root = host.CGROUP_ROOT
    hierarchy = root if (root / "cgroup.procs").exists() else root / "pids"
    left = hierarchy / host.KUBEPODS / "besteffort"
    left.mkdir(parents=True)
    try:
        assert host.kubepods_cgroups() == [hierarchy / host.KUBEPODS]
        realnode.wait_until_free(0)
        assert lock.current_owner() is None
        assert not (killed / "node" / realnode.STATE_FILE).exists()
        assert host.kubepods_cgroups() == []
    finally:
        for directory in (left, left.parent):
            if directory.is_dir():
                directory.rmdir()
