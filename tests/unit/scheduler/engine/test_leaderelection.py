"""LeaderElector's renewal loop, without an API server: the attempt itself is replaced."""

from __future__ import annotations

import asyncio

import pytest

from corral.k8s.aio import AsyncClient
from corral.scheduler.engine.leaderelection import LeaderElectionConfig, LeaderElector


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
        runner = asyncio.create_task(e.renew())
        done, _ = await asyncio.wait([runner], timeout=5)
        assert done, "the renewal loop ignored its cancellation"
        assert runner.cancelled()

    asyncio.run(scenario())
