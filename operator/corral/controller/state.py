"""What the operator knows from its watches: profiles, their children, what it last applied.

Contract: watch handlers (the event loop) write, reconcile workers (threads) read; every access
holds one lock and returns copies or immutable values, never live dicts. Nothing here talks to
the API server. Children are keyed ``(apiVersion, kind, namespace, name)`` (namespace ``""``
for cluster-scoped objects).

At fleet size every lookup a profile event or a reconcile makes is indexed: each profile's
guard claim is computed once per version, profiles are indexed by schedulerName, Lease name and
whether they have a node pool (:meth:`State.rivals`), by the plugins they enable
(:meth:`State.any_enables`), and children by their profile. Scanning
every profile or child instead made each event cost O(profiles), so applying n profiles cost
O(n²) (bench.operator_apply).
"""

from __future__ import annotations

import copy
import hashlib
import json
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final, TypeVar

from corral.controller import guards
from corral.render import names

ChildKey = tuple[str, str, str, str]
Body = dict[str, Any]
T = TypeVar("T")

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


# Metadata every write changes, whoever makes it: left out of a child's content.
VOLATILE_METADATA: Final = frozenset({"resourceVersion", "managedFields"})


def content_digest(obj: Mapping[str, Any]) -> str:
    """A digest of what an object says apart from its status and the metadata every write
    changes (resourceVersion, managedFields): equal before and after a status-only update,
    such as the Deployment controller's."""
    meta = obj.get("metadata") or {}
    kept = {k: v for k, v in obj.items() if k not in ("status", "metadata")}
    kept["metadata"] = {k: v for k, v in meta.items() if k not in VOLATILE_METADATA}
    return hashlib.sha256(json.dumps(kept, sort_keys=True).encode()).hexdigest()


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
    content: str = ""  # content_digest of the object


