"""The import contracts in .importlinter hold on the tree, every one of them breaks on a forbidden
import, and the plugin lists in them are the plugin declarations' modules.

One copy of the package gets every forbidden import of :data:`VIOLATIONS` (one or more per
contract, each crossing what exactly one contract forbids, or one module no layer names) and
``lint-imports`` runs on it once with the repository's contracts: every contract must be reported
broken, each with the importer -> imported line its violation adds.
"""

from __future__ import annotations

import configparser
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from corral.scheduler.config import IN_TREE

REPO = Path(__file__).resolve().parents[2]
CONFIG = REPO / ".importlinter"
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")
# The contracts whose plugin lists must equal the declarations' modules: (contract, option).
PLUGIN_LISTS = (("plugins-independent", "modules"), ("helper-below-plugins", "forbidden_modules"))

# (contract id, module under corral/ that gets the line, the line, the importer -> imported that
# the report must name, corral's modules without the "corral." prefix). A module that does not
# exist is created.
VIOLATIONS = [
    pytest.param("corral-layers", "api/types.py", "import corral.controller.settings",
                 "api.types -> controller.settings", id="api-imports-controller"),
    pytest.param("corral-layers", "controller/state.py", "import corral.scheduler.engine.app",
                 "controller.state -> scheduler.engine.app",
                 id="controller-imports-engine"),
    pytest.param("scheduler-layers", "scheduler/backend/cache.py",
                 "import corral.scheduler.plugins.node_name",
                 "scheduler.backend.cache -> scheduler.plugins.node_name",
                 id="backend-imports-plugins"),
    pytest.param("scheduler-layers", "scheduler/stray.py", "import corral.scheduler.config",
                 "scheduler.stray", id="scheduler-module-in-no-layer"),
    pytest.param("framework-layers", "scheduler/framework/types.py",
                 "import corral.scheduler.framework.runtime.framework",
                 "scheduler.framework.types -> scheduler.framework.runtime.framework",
                 id="framework-contract-imports-runtime"),
    pytest.param("plugins-below-runtime", "scheduler/plugins/node_name.py",
                 "import corral.scheduler.framework.runtime.framework",
                 "scheduler.plugins.node_name -> scheduler.framework.runtime.framework",
                 id="plugin-imports-runtime"),
    pytest.param("scheduler-not-operator", "scheduler/engine/frameworks.py",
                 "import corral.api.catalog",
                 "scheduler.engine.frameworks -> api.catalog", id="engine-imports-api"),
    pytest.param("operator-side-not-engine-internals", "render/rbac.py",
                 "import corral.scheduler.plugins.node_name",
                 "render.rbac -> scheduler.plugins.node_name",
                 id="render-imports-a-plugin"),
    pytest.param("controller-not-cli-testing-extender", "controller/status.py",
                 "import corral.testing.nodes",
                 "controller.status -> testing.nodes", id="controller-imports-testing"),
    pytest.param("k8s-imports-only-yamlload", "k8s/aio.py", "import corral.controller.settings",
                 "k8s.aio -> controller.settings", id="k8s-imports-controller"),
    pytest.param("testing-imports-k8s-framework-backend", "testing/nodes.py",
                 "import corral.api",
                 "testing.nodes -> api", id="testing-imports-api"),
    pytest.param("testing-imports-k8s-framework-backend", "testing/builders.py",
                 "import corral.scheduler.plugins.node_name",
                 "testing.builders -> scheduler.plugins.node_name", id="testing-imports-a-plugin"),
    pytest.param("extender-library-is-standalone", "extender/types.py",
                 "import corral.scheduler.config",
                 "extender.types -> scheduler.config",
                 id="extender-library-imports-scheduler"),
    pytest.param("yamlload-is-a-leaf", "yamlload.py", "import corral.k8s",
                 "yamlload -> k8s", id="yamlload-imports-k8s"),
    pytest.param("boundedio-is-a-leaf", "boundedio.py", "import corral.yamlload",
                 "boundedio -> yamlload", id="boundedio-imports-yamlload"),
    pytest.param("http-clients-allow-list", "render/names.py", "import kubernetes.client",
                 "render.names -> kubernetes", id="render-imports-kubernetes"),
    pytest.param("http-clients-allow-list", "scheduler/backend/objects.py", "import urllib3",
                 "scheduler.backend.objects -> urllib3", id="backend-imports-urllib3"),
    pytest.param("product-not-harness", "testing/controlplane.py", "import corral_dev.realnode",
                 "testing.controlplane -> corral_dev", id="testing-imports-harness"),
    pytest.param("plugins-independent", "scheduler/plugins/node_ports.py",
                 "import corral.scheduler.plugins.node_name",
                 "scheduler.plugins.node_ports -> scheduler.plugins.node_name",
                 id="plugin-imports-plugin"),
    pytest.param("helper-below-plugins", "scheduler/plugins/helper/normalize.py",
                 "import corral.scheduler.plugins.priority_sort",
                 "scheduler.plugins.helper.normalize -> scheduler.plugins.priority_sort",
                 id="helper-imports-a-plugin"),
]  # fmt: skip


