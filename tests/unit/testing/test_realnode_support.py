"""The real node's pieces that need no node: pins, package checks, the host-state diff, image
archives, the overlay, the dev-cluster CLI's refusals (one line, no traceback), and when a
recorded node counts as alive."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tarfile
from collections.abc import Callable, Iterator
from dataclasses import asdict, replace
from pathlib import Path

import pytest
import yaml

from corral.testing import statefile
from corral.testing.binaries import load_versions
from corral.testing.processes import start_time
from corral_dev import devcluster
from corral_dev.builds import NodePins, load_node_pins
from corral_dev.hostpackages import missing
from corral_dev.hoststate import HostState
from corral_dev.images import ImageConfig, write_archive
from corral_dev.install import operator_overlay
from corral_dev.realnode import STATE_FILE, Daemon, NodeState, RealNode, RealNodeError, host, lock


def test_node_pins_are_read_from_versions_env(tmp_path: Path) -> None:
    pins = tmp_path / "versions.env"
    pins.write_text(
        "KUBE_VERSION=v1.2.3\nCONTAINERD_VERSION=v2.0.0\nPAUSE_IMAGE=reg/pause:1\n"
        "NODE_PACKAGES=runc,iptables\nIMAGE_PACKAGES=buildah\n"
    )
    node = load_node_pins(pins)
    assert node == NodePins("v1.2.3", "v2.0.0", "reg/pause:1", ("runc", "iptables"), ("buildah",))
    assert node.cache_key == "node-k8s-v1.2.3-containerd-v2.0.0"


def test_shipped_node_pins_keep_one_kubernetes_version() -> None:
    node = load_node_pins()
    assert node.kube == load_versions().kube
    assert node.containerd.startswith("v2.")  # kubelet 1.37 needs containerd >= 1.7


def test_missing_packages_are_found_by_dpkg() -> None:
    assert missing(["bash", "corral-no-such-package"]) == ["corral-no-such-package"]


def _state(**changes: frozenset[str]) -> HostState:
    empty: frozenset[str] = frozenset()
    fields = dict.fromkeys(HostState.__dataclass_fields__, empty)
    return HostState(**{**fields, **changes})


@pytest.mark.parametrize(
    ("before", "after", "expected"),
    [
        pytest.param(_state(), _state(), [], id="same"),
        pytest.param(
            _state(), _state(links=frozenset({"corral0"})), ["links: +corral0"], id="left over"
        ),
        pytest.param(
            _state(sysctls=frozenset({"kernel.panic=1"})),
            _state(sysctls=frozenset({"kernel.panic=10"})),
            ["sysctls: -kernel.panic=1", "sysctls: +kernel.panic=10"],
            id="changed",
        ),
    ],
)
def test_host_state_diff(before: HostState, after: HostState, expected: list[str]) -> None:
    assert before.diff(after) == expected


def test_archive_is_a_docker_save_with_one_layer(tmp_path: Path) -> None:
    rootfs = tmp_path / "rootfs"
    rootfs.mkdir()
    (rootfs / "hello").write_text("hi")
    out = write_archive(rootfs, tmp_path / "img.tar", "localhost/x:1", ImageConfig(cmd=["/hello"]))
    with tarfile.open(out) as archive:
        manifest = json.load(archive.extractfile("manifest.json"))  # type: ignore[arg-type]
        assert manifest[0]["RepoTags"] == ["localhost/x:1"]
        config = json.load(archive.extractfile(manifest[0]["Config"]))  # type: ignore[arg-type]
        assert config["config"]["Cmd"] == ["/hello"]
        assert len(config["rootfs"]["diff_ids"]) == len(config["history"]) == 1
        with tarfile.open(fileobj=archive.extractfile("layer.tar")) as layer:
            assert "./hello" in layer.getnames()


def test_overlay_sets_the_image_and_pins_the_operator(tmp_path: Path) -> None:
    base = tmp_path / "config" / "default"
    overlay = operator_overlay(tmp_path / "o", base, "localhost/corral:9", {"k": "v"})
    data = yaml.safe_load((overlay / "kustomization.yaml").read_text())
    assert data["resources"] == ["../config/default"]
    assert data["images"] == [
        {"name": "ghcr.io/corral-dev/corral", "newName": "localhost/corral", "newTag": "9"}
    ]
    patch = yaml.safe_load(data["patches"][0]["patch"])
    assert patch == [{"op": "add", "path": "/spec/template/spec/nodeSelector", "value": {"k": "v"}}]
    assert "components" not in data
    assert "namespace" not in data


def test_overlay_turns_components_on_and_moves_the_namespace(tmp_path: Path) -> None:
    base = tmp_path / "config" / "default"
    webhook = tmp_path / "config" / "webhook"
    overlay = operator_overlay(
        tmp_path / "o", base, "localhost/corral:9", components=[webhook], namespace="ops"
    )
    data = yaml.safe_load((overlay / "kustomization.yaml").read_text())
    assert data["components"] == ["../config/webhook"]
    assert data["namespace"] == "ops"


def test_load_image_without_a_real_node_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = devcluster.main(["load-image", "--dir", str(tmp_path), "x.tar"])
    assert code == 1
    err = capsys.readouterr().err
    assert err.strip() == (
        f"[dev-cluster] no real node in {tmp_path.resolve()} (start one with `up --real-node`)"
    )


@pytest.fixture
def sleeper() -> Iterator[Daemon]:
    """A live child process, recorded as a daemon would be: by absolute path, which right
    after the spawn (an empty command line, still inside execve) is all that names it."""
    sleep = shutil.which("sleep")
    assert sleep is not None
    process = subprocess.Popen([sleep, "60"])
    started = start_time(process.pid)
    assert started is not None
    try:
        yield Daemon("sleeper", process.pid, sleep, started)
    finally:
        process.kill()
        process.wait()


def _claimed_here(tmp_path: Path) -> NodeState:
    return NodeState.claimed_now(tmp_path)


def _recycled_claimer(state: NodeState, _: Daemon) -> NodeState:
    return replace(state, claimed_since=state.claimed_since + 1)


def _gone_claimer(state: NodeState, _: Daemon) -> NodeState:
    # Past the kernel's largest pid: never a process.
    return replace(state, claimed_by=2**22 + 1)


@pytest.mark.parametrize(
    ("change", "alive"),
    [
        pytest.param(lambda s, d: s, True, id="claimer running"),
        pytest.param(_recycled_claimer, False, id="claimer pid recycled"),
        pytest.param(lambda s, d: replace(s, boot="another-boot"), False, id="another boot"),
        pytest.param(
            lambda s, d: replace(_gone_claimer(s, d), daemons=[d]), True, id="a daemon running"
        ),
        pytest.param(
            lambda s, d: replace(_gone_claimer(s, d), daemons=[replace(d, started=d.started - 1)]),
            False,
            id="daemon pid recycled",
        ),
        pytest.param(
            lambda s, d: replace(_gone_claimer(s, d), daemons=[replace(d, executable="/bin/x")]),
            False,
            id="daemon pid runs another program",
        ),
        pytest.param(
            lambda s, d: replace(s, boot="another-boot", daemons=[d]),
            False,
            id="daemon of another boot",
        ),
    ],
)
def test_a_node_record_is_alive_only_for_its_own_processes(
    tmp_path: Path,
    sleeper: Daemon,
    change: Callable[[NodeState, Daemon], NodeState],
    alive: bool,
) -> None:
    """NodeState.alive: the claimer or any daemon, each named by its own pid, start time and
    executable under the record's boot (processes.recorded_alive, whose rule test_support's
    table tests), so a killed run's record never holds the machine."""
    state = change(_claimed_here(tmp_path), sleeper)
    state.save(tmp_path)
    assert NodeState.load(tmp_path).alive() is alive


