"""PrioritySort: the queue's order."""

from __future__ import annotations

import pytest

from corral.scheduler.framework.types import QueuedPodInfo
from corral.scheduler.plugins import (
    priority_sort,
)
from corral.testing.builders import pod_info


@pytest.mark.parametrize(
    ("a", "b", "want"),
    [
        pytest.param((10, 5.0), (1, 1.0), True, id="higher priority first"),
        pytest.param((1, 1.0), (10, 0.0), False, id="lower priority later"),
        pytest.param((None, 1.0), (None, 2.0), True, id="equal priority: earlier first"),
        pytest.param((0, 2.0), (None, 2.0), False, id="nil priority is 0; ties are not less"),
    ],
)
def test_priority_sort(
    a: tuple[int | None, float], b: tuple[int | None, float], want: bool
) -> None:
    def qpi(name: str, prio: int | None, ts: float) -> QueuedPodInfo:
        return QueuedPodInfo(pod=pod_info(name, priority=prio), timestamp=ts)

    assert priority_sort.PrioritySort().less(qpi("a", *a), qpi("b", *b)) is want
