"""The API side of a preemption decision, asynchronous as upstream's default since 1.33
(``SchedulerAsyncPreemption``, KEP-4832; upstream ``prepareCandidateAsync``).

The scheduling thread only records the decision: the preemptor is marked *preempting* and the
API calls run on worker threads, so the next pod's cycle does not wait for them. Meanwhile
DefaultPreemption's PreEnqueue keeps the preemptor out of activeQ
(:meth:`ApiPreemptionExecutor.is_running_preemption`).

One preemption, on a worker:

1. lower-priority pods nominated to the node lose their nomination (the room they counted on
   is the preemptor's now); a failure here is logged, not fatal;
2. every victim but the last, in parallel: the ``DisruptionTarget`` condition (reason
   ``PreemptionByScheduler``) so that controllers and PDB accounting see why it goes, then the
   delete, then a ``Preempted`` Event. A victim already gone is not an error;
3. unless step 2 failed, the last victim, the same way. It is registered first: from then on
   the preemptor counts as preempting only while that victim is still in the cache and not
   terminating, so its deletion event (which requeues the preemptor) already finds the gate
   open, even before this worker has finished;
4. after an error the preemptor is unmarked at once. Otherwise it stays marked until the
   engine's own view (the cache the next cycle's snapshot is taken from) shows the last victim
   going (below). It is activated (moved to activeQ) when no deletion event may come to
   requeue it: after an error, and when the last victim was already gone before our calls.
   That victim's deletion event may have reached the queue while the preemptor was still
   gated (the informer saw the pod alive when the cycle chose it), and the queue then kept it
   waiting for an event that had passed: 5 minutes, until the leftover flush. Upstream (1.37)
   activates only after an error or an in-memory preemption; activating is never wrong, at
   worst one more attempt.

When the gate opens. Upstream's (``IsPodRunningPreemption``) asks its pod lister, which client-go
updates before any handler runs: not preempting any more, or the last victim gone or
terminating. Its informer keeps up within a millisecond, so by the time another pod's event
lets the preemptor through, the victim is out of its cache as well. Corral's informer, in
Python on the scheduler's one core, runs tens of milliseconds behind the API server's answers:
a preemptor let through then met its last victim still in the cache, failed once more ("not
eligible due to a terminating pod on the nominated node", or a second preemption), and cost a
FailedScheduling Event, a status patch and a cycle (PreemptionBasic at 200 nodes: 42 extra
attempts for 200 preemptors, the ~1.4 requests per pod upstream does not make). So the gate
reads the same cache as the cycle, and it counts as going only once it is gone or terminating
for a while: a victim deleted with no grace period and no finalizers is removed by the same
DELETE that marked it, and its removal event (AssignedPod/Delete, which DefaultPreemption
registers) follows and opens the gate; a graceful deletion opens it at once, as upstream.

Victims already terminating get no call. With none left the preemptor is not marked at all.
With leader election every call waits for the engine's :class:`WriteFence` to be open, checked
right before it is sent: an engine that lost its Lease evicts no more pods.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Final

from corral.k8s import CONTENT_STRATEGIC_MERGE_PATCH, ApiError, Client
from corral.k8s.ratelimit import TokenBucket
from corral.scheduler.backend.records import REASON_PREEMPTION_BY_SCHEDULER
from corral.scheduler.engine.event_recorder import REASON_PREEMPTED
from corral.scheduler.engine.leaderelection import NotLeaderError, WriteFence
from corral.scheduler.engine.logfields import fields
from corral.scheduler.engine.nominator import Nominator
from corral.scheduler.framework.status import Status
from corral.scheduler.framework.types import PodInfo

# (pod, event type, reason, action, note): recorded asynchronously by the engine.
EventSink = Callable[[PodInfo, str, str, str, str], None]
# The engine's view of an assigned pod by uid (None once deleted).
PodLookup = Callable[[str], PodInfo | None]


@dataclass(frozen=True, slots=True)
class _Preemptor:
    """Who preempts: a pod, or a pod group (workload-aware preemption, GenericWorkload)."""

    uid: str
    key: str  # for logs
    scheduler_name: str
    kind: str  # upstream's preemptor type: "pod" or "podgroup"
    members: tuple[PodInfo, ...]  # activated when no deletion event may requeue them


# Upstream's Parallelizer default: victims of one preemption are deleted 16 at a time.
VICTIM_WORKERS: Final = 16
# Preemptions in progress at once; each waits on its victims' calls.
PREEMPTION_WORKERS: Final = 8

log = logging.getLogger("corral.scheduler")


def _removal_imminent(victim: PodInfo) -> bool:
    """Terminating with no grace period and no finalizers: the API server removes the pod in
    the same DELETE, so its removal event is already on its way."""
    meta = victim.raw.get("metadata")
    if not isinstance(meta, dict):
        return False
    return meta.get("deletionGracePeriodSeconds") == 0 and not meta.get("finalizers")


class VictimError(Exception):
    """A victim's API call failed for another reason than the victim being gone already."""


