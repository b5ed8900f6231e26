from __future__ import annotations

import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import NamedTuple

import pytest

from corral.testing.binaries import (
    VERSIONS_FILE,
    Versions,
    cached_binaries,
    load_versions,
)
from corral.testing.controlplane import Component
from corral.testing.credentials import IDENTITIES, create_credentials
from corral.testing.processes import (
    boot_id,
    ephemeral_range,
    free_port,
    is_running,
    kill,
    processes_mentioning,
    recorded_alive,
    start_time,
    terminate,
)
from corral_dev.builds import BUILD_SCRIPT


def test_versions_file_pins_all_three(tmp_path: Path) -> None:
    pins = tmp_path / "versions.env"
    pins.write_text(
        "# comment\n\nKUBE_VERSION=v1.2.3\nETCD_VERSION = v3.4.5\nKWOK_VERSION=v0.1.0\n"
    )
    versions = load_versions(pins)
    assert versions == Versions("v1.2.3", "v3.4.5", "v0.1.0")
    assert versions.cache_key == "k8s-v1.2.3-etcd-v3.4.5-kwok-v0.1.0"


def test_corral_versions_file_overrides_the_pins(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pins = tmp_path / "versions.env"
    pins.write_text("KUBE_VERSION=v1.36.3\nETCD_VERSION=v3.6.16\nKWOK_VERSION=v0.8.0\n")
    monkeypatch.setenv("CORRAL_VERSIONS_FILE", str(pins))
    assert cached_binaries().directory.name == "k8s-v1.36.3-etcd-v3.6.16-kwok-v0.8.0"
    monkeypatch.delenv("CORRAL_VERSIONS_FILE")
    assert load_versions(VERSIONS_FILE) == load_versions()


def test_shipped_pins_are_real_versions() -> None:
    versions = load_versions()
    for value in (versions.kube, versions.etcd, versions.kwok):
        assert value.startswith("v")
        assert value.count(".") == 2


def test_token_file_has_one_identity_per_component(tmp_path: Path) -> None:
    creds = create_credentials(tmp_path / "pki")
    lines = creds.token_file.read_text().splitlines()
    assert len(lines) == len(IDENTITIES)
    admin = next(line for line in lines if line.startswith(creds.tokens["admin"]))
    assert admin.endswith(',"system:masters"')
    scheduler = next(line for line in lines if line.startswith(creds.tokens["scheduler"]))
    assert scheduler.split(",")[1] == "system:kube-scheduler"
    assert "system:masters" not in scheduler
    assert len(set(creds.tokens.values())) == len(IDENTITIES)
    assert creds.sa_key.read_text().startswith("-----BEGIN PRIVATE KEY-----")
    assert oct(creds.token_file.stat().st_mode & 0o777) == "0o600"


@pytest.mark.parametrize(
    ("ephemeral", "below"),
    [
        pytest.param(None, True, id="this machine's range: below it"),
        pytest.param((32768, 60999), True, id="Linux's default range: below it"),
        pytest.param((1500, 65000), False, id="no room below the range: the kernel's choice"),
    ],
)
def test_free_port_is_bindable_and_not_ephemeral(
    ephemeral: tuple[int, int] | None, below: bool
) -> None:
    low = (ephemeral or ephemeral_range())[0]
    for _ in range(20):
        port = free_port(ephemeral=ephemeral)
        assert 1024 < port < 65536
        if below:
            assert port < low
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", port))  # free when returned


@pytest.mark.parametrize(
    ("text", "want"),
    [
        pytest.param("32768\t60999\n", (32768, 60999), id="read"),
        pytest.param("garbage", (32768, 60999), id="unreadable: Linux's default"),
    ],
)
def test_ephemeral_range(tmp_path: Path, text: str, want: tuple[int, int]) -> None:
    path = tmp_path / "range"
    path.write_text(text)
    assert ephemeral_range(path) == want


def test_terminate_stops_a_process_group(tmp_path: Path) -> None:
    marker = str(tmp_path / "marker")
    # A parent that starts a child: terminating the group must stop both.
    child = subprocess.Popen(
        [sys.executable, "-c", f"import subprocess,sys,time; subprocess.Popen([sys.executable,"
         f" '-c', 'import time; time.sleep(60)', '{marker}']); time.sleep(60)", marker],
        start_new_session=True,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 60  # two interpreters starting on a busy machine
        while len(processes_mentioning(marker)) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert len(processes_mentioning(marker)) == 2
        terminate(child.pid, sys.executable, grace=5)
        assert not is_running(child.pid)
        # The group got its signal; the grandchild may still be exiting on a busy machine.
        deadline = time.monotonic() + 10
        while processes_mentioning(marker) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert processes_mentioning(marker) == []
    finally:
        child.kill()


# A process whose first thread has exited (a zombie) while another thread still holds a
# listening socket: what a SIGKILLed Go server is for a moment, the window in which a restart
# on the same port once failed with "address already in use".
ZOMBIE_LEADER = """
import ctypes, socket, sys, threading, time
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen()
print(s.getsockname()[1], flush=True)
threading.Thread(target=time.sleep, args=(60,)).start()
ctypes.CDLL(None).pthread_exit(None)
"""


def test_a_zombie_leader_with_live_threads_runs_until_they_are_killed() -> None:
    proc = subprocess.Popen(
        [sys.executable, "-c", ZOMBIE_LEADER], stdout=subprocess.PIPE, start_new_session=True
    )
    try:
        assert proc.stdout is not None
        port = int(proc.stdout.readline())
        deadline = time.monotonic() + 30
        while Path(f"/proc/{proc.pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z":
            assert time.monotonic() < deadline, "the first thread never exited"
            time.sleep(0.05)
        assert is_running(proc.pid)
        kill(proc.pid, None)
        assert not is_running(proc.pid)
        with socket.socket() as again:  # the port is free once kill returns
            again.bind(("127.0.0.1", port))
    finally:
        proc.kill()
        proc.wait()
        if proc.stdout is not None:
            proc.stdout.close()


@pytest.mark.parametrize(
    ("executable", "expected"),
    [pytest.param(None, True, id="any"), pytest.param("/no/such/binary", False, id="other-binary")],
)
def test_is_running_checks_the_executable(executable: str | None, expected: bool) -> None:
    proc = subprocess.Popen(["sleep", "30"])
    try:
        assert is_running(proc.pid, executable) is expected
    finally:
        proc.kill()
        proc.wait()
    assert not is_running(proc.pid)


def test_is_running_right_after_spawn() -> None:
    # Popen returns while the child is still inside execve, when /proc/<pid>/cmdline reads
    # empty; that moment must count as running (it once failed a cluster start: "kwok exited").
    sleep = shutil.which("sleep")
    assert sleep is not None
    for _ in range(200):
        proc = subprocess.Popen([sleep, "30"], start_new_session=True)
        try:
            assert is_running(proc.pid, sleep)
        finally:
            proc.kill()
            proc.wait()


def test_build_without_go_fails_with_a_clear_message(tmp_path: Path) -> None:
    # An empty cache forces a build; a PATH without go must stop it before anything else.
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "CORRAL_BIN_CACHE": str(tmp_path)}
    result = subprocess.run(
        ["bash", str(BUILD_SCRIPT)], env=env, capture_output=True, text=True, check=False
    )
    assert result.returncode == 1
    assert "the Go toolchain is required" in result.stderr
    assert result.stdout == ""


@pytest.fixture
def sleeper_component() -> Iterator[Component]:
    """A live child process, recorded as the control plane records a component."""
    sleep = shutil.which("sleep")
    assert sleep is not None
    process = subprocess.Popen([sleep, "60"], start_new_session=True)
    try:
        yield Component("sleeper", sleep, process.pid, 0, [sleep, "60"], start_time(process.pid))
    finally:
        process.kill()
        process.wait()


def _this_boot(boot: str | None) -> str | None:
    """The tables' boot: "this" stands for this boot's id (known only when the test runs)."""
    return boot_id() if boot == "this" else boot


def _recycled(c: Component) -> Component:
    """The record of an earlier process that had the same pid."""
    return replace(c, started=(c.started or 0) - 1)


class Record(NamedTuple):
    """recorded_alive's arguments."""

    pid: int
    started: int
    executable: str | None
    boot: str


@pytest.mark.parametrize(
    ("change", "alive"),
    [
        pytest.param(lambda r: r, True, id="its process"),
        pytest.param(lambda r: r._replace(started=r.started - 1), False, id="pid recycled"),
        pytest.param(lambda r: r._replace(pid=2**22 + 1), False, id="gone"),
        pytest.param(lambda r: r._replace(executable="/bin/x"), False, id="other program"),
        pytest.param(lambda r: r._replace(executable=None), True, id="any program"),
        pytest.param(lambda r: r._replace(boot="another-boot"), False, id="another boot"),
    ],
)
def test_a_record_is_alive_only_for_its_own_process(
    sleeper_component: Component, change: Callable[[Record], Record], alive: bool
) -> None:
    """processes.recorded_alive: a record left by a killed run must not name another run's
    processes (a cluster's etcd and another's run the same cached binary; a machine restored
    from a copy of its disk hands out the same pids)."""
    c = sleeper_component
    assert c.started is not None
    assert recorded_alive(*change(Record(c.pid, c.started, c.executable, boot_id()))) is alive


@pytest.mark.parametrize(
    ("change", "boot", "alive"),
    [
        pytest.param(lambda c: c, "this", True, id="its process"),
        pytest.param(_recycled, "this", False, id="start time checked"),
        pytest.param(lambda c: c, "another-boot", False, id="boot checked"),
        pytest.param(lambda c: replace(c, started=None), "this", True, id="no start time"),
        pytest.param(
            lambda c: replace(c, started=None, executable="/bin/x"),
            "this",
            False,
            id="no start time, other program",
        ),
        pytest.param(
            lambda c: replace(c, started=None),
            "another-boot",
            True,
            id="no start time, boot not checked",
        ),
        pytest.param(_recycled, None, True, id="no boot, start time not checked"),
    ],
)
def test_a_component_record_is_judged_by_what_it_kept(
    sleeper_component: Component,
    change: Callable[[Component], Component],
    boot: str | None,
    alive: bool,
) -> None:
    """Component.alive: a record with a start time and boot by processes.recorded_alive (whose
    rule the table above tests), one written before they were kept by pid and executable."""
    assert change(sleeper_component).alive(_this_boot(boot)) is alive


@pytest.mark.parametrize(
    ("change", "boot", "stopped"),
    [
        pytest.param(lambda c: c, "this", True, id="its process"),
        pytest.param(lambda c: c, "another-boot", False, id="another boot"),
        pytest.param(_recycled, "this", False, id="start time passed on"),
        pytest.param(lambda c: replace(c, started=None), "another-boot", True, id="no start time"),
        pytest.param(_recycled, None, False, id="no boot, start time passed on"),
    ],
)
def test_stop_stops_only_what_alive_names(
    sleeper_component: Component,
    change: Callable[[Component], Component],
    boot: str | None,
    stopped: bool,
) -> None:
    """Component.stop checks the boot and leaves the rest to processes.terminate."""
    change(sleeper_component).stop(_this_boot(boot))
    assert is_running(sleeper_component.pid, sleeper_component.executable) is not stopped


@pytest.mark.parametrize(
    ("change", "with_start_time", "signalled"),
    [
        pytest.param(lambda c: c, True, True, id="its process"),
        pytest.param(lambda c: replace(c, executable="/bin/x"), True, False, id="other program"),
        pytest.param(_recycled, True, False, id="other start time"),
        pytest.param(_recycled, False, True, id="no start time: pid and executable"),
    ],
)
def test_terminate_signals_only_the_named_process(
    sleeper_component: Component,
    change: Callable[[Component], Component],
    with_start_time: bool,
    signalled: bool,
) -> None:
    """processes.terminate signals nothing unless pid, executable and (if given) start time
    name the process."""
    c = change(sleeper_component)
    terminate(c.pid, c.executable, started=c.started if with_start_time else None, grace=1)
    assert is_running(sleeper_component.pid, sleeper_component.executable) is not signalled
