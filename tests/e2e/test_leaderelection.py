"""Lease leader election against a real API server."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import datetime

from corral.k8s import JSON, Client
from corral.k8s.aio import AsyncClient
from corral.scheduler.engine.leaderelection import (
    JITTER_FACTOR,
    LeaderElectionConfig,
    LeaderElector,
)

LEASE, RENEW, RETRY = 3.0, 2.0, 0.5
# How long a standby should take to notice an expired lease (one jittered retry after expiry,
# counted from a change it observed up to one retry late): used only to bound waits.
TAKEOVER_BOUND = LEASE + 2 * RETRY * (1 + JITTER_FACTOR)


@dataclass
class Candidate:
    elector: LeaderElector
    task: asyncio.Task[None] | None = None
    led: list[float] = field(default_factory=list)
    stopped: list[float] = field(default_factory=list)

    def start(self) -> None:
        async def lead() -> None:
            self.led.append(time.monotonic())
            await asyncio.Event().wait()

        def stop() -> None:
            self.stopped.append(time.monotonic())

        self.task = asyncio.create_task(self.elector.run(lead, stop))


def candidates(kube: Client, namespace: str, count: int, *, release: bool) -> list[Candidate]:
    name = f"lease-{uuid.uuid4().hex[:6]}"
    configs = [
        LeaderElectionConfig(
            namespace, name, f"candidate-{i}", LEASE, RENEW, RETRY, release_on_cancel=release
        )
        for i in range(count)
    ]
    return [Candidate(LeaderElector(AsyncClient(kube), config)) for config in configs]


async def leaders(group: list[Candidate], timeout: float = 15.0) -> list[Candidate]:
    async with asyncio.timeout(timeout):
        while True:
            current = [c for c in group if c.elector.is_leader and c.led and not c.stopped]
            if current:
                return current
            await asyncio.sleep(0.05)


def run(scenario: Callable[[list[Candidate]], Awaitable[None]], group: list[Candidate]) -> None:
    async def main() -> None:
        try:
            await scenario(group)
        finally:
            for c in group:
                if c.task is not None:
                    c.task.cancel()
            await asyncio.gather(*(c.task for c in group if c.task), return_exceptions=True)
            for c in group:
                await c.elector.client.close()

    asyncio.run(main())


def lease_spec(kube: Client, namespace: str, name: str) -> JSON:
    spec: JSON = kube.get("coordination.k8s.io/v1", "Lease", name, namespace)["spec"]
    return spec


def lease_holder(kube: Client, namespace: str, name: str) -> str:
    return str(lease_spec(kube, namespace, name).get("holderIdentity") or "")


def stamp(value: object) -> float:
    return datetime.fromisoformat(str(value)).timestamp()


def test_exactly_one_leader_and_takeover_after_a_crash(kube: Client, namespace: str) -> None:
    async def scenario(group: list[Candidate]) -> None:
        for c in group:
            c.start()
        first = await leaders(group)
        await asyncio.sleep(2 * RETRY)  # give the others every chance to (wrongly) win too
        assert await leaders(group) == first
        assert len(first) == 1
        lease_name = first[0].elector.config.name
        holder = await asyncio.to_thread(lease_holder, kube, namespace, lease_name)
        assert holder == first[0].elector.config.identity

        # A crash: the leader stops renewing and never releases the Lease.
        assert first[0].task is not None
        first[0].task.cancel()
        await asyncio.gather(first[0].task, return_exceptions=True)
        last = await asyncio.to_thread(lease_spec, kube, namespace, lease_name)
        rest = [c for c in group if c is not first[0]]
        second = await leaders(rest, timeout=10 * TAKEOVER_BOUND)  # liveness, not speed
        assert len(second) == 1
        spec = await asyncio.to_thread(lease_spec, kube, namespace, lease_name)
        assert spec["leaseTransitions"] == 1
        assert spec["holderIdentity"] == second[0].elector.config.identity
        # Safety: the new holder waited for the crashed leader's lease to expire.
        gap = stamp(spec["acquireTime"]) - stamp(last["renewTime"])
        assert gap >= LEASE, f"acquired {gap:.2f}s after the last renewal"

    run(scenario, candidates(kube, namespace, 3, release=False))


def test_graceful_stop_releases_for_an_immediate_takeover(kube: Client, namespace: str) -> None:
    async def scenario(group: list[Candidate]) -> None:
        for c in group:
            c.start()
        (leader,) = await leaders(group)
        assert leader.task is not None
        leader.task.cancel()
        await asyncio.gather(leader.task, return_exceptions=True)
        assert leader.stopped
        # Released: nobody holds it and it expires in a second, so the standby's next retry
        # takes it without waiting out the 3 s lease.
        released = await asyncio.to_thread(lease_spec, kube, namespace, leader.elector.config.name)
        assert not released.get("holderIdentity")
        assert released["leaseDurationSeconds"] == 1
        (follower,) = await leaders([c for c in group if c is not leader])
        assert follower is not leader

    run(scenario, candidates(kube, namespace, 2, release=True))


def test_leader_that_cannot_renew_stops_leading(kube: Client, namespace: str) -> None:
    async def scenario(group: list[Candidate]) -> None:
        (only,) = group
        only.start()
        await leaders([only])
        # Someone else takes the Lease by force: every renewal now loses the race for it.
        lease_name = only.elector.config.name
        lease = await asyncio.to_thread(
            kube.get, "coordination.k8s.io/v1", "Lease", lease_name, namespace
        )
        lease["spec"].update(holderIdentity="intruder", leaseDurationSeconds=3600)
        lost_at = time.monotonic()
        await asyncio.to_thread(
            kube.request, "PUT", f"/apis/coordination.k8s.io/v1/namespaces/{namespace}/leases/"
            f"{lease_name}", body=lease
        )  # fmt: skip
        assert only.task is not None
        await asyncio.wait_for(only.task, 10 * (RENEW + 2 * RETRY))  # liveness, not speed
        assert only.stopped
        print(f"stopped leading {only.stopped[0] - lost_at:.2f}s after losing the Lease")
        assert not only.elector.is_leader

    run(scenario, candidates(kube, namespace, 1, release=False))