class ApiPreemptionExecutor:
    """Implements :class:`corral.scheduler.framework.listers.PreemptionExecutor`."""

    def __init__(
        self,
        client: Client,
        bucket: TokenBucket,
        nominator: Nominator,
        events: EventSink,
        *,
        lookup: PodLookup,
        activate: Callable[[PodInfo], object],
        on_preempt: Callable[[int], None] = lambda _victims: None,
        may_evict: Callable[[PodInfo], bool] = lambda _pod: True,
        fence: WriteFence | None = None,
    ) -> None:
        self.client = client
        self.bucket = bucket
        self.fence = fence or WriteFence()
        self.nominator = nominator
        self.events = events
        self.lookup = lookup
        self.activate = activate
        self.on_preempt = on_preempt  # called once per preemption with its number of victims
        self._may_evict = may_evict  # tenancy: only pods in the served namespaces
        self._lock = threading.Lock()
        self._preempting: set[str] = set()
        self._last_victim: dict[str, str] = {}  # preemptor uid -> uid of its last victim
        self._finished: set[str] = set()  # marked until the cache shows the last victim going
        self._runs = ThreadPoolExecutor(PREEMPTION_WORKERS, thread_name_prefix="preemption")
        self._calls = ThreadPoolExecutor(VICTIM_WORKERS, thread_name_prefix="preemption-call")

    # --- the scheduling thread --------------------------------------------------------------

    def preempt(
        self,
        preemptor: PodInfo,
        node_name: str,
        victims: Sequence[PodInfo],
        lower_priority_nominated: Sequence[PodInfo],
    ) -> Status | None:
        who = _Preemptor(preemptor.uid, preemptor.key, preemptor.scheduler_name, "pod",
                         (preemptor,))  # fmt: skip
        if all(v.deleting for v in victims):
            return None
        self.on_preempt(len(victims))
        return self._start(who, node_name, victims, lower_priority_nominated)

    def preempt_group(
        self,
        group_uid: str,
        group_key: str,
        members: Sequence[PodInfo],
        victims: Sequence[PodInfo],
    ) -> Status | None:
        """A pod group's preemption (upstream actuatePodGroupPreemption): the domain is the
        cluster, so the Events say "on node cluster" and no nomination is cleared."""
        scheduler = members[0].scheduler_name if members else ""
        who = _Preemptor(group_uid, group_key, scheduler, "podgroup", tuple(members))
        return self._start(who, "cluster", victims, ())

    def _start(
        self,
        preemptor: _Preemptor,
        node_name: str,
        victims: Sequence[PodInfo],
        lower_priority_nominated: Sequence[PodInfo],
    ) -> Status | None:
        to_delete = [v for v in victims if not v.deleting]
        if not to_delete:
            return None
        self._settle_finished()
        with self._lock:
            self._forget(preemptor.uid)  # an earlier preemption's leftovers (it got through)
            self._preempting.add(preemptor.uid)
        try:
            self._runs.submit(self._run, preemptor, node_name, to_delete, lower_priority_nominated)
        except RuntimeError:  # shut down meanwhile: the engine is stopping
            with self._lock:
                self._preempting.discard(preemptor.uid)
        return None

    def may_evict(self, pod: PodInfo) -> bool:
        return self._may_evict(pod)

    def is_running_preemption(self, uid: str) -> bool:
        """Whether ``uid``'s preemption is still under way (upstream ``IsPodRunningPreemption``,
        read against the cache: see the module's docstring)."""
        with self._lock:
            if uid not in self._preempting:
                return False
            last = self._last_victim.get(uid)
        if last is None:
            return True
        if not self._going(last):
            return True
        with self._lock:
            if uid in self._finished:  # the worker is done and the cache has caught up
                self._forget(uid)
        return False

    def _going(self, victim_uid: str) -> bool:
        """The victim is out of the cache, or terminating and not about to leave it."""
        victim = self.lookup(victim_uid)
        return victim is None or (victim.deleting and not _removal_imminent(victim))

    def _settle_finished(self) -> None:
        """Forget finished preemptions whose last victim is going (their preemptor may have
        been deleted or bound without asking the gate again)."""
        with self._lock:
            finished = [(uid, self._last_victim.get(uid)) for uid in self._finished]
        for uid, last in finished:
            if last is None or self._going(last):
                with self._lock:
                    self._forget(uid)

    def _forget(self, uid: str) -> None:
        """Unmark ``uid`` (lock held)."""
        self._preempting.discard(uid)
        self._last_victim.pop(uid, None)
        self._finished.discard(uid)

    def close(self) -> None:
        """Stop taking preemptions; calls already sent finish on their own."""
        self._runs.shutdown(wait=False, cancel_futures=True)
        self._calls.shutdown(wait=False, cancel_futures=True)

    # --- workers ----------------------------------------------------------------------------

    def _run(
        self,
        preemptor: _Preemptor,
        node_name: str,
        victims: list[PodInfo],
        lower_priority_nominated: Sequence[PodInfo],
    ) -> None:
        stranded = False  # no deletion event of ours may come to requeue the preemptor
        try:
            self.clear_nominated_node_name(lower_priority_nominated)
            *first, last = victims
            errors = [
                e
                for e in self._calls.map(lambda v: self._error_of(preemptor, node_name, v), first)
                if e is not None
            ]
            if errors:
                stranded = True
                log.error("preempting for %s: %s", preemptor.key, errors[0])
            else:
                with self._lock:
                    self._last_victim[preemptor.uid] = last.uid
                stranded = not self._preempt_one(preemptor, node_name, last)
        except VictimError as exc:
            stranded = True
            log.error("preempting for %s: %s", preemptor.key, exc)
        except Exception:  # a bug here must not leave the preemptor gated for ever
            stranded = True
            log.exception("preempting for %s", preemptor.key)
        finally:
            with self._lock:
                if stranded or preemptor.uid not in self._last_victim:
                    self._forget(preemptor.uid)
                else:  # until the cache shows the last victim going
                    self._finished.add(preemptor.uid)
            if not stranded and preemptor.uid in self._finished:
                self.is_running_preemption(preemptor.uid)  # settled already if it is going
        if stranded:
            for member in preemptor.members:
                self.activate(member)

    def _error_of(self, preemptor: _Preemptor, node_name: str, victim: PodInfo) -> str | None:
        """:meth:`_preempt_one`'s error message, or None."""
        try:
            self._preempt_one(preemptor, node_name, victim)
        except VictimError as exc:
            return str(exc)
        return None

    def _preempt_one(self, preemptor: _Preemptor, node_name: str, victim: PodInfo) -> bool:
        """The condition, the delete, the Event. True when our delete took the victim (its
        deletion event follows), False when it was gone already; raises :class:`VictimError`."""
        base = f"/api/v1/namespaces/{victim.namespace}/pods/{victim.name}"
        condition = {
            "type": "DisruptionTarget",
            "status": "True",
            "reason": REASON_PREEMPTION_BY_SCHEDULER,
            "message": f"{preemptor.scheduler_name}: preempting to accommodate a higher "
            f"priority {preemptor.kind}",
            "lastTransitionTime": datetime.now(tz=UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        }
        try:
            self._call("PATCH", f"{base}/status", {"status": {"conditions": [condition]}})
            self._call("DELETE", base, {"apiVersion": "v1", "kind": "DeleteOptions",
                                        "preconditions": {"uid": victim.uid}})  # fmt: skip
        except ApiError as exc:
            if exc.not_found or exc.conflict:
                return False  # already gone (or replaced by a namesake): nothing to preempt
            raise VictimError(f"preempting {victim.key}: {exc}") from exc
        except NotLeaderError as exc:
            raise VictimError(f"preempting {victim.key}: {exc}") from exc
        note = f"Preempted by {preemptor.kind} {preemptor.uid} on node {node_name}"
        self.events(victim, "Normal", REASON_PREEMPTED, "Preempting", note)
        log.info("Preempted pod", extra=fields(
            pod=victim.key, preemptor=preemptor.key, node=node_name))  # fmt: skip
        return True

    def _call(self, method: str, path: str, body: object) -> None:
        self.bucket.wait(method)
        self.fence.check(f"{method} {path}")
        content = CONTENT_STRATEGIC_MERGE_PATCH if method == "PATCH" else "application/json"
        self.client.request(method, path, body=body, content_type=content)

    def clear_nominated_node_name(self, pods: Sequence[PodInfo]) -> None:
        for pod in pods:
            self.nominator.forget(pod.uid)
            path = f"/api/v1/namespaces/{pod.namespace}/pods/{pod.name}/status"
            try:
                self._call("PATCH", path, {"status": {"nominatedNodeName": None}})
            except NotLeaderError as exc:
                log.warning("clearing the nomination of %s: %s", pod.key, exc)
            except ApiError as exc:
                if not exc.not_found:
                    log.warning("clearing the nomination of %s: %s", pod.key, exc)
