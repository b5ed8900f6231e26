"""The status of scheduler-plugins' PodGroups (``scheduling.x-k8s.io/v1alpha1``), as SP's
controller keeps it (``pkg/controllers/podgroup_controller.go``), run by the operator while some
SchedulerProfile enables Coscheduling.

:func:`next_status` is one reconcile of one group, from the group and its pods:

- Finished and Failed are terminal: never reconciled again.
- Pending or Scheduling with no pod running, and ``scheduleStartTime`` more than 48 hours after
  the group's creation: a Warning ``Timeout`` Event ("schedule time longer than 48 hours"), and
  nothing else.
- ``""`` → Pending. Pending → Scheduling once at least ``minMember`` pods exist; ``occupiedBy``
  is then the sorted ``namespace/owner`` names of the first pod's owners.
- Otherwise ``running``, ``succeeded`` and ``failed`` are counted, and in this order: fewer pods
  than ``minMember`` → Pending; running + succeeded below ``minMember`` → Scheduling; else
  Running; some failed and failed + running + succeeded at least ``minMember`` → Failed;
  succeeded at least ``minMember`` → Finished.

Corral's two fixes (SP's controller does neither): the pods counted are those of the group's own
namespace (SP lists the label in every namespace, so same-named groups count each other's
pods), and ``scheduleStartTime`` is set when the group first becomes Scheduling (SP never sets
it, so its 48-hour Timeout cannot fire).

:class:`PodGroupStatusController` watches PodGroups (optional: without the CRD it lists none)
and the pods carrying the label, and patches a group's ``status`` subresource whenever
:func:`next_status` changes it. Each write triggers a watch event, so a group steps through its
phases one reconcile at a time, as SP's does.
"""

from __future__ import annotations

import asyncio
import datetime
import logging
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from corral.controller.state import explicitly_enabled
from corral.k8s import CONTENT_MERGE_PATCH, ApiError
from corral.k8s.aio import AsyncClient
from corral.k8s.informer import EventType, Informer
from corral.scheduler.config.object_fields import object_field

log = logging.getLogger(__name__)

COSCHEDULING: Final = "Coscheduling"
POD_GROUP_LABEL: Final = "scheduling.x-k8s.io/pod-group"
API: Final = "/apis/scheduling.x-k8s.io/v1alpha1"
PODGROUPS_PATH: Final = f"{API}/podgroups"
PENDING: Final = "Pending"
SCHEDULING: Final = "Scheduling"
RUNNING: Final = "Running"
FINISHED: Final = "Finished"
FAILED: Final = "Failed"
TIMEOUT_SECONDS: Final = 48 * 3600.0
TIMEOUT_REASON: Final = "Timeout"
TIMEOUT_MESSAGE: Final = "schedule time longer than 48 hours"

JSON = Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class Outcome:
    status: dict[str, Any] | None = None  # the group's new status, when it changed
    event: tuple[str, str] | None = None  # (reason, message) of a Warning Event to post


