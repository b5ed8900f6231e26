"""Every declared plugin's tests are one hop from it: ``test_<module>.py`` beside this file, or a
``<module>/`` folder of tests for a plugin that is a package, named after the module its
declaration's factory lives in. That file imports the plugin; cross-plugin properties
(batch equivalence, pod counting, the catalog, the volume plugins' claim lookup) keep files of
their own."""

from __future__ import annotations

from pathlib import Path

import pytest

from corral.scheduler.config import IN_TREE, PluginDeclaration

HERE = Path(__file__).resolve().parent
PACKAGE = "corral.scheduler.plugins."


def _module(declaration: PluginDeclaration) -> str:
    assert isinstance(declaration.factory, str)
    return declaration.factory.partition(":")[0].removeprefix(PACKAGE)


def _tests_of(module: str) -> list[Path]:
    folder = HERE / module
    return sorted(folder.glob("test_*.py")) if folder.is_dir() else [HERE / f"test_{module}.py"]


@pytest.mark.parametrize("declaration", [pytest.param(d, id=d.name) for d in IN_TREE])
def test_a_declared_plugin_has_its_own_test_file(declaration: PluginDeclaration) -> None:
    module = _module(declaration)
    files = [f for f in _tests_of(module) if f.is_file()]
    assert files, f"{declaration.name}: no tests/unit/scheduler/plugins/test_{module}.py"
    imported = (
        f"from corral.scheduler.plugins import {module}",
        f"corral.scheduler.plugins.{module}",
        f"    {module},\n",
        f"import {module} as",
    )
    assert any(any(i in f.read_text() for i in imported) for f in files), (
        f"{declaration.name}: {files[0].name} does not import {PACKAGE}{module}"
    )
