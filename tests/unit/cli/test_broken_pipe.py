"""A reader that goes away (``corral simulate ... | head -1``): no traceback, exit 141."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]


@pytest.mark.parametrize(
    "args",
    [
        pytest.param(["simulate", "-f", "examples/simulate/cluster.yaml"], id="simulate"),
        pytest.param(
            ["simulate", "--explain", "-f", "examples/simulate/cluster.yaml"],
            id="simulate --explain",
        ),
        pytest.param(["render", "-f", "config/samples/tenant.yaml"], id="render"),
        pytest.param(["validate", "-f", "config/samples/"], id="validate"),
    ],
)
def test_a_closed_stdout_is_no_traceback(args: list[str]) -> None:
    # The read end is closed before the command writes a byte: its first write fails (EPIPE),
    # whatever the pipe's buffer could have held.
    proc = subprocess.Popen(
        [sys.executable, "-m", "corral", *args],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdout is not None
    proc.stdout.close()
    _, err = proc.communicate(timeout=120)
    text = err.decode()
    assert "Traceback" not in text
    assert "BrokenPipeError" not in text
    assert proc.returncode == 141, text  # 128 + SIGPIPE
