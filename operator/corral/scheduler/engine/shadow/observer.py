"""A shadow's side of the pod informer: watch the live scheduler's pods, decide each one as the
shadow would, compare.

Contract:

- Watched pods: ``spec.schedulerName`` is the live scheduler's (``--shadow-of``) and the
  namespace is served (tenancy), but for the shadow's own pods (its Deployment's, labelled
  :data:`PROFILE_LABEL` with its profile's name): the live scheduler places those while this
  shadow starts or rolls, so they would open every configuration's count with the shadow's own
  rollout, not the workload it is meant to judge. Nothing is ever written about them: the
  observer has no client.
- When: a pod is decided when the live scheduler's decision is observed: its binding (the pod
  event that carries ``spec.nodeName``), or its first ``PodScheduled=False`` with reason
  ``Unschedulable``. The snapshot is the cache *before* that event is applied: every binding
  observed so far, and none of the shadow's own choices (it assumes nothing). When pods arrive
  one at a time that is the cluster the live scheduler decided on, exactly.
- Under a burst it is an approximation: the live scheduler decides a pod while its earlier
  choices may still be in flight (assumed, not yet bound) and binds asynchronously, so
  bindings can be observed in another order than they were decided. A decision is marked
  ``burst`` when another watched pod was in flight at any time while this one was (arrived
  and not yet decided), and those are counted apart (``status.shadow.burst``).
- How: the shadow's own profile, scoring every node (``percentageOfNodesToScore`` 100, so the
  live scheduler's node is always scored when feasible), PreFilter through Score only: no
  Reserve, Permit, PostFilter (no preemption, not even its dry run) nor binding. A decision
  that is not an agreement is run again with the cycle recorded, for its evidence
  (:func:`.compare.evidence`); agreements cost one plain cycle.
- Threads: events arrive on the event loop (:meth:`on_pod`, before the engine's own handler,
  which then updates the cache); cycles run on one worker thread, in the order decided, each
  on the immutable snapshot taken when its event arrived. Only while :attr:`active` (the
  shadow holds its Lease) are decisions made.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import numpy as np

from corral.scheduler import metrics as m
from corral.scheduler.backend.cache import Cache
from corral.scheduler.backend.records import MalformedObjectError, pod_from_json
from corral.scheduler.engine.nominator import Nominator
from corral.scheduler.engine.shadow import compare as c
from corral.scheduler.engine.shadow.tally import Tally
from corral.scheduler.framework.cycle_state import CycleState
from corral.scheduler.framework.diagnosis import FitError
from corral.scheduler.framework.runtime.recording import CycleRecording
from corral.scheduler.framework.runtime.schedule_pod import PodScheduler
from corral.scheduler.framework.snapshot import Snapshot
from corral.scheduler.framework.status import StatusError
from corral.scheduler.framework.types import PodInfo

log = logging.getLogger("corral.scheduler.shadow")

TERMINAL_PHASES = ("Succeeded", "Failed")
UNSCHEDULABLE = "Unschedulable"
EVERY_NODE = 100
PROFILE_LABEL = "corral.dev/profile"  # on a profile's Deployment pods (render.names.PROFILE_LABEL)


@dataclass
class _Watched:
    pod: PodInfo
    epoch: int  # the arrival epoch when it came
    crowded: bool  # others were in flight when it came
    reported_unschedulable: bool = False


@dataclass(frozen=True)
class _Job:
    pod: PodInfo
    snapshot: Snapshot
    live: c.LiveDecision
    burst: bool


def _get(obj: object, *keys: str) -> Any:
    for key in keys:
        obj = obj.get(key) if isinstance(obj, Mapping) else None
    return obj


def unschedulable_message(raw: Mapping[str, Any]) -> str | None:
    """The live scheduler's FailedScheduling text when the pod's PodScheduled condition says
    Unschedulable, else None."""
    conditions = _get(raw, "status", "conditions")
    for cond in conditions if isinstance(conditions, list) else ():
        if (
            isinstance(cond, Mapping)
            and cond.get("type") == "PodScheduled"
            and cond.get("status") == "False"
            and cond.get("reason") == UNSCHEDULABLE
        ):
            return str(cond.get("message") or "")
    return None


class ShadowObserver:
    def __init__(
        self,
        scheduler: PodScheduler,
        *,
        live_scheduler: str,
        cache: Cache,
        nominator: Nominator,
        serves_namespace: Callable[[str], bool],
        tally: Tally,
        recorder: m.Recorder,
        clock: Callable[[], str],
        own_profile: str | None = None,
    ) -> None:
        """``own_profile``: the SchedulerProfile this shadow runs for (its pods are not
        watched; None: no pod is its own)."""
        scheduler.percentage = EVERY_NODE
        self.scheduler = scheduler
        self.profile = scheduler.fwk.profile.scheduler_name
        self.live_scheduler = live_scheduler
        self.cache = cache
        self.nominator = nominator
        self.serves_namespace = serves_namespace
        self.tally = tally
        self.recorder = recorder
        self.clock = clock
        self.own_profile = own_profile
        self.active = False
        self._watched: dict[str, _Watched] = {}
        self._epoch = 0
        self._pool: ThreadPoolExecutor | None = None
        self._lock = threading.Lock()  # the pool's lifecycle against submissions

    # --- lifecycle --------------------------------------------------------------------------

    def start(self) -> None:
        with self._lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(1, thread_name_prefix="shadow")
            self.active = True

    def stop(self, *, wait: bool = True) -> None:
        with self._lock:
            self.active = False
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=wait, cancel_futures=not wait)

    # --- events (event loop) ------------------------------------------------------------------

    def on_pod(self, kind: str, raw: Mapping[str, Any]) -> None:
        """A pod event, before the engine's own handler applies it to the cache."""
        uid = str(_get(raw, "metadata", "uid") or "")
        watched = self._watched.get(uid)
        if kind == "DELETED" or _get(raw, "status", "phase") in TERMINAL_PHASES:
            if watched is not None:
                del self._watched[uid]
                self.nominator.forget(uid)
            return
        if str(_get(raw, "spec", "schedulerName") or "default-scheduler") != self.live_scheduler:
            if watched is not None:  # no longer the live scheduler's
                del self._watched[uid]
                self.nominator.forget(uid)
            return
        node = _get(raw, "spec", "nodeName")
        if node:
            if watched is not None:
                del self._watched[uid]
                self.nominator.forget(uid)
                self._decide(watched, c.LiveDecision(str(node)))
            return
        if not self.serves_namespace(str(_get(raw, "metadata", "namespace") or "")):
            return
        if self.own_profile is not None and self._is_own(raw):
            return
        try:
            pod = pod_from_json(raw)
        except MalformedObjectError as exc:
            log.warning("ignoring a malformed pod event: %s", exc)
            return
        if watched is None:
            crowded = any(not w.reported_unschedulable for w in self._watched.values())
            if crowded:
                self._epoch += 1
            watched = self._watched[uid] = _Watched(pod, self._epoch, crowded)
        else:
            watched.pod = pod
        self.nominator.observe(pod)
        message = unschedulable_message(raw)
        if message is not None and not watched.reported_unschedulable:
            self._decide(watched, c.LiveDecision(None, message))
            watched.reported_unschedulable = True

    def _is_own(self, raw: Mapping[str, Any]) -> bool:
        labels = _get(raw, "metadata", "labels")
        return isinstance(labels, Mapping) and labels.get(PROFILE_LABEL) == self.own_profile

    def _decide(self, watched: _Watched, live: c.LiveDecision) -> None:
        burst = watched.crowded or watched.epoch != self._epoch
        job = _Job(watched.pod, self.cache.snapshot(), live, burst)
        with self._lock:
            if not self.active or self._pool is None:
                return
            self._pool.submit(self._run, job)

    # --- cycles (worker thread) ---------------------------------------------------------------

    def _run(self, job: _Job) -> None:
        try:
            self.decide(job.pod, job.snapshot, job.live, burst=job.burst)
        except Exception:  # one pod's failure must not stop the shadow
            log.exception("shadow decision for %s failed", job.pod.key)

    def decide(
        self, pod: PodInfo, snapshot: Snapshot, live: c.LiveDecision, *, burst: bool = False
    ) -> str:
        """Decide ``pod`` on ``snapshot``, compare with ``live``, count it; the outcome."""
        shadow = self._cycle(pod, snapshot)
        outcome = c.classify(shadow, live)
        disagreement = None
        if outcome in c.EXPLAINED:
            rec = CycleRecording(pod.key, self.profile)
            state = CycleState()
            state.recorder = rec
            self._cycle(pod, snapshot, state)
            disagreement = c.evidence(rec.explanation, live, outcome, shadow_node=shadow.node)
            disagreement.burst, disagreement.time = burst, self.clock()
            if shadow.node is None:
                disagreement.message = disagreement.message or shadow.message
            log.info(
                "shadow %s: pod %s: %s: live %s, shadow %s, deciding plugin %s",
                self.profile,
                pod.key,
                outcome,
                live.node or "unschedulable",
                shadow.node or "unschedulable",
                disagreement.deciding_plugin or "-",
            )
        self.tally.record(outcome, disagreement, burst=burst)
        self.recorder.inc(m.SHADOW_DECISIONS, (outcome,))
        if burst:
            self.recorder.inc(m.SHADOW_BURST_DECISIONS, (outcome,))
        return outcome

    def _cycle(
        self, pod: PodInfo, snapshot: Snapshot, state: CycleState | None = None
    ) -> c.ShadowDecision:
        rec = state.recorder if state is not None else None
        state = state or CycleState()
        try:
            result = self.scheduler.schedule_pod(state, pod, snapshot)
        except FitError as err:
            if isinstance(rec, CycleRecording):
                rec.outcome("Unschedulable", None, err.message())
            return c.ShadowDecision(None, message=err.message())
        except StatusError as err:
            if isinstance(rec, CycleRecording):
                rec.outcome(err.status.code.label, None, err.status.message)
            return c.ShadowDecision(None, message=err.status.message)
        if isinstance(rec, CycleRecording):
            rec.outcome("Success", result.suggested_host, "")
        slots = result.slots
        total = np.zeros(len(slots), dtype=np.int64)
        for scores in result.plugin_scores.values():
            total += scores
        names = snapshot.names
        totals = {
            str(names[int(s)]): int(t) for s, t in zip(slots.tolist(), total.tolist(), strict=True)
        }
        return c.ShadowDecision(result.suggested_host, totals)

    @property
    def watching(self) -> int:
        return len(self._watched)
