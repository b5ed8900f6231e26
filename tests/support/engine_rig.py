"""One profile's engine in-process for unit tests: the real cluster state, queue, cache,
nominator, pod lister and loop over a fake clock, with bindings recorded (no API server) and
binding cycles run when the test says (members wait at Permit while the next is scheduled).
The caller adds nodes, pods and objects through ``state`` and ``objects``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from corral.scheduler.backend.cache import Cache
from corral.scheduler.backend.objects import ObjectStore
from corral.scheduler.backend.pod_labels import PodLabelIndex
from corral.scheduler.backend.queue import SchedulingQueue
from corral.scheduler.engine.frameworks import (
    build_frameworks,
    engine_declarations,
    engine_registry,
    load_engine_config,
)
from corral.scheduler.engine.handlers import ClusterState
from corral.scheduler.engine.loop import Failure, SchedulingLoop, Success
from corral.scheduler.engine.nominator import Nominator
from corral.scheduler.framework.runtime.schedule_pod import PodScheduler
from corral.scheduler.framework.types import PodInfo
from corral.testing.builders import JSON


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class Reported:
    def __init__(self) -> None:
        self.outcomes: list[Success | Failure] = []

    def scheduled(self, outcome: Success) -> None:
        self.outcomes.append(outcome)

    def failed(self, outcome: Failure) -> None:
        self.outcomes.append(outcome)


class Binder:
    def __init__(self) -> None:
        self.bound: list[str] = []

    def __call__(self, pod: PodInfo, node_name: str) -> None:
        self.bound.append(pod.name)


class Deferred:
    """The binding pool, run on demand: each binding cycle is kept until ``run``, so pods
    scheduled meanwhile see it assumed."""

    def __init__(self) -> None:
        self.jobs: list[tuple[Callable[..., Any], tuple[Any, ...]]] = []

    def submit(self, fn: Callable[..., Any], *args: Any) -> None:
        self.jobs.append((fn, args))

    def run(self) -> None:
        jobs, self.jobs = self.jobs, []
        for fn, args in jobs:
            fn(*args)


class EngineRig:
    def __init__(
        self, config: JSON, profile: str, *, announcer: Callable[[PodInfo, str], None] | None = None
    ) -> None:
        self.clock, self.reported, self.binder = Clock(), Reported(), Binder()
        engine = load_engine_config(config)
        self.objects, self.nominator = ObjectStore(), Nominator()
        labels = PodLabelIndex.for_plugins(
            engine_declarations(), {n for p in engine.profiles for n in p.plugin_names()}
        )
        (fwk,) = build_frameworks(
            engine, engine_registry(), self.binder, objects=self.objects, pod_lister=labels,
            nominator=self.nominator,
        ).values()  # fmt: skip
        self.fwk = fwk
        self.queue = SchedulingQueue(
            less=fwk.less,
            pre_enqueue=fwk.run_pre_enqueue,
            events_by_profile={profile: dict(fwk.events_by_plugin())},
            clock=self.clock,
        )
        self.cache = Cache()
        self.state = ClusterState(self.cache, self.queue, {profile}, lambda _: True,
                                  self.nominator, labels=labels)  # fmt: skip
        self.loop = SchedulingLoop(self.queue, self.cache, {profile: PodScheduler(fwk)},
                                   self.reported, nominator=self.nominator,
                                   announcer=announcer)  # fmt: skip
        self.pool = Deferred()
        self.loop._pool = self.pool  # type: ignore[assignment]
