"""The mutation table of issue 40 (corral_dev.mutations, run by ``make mutate``) cannot rot:
each row's ``old`` text occurs exactly once in its file and its edits leave Python that parses,
its test ids name tests that exist (read with ast, nothing run), ids are unique, and every
failure mode of the issue has a row."""

from __future__ import annotations

import ast
from collections import Counter
from pathlib import Path

import pytest

from corral_dev.mutations import FAILURE_MODES, MUTATIONS, Mutation, missing_tests, node_ids

ROOT = Path(__file__).resolve().parents[2]
ROWS = [pytest.param(m, id=m.id) for m in MUTATIONS]


@pytest.mark.parametrize("row", ROWS)
def test_each_edit_applies_once_and_leaves_python_that_parses(row: Mutation) -> None:
    assert row.edits, "a row breaks something"
    texts: dict[str, str] = {}
    for edit in row.edits:
        text = texts.get(edit.path, (ROOT / edit.path).read_text())
        assert edit.old != edit.new
        assert text.count(edit.old) == 1, (
            f"{edit.path}: {edit.old!r} occurs {text.count(edit.old)} times"
        )
        texts[edit.path] = text.replace(edit.old, edit.new)
    for path, text in texts.items():
        if path.endswith(".py"):
            ast.parse(text, filename=path)


@pytest.mark.parametrize("row", ROWS)
def test_each_rows_tests_exist(row: Mutation) -> None:
    assert row.mode in FAILURE_MODES
    assert row.tests, "a row names the tests that kill it"
    missing = missing_tests(ROOT, row)
    if row.pending:
        return  # its test lives on another branch; the runner skips the row until it lands
    assert not missing, f"no such test: {missing}"


def test_every_failure_mode_has_a_row_and_ids_are_unique() -> None:
    modes = {m.mode for m in MUTATIONS}
    assert sorted(set(FAILURE_MODES) - modes) == []
    twice = [i for i, n in Counter(m.id for m in MUTATIONS).items() if n > 1]
    assert twice == []


def test_the_node_id_reader_sees_parametrized_ids() -> None:
    """The reader itself: a parametrized test's ids are its pytest.param ids, a plain test is
    its bare name (so a wrong id in the table is a missing one, not a silent pass)."""
    path = "tests/e2e/engine/test_coscheduling_failures.py"
    ids = node_ids(ROOT, path)
    base = f"{path}::test_gated_members"
    assert base not in ids
    assert sum(i.startswith(f"{base}[") for i in ids) == 2
    assert f"{path}::test_a_member_deleted_while_its_group_waits_releases_the_group" in ids
    assert node_ids(ROOT, "tests/e2e/engine/no_such_file.py") == frozenset()