def _contracts() -> configparser.ConfigParser:
    parser = configparser.ConfigParser()
    parser.read(CONFIG)
    return parser


def _names() -> dict[str, str]:
    """Contract id -> name."""
    prefix = "importlinter:contract:"
    parser = _contracts()
    return {s.removeprefix(prefix): parser[s]["name"] for s in parser if s.startswith(prefix)}


def _lint(root: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(root / "src"), "COLUMNS": "500", "NO_COLOR": "1"}
    return subprocess.run(
        [str(LINT_IMPORTS), "--config", str(root / ".importlinter"), "--no-cache"],
        cwd=root, env=env, capture_output=True, text=True, check=False, timeout=300,
    )  # fmt: skip


def _copy(tmp: Path) -> Path:
    shutil.copytree(
        REPO / "operator" / "corral",
        tmp / "src" / "corral",
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    shutil.copy(CONFIG, tmp / ".importlinter")
    return tmp


def _sections(report: str, names: dict[str, str]) -> dict[str, str]:
    """The report's broken-contract sections: contract name -> its text. A section starts with
    the contract's name on a line, underlined with dashes."""
    lines = report.splitlines()
    starts = [
        (i, lines[i])
        for i in range(len(lines) - 1)
        if lines[i] in names.values() and re.fullmatch(r"-+", lines[i + 1])
    ]
    ends = [i for i, _ in starts[1:]] + [len(lines)]
    return {name: "\n".join(lines[i:end]) for (i, name), end in zip(starts, ends, strict=True)}


@pytest.fixture(scope="module")
def broken_report(tmp_path_factory: pytest.TempPathFactory) -> str:
    """``lint-imports`` over one copy with every violation in it."""
    tree = _copy(tmp_path_factory.mktemp("contracts"))
    for case in VIOLATIONS:
        _, module, line, _ = case.values
        path = tree / "src" / "corral" / module
        text = path.read_text() if path.exists() else ""
        path.write_text(f"{text}\n{line}  # forbidden\n")
    result = _lint(tree)
    assert result.returncode != 0, result.stdout + result.stderr
    return result.stdout


def test_contracts_hold_on_the_tree(tmp_path: Path) -> None:
    result = _lint(_copy(tmp_path))
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"{len(_names())} kept, 0 broken" in result.stdout


def test_every_contract_is_broken_by_one_violation_at_least() -> None:
    covered = {case.values[0] for case in VIOLATIONS}
    assert covered == set(_names())


def test_every_contract_breaks_in_one_run(broken_report: str) -> None:
    names = _names()
    assert f"0 kept, {len(names)} broken" in broken_report, broken_report
    assert set(_sections(broken_report, names)) == set(names.values())


@pytest.mark.parametrize(("contract", "module", "line", "reported"), VIOLATIONS)
def test_a_forbidden_import_breaks_its_contract(
    broken_report: str, contract: str, module: str, line: str, reported: str
) -> None:
    section = _sections(broken_report, _names())[_names()[contract]]
    qualified = " -> ".join(
        name if name.startswith(("kubernetes", "urllib3", "corral_dev")) else f"corral.{name}"
        for name in reported.split(" -> ")
    )
    assert qualified in section, section


@pytest.mark.parametrize(("contract", "option"), PLUGIN_LISTS)
def test_plugin_lists_are_the_declared_plugins(contract: str, option: str) -> None:
    listed = set(_contracts()[f"importlinter:contract:{contract}"][option].split())
    declared = {d.factory.partition(":")[0] for d in IN_TREE if isinstance(d.factory, str)}
    assert listed == declared
