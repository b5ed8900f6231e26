"""The wheel is what users install: built from the checkout and installed in a fresh venv outside
it, ``corral render`` must give exactly the golden files (templates shipped as package data),
every third-party module the package imports must be a declared dependency, and it ships the
product only: no development harness (``hack/corral_dev``: build scripts, Go sources, modules
that change the host)."""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
import sysconfig
import tomllib
import zipfile
from pathlib import Path

import pytest

import corral

ROOT = Path(__file__).resolve().parents[3]
GOLDEN = ROOT / "tests" / "unit" / "render" / "golden"
SAMPLES = sorted(
    p for p in (ROOT / "config" / "samples").glob("*.yaml") if p.name != "kustomization.yaml"
)

# What corral.testing ships: what plugin authors use (the control plane, fake nodes, the pytest
# plugin and its cluster's audit log, builders and a fake Handle); everything else of the harness
# stays in hack/corral_dev.
TESTING_MODULES = {
    "__init__", "audit", "binaries", "builders", "controlplane", "credentials", "framework",
    "node_provider", "nodes", "processes", "pytest_plugin", "statefile",
}  # fmt: skip
# Text no shipped module may hold: what only a module that changes the host would run.
HOST_CHANGES = ("apt-get", "iptables", "/sys/fs/cgroup", "buildah", "sysctl", '"ip", "link"')

# Import name -> distribution name, where they differ.
DISTRIBUTION = {"yaml": "pyyaml", "prometheus_client": "prometheus-client", "celpy": "cel-python"}


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel ``pip wheel`` builds from the checkout."""
    work = tmp_path_factory.mktemp("wheel")
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation",
         "-w", str(work / "dist"), str(ROOT)],
        check=True, cwd=work,
    )  # fmt: skip
    (built,) = (work / "dist").glob("corral-*.whl")
    return built


@pytest.fixture(scope="module")
def installed(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh venv (outside the checkout) with only the wheel installed; its dependencies come
    from this interpreter's site-packages through a .pth line, which (unlike a site dir) runs no
    .pth hooks, so the checkout's editable install cannot shadow the wheel."""
    work = tmp_path_factory.mktemp("venv")
    venv = work / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    purelib = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True, capture_output=True, text=True,
    ).stdout.strip()  # fmt: skip
    (Path(purelib) / "deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "--quiet",
         "--no-deps", str(wheel)],
        check=True,
    )  # fmt: skip
    return venv


def test_wheel_ships_no_development_harness(wheel: Path) -> None:
    names = zipfile.ZipFile(wheel).namelist()
    assert [n for n in names if n.endswith((".go", ".sh", ".mod", ".sum"))] == []
    assert [n for n in names if not n.startswith(("corral/", "corral-"))] == []
    testing = {n.removeprefix("corral/testing/") for n in names if n.startswith("corral/testing/")}
    assert testing == {f"{m}.py" for m in TESTING_MODULES} | {"versions.env"}
    with zipfile.ZipFile(wheel) as archive:
        changing = {
            (name, text)
            for name in names
            if name.endswith(".py")
            for text in HOST_CHANGES
            if text in archive.read(name).decode()
        }
    assert changing == set()


def test_wheel_is_imported_from_the_venv(installed: Path) -> None:
    where = subprocess.run(
        [str(installed / "bin" / "python"), "-c", "import corral; print(corral.__file__)"],
        check=True, capture_output=True, text=True, cwd=installed,
    ).stdout  # fmt: skip
    assert where.startswith(str(installed))


def test_installed_wheel_carries_the_protobuf_schema(installed: Path) -> None:
    kinds = subprocess.run(
        [str(installed / "bin" / "python"), "-c",
         "from corral.k8s import protobuf_objects as p; print(sorted(p.schema().kinds))"],
        check=True, capture_output=True, text=True, cwd=installed,
    ).stdout  # fmt: skip
    assert kinds.strip() == "['Pod']"


@pytest.mark.parametrize("sample", [pytest.param(s, id=s.stem) for s in SAMPLES])
def test_installed_wheel_renders_the_golden_files(installed: Path, sample: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "CORRAL_TEMPLATES"}
    result = subprocess.run(
        [str(installed / "bin" / "corral"), "render", "-f", str(sample)],
        capture_output=True, text=True, cwd=installed, env=env, check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert result.stdout == (GOLDEN / sample.name).read_text(encoding="utf-8")


def _third_party_imports() -> set[str]:
    package = Path(corral.__file__).parent
    stdlib = set(sys.stdlib_module_names)
    found: set[str] = set()
    for path in package.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            found |= {n.split(".")[0] for n in names} - stdlib - {"corral"}
    return found


def _requirement_names(requirements: list[str]) -> set[str]:
    return {re.split(r"[<>=!~\[; ]", r, maxsplit=1)[0].lower() for r in requirements}


def test_every_imported_distribution_is_declared() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    declared = _requirement_names(project["dependencies"])
    # corral.testing.pytest_plugin is loaded only by pytest, through the `testing` extra.
    declared |= _requirement_names(project["optional-dependencies"]["testing"])
    imported = {DISTRIBUTION.get(name, name).lower() for name in _third_party_imports()}
    assert imported - declared == set()


def test_one_version_string() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert project["project"]["dynamic"] == ["version"]
    assert project["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "corral.__version__"}
