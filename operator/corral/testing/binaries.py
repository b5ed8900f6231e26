"""The control-plane binaries: pinned versions, the cache directory, and building on a miss.

The versions are pinned once, in ``assets/versions.env``; ``assets/build-control-plane.sh``
builds them from the Go module proxy into a directory keyed by all three versions, so a second
build with the same pins is a no-op and a pin change never reuses stale binaries.

``$CORRAL_VERSIONS_FILE`` names another pins file for everything here and for the build scripts:
``hack/compat`` uses it to run the e2e suite against an older API server (never ``make test``).
"""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Final

ASSETS: Final = Path(__file__).resolve().parent / "assets"
VERSIONS_FILE: Final = ASSETS / "versions.env"
BUILD_SCRIPT: Final = ASSETS / "build-control-plane.sh"
NODE_BUILD_SCRIPT: Final = ASSETS / "build-node.sh"
STORAGE_BUILD_SCRIPT: Final = ASSETS / "build-storage.sh"
STAMP: Final = ".complete"


class BinariesError(RuntimeError):
    """The binaries are missing and could not be built; the message says what to do."""


@dataclass(frozen=True)
class Versions:
    kube: str
    etcd: str
    kwok: str

    @property
    def cache_key(self) -> str:
        return f"k8s-{self.kube}-etcd-{self.etcd}-kwok-{self.kwok}"


def versions_file() -> Path:
    """The pins in force: ``$CORRAL_VERSIONS_FILE`` if set, else ``assets/versions.env``."""
    override = os.environ.get("CORRAL_VERSIONS_FILE")
    return Path(override) if override else VERSIONS_FILE


def load_pins(path: Path | None = None) -> dict[str, str]:
    """Read the ``KEY=VALUE`` pins (comments and blank lines ignored)."""
    values: dict[str, str] = {}
    for raw in (path or versions_file()).read_text().splitlines():
        line = raw.strip()
        if line and not line.startswith("#"):
            key, _, value = line.partition("=")
            values[key.strip()] = value.strip()
    return values


def load_versions(path: Path | None = None) -> Versions:
    values = load_pins(path)
    return Versions(values["KUBE_VERSION"], values["ETCD_VERSION"], values["KWOK_VERSION"])


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


def cache_root() -> Path:
    return Path(os.environ.get("CORRAL_BIN_CACHE", Path.home() / ".cache" / "corral" / "bin"))


@dataclass(frozen=True)
class Binaries:
    """Paths to one complete, versioned set of control-plane binaries."""

    directory: Path
    versions: Versions

    def __getitem__(self, name: str) -> Path:
        return self.directory / name

    @property
    def kube_apiserver(self) -> Path:
        return self["kube-apiserver"]

    @property
    def kube_controller_manager(self) -> Path:
        return self["kube-controller-manager"]

    @property
    def kube_scheduler(self) -> Path:
        return self["kube-scheduler"]

    @property
    def kubectl(self) -> Path:
        return self["kubectl"]

    @property
    def etcd(self) -> Path:
        return self["etcd"]

    @property
    def kwok(self) -> Path:
        return self["kwok"]

    @property
    def kwok_stages(self) -> Path:
        """kwok's default Stages (node init, lease heartbeat, pod ready/complete/delete)."""
        return self["kwok-stages.yaml"]

    @property
    def complete(self) -> bool:
        return (self.directory / STAMP).is_file()


def cached_binaries(versions: Versions | None = None) -> Binaries:
    versions = versions or load_versions()
    return Binaries(cache_root() / versions.cache_key, versions)


def ensure_binaries(*, build: bool = True) -> Binaries:
    """Return the cached binaries, building them first if they are missing and ``build`` is set.

    The build prints its progress on stderr; it takes many minutes when cold.
    """
    binaries = cached_binaries()
    if binaries.complete:
        return binaries
    if not build:
        raise BinariesError(
            f"control-plane binaries {binaries.versions.cache_key} are not built; "
            f"run hack/build-control-plane (or make control-plane)"
        )
    _run_build(BUILD_SCRIPT, "the control-plane binaries", binaries.directory)
    return binaries


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
