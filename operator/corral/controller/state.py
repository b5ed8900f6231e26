"""What the operator knows from its watches: profiles, their children, what it last applied.

Contract: watch handlers (the event loop) write, reconcile workers (threads) read; every access
holds one lock and returns copies or immutable values, never live dicts. Nothing here talks to
the API server. Children are keyed ``(apiVersion, kind, namespace, name)`` (namespace ``""``
for cluster-scoped objects).
"""

from __future__ import annotations

import copy
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from corral.controller import guards
from corral.render import names

ChildKey = tuple[str, str, str, str]
Body = dict[str, Any]

# The kinds a profile renders to: (group, version, plural, apiVersion, kind). The operator
# watches exactly these, server-side filtered by MANAGED_SELECTOR.
CHILD_KINDS: Final = (
    ("", "v1", "serviceaccounts", "v1", "ServiceAccount"),
    ("", "v1", "configmaps", "v1", "ConfigMap"),
    ("", "v1", "services", "v1", "Service"),
    ("apps", "v1", "deployments", "apps/v1", "Deployment"),
    ("policy", "v1", "poddisruptionbudgets", "policy/v1", "PodDisruptionBudget"),
    ("rbac.authorization.k8s.io", "v1", "roles", "rbac.authorization.k8s.io/v1", "Role"),
    (
        "rbac.authorization.k8s.io",
        "v1",
        "rolebindings",
        "rbac.authorization.k8s.io/v1",
        "RoleBinding",
    ),
    (
        "rbac.authorization.k8s.io",
        "v1",
        "clusterroles",
        "rbac.authorization.k8s.io/v1",
        "ClusterRole",
    ),
    (
        "rbac.authorization.k8s.io",
        "v1",
        "clusterrolebindings",
        "rbac.authorization.k8s.io/v1",
        "ClusterRoleBinding",
    ),
)
MANAGED_SELECTOR: Final = f"app.kubernetes.io/managed-by={names.MANAGED_BY}"


def key_of(obj: Mapping[str, Any]) -> ChildKey:
    meta = obj.get("metadata") or {}
    return (
        str(obj.get("apiVersion", "")),
        str(obj.get("kind", "")),
        str(meta.get("namespace") or ""),
        str(meta.get("name", "")),
    )


def describe(key: ChildKey) -> str:
    _, kind, namespace, name = key
    return f"{kind} {namespace}/{name}" if namespace else f"{kind} {name}"


def newer(candidate: str, current: str) -> bool:
    """Whether resourceVersion ``candidate`` is newer than ``current``. resourceVersions are
    opaque by contract, but every apiserver backed by etcd uses the store's revision, an
    integer; anything else is treated as newer so that the latest event wins."""
    if candidate.isdigit() and current.isdigit():
        return int(candidate) >= int(current)
    return True


@dataclass(frozen=True, slots=True)
class LiveChild:
    resource_version: str
    profile: str
    generation: int = 0
    status: Mapping[str, Any] = field(default_factory=dict)


class State:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._profiles: dict[str, Body] = {}
        self._children: dict[ChildKey, LiveChild] = {}
        # key -> (digest of the object last applied, resourceVersion the apply returned)
        self._applied: dict[ChildKey, tuple[str, str]] = {}

    # --- profiles --------------------------------------------------------------------------

    def put_profile(self, body: Mapping[str, Any]) -> guards.Claim | None:
        """Store a profile body unless an older version of it; return the claim it replaced."""
        name = str(body["metadata"]["name"])
        rv = str(body["metadata"].get("resourceVersion", ""))
        with self._lock:
            old = self._profiles.get(name)
            if old is not None and not newer(rv, str(old["metadata"].get("resourceVersion", ""))):
                return guards.claim_of(old)
            self._profiles[name] = copy.deepcopy(dict(body))
            return guards.claim_of(old) if old is not None else None

    def drop_profile(self, name: str) -> guards.Claim | None:
        with self._lock:
            old = self._profiles.pop(name, None)
            return guards.claim_of(old) if old is not None else None

    def profile(self, name: str) -> Body | None:
        with self._lock:
            body = self._profiles.get(name)
            return copy.deepcopy(body) if body is not None else None

    def profile_names(self) -> list[str]:
        with self._lock:
            return sorted(self._profiles)

    def claims(self) -> list[guards.Claim]:
        with self._lock:
            return [guards.claim_of(b) for b in self._profiles.values()]

    def profiles(self) -> list[Body]:
        with self._lock:
            return [copy.deepcopy(b) for b in self._profiles.values()]

    # --- children --------------------------------------------------------------------------

    def put_child(self, obj: Mapping[str, Any]) -> str | None:
        """Record a child from a watch event or an apply answer; return its profile's name."""
        meta = obj.get("metadata") or {}
        profile = (meta.get("labels") or {}).get(names.PROFILE_LABEL)
        if not profile:
            return None
        key = key_of(obj)
        rv = str(meta.get("resourceVersion", ""))
        live = LiveChild(
            resource_version=rv,
            profile=str(profile),
            generation=int(meta.get("generation") or 0),
            status=copy.deepcopy(obj.get("status") or {}),
        )
        with self._lock:
            current = self._children.get(key)
            if current is None or newer(rv, current.resource_version):
                self._children[key] = live
        return str(profile)

    def drop_child(self, obj: Mapping[str, Any]) -> str | None:
        key = key_of(obj)
        with self._lock:
            live = self._children.pop(key, None)
        return live.profile if live is not None else None

    def child(self, key: ChildKey) -> LiveChild | None:
        with self._lock:
            return self._children.get(key)

    def children_of(self, profile: str) -> list[ChildKey]:
        with self._lock:
            return sorted(k for k, v in self._children.items() if v.profile == profile)

    # --- what was applied ------------------------------------------------------------------

    def applied(self, key: ChildKey) -> tuple[str, str] | None:
        with self._lock:
            return self._applied.get(key)

    def record_apply(self, key: ChildKey, digest: str, resource_version: str) -> None:
        with self._lock:
            self._applied[key] = (digest, resource_version)

    def forget_applied(self, keys: list[ChildKey]) -> None:
        with self._lock:
            for key in keys:
                self._applied.pop(key, None)
