"""Hostile inputs written by class, apart from the project's examples (``hostile/``): YAML tags
with values they cannot hold, integers past CPython's digit limit, URLs that do not parse or
carry credentials, verbs that climb the path, numbers a client cannot live with, objects of the
wrong shape or version, negative requests, CEL that would recurse or run for ever. Each file
names its entry point and the line it must be refused with; the refusal must be clear lines
only (no traceback) and come from the bound, not from a crash."""

from __future__ import annotations

from pathlib import Path

import pytest

from . import entries
from .harness import unclear_line

HOSTILE = Path(__file__).parent / "hostile"
FILES = sorted(HOSTILE.glob("*.yaml"))


def _header(text: str) -> tuple[str, str]:
    entry, refused = (line.split(":", 1)[1].strip() for line in text.splitlines()[:2])
    return entry, refused


@pytest.mark.parametrize("path", [pytest.param(p, id=p.stem) for p in FILES])
def test_refused_by_its_bound(path: Path) -> None:
    text = path.read_text()
    entry, refused = _header(text)
    if entry == "config":
        outcome, said = entries.scheduler_config(text)
        assert outcome == "rejected", said
    else:
        code, out, err = entries._cli([entry, "-f"], text)
        assert code != 0
        said = err + out
    assert refused in said, said[:500]
    for line in (err if entry != "config" else said).strip().splitlines():
        assert unclear_line(line) is None, line[:300]
        assert len(line) < 2000


def test_every_class_is_there() -> None:
    classes = {p.stem.split("-")[0] for p in FILES}
    assert classes >= {"tag", "digits", "ipv6", "url", "verb", "qps", "infinity", "pod", "node",
                       "claim", "slice", "cel"}  # fmt: skip
