"""Reconcile one profile: check, guard, render, apply, observe, report. Level-based.

Contract:
- :meth:`Reconciler.reconcile` takes only a profile's name; whatever triggered it, it works
  from the latest state, so running it twice in a row does nothing the second time.
- An invalid profile, or one refused by a guard, goes ``Stalled`` with the reason (field paths
  for validation errors) and nothing it already runs is touched: no apply, no prune, no engine
  change.
- The status subresource is patched only when it differs; an Event announces every change of
  the outcome and every reverted drift.
- A profile enabling a plugin whose CRD the cluster does not serve (API discovery,
  :mod:`corral.controller.plugin_crds`) is stalled the same way (``PluginCRDMissing``), and is
  due again after the discovery cache's TTL rather than the resync period, so installing the
  CRD clears it within seconds.
- It raises :class:`~corral.controller.apply.TransientError` for transient failures (the work
  queue backs off); it never raises for a user's mistake.
- A profile is rendered again only when its validated, defaulted form changed: rendering is a
  pure function of it and the catalog, and it was most of the operator's CPU per profile, paid
  on every reconcile (bench.operator_apply). The cached objects are shared by the reconciles of
  that profile, so nothing downstream may change them.
- :meth:`Reconciler.due` tells the resync which profiles to queue: those not reconciled within
  the period, or last reconciled at another generation. A profile the watches keep busy (a
  rollout's Deployment updates) costs the resync nothing, and one reconciled a second before
  is not reconciled again for the period's sake.
- The Lease is read (for ``status.leader``) only while some replica is ready: before that no
  engine can lead, and during a fleet's first rollout each read would be a 404.
- The engine pods are listed (for :func:`~corral.controller.podhealth.stuck`) only once the
  Deployment counts some: a profile's first reconcile, with its Deployment just created, lists
  nothing.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from corral.api import API_VERSION, KIND, Catalog, SchedulerProfile
from corral.controller import apply, guards, plugin_crds, podhealth, refusals, status
from corral.controller.events import EventType, Recorder, now_rfc3339
from corral.controller.settings import Settings
from corral.controller.state import State, describe, key_of
from corral.k8s import CONTENT_MERGE_PATCH, ApiError, Client
from corral.render import Rendered, enabled_plugins, names, render

log = logging.getLogger(__name__)


class EngineRuntime(Protocol):
    """What reconcile asks of the local engine runtime (see :mod:`corral.controller.engines`)."""

    def want(self, profile: SchedulerProfile, rendered: Rendered) -> None: ...

    def forget(self, name: str) -> None: ...


@dataclass(frozen=True, slots=True)
class Observed:
    replicas: int
    ready: int
    updated: int
    current: bool  # the Deployment controller has seen the latest spec


class Reconciler:
    def __init__(
        self,
        *,
        client: Client,
        state: State,
        settings: Settings,
        recorder: Recorder,
        catalog: Catalog,
        pending_count: Callable[[str], int] | None = None,  # None for tests
        engines: EngineRuntime | None = None,
        clock: Callable[[], str] = now_rfc3339,
        monotonic: Callable[[], float] = time.monotonic,
        discovery: plugin_crds.Discovery | None = None,
    ) -> None:
        self.client = client
        self.state = state
        self.settings = settings
        self.recorder = recorder
        self.catalog = catalog
        self.pending_count = pending_count or (lambda _name: 0)
        self.engines = engines
        self.clock = clock
        self.monotonic = monotonic
        self.discovery = discovery or plugin_crds.Discovery(client, monotonic=monotonic)
        # Profiles stalled on a plugin's missing CRD: due again once discovery may have news.
        self._awaiting_crds: set[str] = set()
        # profile name -> (the validated profile rendered, its objects); one worker at a time
        # per name (the work queue), so each entry is read and written by one thread at a time.
        self._renders: dict[str, tuple[SchedulerProfile, Rendered]] = {}
        # profile name -> (when its last reconcile ended, the generation it reconciled); read
        # by the resync on the event loop (single dict operations: atomic under the GIL).
        self._reconciled: dict[str, tuple[float, int]] = {}

    # --- the loop body -----------------------------------------------------------------------

    def reconcile(self, name: str) -> None:
        body = self.state.profile(name)
        if body is None:
            # Deleted: garbage collection removes the children through their owner references.
            self._renders.pop(name, None)
            self._reconciled.pop(name, None)
            self._awaiting_crds.discard(name)
            if self.engines is not None:
                self.engines.forget(name)
            return
        if body["metadata"].get("deletionTimestamp"):
            return
        started = time.monotonic()
        outcome, extras, facts = self._converge(body)
        self._report(body, outcome, extras, facts)
        generation = int(body["metadata"].get("generation") or 0)
        self._reconciled[name] = (self.monotonic(), generation)
        log.debug("reconciled %s in %.3fs: %s", name, time.monotonic() - started, outcome.reason)

    def due(self, name: str, generation: int, period: float) -> bool:
        """Whether the resync should queue ``name`` (at ``generation`` now): it was not
        reconciled within ``period`` seconds (within the discovery TTL when it is stalled on a
        plugin's missing CRD), or not at this generation."""
        last = self._reconciled.get(name)
        if last is not None and name in self._awaiting_crds:
            period = min(period, self.discovery.ttl)
        return last is None or last[1] != generation or self.monotonic() - last[0] >= period

    def _converge(
        self, body: Mapping[str, Any]
    ) -> tuple[status.Outcome, list[status.Extra], dict[str, Any]]:
        name = str(body["metadata"]["name"])
        self._awaiting_crds.discard(name)
        claims = self.state.rivals([guards.claim_of(body)])
        profile, refusal = refusals.check(
            body, settings=self.settings, catalog=self.catalog, claims=claims
        )
        if refusal is not None or profile is None:
            refusal = refusal or refusals.Refusal("InvalidSpec", "the profile is invalid")
            return status.stalled(refusal.reason, refusal.message), [], {}
        problems = self._missing_crds(profile)
        if problems:
            self._awaiting_crds.add(name)
            return status.stalled(plugin_crds.REASON, plugin_crds.message(problems)), [], {}
        claim = guards.claim_of(body)
        extras = []
        overlap = guards.overlapping(claim, claims)
        if overlap:
            extras.append(
                status.Extra(
                    status.NODE_POOL_OVERLAP,
                    "NodeSelectorsOverlap",
                    "tenancy.nodeSelector can match the same nodes as "
                    + ", ".join(overlap)
                    + "; schedulers sharing nodes can overcommit them",
                )
            )
        rendered = self._render(profile)
        try:
            result = apply.apply_all(self.client, self.state, rendered.objects)
            pruned = apply.prune(self.client, self.state, name, rendered.objects)
        except apply.RefusedError as exc:
            return status.stalled(exc.reason, exc.message), extras, {}
        for key in result.repaired:
            self.recorder.post_profile(
                body,
                "Normal",
                "DriftReverted",
                f"{describe(key)} was changed outside the operator; restored",
            )
        if result.written or pruned:
            log.info(
                "profile %s: wrote %s; deleted %s",
                name,
                ", ".join(describe(k) for k in result.written) or "nothing",
                ", ".join(describe(k) for k in pruned) or "nothing",
            )
        if self.engines is not None:
            self.engines.want(profile, rendered)
        observed = self._observe(rendered)
        leader = self._leader(profile) if observed.ready > 0 else None
        facts = {
            "scheduler_name": profile.spec.scheduler_name,
            "namespace": profile.spec.namespace,
            "config_hash": rendered.config_hash,
            "leader": leader,
            "replicas": observed.replicas,
            "ready_replicas": observed.ready,
            "pending_pods": self.pending_count(name),
        }
        want = profile.spec.replicas or 0
        counts = f"{observed.ready}/{want} replicas ready"
        if observed.ready < want:
            blocked = self._stuck(profile, rendered)
            if blocked is not None:
                return status.stalled(*blocked), extras, facts
        if not observed.current or observed.updated < want or observed.ready < want:
            return status.progressing("RollingOut", f"{counts}; rolling out"), extras, facts
        if observed.replicas > want:
            return (
                status.progressing("RollingOut", f"{counts}; old replicas terminating"),
                extras,
                facts,
            )
        lead = f"; leader {leader}" if leader else ""
        return status.ready(f"{counts}{lead}"), extras, facts

    def _missing_crds(self, profile: SchedulerProfile) -> list[plugin_crds.Problem]:
        plugins = enabled_plugins(profile)
        wanted = plugin_crds.groups(plugins, self.catalog)
        if not wanted:
            return []
        served = self.discovery.served(wanted)
        if served is None:
            return []  # discovery may not be read: the check cannot be made
        return plugin_crds.missing(plugins, self.catalog, served)

    def _render(self, profile: SchedulerProfile) -> Rendered:
        cached = self._renders.get(profile.name)
        if cached is not None and cached[0] == profile:
            return cached[1]
        rendered = render(profile, self.catalog)
        self._renders[profile.name] = (profile, rendered)
        return rendered

    # --- observation -------------------------------------------------------------------------

    def _observe(self, rendered: Rendered) -> Observed:
        deployment = next(o for o in rendered.objects if o["kind"] == "Deployment")
        live = self.state.child(key_of(deployment))
        if live is None:
            return Observed(0, 0, 0, current=False)
        st = live.status
        return Observed(
            replicas=int(st.get("replicas") or 0),
            ready=int(st.get("readyReplicas") or 0),
            updated=int(st.get("updatedReplicas") or 0),
            current=int(st.get("observedGeneration") or 0) >= live.generation,
        )

    def _stuck(self, profile: SchedulerProfile, rendered: Rendered) -> tuple[str, str] | None:
        deployment = next(o for o in rendered.objects if o["kind"] == "Deployment")
        live = self.state.child(key_of(deployment))
        if live is None or not int(live.status.get("replicas") or 0):
            # No pod yet (a new Deployment): none to read; its own conditions still count.
            return podhealth.stuck(live.status if live is not None else {}, [])
        selector = ",".join(f"{k}={v}" for k, v in names.selector_labels(profile).items())
        try:
            pods = self.client.list_items(
                "v1", "Pod", profile.spec.namespace, label_selector=selector
            )
        except ApiError as exc:
            if exc.forbidden:
                return None
            raise apply.classify(
                exc, ("v1", "Pod", profile.spec.namespace or "", ""), "list"
            ) from exc
        return podhealth.stuck(live.status if live is not None else {}, pods)

    def _leader(self, profile: SchedulerProfile) -> str | None:
        le = profile.spec.leader_election
        if le is None or not le.leader_elect:
            return None
        try:
            lease = self.client.get(
                "coordination.k8s.io/v1",
                "Lease",
                le.resource_name or profile.name,
                profile.spec.namespace,
            )
        except ApiError as exc:
            if exc.not_found or exc.forbidden:
                return None
            raise apply.classify(exc, ("coordination.k8s.io/v1", "Lease", "", ""), "get") from exc
        holder = lease.get("spec", {}).get("holderIdentity")
        return str(holder) if holder else None

    # --- reporting ---------------------------------------------------------------------------

    def _report(
        self,
        body: Mapping[str, Any],
        outcome: status.Outcome,
        extras: list[status.Extra],
        facts: dict[str, Any],
    ) -> None:
        previous = body.get("status") or {}
        generation = int(body["metadata"].get("generation") or 0)
        desired = status.build(
            outcome=outcome,
            generation=generation,
            previous=previous,
            now=self.clock(),
            extras=extras,
            shadow=bool((body.get("spec") or {}).get("shadow")),
            **facts,
        )
        patch = status.merge_patch(previous, desired)
        if patch is None:
            return
        name = str(body["metadata"]["name"])
        path = self.client.resource(API_VERSION, KIND).path(None, name) + "/status"
        try:
            answer = self.client.request(
                "PATCH", path, body={"status": patch}, content_type=CONTENT_MERGE_PATCH
            )
        except ApiError as exc:
            if exc.not_found:
                return  # deleted meanwhile
            raise apply.TransientError(f"patch status of {name}: {exc}") from exc
        self.state.put_profile(answer)
        before = status.summary(previous.get("conditions", []))
        after = status.summary(desired["conditions"])
        if before != after:
            kind: EventType = "Warning" if outcome.kind == "stalled" else "Normal"
            self.recorder.post_profile(answer, kind, outcome.reason, outcome.message)
            log.info("profile %s: %s: %s", name, outcome.reason, outcome.message)
        before_extra = {c.get("type") for c in previous.get("conditions", [])}
        for extra in extras:
            if extra.type not in before_extra:
                self.recorder.post_profile(answer, "Warning", extra.reason, extra.message)
