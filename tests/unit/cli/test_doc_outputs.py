"""Docs that show a command's output show what it prints: every ``<!-- output of: corral ...
-->`` block of the docs equals the command's stdout, run from the repository's root."""

from __future__ import annotations

import os
import re
import shlex
from pathlib import Path

import pytest
from tests.unit.cli.conftest import ROOT, Run

BLOCK = re.compile(r"<!-- output of: (corral .*?) -->\n```\n(.*?)```", re.S)
DOCS = sorted([*ROOT.glob("docs/**/*.md"), ROOT / "README.md", *ROOT.glob("examples/*/README.md")])
CASES = [
    pytest.param(path, command, shown, id=f"{path.relative_to(ROOT)}: {command}")
    for path in DOCS
    for command, shown in BLOCK.findall(path.read_text())
]


def test_there_are_documented_outputs() -> None:
    assert len(CASES) >= 4


@pytest.mark.parametrize(("path", "command", "shown"), CASES)
def test_a_documented_output_is_what_the_command_prints(
    path: Path, command: str, shown: str, corral: Run, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)
    argv = shlex.split(command)[1:]
    _code, out, _err = corral(*argv)
    assert out == shown, f"{path}: {command}"
    assert os.getcwd() == str(ROOT)
