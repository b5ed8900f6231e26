"""Every SchedulerProfile example in docs/schedulerprofile.md (and docs/safe-changes.md) runs:
valid ones validate and render; ones marked ``<!-- invalid: ... -->`` fail with exactly that
error."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from corral.api import check_profile
from corral.render import render

DOCS = Path(__file__).resolve().parents[3] / "docs"
DOC = DOCS / "schedulerprofile.md"
BLOCK = re.compile(r"(?:<!-- invalid: (?P<error>.*?) -->\n)?```yaml\n(?P<body>.*?)```", re.S)
EXAMPLES = [
    (m.group("body"), m.group("error"))
    for doc in (DOC, DOCS / "safe-changes.md")
    for m in BLOCK.finditer(doc.read_text())
    if "kind: SchedulerProfile" in m.group("body")
]


def test_the_doc_has_examples() -> None:
    assert len(EXAMPLES) >= 6
    assert any(error for _, error in EXAMPLES)


@pytest.mark.parametrize(
    ("body", "error"),
    [
        pytest.param(b, e, id=yaml.safe_load(b)["metadata"]["name"] + ("-invalid" if e else ""))
        for b, e in EXAMPLES
    ],
)
def test_doc_example(body: str, error: str | None) -> None:
    profile, errs = check_profile(yaml.safe_load(body))
    if error:
        assert error in [str(e) for e in errs], [str(e) for e in errs]
        return
    assert errs == []
    assert profile is not None
    assert render(profile).objects
