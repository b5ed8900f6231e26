"""Fixtures for the real-node tests: the image built from this checkout, and a cluster with the
machine's one real node (containerd, kubelet, kube-proxy) beside kwok nodes.

The real node is host-global (iptables, /kubepods, its ports and address), so these tests take
the machine-wide real-node lock and wait for another run's node to go; deselect them with
``-m 'not realnode'``. They need root: anywhere else they fail, saying why.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from corral import __version__
from corral.k8s import Client
from corral.testing import LocalCluster
from corral_dev.builds import ensure_node_binaries, load_node_pins
from corral_dev.hostpackages import ensure_packages
from corral_dev.images import build_image
from corral_dev.realnode import RealNodes

ROOT = Path(__file__).resolve().parents[3]
LOCK_WAIT = float(os.environ.get("CORRAL_REALNODE_WAIT", "1800"))


class WaitBudget:
    """``seconds`` to spend over many waits, counted from the first call; each call returns
    what is left (never below 0)."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.deadline: float | None = None  # set by the first call

    def __call__(self) -> float:
        if self.deadline is None:
            self.deadline = time.monotonic() + self.seconds
        return max(0.0, self.deadline - time.monotonic())


@pytest.fixture(scope="session")
def lock_wait() -> Callable[[], float]:
    """Seconds left to wait for another run's real node to go: one budget of ``LOCK_WAIT`` for
    the whole session, started at the first wait, so a node that never goes costs the session
    that once instead of once per module (which ran CI past its time)."""
    return WaitBudget(LOCK_WAIT)


@pytest.fixture(scope="session")
def corral_image() -> Path:
    """``make image``'s archive of this checkout (buildah; the base cached by version)."""
    ensure_packages(load_node_pins().image_packages)
    return build_image(ROOT, ROOT / "dist", __version__).archive


@pytest.fixture(scope="module")
def real_cluster(
    corral_image: Path,
    tmp_path_factory: pytest.TempPathFactory,
    lock_wait: Callable[[], float],
) -> Iterator[LocalCluster]:
    ensure_node_binaries()
    cluster = LocalCluster.up(
        tmp_path_factory.mktemp("real"),
        with_kube_scheduler=True,
        nodes=RealNodes(images=[corral_image], lock_timeout=lock_wait()),
        progress=True,
    )
    try:
        cluster.add_nodes(3, prefix="kwok")
        yield cluster
    finally:
        cluster.down()


@pytest.fixture(scope="module")
def kube(real_cluster: LocalCluster) -> Client:
    return real_cluster.admin


REPORT: pytest.StashKey[list[str]] = pytest.StashKey()


@pytest.fixture(scope="session")
def report(request: pytest.FixtureRequest) -> list[str]:
    """Lines printed in the terminal summary (what a real-node test found, e.g. which engines an
    upgrade restarted and why), shown whether the test passes or not."""
    return request.config.stash.setdefault(REPORT, [])


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    lines = config.stash.get(REPORT, [])
    if lines:
        terminalreporter.section("real node: what the tests found")
        for line in lines:
            terminalreporter.write_line(line)
