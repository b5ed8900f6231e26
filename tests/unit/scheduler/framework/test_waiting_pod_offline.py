"""WaitingPod's offline verbs (the simulator's): ``decided``, ``remaining`` and ``time_out``,
which ends the wait as its first timeout would, with the same message ``wait`` gives."""

from __future__ import annotations

from corral.scheduler.framework.runtime.waiting_pods import WaitingPod
from corral.scheduler.framework.status import Code
from corral.scheduler.framework.types import PodInfo


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def _waiting(clock: Clock) -> WaitingPod:
    return WaitingPod(PodInfo(uid="u", namespace="ml", name="g-0"), {"A": 30.0, "B": 10.0}, clock)


def test_time_out_is_the_first_timeout_with_waits_message() -> None:
    clock = Clock()
    waiting = _waiting(clock)
    assert not waiting.decided()
    assert waiting.remaining() == 10.0
    clock.now += 4
    assert waiting.remaining() == 6.0
    waiting.time_out()
    assert waiting.decided()
    assert waiting.remaining() == 0.0
    status = waiting.wait()  # returns at once
    assert status is not None
    assert (status.code, status.plugin) == (Code.UNSCHEDULABLE, "B")
    assert status.message == "rejected due to timeout after waiting 10s at plugin B"
    clock.now += 100
    passed = _waiting(clock)
    clock.now += 11
    late = passed.wait()
    assert late is not None
    assert late.message == status.message


def test_allowed_or_rejected_is_decided_and_time_out_changes_nothing() -> None:
    clock = Clock()
    allowed, rejected = _waiting(clock), _waiting(clock)
    allowed.allow("A")
    assert not allowed.decided()
    allowed.allow("B")
    rejected.reject("A", "no")
    for waiting in (allowed, rejected):
        assert waiting.decided()
        waiting.time_out()
    assert allowed.wait() is None
    said = rejected.wait()
    assert said is not None
    assert said.message == "no"
