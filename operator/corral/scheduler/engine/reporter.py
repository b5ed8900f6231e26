"""What becomes of a scheduling outcome: metrics at once, log lines, Events and the pod's status
on the event loop.

:class:`OutcomeReporter` implements the loop's :class:`~.loop.Reporter` and is called from the
scheduling and binding threads: it books the metrics on the calling thread and hands the rest to
the event loop through a :class:`~.handoff.LoopHandoff` (the log lines too: many binding threads
contending for the log handler's lock cost more than the logging itself). It also posts the
engine's other Events: a preemption victim's, and upstream skipPodSchedule's for a pod being
deleted.

A pod's status patches are written one at a time, the latest outcome last: two failures of one
pod a few milliseconds apart (a gang member refused, then refused again once a sibling arrived)
would otherwise race on the wire, and the API server could keep the earlier message. While one
patch is in flight, a newer outcome replaces any waiting one (only the latest is worth writing).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Coroutine, Mapping
from typing import Any

from corral.k8s.aio import AsyncClient
from corral.scheduler import metrics as m
from corral.scheduler.engine.event_recorder import EventRecorder, PodRef
from corral.scheduler.engine.handoff import LoopHandoff
from corral.scheduler.engine.logfields import fields
from corral.scheduler.engine.loop import Failure, Success
from corral.scheduler.engine.metrics import RESULT_ERROR, RESULT_SCHEDULED, RESULT_UNSCHEDULABLE
from corral.scheduler.engine.podstatus import REASON_UNSCHEDULABLE, record_failure
from corral.scheduler.framework.types import PodInfo

log = logging.getLogger("corral.scheduler")


def _ref(pod: PodInfo) -> PodRef:
    return PodRef(pod.namespace, pod.name, pod.uid, pod.resource_version)


class OutcomeReporter:
    def __init__(
        self,
        metrics: m.Recorder,
        recorders: Mapping[str, EventRecorder],
        handoff: LoopHandoff,
        spawn: Callable[[Coroutine[Any, Any, None]], object],
        client: AsyncClient,
    ) -> None:
        self.metrics = metrics
        self.recorders = recorders  # one per profile, by scheduler name
        self.handoff = handoff
        self._spawn = spawn  # on the loop: start a status patch
        self._client = client
        # pod UID -> the latest failure whose status patch is not yet written (event loop only)
        self._unwritten: dict[str, Failure] = {}

    # --- the loop's Reporter (scheduling and binding threads) -------------------------------

    def scheduled(self, outcome: Success) -> None:
        rec = self.metrics
        labels = (RESULT_SCHEDULED, outcome.profile)
        rec.inc(m.SCHEDULE_ATTEMPTS, labels)
        rec.observe(m.SCHEDULING_ATTEMPT_DURATION, labels, outcome.duration)
        rec.observe(m.POD_SCHEDULING_ATTEMPTS, (), outcome.attempts)
        if outcome.since_first_attempt is not None:
            attempts = (m.attempts_label(outcome.attempts),)
            rec.observe(m.POD_SCHEDULING_SLI_DURATION, attempts, outcome.since_first_attempt)
        self.handoff.on_loop(self._scheduled_on_loop, outcome)

    def failed(self, outcome: Failure) -> None:
        rec = self.metrics
        result = RESULT_UNSCHEDULABLE if outcome.reason == REASON_UNSCHEDULABLE else RESULT_ERROR
        rec.inc(m.SCHEDULE_ATTEMPTS, (result, outcome.profile))
        rec.observe(m.SCHEDULING_ATTEMPT_DURATION, (result, outcome.profile), outcome.duration)
        self.handoff.on_loop(self._failed_on_loop, outcome)

    # --- other Events and counts (any thread) -----------------------------------------------

    def event(self, pod: PodInfo, event_type: str, reason: str, action: str, note: str) -> None:
        """An Event about any pod (e.g. a preemption victim), from the first profile."""
        recorder = next(iter(self.recorders.values()))
        self.handoff.on_loop(recorder.event, _ref(pod), event_type, reason, action, note)

    def skipped_deleting(self, pod: PodInfo) -> None:
        """Upstream skipPodSchedule's Event for a pod being deleted."""
        recorder = self.recorders[pod.scheduler_name]
        note = f"skip schedule deleting pod: {pod.namespace}/{pod.name}"
        self.handoff.on_loop(recorder.failed_scheduling, _ref(pod), note)

    def preempted(self, victims: int) -> None:
        """One preemption, with its number of victims."""
        self.metrics.inc(m.PREEMPTION_ATTEMPTS)
        self.metrics.observe(m.PREEMPTION_VICTIMS, (), victims)

    # --- on the loop ------------------------------------------------------------------------

    def _scheduled_on_loop(self, outcome: Success) -> None:
        pod = outcome.pod
        log.info("Successfully bound pod to node", extra=fields(
            pod=pod.key, node=outcome.node, evaluatedNodes=outcome.evaluated_nodes,
            feasibleNodes=outcome.feasible_nodes,
        ))  # fmt: skip
        self.recorders[outcome.profile].scheduled(_ref(pod), outcome.node)

    def _failed_on_loop(self, outcome: Failure) -> None:
        pod = outcome.pod
        log.info("Unable to schedule pod", extra=fields(
            pod=pod.key, reason=outcome.reason, err=outcome.message))  # fmt: skip
        self.recorders[outcome.profile].failed_scheduling(_ref(pod), outcome.message)
        writing = pod.uid in self._unwritten  # its writer is running: it takes this one next
        self._unwritten[pod.uid] = outcome
        if not writing:
            self._spawn(self._write_statuses(pod.uid))

    async def _write_statuses(self, uid: str) -> None:
        """The pod's status patches in order, until no newer outcome waits."""
        try:
            while (outcome := self._unwritten.get(uid)) is not None:
                await self._patch_status(outcome)
                if self._unwritten.get(uid) is outcome:
                    del self._unwritten[uid]
        finally:  # cancelled (the engine stopping): a later failure starts a new writer
            self._unwritten.pop(uid, None)

    async def _patch_status(self, outcome: Failure) -> None:
        try:
            pod = outcome.pod.raw  # as the watch gave it
            if outcome.announced:  # the binding cycle wrote it since the informer's copy
                pod = {**pod, "status": {**(pod.get("status") or {}),
                                         "nominatedNodeName": outcome.announced}}  # fmt: skip
            await record_failure(self._client, pod, outcome.reason, outcome.message,
                                 outcome.nominated_node)  # fmt: skip
        except Exception as exc:  # the pod may be gone; the next attempt writes it again
            log.debug("updating the status of %s: %s", outcome.pod.key, exc)
