"""`corral completion bash`: the generated script completes subcommands, flags, a flag's
choices and file names, as bash runs it."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from tests.unit.cli.conftest import Run

from corral.cli import COMMANDS, build_parser


def complete(script: str, line: list[str], cwd: Path) -> list[str]:
    """What bash offers for the last word of ``line`` (``corral`` first)."""
    words = " ".join(f"'{w}'" for w in line)
    program = (
        f"{script}\nCOMP_WORDS=({words}); COMP_CWORD={len(line) - 1}; _corral; "
        'printf "%s\\n" "${COMPREPLY[@]}"'
    )
    bash = shutil.which("bash")
    assert bash is not None, "bash is needed to run the completion"
    done = subprocess.run([bash, "--norc", "-c", program], capture_output=True, text=True,
                          cwd=cwd, check=True, timeout=30)  # fmt: skip
    return [w for w in done.stdout.splitlines() if w]


@pytest.mark.parametrize(
    ("line", "wanted"),
    [
        pytest.param(["corral", ""], sorted([*COMMANDS, "--help", "--version"]),
                     id="every subcommand"),
        pytest.param(["corral", "sim"], ["simulate"], id="a subcommand's prefix"),
        pytest.param(["corral", "render", "--output"], ["--output", "--output-dir"],
                     id="a flag's prefix"),
        pytest.param(["corral", "simulate", "-o", ""], ["json", "text", "yaml"],
                     id="a flag's choices"),
        pytest.param(["corral", "validate", "-f", "pro"], ["profile.yaml"],
                     id="files after -f"),
        pytest.param(["corral", "scheduler", "--config", "p"], ["profile.yaml"],
                     id="files after --config"),
        pytest.param(["corral", "render", "--namespace", ""], [],
                     id="a value only the user knows"),
        pytest.param(["corral", "completion", ""], ["bash"], id="the shells"),
    ],
)  # fmt: skip
def test_bash_completes(corral: Run, tmp_path: Path, line: list[str], wanted: list[str]) -> None:
    code, script, err = corral("completion", "bash")
    assert (code, err) == (0, "")
    (tmp_path / "profile.yaml").write_text("")
    assert sorted(complete(script, line, tmp_path)) == wanted


def test_every_flag_of_every_subcommand_is_offered(corral: Run, tmp_path: Path) -> None:
    _, script, _ = corral("completion", "bash")
    parser = build_parser([])
    subparsers = next(a for a in parser._actions if a.choices and isinstance(a.choices, dict))
    assert subparsers.choices is not None
    for name, sub in subparsers.choices.items():
        flags = sorted(o for a in sub._actions for o in a.option_strings)
        assert sorted(complete(script, ["corral", name, "-"], tmp_path)) == flags, name
