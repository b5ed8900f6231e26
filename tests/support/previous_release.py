"""The previous release, for the upgrade tests: the manifests and the image of
:data:`PREVIOUS_RELEASE`, the commit before the install's lifecycle changes (config/ and the
chart: the CRDs and the Namespace in config/default, the chart's crds/ and owned Namespace).
A detached git worktree of that commit gives its manifests; its image is built from that
worktree with the repository's buildah path (:func:`corral_dev.images.build_image`) and kept
in ``dist/`` under a tag naming the commit, so it is built once per checkout.
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from corral_dev.images import build_image

PREVIOUS_RELEASE: Final = "ea1132fb7ae83624c873547706e34a6d7c66fdf1"


@dataclass(frozen=True)
class PreviousRelease:
    commit: str
    tree: Path  # a worktree of the commit
    image: str  # localhost/corral:<tag>
    archive: Path  # its docker archive, for the real node

    @property
    def tag(self) -> str:
        return self.image.rpartition(":")[2]


def _git(root: Path, *args: str) -> str:
    argv = ["git", "-C", str(root), *args]
    done = subprocess.run(argv, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"git {' '.join(args)}: {done.stderr.strip()}")
    return done.stdout.strip()


def checkout(root: Path, directory: Path, commit: str = PREVIOUS_RELEASE) -> Path:
    """A detached worktree of ``commit`` at ``directory`` (remove it with :func:`remove`)."""
    _git(root, "worktree", "add", "--detach", str(directory), commit)
    return directory


def remove(root: Path, tree: Path) -> None:
    _git(root, "worktree", "remove", "--force", str(tree))


def prepare(root: Path, directory: Path, commit: str = PREVIOUS_RELEASE) -> PreviousRelease:
    """Its worktree under ``directory``, and its image (built unless ``dist/`` has it)."""
    tree = checkout(root, directory / f"corral-{commit[:12]}", commit)
    version = f"0.1.0-prev-{commit[:12]}"
    archive = root / "dist" / f"corral-{version}.tar"
    try:
        if not archive.is_file():
            archive = build_image(tree, root / "dist", version).archive
    except BaseException:
        remove(root, tree)
        raise
    return PreviousRelease(commit, tree, f"localhost/corral:{version}", archive)