def _time(value: object) -> float | None:
    if not isinstance(value, str) or not value:
        return None
    try:
        return datetime.datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def _rfc3339(at: float) -> str:
    return datetime.datetime.fromtimestamp(at, datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def occupied_by(pod: JSON) -> str | None:
    """SP ``fillOccupiedObj``: the pod's owners as sorted ``namespace/name``, joined by commas;
    None for a pod without owners."""
    meta = pod.get("metadata") or {}
    refs = sorted(f"{meta.get('namespace', '')}/{o.get('name', '')}"
                  for o in meta.get("ownerReferences") or ())  # fmt: skip
    return ",".join(refs) if refs else None


def pod_counts(pods: Sequence[JSON]) -> tuple[int, int, int]:
    """(running, succeeded, failed), by ``status.phase``."""
    phases = [(p.get("status") or {}).get("phase") for p in pods]
    return phases.count("Running"), phases.count("Succeeded"), phases.count("Failed")


class MalformedGroupError(ValueError):
    """A field the reconcile reads has the wrong JSON type (the CRD's schema refuses it)."""


def next_status(group: JSON, pods: Sequence[JSON], now: float) -> Outcome:
    """One reconcile of ``group`` given the pods of its namespace that carry its label.
    Raises :class:`MalformedGroupError` for a group whose ``metadata``, ``spec``, ``status``
    or ``spec.minMember`` has the wrong JSON type."""
    meta = object_field(group, "metadata", MalformedGroupError)
    spec = object_field(group, "spec", MalformedGroupError)
    status: dict[str, Any] = dict(object_field(group, "status", MalformedGroupError))
    phase = str(status.get("phase") or "")
    if phase in (FINISHED, FAILED):
        return Outcome()
    created, started = _time(meta.get("creationTimestamp")), _time(status.get("scheduleStartTime"))
    if (
        phase in (SCHEDULING, PENDING)
        and not status.get("running")
        and created is not None
        and started is not None
        and started - created > TIMEOUT_SECONDS
    ):
        return Outcome(event=(TIMEOUT_REASON, TIMEOUT_MESSAGE))
    min_member = spec.get("minMember") or 0
    if isinstance(min_member, bool) or not isinstance(min_member, int):
        raise MalformedGroupError("spec.minMember: must be an integer")
    new = dict(status)
    if phase == "":
        new["phase"] = PENDING
    elif phase == PENDING:
        if len(pods) >= min_member:
            new["phase"] = SCHEDULING
            new.setdefault("scheduleStartTime", _rfc3339(now))
            first = min(
                pods, key=lambda p: str((p.get("metadata") or {}).get("name")), default=None
            )
            owners = occupied_by(first) if first is not None else None
            if owners is not None:
                new["occupiedBy"] = owners
    else:
        running, succeeded, failed = pod_counts(pods)
        new.update(running=running, succeeded=succeeded, failed=failed)
        if len(pods) < min_member:
            new["phase"] = PENDING
        else:
            new["phase"] = SCHEDULING if succeeded + running < min_member else RUNNING
            if failed and failed + running + succeeded >= min_member:
                new["phase"] = FAILED
            if succeeded >= min_member:
                new["phase"] = FINISHED
            if new["phase"] == SCHEDULING:
                new.setdefault("scheduleStartTime", _rfc3339(now))
    return Outcome(status=new if new != status else None)


def enables_coscheduling(profile: JSON) -> bool:
    """Whether a SchedulerProfile enables Coscheduling at any extension point (it is in no
    default set, so only an explicit ``enabled`` entry turns it on)."""
    return COSCHEDULING in explicitly_enabled(profile)


def _name(obj: JSON) -> str:
    return str((obj.get("metadata") or {}).get("name") or "")


def _key(obj: JSON) -> tuple[str, str]:
    meta = obj.get("metadata") or {}
    return str(meta.get("namespace") or ""), str(meta.get("name") or "")


class PodGroups:
    """The PodGroups and their labelled pods, by ``(namespace, group)``, as the watches deliver
    them; ``on_change(key)`` is told of every key whose group or pods changed."""

    def __init__(self, on_change: Callable[[tuple[str, str]], None] = lambda _: None) -> None:
        self.on_change = on_change
        self.groups: dict[tuple[str, str], JSON] = {}
        self.pods: dict[tuple[str, str], dict[str, JSON]] = {}  # by uid
        self._group_of: dict[str, tuple[str, str]] = {}  # pod uid -> (namespace, group)

    def on_group(self, kind: EventType, obj: dict[str, Any]) -> None:
        key = _key(obj)
        if kind == "DELETED":
            self.groups.pop(key, None)
        else:
            self.groups[key] = obj
            self.on_change(key)

    def on_pod(self, kind: EventType, obj: dict[str, Any]) -> None:
        meta = obj.get("metadata") or {}
        uid = str(meta.get("uid") or "")
        old = self._group_of.pop(uid, None)
        if old is not None:
            self.pods.get(old, {}).pop(uid, None)
            self.on_change(old)
        label = str((meta.get("labels") or {}).get(POD_GROUP_LABEL) or "")
        if kind == "DELETED" or not label:
            return
        key = (str(meta.get("namespace") or ""), label)
        self.pods.setdefault(key, {})[uid] = obj
        self._group_of[uid] = key
        self.on_change(key)

    def outcome(self, key: tuple[str, str], now: float) -> Outcome | None:
        """:func:`next_status` of the group at ``key`` (None: no such group)."""
        group = self.groups.get(key)
        if group is None:
            return None
        try:
            return next_status(group, list(self.pods.get(key, {}).values()), now)
        except MalformedGroupError as exc:  # left alone, as the engine's informer leaves it
            log.warning("ignoring a malformed PodGroup %s/%s: %s", *key, exc)
            return None


class PodGroupStatusController:
    """Keeps every PodGroup's status; :meth:`run` until cancelled.

    ``post_event(group, reason, message)`` posts a Warning Event about a group (None: none are
    posted); ``active()`` says whether this replica may write (a standby does not)."""

    def __init__(
        self,
        aio: AsyncClient,
        *,
        clock: Callable[[], float] = time.time,
        post_event: Callable[[JSON, str, str], None] | None = None,
        active: Callable[[], bool] = lambda: True,
    ) -> None:
        self.aio = aio
        self.clock = clock
        self.post_event = post_event
        self.active = active
        self.state = PodGroups(self._mark)
        self._dirty: set[tuple[str, str]] = set()
        self._wake = asyncio.Event()
        self._warned: set[tuple[str, str, str]] = set()  # (namespace, name, uid) timed out
        self.informers = [
            Informer(aio, PODGROUPS_PATH, self.state.on_group, optional=True),
            Informer(aio, "/api/v1/pods", self.state.on_pod, label_selector=POD_GROUP_LABEL),
        ]

    def _mark(self, key: tuple[str, str]) -> None:
        self._dirty.add(key)
        self._wake.set()

    # --- reconciling ------------------------------------------------------------------------

    async def run(self) -> None:
        tasks = [asyncio.create_task(i.run()) for i in self.informers]
        try:
            await asyncio.gather(*tasks, self._work())
        finally:
            for task in tasks:
                task.cancel()

    async def _work(self) -> None:
        while True:
            await self._wake.wait()
            self._wake.clear()
            if not self.active():
                await asyncio.sleep(1.0)
                self._wake.set()
                continue
            keys, self._dirty = sorted(self._dirty), set()
            for key in keys:
                await self.reconcile(key)

    async def reconcile(self, key: tuple[str, str]) -> None:
        outcome = self.state.outcome(key, self.clock())
        if outcome is None:
            return
        group = self.state.groups[key]
        if outcome.event is not None and self.post_event is not None:
            uid = str((group.get("metadata") or {}).get("uid") or "")
            if (*key, uid) not in self._warned:  # once per group, not on every event
                self._warned.add((*key, uid))
                self.post_event(group, *outcome.event)
        if outcome.status is None:
            return
        namespace, name = key
        path = f"{API}/namespaces/{namespace}/podgroups/{name}/status"
        try:
            await self.aio.request(
                "PATCH", path, body={"status": outcome.status}, content_type=CONTENT_MERGE_PATCH
            )
        except ApiError as exc:
            if exc.status != 404:  # deleted meanwhile: nothing to keep
                log.warning("podgroup %s/%s: status not written: %s", namespace, name, exc)
                self._mark(key)
                await asyncio.sleep(1.0)
