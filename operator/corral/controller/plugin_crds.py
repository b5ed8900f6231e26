"""Plugins whose API the cluster does not serve: a profile enabling Coscheduling where no PodGroup
CRD is installed goes ``Stalled`` (reason ``PluginCRDMissing``) instead of running an engine
whose informers fail.

Contract:
- What a plugin needs is derived from its declaration (``cluster_reads``, ``namespaced_writes``
  and ``cluster_writes``, subresources folded into their resource: what its scheduler's RBAC
  grants), never listed a second time.
- Only resources of API groups outside Kubernetes' own (:data:`BUILTIN_GROUPS`) are checked:
  such a group is served only once someone installs its CRD (or an aggregated API). A built-in
  group is the API server's business (DRA on an old cluster is the engine's to report).
- :func:`missing` is pure: enabled plugins, the catalog and what is served -> the problems,
  sorted; :func:`message` makes them one line.
- :class:`Discovery` answers what a group serves from API discovery (``GET /apis/<group>``,
  then each of its versions), cached per group for ``ttl`` seconds and shared by the reconcile
  workers, so 1,000 profiles enabling Coscheduling cost one look per group per ``ttl``, and a
  CRD installed later is seen within ``ttl``. A group the server does not know (404) serves
  nothing; a 403 (no discovery rights) counts as served, so a check that cannot be made stalls
  nothing; any other failure raises :class:`~corral.controller.apply.TransientError`.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable, Set
from dataclasses import dataclass
from typing import Final

from corral.api import Catalog
from corral.api.catalog import Resource
from corral.controller.apply import TransientError
from corral.k8s import JSON, ApiError, Client
from corral.scheduler.config.declarations import SCHEDULER_PLUGINS, PluginDeclaration

REASON: Final = "PluginCRDMissing"
DISCOVERY_TTL_SECONDS: Final = 10.0

# The API groups kube-apiserver serves itself (v1.37), served or not by a given cluster's
# runtime-config; any other group comes from a CRD or an aggregated APIService.
BUILTIN_GROUPS: Final = frozenset(
    {
        "",
        "admissionregistration.k8s.io",
        "apiextensions.k8s.io",
        "apiregistration.k8s.io",
        "apps",
        "authentication.k8s.io",
        "authorization.k8s.io",
        "autoscaling",
        "batch",
        "certificates.k8s.io",
        "coordination.k8s.io",
        "discovery.k8s.io",
        "events.k8s.io",
        "flowcontrol.apiserver.k8s.io",
        "internal.apiserver.k8s.io",
        "networking.k8s.io",
        "node.k8s.io",
        "policy",
        "rbac.authorization.k8s.io",
        "resource.k8s.io",
        "scheduling.k8s.io",
        "storage.k8s.io",
        "storagemigration.k8s.io",
    }
)


@dataclass(frozen=True, slots=True, order=True)
class Problem:
    plugin: str
    group: str
    resource: str
    hint: str

    @property
    def message(self) -> str:
        return (
            f"{self.plugin} needs {self.resource}.{self.group}, which this cluster does not "
            f"serve; {self.hint}"
        )


def needs(declaration: PluginDeclaration) -> list[Resource]:
    """The resources of non-built-in groups that ``declaration`` reads or writes, sorted."""
    touched = [
        *declaration.cluster_reads,
        *((g, r) for g, r, _ in declaration.namespaced_writes),
        *((g, r) for g, r, _ in declaration.cluster_writes),
    ]
    return sorted({(g, r.partition("/")[0]) for g, r in touched if g not in BUILTIN_GROUPS})


def hint(declaration: PluginDeclaration) -> str:
    if declaration.source == SCHEDULER_PLUGINS:
        return "install crds/scheduler-plugins"
    return "install the CRD that serves it"


def groups(plugins: Iterable[str], catalog: Catalog) -> list[str]:
    """The non-built-in API groups the enabled ``plugins`` need, sorted."""
    found = {g for p in plugins if p in catalog for g, _ in needs(catalog[p])}
    return sorted(found)


def missing(plugins: Iterable[str], catalog: Catalog, served: Set[Resource]) -> list[Problem]:
    """One problem per (enabled plugin, needed resource) not in ``served``, sorted. A plugin the
    catalog does not know needs nothing here (validation refuses it)."""
    problems = {
        Problem(name, g, r, hint(catalog[name]))
        for name in plugins
        if name in catalog
        for g, r in needs(catalog[name])
        if (g, r) not in served
    }
    return sorted(problems)


def message(problems: Iterable[Problem]) -> str:
    return "; ".join(p.message for p in problems)


class Discovery:
    """What API groups serve, from discovery, cached per group for ``ttl`` seconds."""

    def __init__(
        self,
        client: Client,
        *,
        ttl: float = DISCOVERY_TTL_SECONDS,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self.client = client
        self.ttl = ttl
        self.monotonic = monotonic
        self._lock = threading.Lock()
        # group -> (when the answer expires, its resources; None: cannot tell, count as served)
        self._groups: dict[str, tuple[float, frozenset[str] | None]] = {}

    def served(self, wanted: Iterable[str]) -> frozenset[Resource] | None:
        """The resources the ``wanted`` groups serve; None when discovery may not be read."""
        out: set[Resource] = set()
        for group in wanted:
            resources = self._group(group)
            if resources is None:
                return None
            out.update((group, r) for r in resources)
        return frozenset(out)

    def _group(self, group: str) -> frozenset[str] | None:
        # Held across the look: concurrent workers wait for one answer instead of each asking.
        with self._lock:
            cached = self._groups.get(group)
            now = self.monotonic()
            if cached is not None and now < cached[0]:
                return cached[1]
            resources = self._look(group)
            self._groups[group] = (now + self.ttl, resources)
            return resources

    def _look(self, group: str) -> frozenset[str] | None:
        answer = self._get(f"/apis/{group}")
        if answer is None:
            return None
        names: set[str] = set()
        for version in answer.get("versions") or []:
            listing = self._get(f"/apis/{version['groupVersion']}")
            if listing is None:
                return None
            names.update(
                str(r["name"]) for r in listing.get("resources") or [] if "/" not in r["name"]
            )
        return frozenset(names)

    def _get(self, path: str) -> JSON | None:
        """The discovery document at ``path``: ``{}`` when not found, None when forbidden."""
        try:
            answer: JSON = self.client.request("GET", path)
        except ApiError as exc:
            if exc.not_found:
                return {}
            if exc.forbidden:
                return None
            raise TransientError(f"API discovery {path}: {exc}") from exc
        return answer
