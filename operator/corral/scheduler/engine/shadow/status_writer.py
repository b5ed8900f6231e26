"""``status.shadow`` of the shadow's SchedulerProfile: read once when it starts leading, then
written as the counts change.

Contract: the only object a shadow writes besides its Lease. A JSON merge patch of
``status.shadow`` alone on the ``status`` subresource, at most once per :data:`PERIOD` and only
when a decision was counted since the last one (the operator leaves ``status.shadow`` to the
engine). The rendered RBAC grants ``get``/``patch`` on this one profile's status and nothing
else. A failed write is logged and retried at the next period: counting never waits for it.

Fenced like the Bindings of a scheduler (``leaderelection.WriteFence``): each patch is sent only
while the fence is open, checked right before the request. A shadow that lost its Lease sends
nothing more (a stale leader's counts would otherwise land over its successor's, which resumed
from the status); nor does one stopping with leader election, whose elector lets go first: the
decisions counted since its last patch (at most :data:`PERIOD`'s) are missing from the status.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Final

from corral.k8s import CONTENT_MERGE_PATCH, ApiError
from corral.k8s.aio import AsyncClient
from corral.scheduler.config import ValidationError
from corral.scheduler.engine.shadow import tally as t

log = logging.getLogger("corral.scheduler.shadow")

PERIOD: Final = 2.0
PROFILES: Final = "/apis/corral.dev/v1alpha1/schedulerprofiles"


def now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def status_path(profile: str) -> str:
    return f"{PROFILES}/{profile}/status"


class StatusWriter:
    """``may_write``: whether this engine may still write as the leader (the engine's
    ``WriteFence.open``), read right before each patch."""

    def __init__(
        self, aio: AsyncClient, profile: str, tally: t.Tally, may_write: Callable[[], bool]
    ) -> None:
        self.aio = aio
        self.profile = profile
        self.tally = tally
        self.may_write = may_write
        self._written = -1
        self._fenced = False

    async def resume(self) -> None:
        """Take up the counts of the status this shadow wrote before, if it is its own."""
        try:
            body = await self.aio.request("GET", status_path(self.profile))
        except ApiError as exc:
            log.warning("reading the status of SchedulerProfile %s: %s", self.profile, exc)
            return
        raw = ((body or {}).get("status") or {}).get("shadow")
        if not raw:
            return
        try:
            previous = t.from_json(raw)
        except ValidationError as exc:
            log.warning("SchedulerProfile %s: status.shadow not taken up: %s", self.profile, exc)
            return
        if self.tally.resume(previous):
            log.info(
                "SchedulerProfile %s: going on from %d decisions counted since %s",
                self.profile,
                previous.observed,
                previous.since,
            )

    async def write(self) -> bool:
        """One patch if anything changed; False when the write failed."""
        generation = self.tally.generation
        if generation == self._written:
            return True
        body = {"status": {"shadow": t.to_json(self.tally.status(now()))}}
        if not self.may_write():
            if not self._fenced:
                log.info("status.shadow of SchedulerProfile %s not written: this engine no "
                         "longer holds its Lease", self.profile)  # fmt: skip
            self._fenced = True
            return False
        try:
            await self.aio.request(
                "PATCH", status_path(self.profile), body=body, content_type=CONTENT_MERGE_PATCH
            )
        except ApiError as exc:
            log.warning("writing the status of SchedulerProfile %s: %s", self.profile, exc)
            return False
        self._written = generation
        return True

    async def run(self) -> None:
        """Write every :data:`PERIOD` until cancelled (a last write then, if still fenced
        open)."""
        try:
            while True:
                await self.write()
                await asyncio.sleep(PERIOD)
        finally:
            with contextlib.suppress(Exception):  # the loop may be going away
                await self.write()
