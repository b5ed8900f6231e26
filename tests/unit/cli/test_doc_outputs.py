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


# A documented command line: "corral validate|render|simulate ..." in a bash block, "$ " or not.
COMMAND = re.compile(r"^(?:\$ )?(corral (?:validate|render|simulate) .*)$", re.M)


def _runnable(command: str) -> bool:
    """Its files are the checkout's (the others, e.g. ``my-profile.yaml``, are the reader's)."""
    argv = shlex.split(command)
    files = [argv[i + 1] for i, a in enumerate(argv[:-1]) if a in ("-f", "--filename", "--config")]
    return bool(files) and all((ROOT / f).exists() for f in files)


COMMANDS = [
    pytest.param(command, id=f"{path.relative_to(ROOT)}: {command}")
    for path in DOCS
    for block in re.findall(r"```(?:bash|sh)\n(.*?)```", path.read_text(), re.S)
    for command in (c.split("  #")[0].strip() for c in COMMAND.findall(block))
    if _runnable(command)
]


def test_there_are_documented_commands() -> None:
    assert len(COMMANDS) >= 15


@pytest.mark.parametrize("command", COMMANDS)
def test_a_documented_command_runs_as_printed(
    command: str, corral: Run, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Every command the docs give on the checkout's files works (exit 0, or 3: a pod the
    example means not to place) and prints nothing but results, notes and skipped documents;
    ``--output-dir`` goes to a temporary directory."""
    monkeypatch.chdir(ROOT)
    argv = shlex.split(command)[1:]
    argv = [str(tmp_path / "out") if i and argv[i - 1] == "--output-dir" else a
            for i, a in enumerate(argv)]  # fmt: skip
    if "--prune" in argv:  # "replace an earlier render": there is one
        corral(*[a for a in argv if a != "--prune"])
    code, out, err = corral(*argv)
    assert code in (0, 3), err
    assert out or "--output-dir" in argv
    for line in err.splitlines():
        assert line.startswith(("note: ", "wrote ")) or ": skipped: " in line, line
