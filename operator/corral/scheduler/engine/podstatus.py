"""Writing the scheduler's verdict into the pod's status, as upstream does.

An unschedulable pod gets ``PodScheduled=False`` with reason ``Unschedulable`` (or
``SchedulerError``) and the FailedScheduling message; a pod for which preemption made room gets
``status.nominatedNodeName``, and a pod whose binding cycle failed has it cleared. Both are one
strategic-merge patch of the ``status`` subresource, and skipped when the pod already says
exactly that (no churn on every retry).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Final

from corral.k8s import CONTENT_STRATEGIC_MERGE_PATCH, JSON
from corral.k8s.aio import AsyncClient
from corral.scheduler.framework.api_types import Pod, PodStatus

CONDITION: Final = "PodScheduled"
REASON_UNSCHEDULABLE: Final = "Unschedulable"
REASON_SCHEDULER_ERROR: Final = "SchedulerError"


def now() -> str:
    """A ``metav1.Time`` string: RFC 3339, whole seconds, UTC."""
    return datetime.now(tz=UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def condition_patch(
    status: PodStatus, reason: str, message: str, nominated_node: str | None = None
) -> JSON | None:
    """The status patch for a failed attempt, or None if the pod already says exactly this."""
    current = next((c for c in status.get("conditions") or [] if c.get("type") == CONDITION), None)
    same_condition = (
        current is not None
        and current.get("status") == "False"
        and current.get("reason") == reason
        and current.get("message") == message
    )
    same_nomination = (
        nominated_node is None or (status.get("nominatedNodeName") or "") == nominated_node
    )
    if same_condition and same_nomination:
        return None
    patch: JSON = {}
    if not same_condition:
        if current is not None and current.get("status") == "False":
            last_transition = current.get("lastTransitionTime")  # only the message changed
        else:
            last_transition = now()
        patch["conditions"] = [
            {
                "type": CONDITION,
                "status": "False",
                "reason": reason,
                "message": message,
                "lastProbeTime": None,
                "lastTransitionTime": last_transition,
            }
        ]
    if not same_nomination:
        patch["nominatedNodeName"] = nominated_node
    return {"status": patch}


async def record_failure(
    client: AsyncClient,
    pod: Pod,
    reason: str,
    message: str,
    nominated_node: str | None = None,
) -> JSON | None:
    """Patch the pod's status with this failure; the pod as the API server returned it, or None
    when the pod already said exactly this and nothing was written."""
    patch = condition_patch(pod.get("status") or {}, reason, message, nominated_node)
    if patch is None:
        return None
    meta = pod["metadata"]
    path = f"/api/v1/namespaces/{meta['namespace']}/pods/{meta['name']}/status"
    written: JSON = await client.request(
        "PATCH", path, body=patch, content_type=CONTENT_STRATEGIC_MERGE_PATCH
    )
    return written
