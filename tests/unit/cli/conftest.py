"""Shared helpers of the CLI tests: run ``corral`` in-process and capture what it printed."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from corral.cli import main

ROOT = Path(__file__).resolve().parents[3]
Run = Callable[..., tuple[int, str, str]]


@pytest.fixture
def corral(capsys: pytest.CaptureFixture[str]) -> Run:
    """``corral(*argv) -> (exit code, stdout, stderr)``."""

    def run(*argv: str) -> tuple[int, str, str]:
        code = main(list(argv))
        out, err = capsys.readouterr()
        return code, out, err

    return run
