"""One error line for every subcommand; the version line names the kube-scheduler pinned."""

from __future__ import annotations

import pytest

from corral import KUBERNETES_VERSION, __version__
from corral.cli import main
from corral.cli.problems import Problem, located, path_parts
from corral.scheduler.config import FieldError
from corral.testing.binaries import VERSIONS_FILE, load_versions


@pytest.mark.parametrize(
    ("problem", "line"),
    [
        pytest.param(Problem("f.yaml", "bad", "spec.x", 3, 5), "f.yaml:3:5: spec.x: bad",
                     id="everything"),
        pytest.param(Problem("f.yaml", "bad"), "f.yaml: bad", id="no position, no path"),
        pytest.param(Problem("f.yaml", "two\nlines", "a\tb", 1, 1),
                     "f.yaml:1:1: a\\tb: two\\nlines", id="one line whatever the text"),
    ],
)  # fmt: skip
def test_problem_lines(problem: Problem, line: str) -> None:
    assert str(problem) == line


@pytest.mark.parametrize(
    ("path", "parts"),
    [
        pytest.param("spec.plugins.filter.enabled[0].name",
                     ["spec", "plugins", "filter", "enabled", 0, "name"], id="dotted and index"),
        pytest.param("spec.tenancy.nodeSelector[pool.example/x]",
                     ["spec", "tenancy", "nodeSelector", "pool.example/x"], id="a map key"),
        pytest.param("<root>", [], id="root"),
    ],
)  # fmt: skip
def test_field_paths_are_read_back(path: str, parts: list[str | int]) -> None:
    assert path_parts(path) == parts


def test_located_errors_point_into_their_document() -> None:
    text = "a: 1\n---\nspec:\n  tenancy:\n    nodeSelector: {pool.example/x: y}\n"
    errors = [FieldError("spec.tenancy.nodeSelector[pool.example/x]", "bad"),
              FieldError("<root>", "whole")]  # fmt: skip
    assert [str(p) for p in located("f", text, 1, errors)] == [
        "f:5:20: spec.tenancy.nodeSelector[pool.example/x]: bad",
        "f:3:1: whole",
    ]


def test_version_names_the_kubernetes_release_it_decides_like(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert load_versions(VERSIONS_FILE).kube == KUBERNETES_VERSION  # the one the tests pin
    with pytest.raises(SystemExit) as exit_:
        main(["--version"])
    assert exit_.value.code == 0
    assert capsys.readouterr().out == (
        f"corral {__version__} (decides like kube-scheduler {KUBERNETES_VERSION})\n"
    )
