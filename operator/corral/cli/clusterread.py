"""A snapshot of a live cluster, read with the caller's own credentials: what the engine's
informers would read, as one ``kind: List``.

Contract:

- What is read: Nodes, Pods that are not finished (the engine's field selector), Namespaces,
  PriorityClasses (admission resolves a new pod's priority from them), and the kinds the given
  plugins declare they read (:func:`corral.scheduler.backend.objects.kinds_for`, the same
  derivation as the engine's informers: PVs, PVCs, storage classes, CSI capacity, DRA objects,
  PDBs, and whatever a plugin adds, pod groups and quotas included, once declared).
- Read-only: ``list`` requests only.
- A tenant: every kind is listed cluster-wide first; a namespaced kind the caller may not list
  there is listed in each namespace of ``namespaces`` instead (a tenant's own), and what could
  not be read is kept in :attr:`ClusterSnapshot.unread` (kind, where, the API server's words),
  never guessed. A kind the server does not serve (an older API server) is left out likewise.
- The List carries where and when it was read, and what was not, in its annotations, so a saved
  snapshot replayed offline says the same.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from corral.cli.problems import UsageError
from corral.k8s import ApiError, Client
from corral.k8s.client import KubeconfigError
from corral.scheduler.backend.objects import WATCHED_KINDS
from corral.scheduler.framework import listers
from corral.yamlload import YamlError

NODE: Final = "Node"
POD: Final = "Pod"
PATHS: Final[Mapping[str, str]] = {NODE: "/api/v1/nodes", POD: "/api/v1/pods", **WATCHED_KINDS}
NAMESPACED: Final = frozenset(
    {
        POD,
        listers.SERVICE,
        listers.REPLICATION_CONTROLLER,
        listers.REPLICA_SET,
        listers.STATEFUL_SET,
        listers.PERSISTENT_VOLUME_CLAIM,
        listers.CSI_STORAGE_CAPACITY,
        listers.POD_DISRUPTION_BUDGET,
        listers.RESOURCE_CLAIM,
    }
)
ALWAYS: Final = (NODE, POD, listers.NAMESPACE, listers.PRIORITY_CLASS)
NON_TERMINAL: Final = "status.phase!=Succeeded,status.phase!=Failed"
ANNOTATION: Final = "corral.dev/snapshot"
UNREAD_ANNOTATION: Final = "corral.dev/snapshot-unread"


def client_of(kubeconfig: str | None, context: str | None) -> Client:
    """The caller's client: ``--kubeconfig`` (else ``$KUBECONFIG``, ``~/.kube/config``) and
    ``--context``; a :class:`UsageError` when none can be loaded."""
    try:
        return Client.from_kubeconfig(kubeconfig, context)
    except (KubeconfigError, YamlError, OSError) as exc:
        raise UsageError(f"cannot load credentials: {exc}") from None


def forbidden_text(what: str, exc: ApiError) -> str:
    return f"not allowed to read {what}: {exc.message or exc.reason}"


def api_version_of(path: str) -> str:
    """``/api/v1/pods`` -> ``v1``; ``/apis/apps/v1/replicasets`` -> ``apps/v1``."""
    parts = path.strip("/").split("/")
    return parts[1] if parts[0] == "api" else f"{parts[1]}/{parts[2]}"


def namespaced_path(path: str, namespace: str) -> str:
    head, _, resource = path.rpartition("/")
    return f"{head}/namespaces/{namespace}/{resource}"


@dataclass(frozen=True)
class Unread:
    kind: str
    where: str  # "cluster-wide", "outside namespace(s) team-a", "in namespace team-b"
    reason: str

    def __str__(self) -> str:
        return f"could not read {self.kind} {self.where}: {self.reason}"


@dataclass
class ClusterSnapshot:
    server: str
    items: list[dict[str, Any]] = field(default_factory=list)
    unread: list[Unread] = field(default_factory=list)
    taken: str = ""

    def as_list(self) -> dict[str, Any]:
        annotations = {ANNOTATION: f"{self.server} at {self.taken}"}
        if self.unread:
            annotations[UNREAD_ANNOTATION] = "; ".join(str(u) for u in self.unread)
        return {
            "apiVersion": "v1",
            "kind": "List",
            "metadata": {"annotations": annotations},
            "items": self.items,
        }

    def count(self, kind: str) -> int:
        return sum(1 for item in self.items if item.get("kind") == kind)


def unread_of(listing: Mapping[str, Any]) -> list[str]:
    """The ``unread`` lines a saved snapshot carries."""
    meta = listing.get("metadata")
    annotations = meta.get("annotations") if isinstance(meta, Mapping) else None
    text = annotations.get(UNREAD_ANNOTATION) if isinstance(annotations, Mapping) else None
    return [part for part in str(text).split("; ") if part] if text else []


PROFILES: Final = "/apis/corral.dev/v1alpha1/schedulerprofiles"
PROFILE_KIND: Final = "SchedulerProfile"


def read_profiles(client: Client) -> tuple[list[dict[str, Any]], list[Unread]]:
    """The cluster's SchedulerProfiles (Corral's schedulers), if the caller may list them."""
    try:
        listing = client.request("GET", PROFILES)
    except ApiError as exc:
        if exc.not_found:  # Corral is not installed there: no profile to run
            return [], []
        if not exc.forbidden:
            raise UsageError(f"listing SchedulerProfiles: {exc}") from None
        return [], [Unread(PROFILE_KIND, "cluster-wide", forbidden_text(PROFILE_KIND, exc))]
    snapshot = ClusterSnapshot(client.server)
    _add(snapshot, PROFILE_KIND, PROFILES, listing)
    return snapshot.items, []


def read(client: Client, kinds: Iterable[str], namespaces: Sequence[str] = ()) -> ClusterSnapshot:
    """Every object of ``kinds`` (and :data:`ALWAYS`) the caller may list."""
    snapshot = ClusterSnapshot(
        client.server, taken=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    )
    wanted = list(dict.fromkeys([*ALWAYS, *kinds]))
    for kind in wanted:
        path = PATHS[kind]
        params = {"fieldSelector": NON_TERMINAL} if kind == POD else {}
        try:
            _add(snapshot, kind, path, client.request("GET", path, params=params))
            continue
        except ApiError as exc:
            if exc.not_found:
                snapshot.unread.append(
                    Unread(kind, "cluster-wide", "the API server does not serve it")
                )
                continue
            if not exc.forbidden:
                raise UsageError(f"listing {kind}: {exc}") from None
            denied = exc
        if kind not in NAMESPACED or not namespaces:
            snapshot.unread.append(Unread(kind, "cluster-wide", forbidden_text(kind, denied)))
            continue
        snapshot.unread.append(
            Unread(
                kind, f"outside namespace(s) {', '.join(namespaces)}", forbidden_text(kind, denied)
            )
        )
        for ns in namespaces:
            try:
                listing = client.request("GET", namespaced_path(path, ns), params=params)
            except ApiError as exc:
                if not (exc.forbidden or exc.not_found):
                    raise UsageError(f"listing {kind} in {ns}: {exc}") from None
                snapshot.unread.append(
                    Unread(kind, f"in namespace {ns}", forbidden_text(kind, exc))
                )
                continue
            _add(snapshot, kind, path, listing)
    return snapshot


def _add(snapshot: ClusterSnapshot, kind: str, path: str, listing: Mapping[str, Any]) -> None:
    version = api_version_of(path)
    for item in listing.get("items") or ():
        if isinstance(item, Mapping):
            snapshot.items.append({"apiVersion": version, "kind": kind, **item})
