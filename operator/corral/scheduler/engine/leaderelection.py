"""Leader election on a ``coordination.k8s.io/v1`` Lease with client-go's semantics.

- A candidate may take the Lease when it has no holder, or when the record has not *changed*
  for ``leaseDuration`` measured on the candidate's own clock from the moment it last observed a
  change (clocks of different machines are never compared).
- Every write carries the ``resourceVersion`` last read, so two candidates cannot both win.
- Candidates retry every ``retryPeriod`` with jitter (factor 1.2); the leader renews every
  ``retryPeriod`` and gives up leadership once ``renewDeadline`` has passed since the attempt
  that last renewed began. client-go counts it from the start of each round of attempts, a
  ``retryPeriod`` after that success, so its leader may lead up to ``retryPeriod`` longer: with
  ``leaseDuration - renewDeadline < retryPeriod`` (which validation allows) past the moment a
  standby may take the Lease. Counted from the success, the leader stops before any standby
  can acquire, whatever the three durations.
- :meth:`LeaderElector.holds_lease` says the same from any thread, by the clock alone: the
  writers on the binding threads check it (:class:`WriteFence`) right before each request, so
  a leader whose event loop is late to notice the loss sends nothing past the deadline.
- On a graceful stop the leader releases the Lease (empty holder, 1 s duration) so a standby
  takes over at once instead of waiting out the lease.
"""

from __future__ import annotations

import asyncio
import logging
import os
import random
import socket
import time
import uuid
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Final

from corral.k8s import JSON, ApiError
from corral.k8s.aio import AsyncClient

JITTER_FACTOR: Final = 1.2
log = logging.getLogger(__name__)


class NotLeaderError(RuntimeError):
    """A write this process did not send: it may no longer act as the leader."""


class WriteFence:
    """Whether this process may write as the scheduler (Bindings, victim deletions), checked
    on the writing thread right before each request, after the rate limiter's wait.

    Open until :meth:`guard` gives it a holder check (the elector's :meth:`holds_lease`: no
    leader election, no guard) or :meth:`close` shuts it for good (leadership lost, shutdown).
    Thread-safe: both are single attribute writes read by :meth:`check`."""

    def __init__(self) -> None:
        self._holds: Callable[[], bool] | None = None
        self._closed = False

    def guard(self, holds: Callable[[], bool]) -> None:
        self._holds = holds

    def close(self) -> None:
        self._closed = True

    @property
    def open(self) -> bool:
        holds = self._holds
        return not self._closed and (holds is None or holds())

    def check(self, what: str) -> None:
        """Raise :class:`NotLeaderError` (its message names ``what``) when closed."""
        if not self.open:
            raise NotLeaderError(f"{what} not sent: this engine no longer holds its Lease")


def default_identity() -> str:
    """``POD_NAME`` in a pod; else ``<hostname>_<uuid>`` (unique per process), as upstream."""
    return os.environ.get("POD_NAME") or f"{socket.gethostname()}_{uuid.uuid4()}"


def micro_time(moment: float | None = None) -> str:
    """A ``metav1.MicroTime`` string (RFC 3339, microseconds, UTC)."""
    stamp = datetime.fromtimestamp(time.time() if moment is None else moment, tz=UTC)
    return stamp.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


@dataclass(frozen=True)
class LeaderElectionConfig:
    namespace: str
    name: str
    identity: str
    lease_duration: float = 15.0
    renew_deadline: float = 10.0
    retry_period: float = 2.0
    release_on_cancel: bool = True

    def __post_init__(self) -> None:
        if not self.lease_duration > self.renew_deadline:
            raise ValueError("leaseDuration must be greater than renewDeadline")
        if not self.renew_deadline > JITTER_FACTOR * self.retry_period:
            raise ValueError("renewDeadline must be greater than retryPeriod*JitterFactor(1.2)")
        if self.retry_period <= 0:
            raise ValueError("retryPeriod must be greater than zero")


