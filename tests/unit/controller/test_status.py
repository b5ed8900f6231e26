"""kstatus conditions, the status patch and the transitions that get an Event."""

from __future__ import annotations

from typing import Any

import pytest

from corral.controller import status

T0, T1 = "2026-01-01T00:00:00Z", "2026-01-01T00:01:00Z"


def by_type(conds: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {c["type"]: c for c in conds}


@pytest.mark.parametrize(
    ("outcome", "want"),
    [
        pytest.param(status.ready("2/2"), ("True", "False", "False"), id="ready"),
        pytest.param(
            status.progressing("RollingOut", "1/2"), ("False", "True", "False"), id="progressing"
        ),
        pytest.param(status.stalled("InvalidSpec", "x"), ("False", "False", "True"), id="stalled"),
    ],
)
def test_exactly_one_outcome_holds(outcome: status.Outcome, want: tuple[str, ...]) -> None:
    conds = by_type(status.conditions(outcome, 3, [], T0))
    got = tuple(conds[t]["status"] for t in (status.READY, status.RECONCILING, status.STALLED))
    assert got == want
    assert {c["observedGeneration"] for c in conds.values()} == {3}
    assert conds[status.READY]["reason"] == outcome.reason


def test_transition_time_changes_only_with_the_status() -> None:
    first = status.conditions(status.progressing("RollingOut", "0/2"), 1, [], T0)
    same = status.conditions(status.progressing("RollingOut", "1/2"), 1, first, T1)
    assert [c["lastTransitionTime"] for c in same] == [T0, T0, T0]
    flipped = by_type(status.conditions(status.ready("2/2"), 1, same, T1))
    assert flipped[status.READY]["lastTransitionTime"] == T1
    assert flipped[status.RECONCILING]["lastTransitionTime"] == T1
    assert flipped[status.STALLED]["lastTransitionTime"] == T0


def test_unchanged_outcome_needs_no_patch() -> None:
    kwargs: dict[str, Any] = {"generation": 1, "config_hash": "h", "replicas": 2}
    first = status.build(outcome=status.ready("2/2"), previous={}, now=T0, **kwargs)
    again = status.build(outcome=status.ready("2/2"), previous=first, now=T1, **kwargs)
    assert status.merge_patch(first, again) is None


def test_stall_keeps_what_describes_the_running_scheduler() -> None:
    running = status.build(
        outcome=status.ready("2/2"), generation=1, previous={}, now=T0, config_hash="h", leader="p"
    )
    stalled = status.build(
        outcome=status.stalled("InvalidSpec", "spec.x: bad"), generation=2, previous=running, now=T1
    )
    assert stalled["configHash"] == "h"
    assert stalled["leader"] == "p"
    assert stalled["observedGeneration"] == 2


@pytest.mark.parametrize(
    ("is_shadow", "patch"),
    [
        pytest.param(True, None, id="a shadow: its engine's counts, never in the patch"),
        pytest.param(False, {"shadow": None}, id="no longer a shadow: dropped"),
    ],
)
def test_status_shadow_belongs_to_the_shadows_engine(is_shadow: bool, patch: Any) -> None:
    kwargs: dict[str, Any] = {"generation": 1, "config_hash": "h", "replicas": 1}
    first = status.build(outcome=status.ready("1/1"), previous={}, now=T0, **kwargs)
    written = {**first, "shadow": {"observed": 3, "agreed": 3, "summary": "3/3 agree (100.0%)"}}
    again = status.build(
        outcome=status.ready("1/1"), previous=written, now=T1, shadow=is_shadow, **kwargs
    )
    assert status.merge_patch(written, again) == patch


@pytest.mark.parametrize(
    ("previous", "desired", "patch"),
    [
        pytest.param({"a": 1}, {"a": 1}, None, id="equal"),
        pytest.param({"a": 1}, {"a": 2}, {"a": 2}, id="changed"),
        pytest.param({"a": 1, "leader": "x"}, {"a": 1}, {"leader": None}, id="removed key"),
    ],
)
def test_merge_patch(previous: dict[str, Any], desired: dict[str, Any], patch: Any) -> None:
    assert status.merge_patch(previous, desired) == patch


def test_summary_sees_reason_changes_but_not_message_changes() -> None:
    a = status.conditions(status.progressing("RollingOut", "0/2"), 1, [], T0)
    b = status.conditions(status.progressing("RollingOut", "1/2"), 1, a, T0)
    c = status.conditions(status.stalled("Forbidden", "no"), 1, b, T0)
    assert status.summary(a) == status.summary(b)
    assert status.summary(b) != status.summary(c)