class State:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._profiles: dict[str, Body] = {}
        self._claims: dict[str, guards.Claim] = {}
        # name -> profiles: by schedulerName, by Lease name; those with a node pool
        self._by_scheduler: dict[str, set[str]] = {}
        self._by_lease: dict[str, set[str]] = {}
        self._with_pool: set[str] = set()
        # plugin name -> the profiles whose spec.plugins enable it explicitly
        self._enabling: dict[str, set[str]] = {}
        self._children: dict[ChildKey, LiveChild] = {}
        self._children_by_profile: dict[str, set[ChildKey]] = {}
        # key -> (digest of the object last applied, content_digest of the apply's answer)
        self._applied: dict[ChildKey, tuple[str, str]] = {}

    # --- profiles --------------------------------------------------------------------------

    def put_profile(self, body: Mapping[str, Any]) -> guards.Claim | None:
        """Store a profile body unless an older version of it; return the claim it replaced."""
        name = str(body["metadata"]["name"])
        rv = str(body["metadata"].get("resourceVersion", ""))
        with self._lock:
            old = self._profiles.get(name)
            if old is not None and not newer(rv, str(old["metadata"].get("resourceVersion", ""))):
                return self._claims[name]
            before = self._unindex(name)
            self._profiles[name] = copy.deepcopy(dict(body))
            self._index(guards.claim_of(body))
            for plugin in explicitly_enabled(body):
                self._enabling.setdefault(plugin, set()).add(name)
            return before

    def holds_profile(self, body: Mapping[str, Any]) -> bool:
        """Whether this very version (resourceVersion) of the profile is stored already: the
        answer to the operator's own status write, which the watch then sends again."""
        meta = body["metadata"]
        with self._lock:
            old = self._profiles.get(str(meta["name"]))
            return old is not None and _same_version(old, meta)

    def drop_profile(self, name: str) -> guards.Claim | None:
        with self._lock:
            self._profiles.pop(name, None)
            return self._unindex(name)

    def _index(self, claim: guards.Claim) -> None:
        """(Lock held.)"""
        self._claims[claim.profile] = claim
        self._by_scheduler.setdefault(claim.scheduler_name, set()).add(claim.profile)
        if claim.lease is not None:
            self._by_lease.setdefault(claim.lease[1], set()).add(claim.profile)
        if claim.node_selector:
            self._with_pool.add(claim.profile)

    def _unindex(self, name: str) -> guards.Claim | None:
        """(Lock held.) Remove ``name`` from the indexes; return its claim."""
        claim = self._claims.pop(name, None)
        if claim is None:
            return None
        _discard(self._by_scheduler, claim.scheduler_name, name)
        if claim.lease is not None:
            _discard(self._by_lease, claim.lease[1], name)
        self._with_pool.discard(name)
        for plugin in [p for p, holders in self._enabling.items() if name in holders]:
            _discard(self._enabling, plugin, name)
        return claim

    def profile(self, name: str) -> Body | None:
        with self._lock:
            body = self._profiles.get(name)
            return copy.deepcopy(body) if body is not None else None

    def any_enables(self, plugin: str) -> bool:
        """Whether some stored profile enables ``plugin`` explicitly (indexed: no profile is
        read or copied)."""
        with self._lock:
            return bool(self._enabling.get(plugin))

    def profile_names(self) -> list[str]:
        with self._lock:
            return sorted(self._profiles)

    def generations(self) -> dict[str, int]:
        """Each profile's ``metadata.generation`` (0 when unset), by name, in name order."""
        with self._lock:
            return {
                name: int(self._profiles[name]["metadata"].get("generation") or 0)
                for name in sorted(self._profiles)
            }

    def claims(self) -> list[guards.Claim]:
        with self._lock:
            return list(self._claims.values())

    def rivals(self, versions: list[guards.Claim]) -> list[guards.Claim]:
        """The claims a guard comparing ``versions`` (of one profile) can find relevant: those
        sharing a schedulerName or a Lease name with one of them, and, when one has a node
        pool, every one with a pool. A superset of what :func:`guards.related`,
        ``name_holder``, ``lease_holder`` and ``overlapping`` select, found from the indexes."""
        with self._lock:
            found: set[str] = set()
            for v in versions:
                found |= self._by_scheduler.get(v.scheduler_name, set())
                if v.lease is not None:
                    found |= self._by_lease.get(v.lease[1], set())
                if v.node_selector:
                    found |= self._with_pool
            return [self._claims[name] for name in sorted(found)]

    def each_profile(self, read: Callable[[Mapping[str, Any]], T]) -> list[T]:
        """``read`` of every stored profile body, without copying the bodies: for the loops
        that look at every profile each second or so (copying a fleet's bodies each time was
        most of the operator's CPU at 300 profiles, bench.operator_apply). ``read`` runs under
        the lock and must neither keep nor change the body; its answers are copied."""
        with self._lock:
            return [copy.deepcopy(read(b)) for b in self._profiles.values()]

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
            content=content_digest(obj),
        )
        with self._lock:
            current = self._children.get(key)
            if current is None or newer(rv, current.resource_version):
                if current is not None and current.profile != live.profile:
                    _discard(self._children_by_profile, current.profile, key)
                self._children[key] = live
                self._children_by_profile.setdefault(live.profile, set()).add(key)
        return str(profile)

    def holds_child(self, obj: Mapping[str, Any]) -> bool:
        """Whether this very version of the child is stored already: an apply's answer, which
        the watch then sends again."""
        meta = obj.get("metadata") or {}
        with self._lock:
            live = self._children.get(key_of(obj))
        rv = str(meta.get("resourceVersion", ""))
        return live is not None and rv != "" and live.resource_version == rv

    def drop_child(self, obj: Mapping[str, Any]) -> str | None:
        key = key_of(obj)
        with self._lock:
            live = self._children.pop(key, None)
            if live is not None:
                _discard(self._children_by_profile, live.profile, key)
        return live.profile if live is not None else None

    def child(self, key: ChildKey) -> LiveChild | None:
        with self._lock:
            return self._children.get(key)

    def children_of(self, profile: str) -> list[ChildKey]:
        with self._lock:
            return sorted(self._children_by_profile.get(profile, ()))

    # --- what was applied ------------------------------------------------------------------

    def applied(self, key: ChildKey) -> tuple[str, str] | None:
        with self._lock:
            return self._applied.get(key)

    def record_apply(self, key: ChildKey, digest: str, content: str) -> None:
        with self._lock:
            self._applied[key] = (digest, content)

    def forget_applied(self, keys: list[ChildKey]) -> None:
        with self._lock:
            for key in keys:
                self._applied.pop(key, None)


def explicitly_enabled(body: Mapping[str, Any]) -> frozenset[str]:
    """The plugin names an ``enabled`` list of the profile's ``spec.plugins`` names, at any
    extension point (multiPoint included)."""
    spec = body.get("spec")
    plugins = spec.get("plugins") if isinstance(spec, Mapping) else None
    if not isinstance(plugins, Mapping):
        return frozenset()
    return frozenset(
        str(entry["name"])
        for point in plugins.values()
        if isinstance(point, Mapping) and isinstance(point.get("enabled"), list)
        for entry in point["enabled"]
        if isinstance(entry, Mapping) and isinstance(entry.get("name"), str)
    )


def _same_version(body: Body, meta: Mapping[str, Any]) -> bool:
    rv = str(meta.get("resourceVersion", ""))
    return rv != "" and str(body["metadata"].get("resourceVersion", "")) == rv


def _discard(index: dict[str, set[Any]], key: str, value: Any) -> None:
    members = index.get(key)
    if members is not None:
        members.discard(value)
        if not members:
            del index[key]
