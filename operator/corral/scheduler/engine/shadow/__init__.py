"""Shadow mode: an engine that decides the live scheduler's pods as its own profile would,
compares, and writes nothing (``corral scheduler --shadow-of NAME``).

- :mod:`.observer` watches the live scheduler's pods and decides each one when the live
  decision is observed, on the cluster as the live scheduler saw it;
- :mod:`.compare` judges a decision (agreed, tie, disagreed, either side unschedulable) and
  keeps the evidence of those that were not agreements;
- :mod:`.tally` counts them, by outcome and by deciding plugin, with the newest disagreements.

The engine wires a shadow without any writer (no binder, preemption executor, claim or volume
writer, no Event recorder) and with an empty queue: what it concludes goes to its metrics
(``corral_shadow_decisions_total{outcome}``) and its log (a line per decision that is not an
agreement, naming the deciding plugin). It needs read access only (and its Lease when it elects
a leader).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from datetime import UTC, datetime

from corral.scheduler import metrics as m
from corral.scheduler.backend.cache import Cache
from corral.scheduler.engine.nominator import Nominator
from corral.scheduler.engine.shadow.observer import ShadowObserver
from corral.scheduler.engine.shadow.tally import Tally
from corral.scheduler.framework.runtime.schedule_pod import PodScheduler

__all__ = ["ShadowEngine"]


def now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


class ShadowEngine:
    def __init__(
        self,
        scheduler: PodScheduler,
        *,
        live_scheduler: str,
        config_hash: str,
        cache: Cache,
        nominator: Nominator,
        serves_namespace: Callable[[str], bool],
        recorder: m.Recorder,
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
        )

    async def lead(self) -> None:
        """While leading (until cancelled): decide."""
        self.observer.start()
        await asyncio.Event().wait()
