"""A snapshot of a live cluster, read with the caller's own credentials: what the engine's
informers would read, as one ``kind: List``.

Contract:

- What is read: Nodes, Pods that are not finished (the engine's field selector), Namespaces,
  PriorityClasses (admission resolves a new pod's priority from them), and the kinds the given
  plugins declare they read (:func:`corral.scheduler.backend.objects.kinds_for`, the same
  derivation as the engine's informers: PVs, PVCs, storage classes, CSI capacity, DRA objects,
  PDBs, and whatever a plugin adds, quotas included, once declared); and the pod groups
  (:data:`GROUPS`): upstream's PodGroups and Workloads (``scheduling.k8s.io/v1beta1``, served
  with GenericWorkload) and scheduler-plugins' PodGroups (``scheduling.x-k8s.io/v1alpha1``,
  served once its CRD is installed), whichever the API server's discovery lists: one it does
  not serve has no object to read, so it is left out without a note (asked for anyway, a
  tenant would get a 403 for a kind that does not exist).
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


@dataclass(frozen=True)
class Source:
    """One kind to list: the items' kind, where. ``optional``: listed whenever it is served,
    left out without a note when not; its unread lines name its API too (two APIs have a
    PodGroup)."""

    kind: str
    path: str
    namespaced: bool = True
    optional: bool = False

    @property
    def name(self) -> str:
        return f"{self.kind} ({api_version_of(self.path)})" if self.optional else self.kind


GROUPS: Final = (
    Source("PodGroup", "/apis/scheduling.k8s.io/v1beta1/podgroups", optional=True),
    Source("Workload", "/apis/scheduling.k8s.io/v1beta1/workloads", optional=True),
    Source("PodGroup", "/apis/scheduling.x-k8s.io/v1alpha1/podgroups", optional=True),
)
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
    """Every object of ``kinds`` (and :data:`ALWAYS`, :data:`GROUPS`) the caller may list."""
    snapshot = ClusterSnapshot(
        client.server, taken=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    )
    # scheduler-plugins' PodGroup is one of the GROUPS, under its own kind name.
    wanted = [k for k in dict.fromkeys([*ALWAYS, *kinds]) if k != listers.SP_POD_GROUP]
    sources = [Source(kind, PATHS[kind], kind in NAMESPACED) for kind in wanted]
    for source in [*sources, *GROUPS]:
        _list(client, snapshot, source, namespaces)
    return snapshot


def _list(
    client: Client, snapshot: ClusterSnapshot, source: Source, namespaces: Sequence[str]
) -> None:
    """Add the objects of ``source`` to ``snapshot``: cluster-wide, else (forbidden, and
    namespaced) in each of ``namespaces``; what could not be read goes to its ``unread``."""
    kind, path, name = source.kind, source.path, source.name
    if source.optional and not _served(client, source):
        return
    params = {"fieldSelector": NON_TERMINAL} if kind == POD else {}
    try:
        _add(snapshot, kind, path, client.request("GET", path, params=params))
        return
    except ApiError as exc:
        if exc.not_found:
            if not source.optional:
                snapshot.unread.append(
                    Unread(name, "cluster-wide", "the API server does not serve it")
                )
            return
        if not exc.forbidden:
            raise UsageError(f"listing {name}: {exc}") from None
        denied = exc
    if not source.namespaced or not namespaces:
        snapshot.unread.append(Unread(name, "cluster-wide", forbidden_text(name, denied)))
        return
    snapshot.unread.append(
        Unread(name, f"outside namespace(s) {', '.join(namespaces)}", forbidden_text(name, denied))
    )
    for ns in namespaces:
        try:
            listing = client.request("GET", namespaced_path(path, ns), params=params)
        except ApiError as exc:
            if not (exc.forbidden or exc.not_found):
                raise UsageError(f"listing {name} in {ns}: {exc}") from None
            snapshot.unread.append(Unread(name, f"in namespace {ns}", forbidden_text(name, exc)))
            continue
        _add(snapshot, kind, path, listing)


def _served(client: Client, source: Source) -> bool:
    """Whether discovery (readable by every authenticated user) lists ``source``'s kind."""
    try:
        client.resource(api_version_of(source.path), source.kind)
    except ApiError as exc:
        if exc.not_found:
            return False
        raise UsageError(f"discovering {source.name}: {exc}") from None
    return True


def _add(snapshot: ClusterSnapshot, kind: str, path: str, listing: Mapping[str, Any]) -> None:
    version = api_version_of(path)
    for item in listing.get("items") or ():
        if isinstance(item, Mapping):
            snapshot.items.append({"apiVersion": version, "kind": kind, **item})
