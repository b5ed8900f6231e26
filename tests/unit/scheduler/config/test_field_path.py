"""Field paths as errors show them: one readable line whatever keys the user wrote."""

from __future__ import annotations

import pytest

from corral.scheduler.config.errors import FieldPath, shown

LONG = "y" * 5000


@pytest.mark.parametrize(
    ("path", "want"),
    [
        pytest.param(FieldPath.root("spec").child("featureGates").key("Foo"),
                     "spec.featureGates[Foo]", id="a key"),
        pytest.param(FieldPath.root("spec").key("a.b/c"), "spec[a.b/c]", id="a dotted key"),
        pytest.param(FieldPath.root("spec").key("a\nb"), "spec[a\\nb]", id="a newline escaped"),
        pytest.param(FieldPath.root("spec").key(LONG),
                     f"spec[{'y' * 120}... (5000 characters)]", id="a long key cut"),
    ],
)  # fmt: skip
def test_path_text(path: FieldPath, want: str) -> None:
    assert str(path) == want


@pytest.mark.parametrize(
    ("text", "want"),
    [
        pytest.param("Deployment", "Deployment", id="a kind as it is"),
        pytest.param("Dep\nloy\u2028", "Dep\\nloy\\u2028", id="control characters escaped"),
        pytest.param("K" * 200, "K" * 120 + "... (200 characters)", id="long text cut"),
    ],
)
def test_shown(text: str, want: str) -> None:
    assert shown(text) == want
