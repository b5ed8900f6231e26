"""``schedule_one`` on a dedicated thread, each binding cycle on a thread of its own (upstream
``schedule_one.go``: scheduleOne, bindingCycle, handleSchedulingFailure).

The scheduling thread pops one pod at a time and runs the scheduling cycle against a fresh
snapshot; the binding cycle (Permit wait, PreBind, Bind, PostBind) starts at once on a thread
no other cycle holds (:mod:`.binding_threads`: idle threads are reused, new ones started when
none is idle), so the next pod is considered while the Binding is in flight, and pods waiting
in PreBind or Permit, however many, never delay another pod's Binding. Outcomes are reported
through a :class:`Reporter`, which turns them into Events, pod conditions, metrics and log
lines without blocking this thread.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from corral.scheduler.backend.cache import Cache, CacheError
from corral.scheduler.backend.queue import SchedulingQueue
from corral.scheduler.engine.assume import NominationDroppingAssumer
from corral.scheduler.engine.binding_threads import ElasticThreads
from corral.scheduler.engine.nominator import Nominator
from corral.scheduler.engine.podgroup_cycle import PodGroupCycle, PodGroupReporter
from corral.scheduler.engine.podstatus import REASON_SCHEDULER_ERROR, REASON_UNSCHEDULABLE
from corral.scheduler.engine.timing import EngineTiming
from corral.scheduler.framework import cluster_events as events
from corral.scheduler.framework import types
from corral.scheduler.framework.cycle_state import CycleState
from corral.scheduler.framework.podgroup import QueuedPodGroupInfo
from corral.scheduler.framework.runtime.framework import sample_plugin_metrics
from corral.scheduler.framework.runtime.schedule_one import (
    CycleOutcome,
    binding_cycle,
    scheduling_cycle,
)
from corral.scheduler.framework.runtime.schedule_pod import PodScheduler, ScheduleResult
from corral.scheduler.framework.status import Status
from corral.scheduler.framework.types import PodInfo, QueuedPodInfo

log = logging.getLogger("corral.scheduler")

POP_TIMEOUT = 0.2  # how often the thread looks up from an empty queue to check for stop


@dataclass(frozen=True, slots=True)
class Failure:
    pod: PodInfo
    profile: str
    reason: str  # Unschedulable | SchedulerError
    message: str
    # The pod's status.nominatedNodeName to write: None leaves it, "" clears it (a failed
    # binding cycle, as upstream's clearNominatedNode), a name sets it (preemption).
    nominated_node: str | None
    duration: float
    # The node the binding cycle wrote into status.nominatedNodeName: newer than ``pod.raw``.
    announced: str = ""


@dataclass(frozen=True, slots=True)
class Success:
    pod: PodInfo
    profile: str
    node: str
    evaluated_nodes: int
    feasible_nodes: int
    duration: float
    attempts: int = 1  # scheduling attempts, this one included (QueuedPodInfo.attempts)
    # Seconds since the pod's first attempt (scheduler_pod_scheduling_sli_duration_seconds).
    since_first_attempt: float | None = None


class Reporter(Protocol):
    """Side effects of outcomes; called from the scheduling and binding threads."""

    def scheduled(self, outcome: Success) -> None: ...

    def failed(self, outcome: Failure) -> None: ...


class _Forgets:
    """The cache as a binding cycle's Assumer, telling whether its forget took (upstream
    logs a failed ForgetPod and goes on; the pod may have been removed as it was deleted)."""

    def __init__(self, cache: Cache) -> None:
        self.cache = cache
        self.forgot = False

    def assume_pod(self, pod: PodInfo, node_name: str) -> None:
        self.cache.assume_pod(pod, node_name)

    def finish_binding(self, pod: PodInfo) -> None:
        self.cache.finish_binding(pod)

    def forget_pod(self, pod: PodInfo) -> None:
        try:
            self.cache.forget_pod(pod)
        except CacheError as exc:
            log.warning("forgetting %s: %s", pod.key, exc)
        else:
            self.forgot = True


@dataclass(frozen=True, slots=True)
class _Binding:
    """One binding cycle's inputs, handed from the scheduling thread to a worker."""

    scheduler: PodScheduler
    state: CycleState
    qpi: QueuedPodInfo
    host: str
    cycle: int
    started: float
    evaluated: int
    feasible: int


