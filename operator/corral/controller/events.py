"""Kubernetes Events: one per status transition of a profile, and the pending-pod detector's.

Contract: events are announcements, the truth is in status (events expire after about an
hour). Posting never fails a reconcile: a refused or failed post is logged and dropped.
Events about a cluster-scoped object (a profile) go to the ``default`` namespace, as the
Kubernetes components do for nodes, which is where ``kubectl describe`` finds them. Tenants
seldom can read ``default``, so a profile's events are also posted, once each, in every
namespace its ``tenancy.namespaces`` lists, where the tenant reads them (``kubectl get events``;
the API server accepts an event in a namespace only when its involvedObject names that
namespace, so those copies do, though a profile belongs to none).
"""

from __future__ import annotations

import datetime
import logging
import socket
from collections.abc import Mapping
from typing import Any, Final, Literal

from corral.api import API_VERSION, KIND
from corral.k8s import ApiError, Client

COMPONENT: Final = "corral-operator"
CLUSTER_EVENT_NAMESPACE: Final = "default"
MAX_MESSAGE: Final = 1024  # the API refuses longer event messages

EventType = Literal["Normal", "Warning"]

log = logging.getLogger(__name__)


def now_rfc3339() -> str:
    return datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def profile_ref(body: Mapping[str, Any]) -> dict[str, str]:
    meta = body.get("metadata") or {}
    return {
        "apiVersion": API_VERSION,
        "kind": KIND,
        "name": str(meta.get("name", "")),
        "uid": str(meta.get("uid", "")),
        "resourceVersion": str(meta.get("resourceVersion", "")),
    }


def tenant_namespaces(body: Mapping[str, Any]) -> list[str]:
    """The namespaces a profile's events are copied to: its ``tenancy.namespaces``."""
    tenancy = (body.get("spec") or {}).get("tenancy") or {}
    listed = tenancy.get("namespaces") if isinstance(tenancy, Mapping) else None
    return sorted({str(n) for n in listed}) if isinstance(listed, list) else []


def pod_ref(namespace: str, name: str, uid: str) -> dict[str, str]:
    return {"apiVersion": "v1", "kind": "Pod", "namespace": namespace, "name": name, "uid": uid}


def event_object(
    involved: Mapping[str, str],
    event_type: EventType,
    reason: str,
    message: str,
    *,
    timestamp: str,
) -> dict[str, Any]:
    namespace = involved.get("namespace") or CLUSTER_EVENT_NAMESPACE
    if len(message) > MAX_MESSAGE:
        message = message[: MAX_MESSAGE - 3] + "..."
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"generateName": f"{involved['name']}.", "namespace": namespace},
        "involvedObject": dict(involved),
        "type": event_type,
        "reason": reason,
        "message": message,
        "source": {"component": COMPONENT},
        "reportingComponent": f"corral.dev/{COMPONENT}",
        "reportingInstance": socket.gethostname(),
        "firstTimestamp": timestamp,
        "lastTimestamp": timestamp,
        "count": 1,
    }


class Recorder:
    """Posts events with one client; what was posted is kept for tests and the demo."""

    def __init__(self, client: Client) -> None:
        self._client = client

    def post(
        self,
        involved: Mapping[str, str],
        event_type: EventType,
        reason: str,
        message: str,
    ) -> None:
        obj = event_object(involved, event_type, reason, message, timestamp=now_rfc3339())
        try:
            self._client.create(obj)
        except ApiError as exc:
            log.warning(
                "could not post event %s on %s in %s: %s",
                reason,
                involved.get("name"),
                obj["metadata"]["namespace"],
                exc,
            )

    def post_profile(
        self,
        body: Mapping[str, Any],
        event_type: EventType,
        reason: str,
        message: str,
    ) -> None:
        """An event about a profile: in ``default``, and a copy in each tenant namespace."""
        ref = profile_ref(body)
        self.post(ref, event_type, reason, message)
        for namespace in tenant_namespaces(body):
            self.post({**ref, "namespace": namespace}, event_type, reason, message)
