"""Shadow profiles: an engine that decides the live scheduler's pods as its own profile would,
compares, and writes nothing about them (``corral scheduler --shadow-of NAME``).

- :mod:`.observer` watches the live scheduler's pods and decides each one when the live
  decision is observed, on the cluster as the live scheduler saw it;
- :mod:`.compare` judges a decision (agreed, tie, disagreed, either side unschedulable) and
  keeps the evidence of those that were not agreements;
- :mod:`.tally` counts them: the data of ``status.shadow`` and ``corral shadow report``;
- :mod:`.status_writer` writes ``status.shadow``, the one object a shadow writes besides its
  Lease.

The engine wires a shadow without any writer (no binder, preemption executor, claim or volume
writer, no Event recorder) and with an empty queue; the rendered RBAC has no write but its
Lease and its profile's status.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from corral.k8s.aio import AsyncClient
from corral.scheduler import metrics as m
from corral.scheduler.backend.cache import Cache
from corral.scheduler.engine.nominator import Nominator
from corral.scheduler.engine.shadow.observer import ShadowObserver
from corral.scheduler.engine.shadow.status_writer import StatusWriter, now
from corral.scheduler.engine.shadow.tally import Tally
from corral.scheduler.framework.runtime.schedule_pod import PodScheduler

__all__ = ["ShadowEngine"]


class ShadowEngine:
    def __init__(
        self,
        scheduler: PodScheduler,
        *,
        live_scheduler: str,
        profile: str | None,
        config_hash: str,
        aio: AsyncClient,
        cache: Cache,
        nominator: Nominator,
        serves_namespace: Callable[[str], bool],
        recorder: m.Recorder,
        may_write: Callable[[], bool],
    ) -> None:
        self.tally = Tally(live_scheduler, config_hash, now())
        self.observer = ShadowObserver(
            scheduler,
            live_scheduler=live_scheduler,
            cache=cache,
            nominator=nominator,
            serves_namespace=serves_namespace,
            tally=self.tally,
            recorder=recorder,
            clock=now,
            own_profile=profile,
        )
        self.writer = StatusWriter(aio, profile, self.tally, may_write) if profile else None

    async def lead(self) -> None:
        """While leading (until cancelled): decide, and keep ``status.shadow`` current."""
        if self.writer is not None:
            await self.writer.resume()
        self.observer.start()
        if self.writer is None:
            await asyncio.Event().wait()
            return
        await self.writer.run()
