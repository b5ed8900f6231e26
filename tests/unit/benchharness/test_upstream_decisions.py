"""Corral's framework and plugins against 1,200 recorded decisions of upstream kube-scheduler.

``data/upstream-decisions.json.gz`` holds 20 random conformance scenarios (30 nodes, 60 running
pods, 60 pods to place each: ``make conformance``) and what the pinned upstream kube-scheduler
decided for every pod. Regenerate it with
``python -m bench.conformance.replay --save tests/unit/benchharness/data/upstream-decisions.json.gz
bench/results/<run>`` after a ``make conformance`` run (and after changing the pinned version).
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
from bench.conformance import replay

DATA = Path(__file__).parent / "data" / "upstream-decisions.json.gz"
SEEDS = replay.load(DATA)


def test_the_recording_is_large_enough() -> None:
    pods = sum(len(s["report"]["results"]) for s in SEEDS)
    unschedulable = sum(not r["reference"]["node"] for s in SEEDS for r in s["report"]["results"])
    assert pods >= 1000
    assert 50 <= unschedulable <= pods - 500  # both outcomes are well represented


@pytest.mark.parametrize("seed", SEEDS, ids=[f"seed-{s['scenario']['seed']}" for s in SEEDS])
def test_every_pod_agrees_with_upstream(seed: dict[str, Any]) -> None:
    wrong = [r for r in replay.replay_seed(seed) if not r.agree]
    assert not wrong, "\n".join(f"{r.pod}: upstream {r.want!r}, corral {r.got!r}" for r in wrong)


@pytest.mark.parametrize(
    "tamper",
    [
        pytest.param("node", id="a placed pod's top set names another node"),
        pytest.param("message", id="an unschedulable pod's message differs"),
    ],
)
def test_a_wrong_reference_is_a_disagreement(tamper: str) -> None:
    seed = copy.deepcopy(SEEDS[0])
    results = seed["report"]["results"]
    if tamper == "node":
        target = next(r for r in results if r["reference"]["node"] and len(r["top"]) == 1)
        other = next(n["metadata"]["name"] for n in seed["scenario"]["nodes"]
                     if n["metadata"]["name"] != target["top"][0])  # fmt: skip
        target["top"] = [other]
    else:
        target = next(r for r in results if not r["reference"]["node"])
        target["reference"]["message"] += " (tampered)"
    seed["report"]["results"] = results[: target["index"] + 1]
    verdicts = list(replay.replay_seed(seed))
    assert [r.index for r in verdicts if not r.agree] == [target["index"]]


@pytest.mark.parametrize(
    ("make", "message"),
    [
        pytest.param(lambda d: d / "nope", "no such file or directory", id="missing path"),
        pytest.param(lambda d: d, "no seed-*.json found", id="directory without seeds"),
        pytest.param(lambda d: (d / "seed-1.json").write_text("{not json") and d,
                     "cannot read a recorded run", id="not JSON"),
    ],
)  # fmt: skip
def test_bad_input_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], make: Any, message: str
) -> None:
    assert replay.main([str(make(tmp_path))]) == 2
    assert message in capsys.readouterr().err
