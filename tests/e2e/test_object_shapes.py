"""The object checker's shapes (operator/corral/scheduler/backend/shapes.json) are what the
pinned k8s.io/api generates: hack/gen-object-shapes --check (Go and the warm module cache)."""

from __future__ import annotations

import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_shipped_shapes_are_what_the_pinned_api_generates() -> None:
    result = subprocess.run(
        [str(ROOT / "hack" / "gen-object-shapes"), "--check"],
        capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
