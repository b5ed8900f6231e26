"""Building what the development harness runs: the control plane, the real node's binaries,
the storage components of the volume tests, helm, the local-path provisioner, Prometheus
(Debian's package, unpacked) and the kstatus reader.

Each build goes from the Go module proxy into ``$CORRAL_BIN_CACHE`` (default
``~/.cache/corral/bin``), keyed by the pins in ``corral/testing/versions.env``
(:func:`corral.testing.binaries.versions_file`), and leaves a stamp when complete, so a second
build with the same pins is a no-op. The scripts are ``assets/build-*.sh`` (``hack/build-*``
runs them); progress goes to stderr.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from corral.testing.binaries import (
    STAMP,
    Binaries,
    BinariesError,
    cache_root,
    cached_binaries,
    load_pins,
)

ASSETS: Final = Path(__file__).resolve().parent / "assets"
BUILD_SCRIPT: Final = ASSETS / "build-control-plane.sh"
NODE_BUILD_SCRIPT: Final = ASSETS / "build-node.sh"
STORAGE_BUILD_SCRIPT: Final = ASSETS / "build-storage.sh"


def ensure_control_plane() -> Binaries:
    """The cached control-plane binaries, built first if they are missing (many minutes cold)."""
    binaries = cached_binaries()
    if not binaries.complete:
        _run_build(BUILD_SCRIPT, "the control-plane binaries", binaries.directory)
    return binaries


@dataclass(frozen=True)
class NodePins:
    """What the real node runs: kubelet/kube-proxy at ``kube``, containerd from the Go proxy,
    the sandbox image's name, and the Debian packages (runc, CNI plugins, iptables, ...)."""

    kube: str
    containerd: str
    pause_image: str
    packages: tuple[str, ...]
    image_packages: tuple[str, ...]

    @property
    def cache_key(self) -> str:
        return f"node-k8s-{self.kube}-containerd-{self.containerd}"


def load_node_pins(path: Path | None = None) -> NodePins:
    values = load_pins(path)
    return NodePins(
        kube=values["KUBE_VERSION"],
        containerd=values["CONTAINERD_VERSION"],
        pause_image=values["PAUSE_IMAGE"],
        packages=tuple(p for p in values["NODE_PACKAGES"].split(",") if p),
        image_packages=tuple(p for p in values["IMAGE_PACKAGES"].split(",") if p),
    )


def _run_build(script: Path, what: str, directory: Path) -> None:
    """Run a build script (progress on stderr); it must leave its stamp in ``directory``."""
    result = subprocess.run(
        ["bash", str(script)], stdout=subprocess.PIPE, stderr=sys.stderr, check=False
    )
    if result.returncode != 0 or not (directory / STAMP).is_file():
        raise BinariesError(
            f"building {what} failed (exit {result.returncode}); see the build output above"
        )


@dataclass(frozen=True)
class NodeBinaries:
    """kubelet, kube-proxy, containerd (+ shim, ctr) and the static pause binary."""

    directory: Path
    pins: NodePins

    def __getitem__(self, name: str) -> Path:
        return self.directory / name

    @property
    def complete(self) -> bool:
        return (self.directory / STAMP).is_file()


def ensure_node_binaries(*, build: bool = True) -> NodeBinaries:
    """The cached node binaries, built first (``assets/build-node.sh``, minutes when cold) if
    missing and ``build`` is set. Progress goes to stderr."""
    pins = load_node_pins()
    binaries = NodeBinaries(cache_root() / pins.cache_key, pins)
    if binaries.complete:
        return binaries
    if not build:
        raise BinariesError(f"node binaries {pins.cache_key} are not built; run hack/build-node")
    _run_build(NODE_BUILD_SCRIPT, "the node binaries", binaries.directory)
    return binaries


def ensure_helm() -> Path:
    """The ``helm`` binary at the pinned HELM_VERSION, built from the Go module proxy into
    the cache on first use (a few minutes cold)."""
    version = load_pins()["HELM_VERSION"]
    return _go_installed(
        "helm",
        version,
        f"helm.sh/helm/v3/cmd/helm@{version}",
        f"-ldflags=-s -w -X helm.sh/helm/v3/internal/version.version={version}",
    )


def _go_installed(name: str, version: str, package: str, *flags: str) -> Path:
    """``<cache>/<name>-<version>/<name>``, ``go install``-ed there first if not stamped."""
    directory = cache_root() / f"{name}-{version}"
    binary = directory / name
    if (directory / STAMP).is_file():
        return binary
    directory.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "GOBIN": str(directory), "GOTOOLCHAIN": "local", "CGO_ENABLED": "0"}
    print(f"[binaries] building {name} {version} (go install)", file=sys.stderr, flush=True)
    result = subprocess.run(
        ["go", "install", "-trimpath", *flags, package],
        env=env, stdout=sys.stderr, stderr=sys.stderr, check=False,
    )  # fmt: skip
    if result.returncode != 0 or not binary.is_file():
        raise BinariesError(f"building {name} {version} failed (exit {result.returncode})")
    (directory / STAMP).touch()
    return binary