def test_a_record_without_start_times_is_dead(tmp_path: Path) -> None:
    """Records from before start times were kept name this very process, and still prove
    nothing."""
    record = asdict(_claimed_here(tmp_path))
    del record["claimed_since"], record["boot"]
    statefile.write(tmp_path / STATE_FILE, record)
    assert NodeState.load(tmp_path).claimed_by == os.getpid()
    assert not NodeState.load(tmp_path).alive()


def _no_owner(tmp_path: Path) -> Path | None:
    return None


def _owner_without_record(tmp_path: Path) -> Path:
    return tmp_path / "other"


def _dead_owner(tmp_path: Path) -> Path:
    other = tmp_path / "other"
    replace(NodeState.claimed_now(other), boot="another-boot").save(other / "node")
    return other


def _live_owner(tmp_path: Path) -> Path:
    other = tmp_path / "other"
    NodeState.claimed_now(other).save(other / "node")  # claimed by this very process
    return other


@pytest.mark.parametrize(
    ("owner", "taken"),
    [
        pytest.param(_no_owner, (None, False), id="no owner"),
        pytest.param(lambda t: t / "mine", (None, False), id="mine"),
        pytest.param(_owner_without_record, ("other", False), id="another's without a record"),
        pytest.param(_dead_owner, ("other", True), id="another's, dead"),
        pytest.param(_live_owner, None, id="another's, alive: busy"),
    ],
)
def test_the_machine_is_taken_once_no_live_node_holds_it(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    owner: Callable[[Path], Path | None],
    taken: tuple[str | None, bool] | None,
) -> None:
    """lock.when_free (RealNode.claim, wait_until_free): ``take`` runs under the lock with
    the dead owner and its record to clean up; a live owner past the timeout is an error."""
    monkeypatch.setattr(lock, "LOCK_FILE", tmp_path / "lock")
    monkeypatch.setattr(lock, "OWNER_FILE", tmp_path / "owner")
    holder = owner(tmp_path)
    if holder is not None:
        lock.OWNER_FILE.write_text(str(holder))

    def take(dead: Path | None, stale: RealNode | None) -> tuple[str | None, bool]:
        return (None if dead is None else dead.name), stale is not None

    def busy(live: Path) -> str:
        return f"busy: {live.name}"

    def when_free() -> tuple[str | None, bool]:
        return lock.when_free(
            take,
            attach=RealNode.attach,
            timeout=0.0,
            busy=busy,
            mine=tmp_path / "mine",
            progress=False,
        )

    if taken is None:
        with pytest.raises(RealNodeError) as error:
            when_free()
        assert str(error.value) == "busy: other"
    else:
        assert when_free() == taken


@pytest.mark.parametrize(
    ("layout", "found"),
    [
        pytest.param(["cpu/kubepods/burstable", "pids/kubepods", "memory"], ["cpu", "pids"],
                     id="cgroup v1: one top per hierarchy that has one"),
        pytest.param(["cpu/kubepods", "unified/kubepods"], ["cpu", "unified"],
                     id="hybrid: the unified v2 mount counts too"),
        pytest.param(["kubepods/besteffort", "init.scope"], [""],
                     id="cgroup v2: the top under the root itself"),
        pytest.param(["cpu", "memory/other"], [], id="no node's cgroups"),
        pytest.param(None, [], id="no cgroup root at all"),
    ],
)  # fmt: skip
def test_the_kubelets_cgroups_are_found_in_every_layout(
    tmp_path: Path, layout: list[str] | None, found: list[str]
) -> None:
    """host.kubepods_cgroups, which both ``down`` (to remove them) and the host snapshot
    (to prove they went) use: a layout it missed would be neither removed nor noticed."""
    root = tmp_path / "cgroup"
    for directory in layout or []:
        (root / directory).mkdir(parents=True)
    expected = [root / h / host.KUBEPODS for h in found]  # root / "" is the root
    assert host.kubepods_cgroups(root) == expected
