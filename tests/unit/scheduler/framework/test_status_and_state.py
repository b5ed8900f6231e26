"""Status codes and CycleState."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from corral.scheduler.framework.cycle_state import CycleState
from corral.scheduler.framework.status import Code, Status, code_of, is_success


@pytest.mark.parametrize(
    ("code", "rejected"),
    [
        pytest.param(Code.SUCCESS, False, id="Success"),
        pytest.param(Code.ERROR, False, id="Error"),
        pytest.param(Code.UNSCHEDULABLE, True, id="Unschedulable"),
        pytest.param(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, True, id="UnschedulableAndUnresolvable"),
        pytest.param(Code.WAIT, False, id="Wait"),
        pytest.param(Code.SKIP, False, id="Skip"),
        pytest.param(Code.PENDING, True, id="Pending"),
    ],
)
def test_rejection_codes(code: Code, rejected: bool) -> None:
    assert Status(code).is_rejected is rejected


def test_upstream_numbering_and_message() -> None:
    assert [c.value for c in Code] == list(range(7))
    status = Status.of(Code.UNSCHEDULABLE, "a", "b").with_plugin("P")
    assert (status.message, status.plugin) == ("a, b", "P")
    assert is_success(None)
    assert code_of(None) is Code.SUCCESS
    assert not is_success(status)


@dataclass
class _Counter:
    n: int

    def clone(self) -> _Counter:
        return _Counter(self.n)


def test_cycle_state_read_write_clone() -> None:
    state = CycleState()
    state.write("k", _Counter(1))
    state.write("plain", "text")
    assert state.read("k", _Counter) == _Counter(1)
    assert state.read("k", str) is None
    copy = state.clone()
    counter = copy.read("k", _Counter)
    assert counter is not None
    counter.n = 5
    assert state.read("k", _Counter) == _Counter(1)
    assert copy.read("plain", str) == "text"
    state.delete("k")
    assert state.read("k", _Counter) is None
