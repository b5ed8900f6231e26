"""Why a profile's engine pods cannot start, read from the Deployment and its pods.

Contract: :func:`stuck` returns ``(reason, message)`` when the rollout needs a person to act,
else ``None`` (still progressing). It is stuck when a container waits for a reason that never
clears by itself (an image absent with ``imagePullPolicy: Never``, an invalid image name, a
broken container config), or when the Deployment controller reports
``ProgressDeadlineExceeded`` (back-offs such as ``ImagePullBackOff`` and ``CrashLoopBackOff``
get the Deployment's whole progress deadline to clear). The message names the pod, the
container, the kubelet's reason and its text, so ``kubectl get`` and GitOps tools show why.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Final

# Waiting reasons that retrying cannot fix: the spec or the node must change.
PERMANENT: Final = frozenset(
    {"ErrImageNeverPull", "InvalidImageName", "CreateContainerConfigError"}
)
DEADLINE_EXCEEDED: Final = "ProgressDeadlineExceeded"


def _waiting(pods: Iterable[Mapping[str, Any]]) -> list[tuple[str, str, str, str]]:
    """(pod, container, reason, message) of every waiting container, in pod order."""
    found = []
    for pod in pods:
        name = str(pod.get("metadata", {}).get("name", "?"))
        statuses = pod.get("status", {}).get("containerStatuses") or []
        for container in statuses:
            waiting = (container.get("state") or {}).get("waiting")
            if waiting and waiting.get("reason"):
                found.append((name, str(container.get("name", "?")), str(waiting["reason"]),
                              str(waiting.get("message") or "")))  # fmt: skip
    return found


def _describe(pod: str, container: str, reason: str, message: str) -> str:
    text = f"pod {pod} container {container}: {reason}"
    return f"{text}: {message}" if message else text


def stuck(
    deployment_status: Mapping[str, Any], pods: Iterable[Mapping[str, Any]]
) -> tuple[str, str] | None:
    waiting = _waiting(pods)
    permanent = [w for w in waiting if w[2] in PERMANENT]
    if permanent:
        return "PodsCannotStart", "engine pods cannot start: " + _describe(*permanent[0])
    for condition in deployment_status.get("conditions") or []:
        if condition.get("type") == "Progressing" and condition.get("reason") == DEADLINE_EXCEEDED:
            cause = "; ".join(_describe(*w) for w in waiting[:2]) or str(
                condition.get("message") or "no pod became ready"
            )
            return DEADLINE_EXCEEDED, f"the engine rollout missed its progress deadline: {cause}"
    return None
