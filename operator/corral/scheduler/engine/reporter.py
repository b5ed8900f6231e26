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

The informer's copy of a pod can predate the reporter's own last patch (the watch has not yet
delivered it, as on a loaded machine): a retry then finds no condition on its copy and would write
the same one again with a new ``lastTransitionTime``, giving the pod a new resourceVersion and so
a new key for client-go's Event series. The reporter remembers what it last wrote for each pod and
the resourceVersion the API server answered, and skips a patch that would say the same to a copy
no newer than that answer.
"""

from __future__ import annotations

import logging
from collections import OrderedDict
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

# How many pods' last written failures the reporter remembers; the oldest are forgotten first
# (forgetting one costs at most one redundant patch).
WRITTEN_REMEMBERED = 4096

# A failure's content as written to the pod: reason, message, nominated node.
_Said = tuple[str, str, str | None]


def _version(resource_version: str) -> int | None:
    """An etcd resourceVersion as a number, None if it is not one (then nothing is skipped)."""
    return int(resource_version) if resource_version.isdigit() else None


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
        # pod UID -> (what the last patch said, the resourceVersion it produced) (event loop only)
        self._written: OrderedDict[str, tuple[_Said, int]] = OrderedDict()

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
        self._written.pop(pod.uid, None)

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

    def _already_said(self, outcome: Failure, said: _Said) -> bool:
        """Whether the reporter's last patch of this pod said this, and the copy in hand is no
        newer than the version that patch produced (so it only lags behind it)."""
        written = self._written.get(outcome.pod.uid)
        if written is None or written[0] != said:
            return False
        version = _version(outcome.pod.resource_version)
        return version is not None and version <= written[1]

    async def _patch_status(self, outcome: Failure) -> None:
        said: _Said = (outcome.reason, outcome.message, outcome.nominated_node)
        if self._already_said(outcome, said):
            return
        try:
            pod = outcome.pod.raw  # as the watch gave it
            if outcome.announced:  # the binding cycle wrote it since the informer's copy
                pod = {**pod, "status": {**(pod.get("status") or {}),
                                         "nominatedNodeName": outcome.announced}}  # fmt: skip
            answer = await record_failure(self._client, pod, outcome.reason, outcome.message,
                                          outcome.nominated_node)  # fmt: skip
        except Exception as exc:  # the pod may be gone; the next attempt writes it again
            log.debug("updating the status of %s: %s", outcome.pod.key, exc)
            return
        version = _version(str(((answer or {}).get("metadata") or {}).get("resourceVersion", "")))
        if version is not None:
            self._written[outcome.pod.uid] = (said, version)
            self._written.move_to_end(outcome.pod.uid)
            while len(self._written) > WRITTEN_REMEMBERED:
                self._written.popitem(last=False)
