"""CPU pinning: parsing --pin, and that a spawned child inherits the pinned core."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest
from bench import pinning
from bench.pinning import Pinning, PinningError

TWO = frozenset({0, 1})


@pytest.mark.parametrize(
    ("text", "want"),
    [
        pytest.param("off", None, id="off"),
        pytest.param("auto", Pinning(frozenset({1}), frozenset({0})), id="auto"),
        pytest.param("0:1", Pinning(frozenset({0}), frozenset({1})), id="explicit"),
    ],
)
def test_parse(text: str, want: Pinning | None) -> None:
    assert pinning.parse(text, TWO) == want


def test_parse_ranges() -> None:
    got = pinning.parse("3:0-2", frozenset(range(4)))
    assert got == Pinning(frozenset({3}), frozenset({0, 1, 2}))


@pytest.mark.parametrize(
    ("text", "cpus", "message"),
    [
        pytest.param("auto", frozenset({0}), "--pin auto: needs at least 2 CPUs, this process "
                     "has 1", id="auto on one CPU"),
        pytest.param("1", TWO, "--pin: '1' is not off, auto or SCHED:REST (e.g. 1:0)",
                     id="no colon"),
        pytest.param("1:1", TWO, "--pin: '1:1' gives CPU(s) [1] to both the scheduler and the "
                     "rest", id="overlap"),
        pytest.param("3:0", TWO, "--pin: '3:0' names CPU(s) [3]; this process can use [0, 1]",
                     id="missing CPU"),
        pytest.param("a:0", TWO, "--pin: 'a' is not a CPU list like 1 or 0,2-3", id="not a list"),
    ],
)  # fmt: skip
def test_parse_refuses(text: str, cpus: frozenset[int], message: str) -> None:
    with pytest.raises(PinningError, match=re.escape(message)):
        pinning.parse(text, cpus)


def test_a_child_spawned_on_cpus_inherits_them_and_the_caller_is_restored() -> None:
    before = os.sched_getaffinity(0)
    target = frozenset({max(before)})
    with pinning.on_cpus(target):
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(5)"])
    try:
        assert os.sched_getaffinity(0) == before
        assert pinning.allowed(child.pid) == str(max(before))
        assert os.sched_getaffinity(child.pid) == target
    finally:
        child.kill()
        child.wait()
