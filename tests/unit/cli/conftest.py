"""Shared helpers of the CLI tests: run ``corral`` in-process and capture what it printed."""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path

import pytest

from corral.cli import main

ROOT = Path(__file__).resolve().parents[3]
Run = Callable[..., tuple[int, str, str]]


@pytest.fixture
def corral(capsys: pytest.CaptureFixture[str]) -> Run:
    """``corral(*argv) -> (exit code, stdout, stderr)``. The root logger is left as it was:
    ``corral scheduler`` sets up logging (``force=True``) on the captured stderr, which closes
    after the test, and every later warning in the process would meet that closed stream."""

    def run(*argv: str) -> tuple[int, str, str]:
        root = logging.getLogger()
        handlers, level = root.handlers[:], root.level
        try:
            code = main(list(argv))
        finally:
            root.handlers[:], root.level = handlers, level
        out, err = capsys.readouterr()
        return code, out, err

    return run
