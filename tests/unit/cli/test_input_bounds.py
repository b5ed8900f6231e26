"""``-f DIR -R`` on hostile trees: no RecursionError, no link loop, bounds over all the files.

``corral validate``, ``render`` and ``simulate`` read their ``-f`` inputs through
:mod:`corral.cli.inputs`. A tree 1,000 levels deep raised RecursionError (a traceback); a
directory of very many files, or of many files each under the per-file cap, was read and
loaded whole (156 MiB in 40 files ran for more than 5 minutes). Each case here ends in one
line with the exit code of bad input: 1 for input past a bound, 2 for a name that cannot be read.
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from tests.unit.cli.conftest import Run

from corral.cli import inputs
from corral.cli.problems import SHOWN_SOURCE
from corral.cli.simulate import MAX_CLUSTER_TOTAL_BYTES

PROFILE = (
    "apiVersion: corral.dev/v1alpha1\nkind: SchedulerProfile\nmetadata:\n  name: a\nspec: {}\n"
)
COMMANDS = ("validate", "render", "simulate")


@pytest.fixture(autouse=True)
def _deep_trees_removed(tmp_path: Path) -> Iterator[None]:
    """Each test removes the deep tree it made: pytest removes old temporary directories with
    shutil.rmtree, which recurses once per level and, on a tree 1,000 levels deep, raised
    RecursionError at the end of a later session (its exit status 1). ``rm -rf`` walks it
    without recursing."""
    yield
    subprocess.run(["rm", "-rf", str(tmp_path / "deep")], check=True)


def _deep(root: Path, levels: int, leaf: str) -> Path:
    """``root/d/d/.../d/p.yaml``, ``levels`` deep, made through directory fds (a path that
    long cannot be named whole: PATH_MAX)."""
    root.mkdir()
    fd = os.open(root, os.O_RDONLY)
    try:
        for _ in range(levels):
            os.mkdir("d", dir_fd=fd)
            below = os.open("d", os.O_RDONLY, dir_fd=fd)
            os.close(fd)
            fd = below
        out = os.open("p.yaml", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd)
        os.write(out, leaf.encode())
        os.close(out)
    finally:
        os.close(fd)
    return root


def _files(root: Path, count: int, suffix: str = ".yaml", size: int = 0) -> Path:
    """``count`` files (sparse, of ``size`` bytes: only their size is looked at before they
    are refused)."""
    root.mkdir()
    for i in range(count):
        with (root / f"f{i:05}{suffix}").open("wb") as f:
            f.truncate(size)
    return root


def _loops(root: Path) -> Path:
    root.mkdir()
    (root / "self").symlink_to(".")  # a directory link: not followed by -R
    (root / "sub").mkdir()
    (root / "sub" / "up").symlink_to("..")
    (root / "b.yaml").symlink_to("a.yaml")  # a file link loop: ELOOP when read
    (root / "a.yaml").symlink_to("b.yaml")
    return root


Case = Callable[[Path, pytest.MonkeyPatch], Path]


def many_files(tmp: Path, _: pytest.MonkeyPatch) -> Path:
    return _files(tmp / "many", inputs.MAX_FILES + 1)


def many_entries(tmp: Path, patch: pytest.MonkeyPatch) -> Path:
    patch.setattr(inputs, "MAX_ENTRIES", 50)  # 200,000 real entries take a while to make
    root = _files(tmp / "wide", 40, suffix=".txt")
    (root / "sub").mkdir()
    _files(root / "sub" / "more", 20, suffix=".txt")
    return root


def large_files(tmp: Path, _: pytest.MonkeyPatch) -> Path:
    # Each under the per-file cap of every command, more than the total of every one of them.
    per_file = inputs.MAX_BYTES - 1
    return _files(tmp / "big", MAX_CLUSTER_TOTAL_BYTES // per_file + 1, size=per_file)


def link_loops(tmp: Path, _: pytest.MonkeyPatch) -> Path:
    return _loops(tmp / "loops")


def too_deep_to_name(tmp: Path, _: pytest.MonkeyPatch) -> Path:
    return _deep(tmp / "deep", 3000, PROFILE)  # 6,000 characters: past PATH_MAX


def _total(command: str) -> int:
    return MAX_CLUSTER_TOTAL_BYTES if command == "simulate" else inputs.MAX_TOTAL_BYTES


# (case, exit code, the one line of stderr: {root} the directory, {total} the command's cap)
ROWS = [
    pytest.param(many_files, 1, "{root}: more than 10000 files; at most 10000 are read",
                 id="more files than MAX_FILES"),
    pytest.param(many_entries, 1,
                 "{root}: more than 50 directory entries; at most 50 are looked at",
                 id="more directory entries than MAX_ENTRIES, across subdirectories"),
    pytest.param(large_files, 1,
                 "{root}/f{n:05}.yaml: the inputs are more than {total} bytes in all; at most"
                 " {total} are read", id="files each under the cap, over the total"),
    pytest.param(link_loops, 2, "corral: cannot read {root}/a.yaml: Too many levels of symbolic"
                 " links", id="symlink loops (directories not followed, a file loop refused)"),
    pytest.param(too_deep_to_name, 2, r"corral: cannot read (?P<head>.{70})\.\.\."
                 r"\((?P<levels>\d+) levels\)\.\.\.(/d){35}: File name too long",
                 id="3,000 levels: past PATH_MAX, the path cut in its line"),
]  # fmt: skip


@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize(("case", "code", "line"), ROWS)
def test_a_hostile_directory_is_one_line(
    tmp_path: Path,
    corral: Run,
    monkeypatch: pytest.MonkeyPatch,
    command: str,
    case: Case,
    code: int,
    line: str,
) -> None:
    root = case(tmp_path, monkeypatch)
    got, out, err = corral(command, "-R", "-f", str(root))
    total = _total(command)
    lines = err.splitlines()
    assert (got, out, len(lines)) == (code, "", 1), err[:2000]
    if case is too_deep_to_name:  # the path as far as it could be named, cut in the middle
        found = re.fullmatch(line, lines[0])
        assert found is not None, lines[0]
        assert f"{root}/d/d".startswith(found["head"]) or found["head"].startswith(str(root))
        assert int(found["levels"]) > 1000
        return
    n = total // (inputs.MAX_BYTES - 1)  # the file that crosses the total (from f00000)
    assert lines[0] == line.format(root=root, total=total, n=n)


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        pytest.param("validate", "/d/p.yaml: valid (a)\n", id="validate"),
        pytest.param("render", "kind: ConfigMap", id="render"),
    ],
)
def test_a_tree_1000_levels_deep_is_read(
    tmp_path: Path, corral: Run, command: str, expected: str
) -> None:
    """It raised RecursionError in the walk (a traceback)."""
    root = _deep(tmp_path / "deep", 1000, PROFILE)
    code, out, err = corral(command, "-R", "-f", str(root))
    assert code == 0, err
    assert expected in out


NOT_A_PROFILE = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n"
BAD_PROFILE = PROFILE.replace("spec: {}", "spec: {replicas: many}")


@pytest.mark.parametrize(
    ("command", "leaf", "code", "said"),
    [
        pytest.param("validate", PROFILE, 0, "valid (a)", id="validate: the valid line"),
        pytest.param("validate", NOT_A_PROFILE, 1, "skipped: a ConfigMap",
                     id="validate: the skipped document's note"),
        pytest.param("validate", BAD_PROFILE, 1, "spec.replicas",
                     id="validate: a field's problem"),
        pytest.param("render", NOT_A_PROFILE, 1, "skipped: a ConfigMap",
                     id="render: the skipped document's note"),
        pytest.param("render", BAD_PROFILE, 1, "spec.replicas", id="render: a field's problem"),
        pytest.param("simulate", BAD_PROFILE, 1, "spec.replicas",
                     id="simulate: a field's problem"),
    ],
)  # fmt: skip
def test_a_message_about_a_deep_file_names_it_cut(
    tmp_path: Path, corral: Run, command: str, leaf: str, code: int, said: str
) -> None:
    """Per-document messages printed the whole path: one 2,083-character line for a file 1,000
    levels deep. Every line now names it cut in the middle, with its depth and file name."""
    root = _deep(tmp_path / "deep", 1000, leaf)
    got, out, err = corral(command, "-R", "-f", str(root))
    lines = [x for x in (out if command == "validate" and code == 0 else err).splitlines() if x]
    assert got == code, err[:2000]
    about = [x for x in lines if said in x]
    assert about, lines
    levels = str(root).count(os.sep) + 1002  # root's parts, 1,000 d's and p.yaml
    for line in about:
        where = line[: line.index(said)]
        assert len(where) <= SHOWN_SOURCE + len(":1:1: "), line
        assert where.startswith(str(root)[:40]), line
        assert re.search(rf"\.\.\.\({levels} levels\)\.\.\.(d/)+p\.yaml:", where), line
