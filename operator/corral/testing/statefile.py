"""The JSON state files the control plane and the real node keep in their directories.

Contract: :func:`write` replaces the file atomically (a reader sees the old or the new state,
never half of one); :func:`read` returns the mapping written.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def write(path: Path, data: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(data, indent=2))
    tmp.replace(path)


def read(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text())
    return data
