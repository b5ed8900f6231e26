"""What the repository tracks stays inside it: a tracked symlink points within the tree, and
nothing a machine builds (the virtualenv, caches, results) is committed.

39c0ce9 committed a worktree's ``.venv``, a symlink to the shared virtualenv by absolute path
(``.gitignore`` had ``.venv/``, which ignores only a directory). Checking it out replaced that
virtualenv with a link to itself, and on a clean clone ``make venv`` would have met a dangling
link.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
BUILT = (".venv", "__pycache__", ".mypy_cache", ".ruff_cache", ".pytest_cache", ".hypothesis")


def _tracked() -> list[tuple[str, str]]:
    """(mode, path) of every tracked file; the tests run from a clone (CI clones the repo)."""
    out = subprocess.run(
        ["git", "-C", str(ROOT), "ls-files", "-s", "-z"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    entries = [line.split("\t", 1) for line in out.split("\0") if line]
    return [(meta.split()[0], path) for meta, path in entries]


def test_every_tracked_symlink_points_inside_the_tree() -> None:
    links = [path for mode, path in _tracked() if mode == "120000"]
    assert links, "the tree has its templates link (operator/corral/templates)"
    outside = []
    for path in links:
        target = os.readlink(ROOT / path)
        resolved = (ROOT / path).parent.joinpath(target).resolve()
        if os.path.isabs(target) or not resolved.is_relative_to(ROOT):
            outside.append(f"{path} -> {target}")
    assert not outside, outside


@pytest.mark.parametrize("name", BUILT)
def test_nothing_built_is_tracked(name: str) -> None:
    found = [path for _, path in _tracked() if name in Path(path).parts]
    assert not found, found


def test_a_venv_link_is_ignored() -> None:
    """``.venv/`` ignored only a directory: a worktree's ``.venv`` link was not ignored (the
    path asked about does not exist, so git takes it for a file, as it took the link)."""
    ignored = subprocess.run(
        ["git", "-C", str(ROOT), "check-ignore", "--no-index", "-q", "tests/.venv"], check=False
    )
    assert ignored.returncode == 0, ".venv (as a file or a link) is not ignored by .gitignore"
