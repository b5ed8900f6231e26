"""Whether this operator is the active one among kopf peers (hot standby).

kopf pauses its watch handling when another live peer in the ClusterKopfPeering has a higher
or equal priority (``kopf/_core/engines/peering.py``). The operator's own background loops
(resync, pending-pod detector, local engines) are not kopf's, so they ask the same question
with the same rule before acting, and a standby never acts on stale state.
"""

from __future__ import annotations

import datetime
import time
from collections.abc import Mapping
from typing import Any, Final

from corral.k8s import ApiError, Client

PEERING_API_VERSION: Final = "kopf.dev/v1"
PEERING_KIND: Final = "ClusterKopfPeering"
CACHE_SECONDS: Final = 5.0  # kopf's peers refresh their records every lifetime/2 (30 s)


def _parse(stamp: str) -> datetime.datetime | None:
    try:
        parsed = datetime.datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=datetime.UTC)


def is_active(
    peers: Mapping[str, Any], identity: str, priority: int, now: datetime.datetime
) -> bool:
    """kopf's rule: paused while any other live peer has a priority >= ours."""
    for peer_id, info in peers.items():
        if peer_id == identity or not isinstance(info, Mapping):
            continue
        seen = _parse(str(info.get("lastseen", "")))
        lifetime = datetime.timedelta(seconds=int(info.get("lifetime", 60)))
        if seen is None or seen + lifetime <= now:
            continue  # dead
        if int(info.get("priority", 0)) >= priority:
            return False
    return True


class Gate:
    """``active()`` is always true when standalone (no peering name)."""

    def __init__(self, client: Client, peering: str | None, identity: str, priority: int) -> None:
        self.client = client
        self.peering = peering
        self.identity = identity
        self.priority = priority
        self._answer = (False, float("-inf"))

    def active(self) -> bool:
        if not self.peering:
            return True
        answer, at = self._answer
        if time.monotonic() - at < CACHE_SECONDS:
            return answer
        self._answer = (self._ask(), time.monotonic())
        return self._answer[0]

    def _ask(self) -> bool:
        if not self.peering:
            return True
        try:
            obj = self.client.get(PEERING_API_VERSION, PEERING_KIND, self.peering)
        except ApiError:
            return False  # cannot tell: do nothing rather than fight an active peer
        now = datetime.datetime.now(datetime.UTC)
        return is_active(obj.get("status") or {}, self.identity, self.priority, now)


class PeeringError(Exception):
    """The peering cannot be used (its CRD is not installed, or the operator may not use it)."""


def ensure(client: Client, name: str) -> None:
    """Create the ClusterKopfPeering ``name`` if missing; kopf only joins existing ones."""
    body = {"apiVersion": PEERING_API_VERSION, "kind": PEERING_KIND, "metadata": {"name": name}}
    try:
        client.create(body)
    except ApiError as exc:
        if exc.conflict:
            return
        raise PeeringError(
            f"cannot create {PEERING_KIND} {name!r} ({exc}); install its CRD "
            "(kubectl apply --server-side -k config/crd) or run without --peering"
        ) from None
