"""The API side of a preemption decision (upstream ``prepareCandidate``), on the calling thread.

For each victim: the ``DisruptionTarget`` condition (reason ``PreemptionByScheduler``) so that
controllers and PDB accounting see why it goes, then the delete, then a ``Preempted`` Event.
Lower-priority pods nominated to the same node lose their nomination: the room they counted on
is the preemptor's now. A victim already gone is not an error.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from datetime import UTC, datetime

from corral.k8s import CONTENT_STRATEGIC_MERGE_PATCH, ApiError, Client
from corral.k8s.ratelimit import TokenBucket
from corral.scheduler.engine.nominator import Nominator
from corral.scheduler.framework.status import Status
from corral.scheduler.framework.types import PodInfo

# (pod, event type, reason, action, note): recorded asynchronously by the engine.
EventSink = Callable[[PodInfo, str, str, str, str], None]

log = logging.getLogger("corral.scheduler")


class ApiPreemptionExecutor:
    """Implements :class:`corral.scheduler.framework.listers.PreemptionExecutor`."""

    def __init__(
        self,
        client: Client,
        bucket: TokenBucket,
        nominator: Nominator,
        events: EventSink,
        on_preempt: Callable[[int], None] = lambda _victims: None,
    ) -> None:
        self.client = client
        self.bucket = bucket
        self.nominator = nominator
        self.events = events
        self.on_preempt = on_preempt  # called once per preemption with its number of victims

    def _call(self, method: str, path: str, body: object) -> None:
        self.bucket.wait()
        content = CONTENT_STRATEGIC_MERGE_PATCH if method == "PATCH" else "application/json"
        self.client.request(method, path, body=body, content_type=content)

    def preempt(
        self,
        preemptor: PodInfo,
        node_name: str,
        victims: Sequence[PodInfo],
        lower_priority_nominated: Sequence[PodInfo],
    ) -> Status | None:
        now = datetime.now(tz=UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        self.on_preempt(len(victims))
        for victim in victims:
            base = f"/api/v1/namespaces/{victim.namespace}/pods/{victim.name}"
            condition = {
                "type": "DisruptionTarget",
                "status": "True",
                "reason": "PreemptionByScheduler",
                "message": f"{preemptor.scheduler_name}: preempting to accommodate a higher "
                "priority pod",
                "lastTransitionTime": now,
            }
            try:
                self._call("PATCH", f"{base}/status", {"status": {"conditions": [condition]}})
                self._call("DELETE", base, {"apiVersion": "v1", "kind": "DeleteOptions",
                                            "preconditions": {"uid": victim.uid}})  # fmt: skip
            except ApiError as exc:
                if exc.not_found or exc.conflict:
                    continue  # already gone (or replaced by a namesake): nothing to preempt
                return Status.error(f"preempting {victim.key}: {exc}")
            note = f"Preempted by pod {preemptor.uid} on node {node_name}"
            self.events(victim, "Normal", "Preempted", "Preempting", note)
            log.info('Preempted pod pod="%s" preemptor="%s" node="%s"',
                     victim.key, preemptor.key, node_name)  # fmt: skip
        self.clear_nominated_node_name(lower_priority_nominated)
        return None

    def clear_nominated_node_name(self, pods: Sequence[PodInfo]) -> None:
        for pod in pods:
            self.nominator.forget(pod.uid)
            path = f"/api/v1/namespaces/{pod.namespace}/pods/{pod.name}/status"
            try:
                self._call("PATCH", path, {"status": {"nominatedNodeName": None}})
            except ApiError as exc:
                if not exc.not_found:
                    log.warning("clearing the nomination of %s: %s", pod.key, exc)
