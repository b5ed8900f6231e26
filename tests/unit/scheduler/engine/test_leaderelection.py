"""LeaderElector's renewal loop, without an API server: the attempt itself is replaced."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from corral.k8s import ApiError
from corral.k8s.aio import AsyncClient
from corral.scheduler.engine.leaderelection import (
    LeaderElectionConfig,
    LeaderElector,
    NotLeaderError,
    WriteFence,
)


def elector() -> LeaderElector:
    config = LeaderElectionConfig("ns", "lease", "me", 3.0, 2.0, 0.5)
    # The client is never used: try_acquire_or_renew is replaced below.
    return LeaderElector(AsyncClient.__new__(AsyncClient), config)


@pytest.mark.parametrize("outcome", [True, False], ids=["renewed", "refused"])
def test_a_cancel_arriving_as_an_attempt_completes_stops_the_renewal(outcome: bool) -> None:
    """The attempt completes in the same step that cancels its caller; the cancel must win (with
    3.11's wait_for the attempt's result won and the leader went on renewing)."""

    async def scenario() -> None:
        e = elector()
        runner: asyncio.Task[None] | None = None

        async def attempt() -> bool:
            assert runner is not None
            runner.cancel()
            return outcome

        e.try_acquire_or_renew = attempt  # type: ignore[method-assign]
        e._renewed_at = e.clock()  # just acquired, as renew() always follows acquire()
        runner = asyncio.create_task(e.renew())
        done, _ = await asyncio.wait([runner], timeout=5)
        assert done, "the renewal loop ignored its cancellation"
        assert runner.cancelled()

    asyncio.run(scenario())


class Clock:
    """A clock the renewal loop's sleeps advance (patched in for asyncio.sleep)."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


class LeaseServer:
    """Answers the elector's requests on one Lease: the first ``renewals`` PUTs succeed, the
    ones after fail as an unreachable server's would."""

    def __init__(self, clock: Clock, renewals: int) -> None:
        self.clock = clock
        self.renewals = renewals
        self.attempts: list[float] = []  # when each PUT was made

    async def request(self, method: str, path: str, **options: Any) -> Any:
        if method == "GET":
            return {"metadata": {"resourceVersion": "1"}, "spec": {}}
        self.attempts.append(self.clock.now)
        if len(self.attempts) > self.renewals:
            raise ApiError(0, "TransportError", "connection refused")
        return {"metadata": {"resourceVersion": str(len(self.attempts) + 1)}}


@pytest.mark.parametrize(
    ("lease", "renew", "retry"),
    [
        pytest.param(3.0, 2.0, 0.5, id="defaults-like"),
        # Valid for upstream too, but a leader counting renewDeadline from the round's start
        # (a retryPeriod after its last success) would lead until 102 + 2 = 104, past the
        # 103.5 at which a standby may take the Lease.
        pytest.param(3.5, 3.0, 2.0, id="leaseDuration - renewDeadline < retryPeriod"),
    ],
)
def test_leadership_ends_renew_deadline_after_the_last_renewal_began(
    lease: float, renew: float, retry: float, monkeypatch: pytest.MonkeyPatch
) -> None:
    clock = Clock()
    real_sleep = asyncio.sleep

    async def sleep(delay: float) -> None:
        clock.now += delay
        await real_sleep(0)

    monkeypatch.setattr(asyncio, "sleep", sleep)
    server = LeaseServer(clock, renewals=1)
    config = LeaderElectionConfig("ns", "lease", "me", lease, renew, retry)
    e = LeaderElector(server, config, clock=clock)  # type: ignore[arg-type]
    fenced: list[tuple[float, bool]] = []

    async def scenario() -> None:
        assert not e.holds_lease()
        assert await e.try_acquire_or_renew()  # acquired at 100
        began = clock.now
        assert e.holds_lease()
        await e.renew()
        fenced.append((clock.now, e.holds_lease()))
        assert clock.now == pytest.approx(began + renew)
        # Always before a standby may acquire: leaseDuration after it saw that write.
        assert clock.now < began + lease

    asyncio.run(scenario())
    assert fenced == [(pytest.approx(100.0 + renew), False)]
    # Attempts were made until the deadline, none after it.
    assert max(server.attempts) < 100.0 + renew


def test_holds_lease_by_the_clock_alone() -> None:
    """A binding thread asks while the event loop (which would notice the loss) is busy."""
    clock = Clock()
    e = LeaderElector(LeaseServer(clock, 1), LeaderElectionConfig("ns", "l", "me", 3, 2, 0.5),
                      clock=clock)  # type: ignore[arg-type]  # fmt: skip
    asyncio.run(e.try_acquire_or_renew())
    clock.now += 1.999
    assert e.holds_lease()
    clock.now += 0.001
    assert not e.holds_lease()


@pytest.mark.parametrize(
    ("guard", "closed", "open_"),
    [
        pytest.param(None, False, True, id="no guard: open"),
        pytest.param(True, False, True, id="guard holds"),
        pytest.param(False, False, False, id="guard lost"),
        pytest.param(True, True, False, id="closed wins over the guard"),
        pytest.param(None, True, False, id="closed without a guard"),
    ],
)
def test_write_fence(guard: bool | None, closed: bool, open_: bool) -> None:
    fence = WriteFence()
    if guard is not None:
        fence.guard(lambda: guard)
    if closed:
        fence.close()
    assert fence.open is open_
    if open_:
        fence.check("x")
    else:
        with pytest.raises(NotLeaderError, match=r"^x not sent: this engine no longer holds"):
            fence.check("x")