class SchedulingLoop:
    def __init__(
        self,
        queue: SchedulingQueue,
        cache: Cache,
        schedulers: dict[str, PodScheduler],
        reporter: Reporter,
        *,
        binding_workers: int = 16,
        nominator: Nominator | None = None,
        timing: EngineTiming | None = None,
        announcer: Callable[[PodInfo, str], None] | None = None,
        pod_groups: PodGroupReporter | None = None,
    ) -> None:
        self.nominator = nominator
        # GenericWorkload: a popped group runs the pod-group cycle (podgroup_cycle.py).
        self.group_cycle = PodGroupCycle(self, pod_groups) if pod_groups is not None else None
        # Writes status.nominatedNodeName before a binding cycle's PreBind or Permit wait
        # (binding_cycle's ``announce``); raises on failure. None: nothing is written.
        self.announcer = announcer
        # The scheduling thread's phases (PodScheduler marks filter and score, the cycle
        # post_filter and assume) and the binding threads' spans.
        self.timing = timing or EngineTiming()
        self.clock = self.timing.scheduling
        for scheduler in schedulers.values():
            scheduler.mark = self.clock.mark
        self.queue = queue
        self.cache = cache
        self._assumes = NominationDroppingAssumer(cache, nominator)
        self.schedulers = schedulers
        self.reporter = reporter
        self.binding_workers = binding_workers  # idle binding threads kept for reuse
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._pool: ElasticThreads | None = None

    # --- lifecycle --------------------------------------------------------------------------

    def start(self) -> None:
        self._stop.clear()
        self._pool = ElasticThreads(keep=self.binding_workers, name="binding")
        self._thread = threading.Thread(target=self._run, name="scheduling", daemon=True)
        self._thread.start()

    def stop(self, *, wait_for_bindings: bool = True) -> None:
        """Stop popping pods at once; bindings already posted finish (or are abandoned)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        if self._pool is not None:
            self._pool.shutdown(wait=wait_for_bindings)
            self._pool = None

    @property
    def running(self) -> bool:
        return self._thread is not None and not self._stop.is_set()

    def _run(self) -> None:
        self.clock.restart()
        while not self._stop.is_set():
            qpi = self.queue.pop(timeout=POP_TIMEOUT)
            self.clock.mark("pop")
            if qpi is None:
                continue
            try:
                self.schedule_one(qpi)
            except Exception:  # a bug must not kill the scheduler: fail this pod, go on
                log.exception("scheduling %s failed unexpectedly", qpi.pod.key)
                if isinstance(qpi, QueuedPodGroupInfo):
                    for member in qpi.members:
                        self._requeue(member, self.queue.scheduling_cycle, frozenset())
                    self.queue.add_attempted_pod_group(qpi, "error")
                else:
                    self._requeue(qpi, self.queue.scheduling_cycle, frozenset())

    # --- one pod ----------------------------------------------------------------------------

    def schedule_one(self, qpi: QueuedPodInfo) -> None:
        if isinstance(qpi, QueuedPodGroupInfo):
            if self.group_cycle is None:  # cannot happen: only a GenericWorkload queue has groups
                raise RuntimeError(f"pod group {qpi.key} popped without GenericWorkload")
            self.group_cycle.run(qpi)
            return
        pod = qpi.pod
        scheduler = self.schedulers.get(pod.scheduler_name)
        if scheduler is None or pod.deleting:
            self.queue.done(pod.uid)  # not ours (any more), or on its way out
            return
        started = time.monotonic()
        cycle = self.queue.scheduling_cycle
        state = CycleState(record_plugin_metrics=sample_plugin_metrics())
        snapshot = self.cache.snapshot()
        self.clock.mark("snapshot")
        outcome = scheduling_cycle(scheduler, state, pod, snapshot, self._assumes)
        if not outcome.ok:
            self.fail(qpi, outcome, started, cycle)
            return
        assert outcome.result is not None
        self.bind(scheduler, state, qpi, outcome.result, started=started, cycle=cycle)

    def fail(self, qpi: QueuedPodInfo, outcome: CycleOutcome, started: float, cycle: int) -> None:
        """Upstream handleSchedulingFailure: the pod's rejectors, its nomination (None leaves
        it), the requeue, and the report (FailedScheduling Event, PodScheduled=False)."""
        assert outcome.status is not None
        pod = qpi.pod
        fit = outcome.fit_error
        plugins = frozenset(fit.diagnosis.unschedulable_plugins) if fit is not None else frozenset()
        qpi.pending_plugins = (
            frozenset(fit.diagnosis.pending_plugins) if fit is not None else frozenset()
        )
        nominated = outcome.nominated_node_name
        if self.nominator is not None and nominated is not None:
            # Preemption made room there: count this pod on that node from now on; or
            # the failure clears the pod's nomination.
            self.nominator.nominate(pod, nominated)
        self._requeue(qpi, cycle, plugins)
        rejected = fit is not None or outcome.status.is_rejected
        self.reporter.failed(
            Failure(
                pod,
                pod.scheduler_name,
                REASON_UNSCHEDULABLE if rejected else REASON_SCHEDULER_ERROR,
                fit.message() if fit is not None else outcome.status.message,
                nominated,
                time.monotonic() - started,
            )
        )
        self.clock.mark("failure")

    def bind(
        self,
        scheduler: PodScheduler,
        state: CycleState,
        qpi: QueuedPodInfo,
        result: ScheduleResult,
        *,
        started: float,
        cycle: int,
    ) -> None:
        """Hand an assumed, permitted pod to a binding worker."""
        assert self._pool is not None
        job = _Binding(scheduler, state, qpi, result.suggested_host, cycle, started,
                       result.evaluated_nodes, result.feasible_nodes)  # fmt: skip
        self._pool.submit(self._bind, job)
        self.clock.mark("handoff")

    def _bind(self, job: _Binding) -> None:
        with self.timing.tallies["binding_cycle"].span():
            self._binding_cycle(job)

    def _binding_cycle(self, job: _Binding) -> None:
        qpi, host, scheduler, state = job.qpi, job.host, job.scheduler, job.state
        cycle, started, evaluated, feasible = job.cycle, job.started, job.evaluated, job.feasible
        pod = qpi.pod
        announced = ""

        def announce(about: PodInfo, node: str) -> None:
            nonlocal announced
            assert self.announcer is not None
            try:
                self.announcer(about, node)
            except Exception as exc:  # upstream logs it and binds all the same
                log.warning("setting the nominated node of %s to %s: %s", about.key, node, exc)
            else:
                announced = node

        writes = announce if self.announcer is not None else None
        forgets = _Forgets(self.cache)
        try:
            status = binding_cycle(scheduler, state, pod, host, forgets, announce=writes)
        except Exception as exc:  # the binding cycle must always end in done or requeue
            log.exception("binding %s to %s failed unexpectedly", pod.key, host)
            forgets.forget_pod(pod)
            status = Status.error(str(exc) or type(exc).__name__)
        if status is None:
            self.queue.done(pod.uid)
            now = time.monotonic()
            first = qpi.initial_attempt_timestamp  # the queue's clock: time.monotonic
            self.reporter.scheduled(
                Success(pod, pod.scheduler_name, host, evaluated, feasible, now - started,
                        qpi.attempts, None if first is None else now - first)
            )  # fmt: skip
            return
        rejecting = frozenset({status.plugin}) if status.is_rejected and status.plugin else None
        if self.nominator is not None:
            self.nominator.forget(pod.uid)  # upstream clears the nomination of a failed binding
        # Forgetting an assumed pod frees what it held on the node: an AssignedPodDelete event
        # (upstream handleBindingCycleError). A rejected pod is requeued first and does not
        # move itself; an error's event is seen by the pod still in flight.
        freed = types.on_node(pod, host) if forgets.forgot else None
        if freed is not None and not status.is_rejected:
            self.queue.move_all_to_active_or_backoff(events.ASSIGNED_POD_DELETE, freed, None)
        self._requeue(qpi, cycle, rejecting or frozenset())
        if freed is not None and status.is_rejected:
            self.queue.move_all_to_active_or_backoff(
                events.ASSIGNED_POD_DELETE, freed, None, pre_check=lambda p: p.uid != pod.uid
            )
        # Upstream (1.27+) reports the binding cycle's status as it is: its message without the
        # old "binding rejected: " prefix, Unschedulable when a plugin rejected the pod.
        reason = REASON_UNSCHEDULABLE if status.is_rejected else REASON_SCHEDULER_ERROR
        self.reporter.failed(
            Failure(pod, pod.scheduler_name, reason, status.message, "",
                    time.monotonic() - started, announced)
        )  # fmt: skip

    def _requeue(self, qpi: QueuedPodInfo, cycle: int, plugins: frozenset[str]) -> None:
        qpi.unschedulable_plugins = plugins
        self.queue.add_unschedulable_if_not_present(qpi, cycle)
