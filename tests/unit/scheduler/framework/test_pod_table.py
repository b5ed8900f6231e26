"""PodTable's per-node grouping against the plain definition: row r is on slot s when
``node_slot[r] == s`` (rows in table order; slot -1 and rows past ``size`` belong to no node)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from corral.scheduler.framework import pod_table
from corral.scheduler.framework.pod_table import PodTable


def _table(slots: list[int], size: int) -> PodTable:
    return PodTable(size=size, node_slot=np.asarray(slots, dtype=np.int32))


@pytest.mark.parametrize(
    ("slots", "size", "expected"),
    [
        pytest.param([], 0, {0: []}, id="empty"),
        pytest.param([2, 0, 2, -1, 0], 5, {0: [1, 4], 1: [], 2: [0, 2], -1: []},
                     id="interleaved, table order kept, unassigned on no node"),
        pytest.param([1, 1, 3], 2, {1: [0, 1], 3: []}, id="rows past size are not counted"),
        pytest.param([-1, -1], 2, {-1: [], 0: []}, id="nothing assigned"),
    ],
)  # fmt: skip
@pytest.mark.parametrize("scans", [0, pod_table._SCANS_BEFORE_GROUPING], ids=["grouped", "scans"])
def test_rows_on(
    slots: list[int],
    size: int,
    expected: dict[int, list[int]],
    scans: int,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(pod_table, "_SCANS_BEFORE_GROUPING", scans)
    table = _table(slots, size)
    assert {slot: table.rows_on(slot) for slot in expected} == expected


@given(st.lists(st.integers(min_value=-1, max_value=6), max_size=40), st.data())
def test_rows_on_is_the_plain_grouping(slots: list[int], data: st.DataObject) -> None:
    """Whether a lookup scans or uses the grouping (after _SCANS_BEFORE_GROUPING of them)."""
    size = data.draw(st.integers(min_value=0, max_value=len(slots)))
    table = _table(slots, size)
    asked = data.draw(st.lists(st.integers(min_value=-1, max_value=7), max_size=20))
    for slot in [*asked] * (pod_table._SCANS_BEFORE_GROUPING // 8) + list(range(-1, 8)):
        plain = [r for r in range(size) if slots[r] == slot and slot >= 0]
        assert table.rows_on(slot) == plain