@dataclass(frozen=True)
class StorageBinaries:
    """csi-provisioner and csi-capacity-driver (``build-storage.sh``)."""

    directory: Path

    def __getitem__(self, name: str) -> Path:
        return self.directory / name


def ensure_storage_binaries(*, build: bool = True) -> StorageBinaries:
    """The storage components of the volume tests, built first (``assets/build-storage.sh``,
    minutes when cold; the script knows the cache key) if missing and ``build`` is set."""
    probe = subprocess.run(
        ["bash", str(STORAGE_BUILD_SCRIPT)],
        env={**os.environ, "CORRAL_STORAGE_PROBE": "1"},
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        check=False,
        text=True,
    )
    directory = Path(probe.stdout.strip())
    if (directory / STAMP).is_file():
        return StorageBinaries(directory)
    if not build:
        raise BinariesError(
            f"storage components {directory.name} are not built; run hack/build-storage"
        )
    _run_build(STORAGE_BUILD_SCRIPT, "the storage components", directory)
    return StorageBinaries(directory)


def ensure_local_path_provisioner() -> Path:
    """Rancher's ``local-path-provisioner`` at the pinned version, ``go install``-ed from the
    Go module proxy into the cache on first use (about 7 minutes cold)."""
    version = load_pins()["LOCAL_PATH_PROVISIONER_VERSION"]
    module = f"github.com/rancher/local-path-provisioner@{version}"
    return _go_installed("local-path-provisioner", version, module)


def ensure_prometheus() -> Path:
    """The directory holding ``prometheus`` and ``promtool``: Debian's package at the pinned
    PROMETHEUS_DEBIAN_VERSION, downloaded with apt and unpacked into the cache on first use
    (19 MB, seconds; nothing is installed on the host, no service started)."""
    version = load_pins()["PROMETHEUS_DEBIAN_VERSION"]
    directory = cache_root() / f"prometheus-{version}"
    if (directory / STAMP).is_file():
        return directory
    directory.mkdir(parents=True, exist_ok=True)
    print(f"[binaries] fetching prometheus {version} (apt-get download)", file=sys.stderr)
    with tempfile.TemporaryDirectory(prefix="corral-prometheus-") as tmp:
        download = ["apt-get", "download", f"prometheus={version}"]
        if subprocess.run(download, cwd=tmp, capture_output=True, check=False).returncode != 0:
            # A fresh machine has no package lists yet (as hostpackages, update once).
            subprocess.run(["apt-get", "update", "-qq"], capture_output=True, check=False)
        for command in (download, ["sh", "-c", "dpkg-deb -x prometheus_*.deb unpacked"]):
            if command is download and list(Path(tmp).glob("prometheus_*.deb")):
                continue  # the first try got it
            result = subprocess.run(command, cwd=tmp, capture_output=True, text=True, check=False)
            if result.returncode != 0:
                detail = (result.stderr or result.stdout).strip().splitlines()[-1:] or [""]
                raise BinariesError(
                    f"fetching prometheus {version}: {' '.join(command)} failed: {detail[0]} "
                    "(run `apt-get update` first?)"
                )
        for name in ("prometheus", "promtool"):
            shutil.copy2(Path(tmp, "unpacked", "usr", "bin", name), directory / name)
    (directory / STAMP).touch()
    return directory


KSTATUS_SOURCE: Final = ASSETS / "kstatus"


def ensure_kstatus() -> Path:
    """``kstatus`` (``assets/kstatus``): sigs.k8s.io/cli-utils' kstatus library, as Flux reads
    objects' health, behind a JSON-in, JSON-out command. Built from the Go module proxy on
    first use into a directory keyed by its sources (go.mod pins the library)."""
    digest = hashlib.sha256()
    for name in ("go.mod", "go.sum", "main.go"):
        digest.update((KSTATUS_SOURCE / name).read_bytes())
    directory = cache_root() / f"kstatus-{digest.hexdigest()[:12]}"
    binary = directory / "kstatus"
    if (directory / STAMP).is_file():
        return binary
    directory.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "GOTOOLCHAIN": "local", "CGO_ENABLED": "0"}
    print("[binaries] building kstatus (go build)", file=sys.stderr, flush=True)
    result = subprocess.run(
        ["go", "build", "-trimpath", "-ldflags=-s -w", "-o", str(binary), "."],
        cwd=KSTATUS_SOURCE, env=env, stdout=sys.stderr, stderr=sys.stderr, check=False,
    )  # fmt: skip
    if result.returncode != 0 or not binary.is_file():
        raise BinariesError(f"building kstatus failed (exit {result.returncode})")
    (directory / STAMP).touch()
    return binary
