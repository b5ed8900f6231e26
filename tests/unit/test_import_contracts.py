"""The import contracts in .importlinter hold on the tree and break on a forbidden import.

Each case copies the package to a temporary directory, adds one import that crosses a layer
(or one module no layer names) and runs ``lint-imports`` on the copy with the repository's
contracts: it must fail and name the contract that forbids it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")


def _lint(root: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(root / "src"), "COLUMNS": "500", "NO_COLOR": "1"}
    return subprocess.run(
        [str(LINT_IMPORTS), "--config", str(root / ".importlinter"), "--no-cache"],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    shutil.copytree(
        REPO / "operator" / "corral",
        tmp_path / "src" / "corral",
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    shutil.copy(REPO / ".importlinter", tmp_path / ".importlinter")
    return tmp_path


def test_contracts_hold_on_the_tree(tree: Path) -> None:
    result = _lint(tree)
    assert result.returncode == 0, result.stdout + result.stderr
    assert " 0 broken" in result.stdout


@pytest.mark.parametrize(
    ("module", "line", "contract"),
    [
        pytest.param(
            "k8s/aio.py",
            "import corral.controller.settings",
            "corral.k8s is the only door to the API server",
            id="k8s-imports-controller",
        ),
        pytest.param(
            "api/types.py",
            "import corral.controller.settings",
            "corral: cli > controller | scheduler engine > render > api > scheduler.config",
            id="api-imports-controller",
        ),
        pytest.param(
            "render/rbac.py",
            "import corral.controller.settings",
            "corral: cli > controller | scheduler engine > render > api > scheduler.config",
            id="render-imports-controller",
        ),
        pytest.param(
            "controller/state.py",
            "import corral.scheduler.engine.app",
            "corral: cli > controller | scheduler engine > render > api > scheduler.config",
            id="controller-imports-engine",
        ),
        pytest.param(
            "scheduler/engine/frameworks.py",
            "import corral.api.catalog",
            "the scheduler (engine and everything under it) does not import the operator side",
            id="engine-imports-api",
        ),
        pytest.param(
            "scheduler/plugins/node_name.py",
            "import corral.scheduler.framework.runtime.framework",
            "plugins, backend and the extender client use the framework's contracts",
            id="plugin-imports-runtime",
        ),
        pytest.param(
            "scheduler/backend/cache.py",
            "import corral.scheduler.plugins.node_name",
            "corral.scheduler: engine > plugins | backend | extender client > framework > config",
            id="backend-imports-plugins",
        ),
        pytest.param(
            "scheduler/config/types.py",
            "import corral.scheduler.framework.status",
            "corral.scheduler: engine > plugins | backend | extender client > framework > config",
            id="config-imports-framework",
        ),
        pytest.param(
            "scheduler/framework/types.py",
            "import corral.scheduler.framework.runtime.framework",
            "corral.scheduler.framework: runtime > the plugin contracts",
            id="framework-contract-imports-runtime",
        ),
        pytest.param(
            "scheduler/plugins/node_name.py",
            "import corral.scheduler.plugins.node_ports",
            "in-tree plugins do not import each other",
            id="plugin-imports-plugin",
        ),
        pytest.param(
            "extender/types.py",
            "import corral.scheduler.config",
            "corral.extender (the extender server library) imports only the standard library",
            id="extender-library-imports-scheduler",
        ),
        pytest.param(
            "testing/nodes.py",
            "import corral.api",
            "corral.testing (control plane, fixtures) builds on corral.k8s only",
            id="testing-imports-api",
        ),
        pytest.param(
            "testing/controlplane.py",
            "import corral_dev.realnode",
            "corral (the wheel) does not import corral_dev (the development harness)",
            id="testing-imports-harness",
        ),
        pytest.param(
            "scheduler/stray.py",
            "import corral.scheduler.config",
            "corral.scheduler: engine > plugins | backend | extender client > framework > config",
            id="scheduler-module-in-no-layer",
        ),
    ],
)
def test_a_forbidden_import_breaks_its_contract(
    tree: Path, module: str, line: str, contract: str
) -> None:
    path = tree / "src" / "corral" / module
    text = path.read_text() if path.exists() else ""
    path.write_text(f"{text}\n{line}  # forbidden\n")
    result = _lint(tree)
    assert result.returncode != 0
    broken = [ln for ln in result.stdout.splitlines() if ln.endswith("BROKEN")]
    assert any(ln.startswith(contract) for ln in broken), result.stdout
