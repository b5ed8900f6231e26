"""The control-plane build is cached by version: a second build rebuilds nothing."""

from __future__ import annotations

import subprocess
from pathlib import Path

from corral.testing.binaries import cached_binaries
from corral_dev.builds import BUILD_SCRIPT

COMPONENTS = (
    "kube-apiserver",
    "kube-controller-manager",
    "kube-scheduler",
    "kubectl",
    "etcd",
    "kwok",
)


def test_second_build_reuses_the_cache() -> None:
    binaries = cached_binaries()
    assert binaries.complete, "make test builds the binaries before running the tests"
    before = {name: binaries[name].stat().st_mtime_ns for name in COMPONENTS}

    result = subprocess.run(
        ["bash", str(BUILD_SCRIPT)], capture_output=True, text=True, check=False, timeout=60
    )

    assert result.returncode == 0, result.stderr
    assert Path(result.stdout.strip()) == binaries.directory
    assert "cached" in result.stderr
    assert "building" not in result.stderr
    assert {name: binaries[name].stat().st_mtime_ns for name in COMPONENTS} == before


def test_binaries_report_the_pinned_versions() -> None:
    binaries = cached_binaries()
    for name in ("kube-apiserver", "kube-scheduler", "kube-controller-manager"):
        out = subprocess.run(
            [str(binaries[name]), "--version"], capture_output=True, text=True, check=True
        ).stdout
        assert out.strip() == f"Kubernetes {binaries.versions.kube}"
    etcd = subprocess.run(
        [str(binaries.etcd), "--version"], capture_output=True, text=True, check=True
    ).stdout
    assert f"etcd Version: {binaries.versions.etcd.lstrip('v')}" in etcd