class LeaderElector:
    def __init__(
        self,
        client: AsyncClient,
        config: LeaderElectionConfig,
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.client = client
        self.config = config
        self.clock = clock
        self.path = (
            f"/apis/coordination.k8s.io/v1/namespaces/{config.namespace}/leases/{config.name}"
        )
        self._lease: JSON | None = None  # the object last read or written (for its version)
        self._observed: JSON = {}  # the spec last observed
        self._observed_at = 0.0  # when it last changed, on our clock
        # When the attempt that last acquired or renewed began, on our clock; None when not
        # leading. Read from other threads (holds_lease): one attribute, written whole.
        self._renewed_at: float | None = None

    # --- state -------------------------------------------------------------------------------

    @property
    def holder(self) -> str:
        return str(self._observed.get("holderIdentity") or "")

    @property
    def is_leader(self) -> bool:
        return self.holder == self.config.identity

    def holds_lease(self) -> bool:
        """Leading, and ``renewDeadline`` has not passed since the attempt that last renewed
        began: no standby can have taken the Lease (they wait ``leaseDuration`` from a change
        they saw, which that attempt's write preceded). Any thread; the clock alone decides."""
        renewed = self._renewed_at
        return renewed is not None and self.clock() < renewed + self.config.renew_deadline

    def _lease_valid(self, now: float) -> bool:
        duration = float(self._observed.get("leaseDurationSeconds") or 0)
        return self._observed_at + duration > now

    def _observe(self, spec: JSON) -> None:
        self._observed = dict(spec)
        self._observed_at = self.clock()

    # --- one attempt -------------------------------------------------------------------------

    async def try_acquire_or_renew(self) -> bool:
        now = self.clock()
        wall = micro_time()
        desired: JSON = {
            "holderIdentity": self.config.identity,
            "leaseDurationSeconds": int(self.config.lease_duration),
            "acquireTime": wall,
            "renewTime": wall,
        }
        # 1. Fast path: the leader updates optimistically against the version it last wrote.
        if self.is_leader and self._lease_valid(now) and self._lease is not None:
            desired["acquireTime"] = self._observed.get("acquireTime", wall)
            desired["leaseTransitions"] = self._observed.get("leaseTransitions", 0)
            if await self._update(desired):
                self._renewed_at = now
                return True
        # 2. Read the current record, or create it.
        try:
            lease: JSON = await self.client.request("GET", self.path)
        except ApiError as exc:
            if not exc.not_found:
                log.warning("leader election: reading %s: %s", self.path, exc)
                return False
            desired["leaseTransitions"] = 0
            return self._renewed(now, await self._create(desired))
        self._lease = lease
        spec: JSON = lease.get("spec") or {}
        if spec != self._observed:
            self._observe(spec)
        # 3. Someone else holds a lease that has not expired (on our clock): wait.
        if self.holder and self._lease_valid(now) and not self.is_leader:
            return False
        # 4. Take it over or renew it.
        if self.is_leader:
            desired["acquireTime"] = spec.get("acquireTime", wall)
            desired["leaseTransitions"] = spec.get("leaseTransitions", 0)
        else:
            desired["leaseTransitions"] = int(spec.get("leaseTransitions") or 0) + 1
        return self._renewed(now, await self._update(desired))

    def _renewed(self, began: float, ok: bool) -> bool:
        if ok:
            self._renewed_at = began
        return ok

    async def _create(self, spec: JSON) -> bool:
        body = {
            "apiVersion": "coordination.k8s.io/v1",
            "kind": "Lease",
            "metadata": {"name": self.config.name, "namespace": self.config.namespace},
            "spec": spec,
        }
        collection = self.path.rsplit("/", 1)[0]
        try:
            self._lease = await self.client.request("POST", collection, body=body)
        except ApiError as exc:
            log.info("leader election: creating %s: %s", self.path, exc)
            return False
        self._observe(spec)
        return True

    async def _update(self, spec: JSON) -> bool:
        assert self._lease is not None
        body = {**self._lease, "spec": spec}
        try:
            self._lease = await self.client.request("PUT", self.path, body=body)
        except ApiError as exc:
            if not exc.conflict:
                log.warning("leader election: updating %s: %s", self.path, exc)
            return False
        self._observe(spec)
        return True

    # --- loops -------------------------------------------------------------------------------

    async def acquire(self) -> None:
        """Return once this candidate holds the Lease."""
        while not await self.try_acquire_or_renew():
            jitter = self.config.retry_period * random.random() * JITTER_FACTOR
            await asyncio.sleep(self.config.retry_period + jitter)
        log.info("leader election: %s acquired %s", self.config.identity, self.path)

    async def renew(self) -> None:
        """Renew every ``retryPeriod`` until ``renewDeadline`` has passed since the attempt
        that last renewed began (:meth:`holds_lease`); then return (leadership lost)."""
        while True:
            while not await self._renew_once():
                if not self.holds_lease():
                    log.error("leader election: %s lost %s", self.config.identity, self.path)
                    self._renewed_at = None
                    self._observed = {}
                    return
                # Not past the deadline: the loss is noticed as it comes, not a period later.
                await asyncio.sleep(min(self.config.retry_period, self._time_left()))
            await asyncio.sleep(self.config.retry_period)

    def _time_left(self) -> float:
        renewed = self._renewed_at
        if renewed is None:
            return 0.0
        return max(0.0, renewed + self.config.renew_deadline - self.clock())

    async def _renew_once(self) -> bool:
        remaining = self._time_left()
        if remaining <= 0:
            return False
        # asyncio.timeout, not wait_for: Python 3.11's wait_for returns the result of an attempt
        # that completes as this task is cancelled and drops the cancellation, so a leader told
        # to stop went on renewing for ever.
        try:
            async with asyncio.timeout(remaining):
                return await self.try_acquire_or_renew()
        except TimeoutError:
            return False

    async def release(self) -> None:
        if not self.is_leader or self._lease is None:
            return
        wall = micro_time()
        spec: JSON = {
            "leaseDurationSeconds": 1,
            "acquireTime": wall,
            "renewTime": wall,
            "leaseTransitions": self._observed.get("leaseTransitions", 0),
        }
        if await self._update(spec):
            log.info("leader election: %s released %s", self.config.identity, self.path)

    async def run(
        self,
        on_started_leading: Callable[[], Coroutine[Any, Any, Any]],
        on_stopped_leading: Callable[[], Any],
    ) -> None:
        """Acquire, run ``on_started_leading`` while renewing; when the Lease is lost (or this
        task is cancelled) cancel it, call ``on_stopped_leading`` and return."""
        await self.acquire()
        work: asyncio.Task[Any] = asyncio.create_task(on_started_leading())
        try:
            await self.renew()
        finally:
            self._renewed_at = None  # nothing is written as the leader from now on
            work.cancel()
            on_stopped_leading()
            if self.config.release_on_cancel:
                await asyncio.shield(self.release())
