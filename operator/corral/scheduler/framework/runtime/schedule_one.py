"""The scheduling cycle after host selection, and the binding cycle (upstream schedule_one.go).

Scheduling cycle (on the scheduler's thread): schedule → assume → Reserve → Permit. Binding
cycle (may run on a worker thread): PreBindPreFlight → wait on Permit → PreBind → Bind → finish
binding → PostBind. When PreBind will act or Permit makes the pod wait, the pod's
``status.nominatedNodeName`` is set to its host first (upstream's NominatedNodeNameForExpectation,
on by default since 1.35), telling others such as an autoscaler that the pod is about to land
there; the caller writes it (``announce``), and a failed write does not stop the binding.
Bind asks an interested binder extender first and the Bind plugins only when none took it.
Any failure after assume runs Unreserve and forgets the pod, so the cache never keeps a pod
that was not bound. The cache is reached through :class:`Assumer` to keep the framework free of
backend imports.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from time import perf_counter
from typing import Protocol

from corral.scheduler import metrics as m
from corral.scheduler.framework.cycle_state import CycleState
from corral.scheduler.framework.diagnosis import Diagnosis, FitError
from corral.scheduler.framework.runtime.extenders import extenders_binding
from corral.scheduler.framework.runtime.schedule_pod import PodScheduler, ScheduleResult
from corral.scheduler.framework.snapshot import Snapshot
from corral.scheduler.framework.status import Code, Status, StatusError
from corral.scheduler.framework.types import PodInfo


class Assumer(Protocol):
    """The cache's assume/forget/finish-binding half (``backend.cache.Cache`` implements it)."""

    def assume_pod(self, pod: PodInfo, node_name: str) -> None: ...

    def forget_pod(self, pod: PodInfo) -> None: ...

    def finish_binding(self, pod: PodInfo) -> None: ...


@dataclass(frozen=True, slots=True)
class CycleOutcome:
    """What the scheduling cycle decided: a host to bind to, or a failure to requeue with."""

    result: ScheduleResult | None = None
    status: Status | None = None  # None: success (or Wait, see ``waiting``)
    fit_error: FitError | None = None
    # A failure's word on the pod's nominated node (upstream's NominatingInfo): None leaves it
    # (PostFilter ran and offered nothing), "" clears it, a name sets it (preemption made room).
    nominated_node_name: str | None = None
    waiting: bool = False

    @property
    def ok(self) -> bool:
        return self.result is not None and (self.status is None or self.status.is_wait)


def scheduling_cycle(
    scheduler: PodScheduler,
    state: CycleState,
    pod: PodInfo,
    snapshot: Snapshot,
    assumer: Assumer,
) -> CycleOutcome:
    fwk = scheduler.fwk
    started = perf_counter()  # scheduler_scheduling_algorithm_duration_seconds: to PostFilter
    try:
        result = scheduler.schedule_pod(state, pod, snapshot)
    except FitError as err:
        nominated: str | None = ""  # no PostFilter plugins: upstream clears the nomination
        if fwk.post_filter:
            # Even a PostFilter error only adds its message: the pod is still Unschedulable.
            post, s = fwk.run_post_filter(state, pod, err.diagnosis.node_to_status)
            err.diagnosis.post_filter_msg = s.message
            nominated = post.nominated_node_name if post is not None else None
            scheduler.mark("post_filter")
        _algorithm_done(scheduler, started)
        status = Status.of(Code.UNSCHEDULABLE, err.message())
        return CycleOutcome(status=status, fit_error=err, nominated_node_name=nominated)
    except StatusError as err:
        _algorithm_done(scheduler, started)
        return CycleOutcome(status=err.status, nominated_node_name="")
    _algorithm_done(scheduler, started)
    return prepare_for_binding(scheduler, state, pod, result, assumer)


def prepare_for_binding(
    scheduler: PodScheduler,
    state: CycleState,
    pod: PodInfo,
    result: ScheduleResult,
    assumer: Assumer,
) -> CycleOutcome:
    """Upstream ``prepareForBindingCycle``: assume on the chosen host, Reserve, Permit."""
    fwk = scheduler.fwk
    host = result.suggested_host
    assumer.assume_pod(pod, host)
    reserved = fwk.run_reserve(state, pod, host)
    if reserved is not None:
        fwk.run_unreserve(state, pod, host)
        assumer.forget_pod(pod)
        return _rejected_on_host(result, pod, reserved)
    permitted = fwk.run_permit(state, pod, host)
    if permitted is not None and not permitted.is_wait:
        fwk.run_unreserve(state, pod, host)
        assumer.forget_pod(pod)
        return _rejected_on_host(result, pod, permitted)
    scheduler.mark("assume")
    return CycleOutcome(result=result, status=permitted, waiting=permitted is not None)


def _algorithm_done(scheduler: PodScheduler, started: float) -> None:
    scheduler.fwk.metrics.observe(m.SCHEDULING_ALGORITHM_DURATION, (), perf_counter() - started)


def host_fit_error(pod: PodInfo, status: Status) -> FitError:
    """Upstream's FitError for a rejection on the chosen host (Reserve, Permit, WaitOnPermit):
    one node, so the message reads ``0/1 nodes are available: <reasons>.``."""
    diagnosis = Diagnosis()
    diagnosis.node_to_status.set(0, status)
    diagnosis.add_plugin_status(status)
    return FitError(pod.key, 1, diagnosis)


def _rejected_on_host(result: ScheduleResult, pod: PodInfo, status: Status) -> CycleOutcome:
    """Reserve or Permit said no: the pod is forgotten and its nomination cleared."""
    if not status.is_rejected:
        return CycleOutcome(result=result, status=status, nominated_node_name="")
    err = host_fit_error(pod, status)
    wrapped = Status.of(status.code, err.message()).with_plugin(status.plugin)
    return CycleOutcome(result=result, status=wrapped, fit_error=err, nominated_node_name="")


def binding_cycle(
    scheduler: PodScheduler,
    state: CycleState,
    pod: PodInfo,
    host: str,
    assumer: Assumer,
    *,
    announce: Callable[[PodInfo, str], None] | None = None,
) -> Status | None:
    """Returns ``None`` when bound; otherwise the failure (the pod was forgotten). ``announce``
    writes ``status.nominatedNodeName`` and must not raise (None: nothing is written)."""
    fwk = scheduler.fwk
    s = fwk.run_pre_bind_pre_flights(state, pod, host)
    if s is not None and (s.code == Code.ERROR or s.is_rejected):
        _undo(scheduler, state, pod, host, assumer)
        return s
    if (
        announce is not None
        and (s is None or fwk.will_wait_on_permit(pod))
        and pod.nominated_node_name != host
    ):
        announce(pod, host)
    s = fwk.wait_on_permit(pod)
    if s is not None and s.is_rejected:
        s = Status.of(s.code, host_fit_error(pod, s).message()).with_plugin(s.plugin)
    if s is None:
        s = fwk.run_pre_bind(state, pod, host)
    if s is None:
        bound, s = extenders_binding(scheduler.extenders, pod, host)
        if not bound:
            s = fwk.run_bind(state, pod, host)
    if s is not None:
        _undo(scheduler, state, pod, host, assumer)
        return s
    assumer.finish_binding(pod)
    fwk.run_post_bind(state, pod, host)
    return None


def _undo(
    scheduler: PodScheduler, state: CycleState, pod: PodInfo, host: str, assumer: Assumer
) -> None:
    """After assume, any failure: Unreserve, and forget the pod."""
    scheduler.fwk.run_unreserve(state, pod, host)
    assumer.forget_pod(pod)
