"""Debian packages the real node and the image build need, installed when missing.

Contract: :func:`ensure_packages` is idempotent (a package already installed costs one
``dpkg-query``), runs ``apt-get update`` at most once per call and only when something is
missing, and raises :class:`HostPackagesError` with one line saying what to do when it cannot
install (not root, not Debian). CI runs as root on a fresh machine, so this is its only install
step for these packages.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterable


class HostPackagesError(RuntimeError):
    """A needed Debian package is missing and could not be installed."""


def missing(packages: Iterable[str]) -> list[str]:
    """The packages among ``packages`` that dpkg does not list as installed."""
    absent = []
    for package in packages:
        result = subprocess.run(
            ["dpkg-query", "-W", "-f=${db:Status-Status}", package],
            capture_output=True,
            text=True,
            check=False,
        )
        if result.returncode != 0 or result.stdout.strip() != "installed":
            absent.append(package)
    return absent


def ensure_packages(packages: Iterable[str], *, progress: bool = True) -> list[str]:
    """Install whatever of ``packages`` is missing; return what was installed."""
    wanted = list(packages)
    if shutil.which("dpkg-query") is None:
        raise HostPackagesError(
            f"not a Debian-based host (no dpkg-query): install {' '.join(wanted)} yourself"
        )
    absent = missing(wanted)
    if not absent:
        return []
    if os.geteuid() != 0:
        raise HostPackagesError(
            f"missing Debian packages {' '.join(absent)}; run as root or "
            f"`sudo apt-get install --no-install-recommends {' '.join(absent)}`"
        )
    if progress:
        print(f"[host] installing {' '.join(absent)} (apt-get)", file=sys.stderr, flush=True)
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    for argv in (
        ["apt-get", "update", "-qq"],
        ["apt-get", "install", "-y", "-qq", "--no-install-recommends", *absent],
    ):
        result = subprocess.run(argv, capture_output=True, text=True, env=env, check=False)
        if result.returncode != 0:
            tail = "\n".join(result.stderr.strip().splitlines()[-5:])
            raise HostPackagesError(f"{' '.join(argv[:2])} failed ({result.returncode}): {tail}")
    still = missing(absent)
    if still:
        raise HostPackagesError(f"apt-get did not install {' '.join(still)}")
    return absent
