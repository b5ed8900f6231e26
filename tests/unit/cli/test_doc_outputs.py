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


def _try_it_commands() -> list[str]:
    """The ``corral`` lines of the README's "Try it" part, as printed."""
    text = (ROOT / "README.md").read_text()
    part = text.split("## Try it", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```bash\n(.*?)```", part, re.S)
    return [line.split("#")[0].strip() for block in blocks for line in block.splitlines()
            if line.startswith("corral ")]  # fmt: skip


def test_the_readme_try_it_commands_work_as_printed(
    corral: Run, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 37 part 6: three offline commands (and the tour's) run from a checkout with no
    cluster, and say nothing but results, notes and skipped documents."""
    monkeypatch.chdir(ROOT)
    commands = _try_it_commands()
    assert len(commands) >= 4
    for command in commands:
        code, out, err = corral(*shlex.split(command)[1:])
        assert code in (0, 3), (command, err)  # 3: a pod the example means not to place
        assert out, command
        for line in err.splitlines():
            assert line.startswith("note: ") or ": skipped: " in line, (command, line)
