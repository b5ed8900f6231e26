"""The control-plane binaries: pinned versions and the cache directory they are found in.

The versions are pinned once, in ``versions.env`` beside this module (package data: it is how
an installed Corral knows which binaries it runs against). The development harness
(``hack/corral_dev``, outside the wheel) builds them from the Go module proxy into a directory
keyed by all three versions (``make control-plane``), so a second build with the same pins is a
no-op and a pin change never reuses stale binaries. This module only finds them: a plugin
author points ``$CORRAL_BIN_CACHE`` at a cache built by a Corral checkout.

``$CORRAL_VERSIONS_FILE`` names another pins file for everything here and for the build scripts:
``hack/compat`` uses it to run the e2e suite against an older API server (never ``make test``).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Final

VERSIONS_FILE: Final = Path(__file__).resolve().parent / "versions.env"
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
    """The pins in force: ``$CORRAL_VERSIONS_FILE`` if set, else ``versions.env``."""
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


def ensure_binaries() -> Binaries:
    """The cached binaries of the pins in force; :class:`BinariesError` if they are not built."""
    binaries = cached_binaries()
    if not binaries.complete:
        raise BinariesError(
            f"control-plane binaries {binaries.versions.cache_key} are not built in "
            f"{binaries.directory.parent}; build them with `make control-plane` in a Corral "
            f"checkout, or set CORRAL_BIN_CACHE to a cache that has them"
        )
    return binaries
