"""The issue-42 micro-benchmarks' own logic: ``bench.requeue_cycle`` builds the scene it claims
(every preemptor stays gated through the deletions, as upstream's rule keeps it), and
``bench.memory`` files traced allocations under the right package and tabulates the medians."""

from __future__ import annotations

from typing import Any

import pytest
from bench import memory, requeue_cycle


def test_the_preemptors_stay_gated_through_every_deletion() -> None:
    per_deletion, gated = requeue_cycle.measure(waiting=3, deletions=4)
    assert gated == 3
    assert per_deletion > 0


@pytest.mark.parametrize(
    ("filename", "package"),
    [
        pytest.param("/v/lib/python3.11/site-packages/numpy/core/a.py", "numpy", id="a library"),
        pytest.param("/w/operator/corral/scheduler/backend/queue.py", "corral.scheduler.backend",
                     id="corral, three levels"),
        pytest.param("/w/operator/corral/cli.py", "corral.cli", id="corral, two levels"),
        pytest.param("<frozen importlib._bootstrap>", "<frozen importlib._bootstrap>",
                     id="frozen"),
        pytest.param("/usr/lib/python3.11/json/decoder.py", "stdlib:decoder", id="stdlib"),
    ],
)  # fmt: skip
def test_allocations_are_filed_by_package(filename: str, package: str) -> None:
    assert memory._package(filename) == package


def _run(rss: dict[str, float]) -> dict[str, Any]:
    return {"stages": {s: {"VmRSS": rss[s], "VmHWM": rss[s]} for s in memory.STAGES}}


def test_the_table_has_the_median_of_each_side_per_stage() -> None:
    low = dict.fromkeys(memory.STAGES, 10.0)
    high = dict.fromkeys(memory.STAGES, 30.0)
    mid = {**dict.fromkeys(memory.STAGES, 20.0), "synced": 25.0}
    report = {"results": {"this": [_run(low), _run(mid), _run(high)], "against": [_run(high)]}}
    lines = memory.table(report).splitlines()
    assert lines[0] == "| stage | this RSS MB (median) | against RSS MB (median) |"
    assert lines[2:] == [
        "| interpreter | 20.0 | 30.0 |",
        "| imports | 20.0 | 30.0 |",
        "| engine | 20.0 | 30.0 |",
        "| synced | 25.0 | 30.0 |",
    ]
