"""The kopf side: watches feed :class:`~corral.controller.state.State` and the work queue.

Handlers are thin and level-based: every event only records what it saw and queues the profile
it concerns; reconcile works from the latest state. The watch handlers are coroutines, so they
run on the event loop, which owns the work queue (an asyncio queue is not thread-safe; kopf
would run a plain function in a thread for each event). An event of a version the state already
holds (the answer of the operator's own apply or status write, echoed by the watch) queues
nothing. Only ``@kopf.on.event`` handlers are used,
so kopf writes nothing to the profiles (no progress or diff-base annotations) and adds no
finalizers: deleting a profile never waits for the operator, and garbage collection removes
its children through their owner references.

Watched, with server-side filters: SchedulerProfiles; the nine kinds of children (label
``app.kubernetes.io/managed-by=corral``); unbound Pending pods not for ``default-scheduler``.
Outside kopf, once some profile enables Coscheduling: scheduler-plugins' PodGroups and the pods
labelled into them, for their status (``corral.controller.podgroup_status``); once some profile
enables CapacityScheduling: ElasticQuotas and the Running pods, for their ``status.used``
(``corral.controller.elasticquota_status``).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import time
from collections import Counter
from typing import Any

import kopf

from corral.api import GROUP, KIND, PLURAL, VERSION, default_catalog
from corral.controller import (
    apply,
    elasticquota_status,
    guards,
    metrics_server,
    pending,
    pod_admission,
    podgroup_status,
    refusals,
)
from corral.controller.admission import HANDLER_ID, Webhook
from corral.controller.engines import LocalEngines
from corral.controller.events import Recorder, pod_ref
from corral.controller.metrics import Metrics, profile_conditions
from corral.controller.metrics_server import MetricsServing
from corral.controller.peering import Gate
from corral.controller.queue import WorkQueue
from corral.controller.reconcile import Reconciler
from corral.controller.settings import Settings
from corral.controller.state import CHILD_KINDS, MANAGED_SELECTOR, State
from corral.k8s import Client
from corral.k8s.aio import AsyncClient

log = logging.getLogger("corral.controller")

ENGINE_SUPERVISE_SECONDS = 1.0
# The resync looks this many times per period for the profiles due (Reconciler.due): each is
# reconciled at most 1/RESYNC_TICKS of a period later than its due time, and a fleet's resync
# is spread over the period rather than queued in one burst.
RESYNC_TICKS = 10
RESYNC_TICK_MIN_SECONDS = 1.0


class NoDiffBase(kopf.DiffBaseStorage):
    """kopf's diff base for operators with only ``@kopf.on.event`` handlers: none.

    kopf builds every event's "essence" (a deep copy of the whole body, status and
    managedFields included, then pruned) and the stored one's diff against it, for the
    on.create/update/resume handlers and daemons that use them. Corral has none of those,
    so the diff is never read, yet building it was the operator's largest cost on the event
    loop (py-spy at 250 profiles, bench.operator_apply: ``DiffBaseStorage.build`` 11% of the
    busy samples, ``ProgressStorage.clear`` of its copy 5% more), once per watch event of
    every profile, child and pending pod. ``build`` returns an empty essence without reading
    the body; nothing is fetched, and nothing is stored (kopf stores only after changing
    handlers)."""

    def build(self, *, body: Any, **_: Any) -> Any:  # extra_fields: none to keep
        return kopf.BodyEssence()

    def fetch(self, *, body: Any) -> None:
        return None

    def store(self, *, body: Any, patch: Any, essence: Any) -> None:
        return None


def _selector(group: str, version: str, plural: str) -> tuple[str, str] | tuple[str, str, str]:
    """kopf's resource spelling: ``(version, plural)`` for the core group."""
    return (group, version, plural) if group else (version, plural)


class Operator:
    """Everything one operator process holds; :meth:`registry` wires it into kopf."""

    def __init__(
        self,
        settings: Settings,
        client: Client,
        *,
        gate: Gate | None = None,  # None: standalone, always active
        metrics: MetricsServing | None = None,  # None: /metrics is not served
    ) -> None:
        self.settings = settings
        self.client = client
        self.state = State()
        self.detector = pending.Detector()
        self.metrics = Metrics()
        client.observer = self.metrics  # rest_client_*: the operator's own requests
        self.recorder = Recorder(client)
        self.gate = gate or Gate(client, None, "", 0)
        self.metrics_serving = metrics
        self.engines: LocalEngines | None = None
        if settings.local_engines:
            self.engines = LocalEngines(client=client, directory=settings.engine_dir)
        catalog = default_catalog()
        for problem in catalog.problems:
            log.warning("plugin catalog: %s", problem)
        self.reconciler = Reconciler(
            client=client,
            state=self.state,
            settings=settings,
            recorder=self.recorder,
            catalog=catalog,
            pending_count=self.detector.count,
            engines=self.engines,
        )
        self.pool = concurrent.futures.ThreadPoolExecutor(
            max_workers=settings.workers + 2, thread_name_prefix="corral"
        )
        self.queue: WorkQueue | None = None
        self.tasks: list[asyncio.Task[Any]] = []
        self.is_active = False  # this replica does the work (the detector's last look)
        self.catalog = catalog
        self.webhook: Webhook | None = None
        self.tenants = pod_admission.TenantIndex(
            lambda: self.client.list_items(f"{GROUP}/{VERSION}", KIND), self._namespace_labels
        )
        if settings.webhook_listen is not None:
            self.webhook = Webhook(
                settings.webhook_listen,
                host=settings.webhook_host,
                service=settings.webhook_service,
                cert_dir=settings.webhook_cert_dir,
                cert_secret=settings.webhook_cert_secret,
                client=client,
            )

    # --- kopf wiring -------------------------------------------------------------------------

    def configure(self, settings: kopf.OperatorSettings) -> None:
        for group, version, plural, _, _ in CHILD_KINDS:
            settings.watching.label_selectors[_selector(group, version, plural)] = MANAGED_SELECTOR
        settings.watching.field_selectors[_selector("", "v1", "pods")] = pending.POD_FIELD_SELECTOR
        # kopf's own failure events are useful; its per-handler INFO chatter is not.
        settings.posting.level = logging.WARNING
        settings.persistence.diffbase_storage = NoDiffBase()
        if self.webhook is not None:
            self.webhook.configure(settings)

    def registry(self) -> kopf.OperatorRegistry:
        registry = kopf.OperatorRegistry()

        @kopf.on.login(registry=registry)
        def login(**_: Any) -> kopf.ConnectionInfo:
            return connection_info(self.client)

        @kopf.on.startup(registry=registry)
        async def startup(**_: Any) -> None:
            await self.start()

        @kopf.on.cleanup(registry=registry)
        async def cleanup(**_: Any) -> None:
            await self.stop()

        @kopf.on.probe(id="profiles", registry=registry)
        def probe(**_: Any) -> int:
            return len(self.state.profile_names())

        @kopf.on.event(GROUP, VERSION, PLURAL, registry=registry)
        async def on_profile(event: kopf.RawEvent, **_: Any) -> None:
            self.profile_event(event.get("type"), dict(event["object"]))

        if self.webhook is not None:

            @kopf.on.validate(
                GROUP,
                VERSION,
                PLURAL,
                id=HANDLER_ID,
                operations=["CREATE", "UPDATE"],
                persistent=True,  # see corral.controller.admission: the failure policy
                registry=registry,
            )
            def admit(body: kopf.Body, warnings: list[str], **_: Any) -> None:
                message = self.refusal(dict(body))
                if message:
                    raise kopf.AdmissionError(message, code=422)
                warnings.extend(refusals.advisories(dict(body)))

            @kopf.on.mutate(
                "v1",
                "pods",
                id=pod_admission.HANDLER_ID,
                operations=["CREATE"],
                persistent=True,  # kept while a replica restarts (see corral.controller.admission)
                ignore_failures=True,  # see corral.controller.pod_admission: fails open
                registry=registry,
            )
            def assign(body: kopf.Body, patch: kopf.Patch, **_: Any) -> None:
                namespace = str(body.get("metadata", {}).get("namespace") or "")
                decision = self.tenants.decide(dict(body), namespace)
                if decision.refusal:
                    raise kopf.AdmissionError(decision.refusal, code=403)
                if decision.scheduler_name:
                    patch.spec["schedulerName"] = decision.scheduler_name

        for group, version, plural, _, _ in CHILD_KINDS:
            kopf.on.event(
                *_selector(group, version, plural), id=f"child-{plural}", registry=registry
            )(self._on_child)

        @kopf.on.event("v1", "pods", registry=registry)
        async def on_pod(event: kopf.RawEvent, **_: Any) -> None:
            if event.get("type") == "DELETED":
                self.detector.drop(event["object"])
            else:
                self.detector.put(event["object"])

        return registry

    async def _on_child(self, event: kopf.RawEvent, **_: Any) -> None:
        obj = event["object"]
        if event.get("type") == "DELETED":
            owner = self.state.drop_child(obj)
        elif self.state.holds_child(obj):
            return  # the answer of our own apply, stored by it: nothing new to reconcile
        else:
            owner = self.state.put_child(obj)
        if owner:
            self.enqueue(owner)

    def refusal(self, body: dict[str, Any]) -> str:
        """Why the admission webhook refuses ``body`` ("" when it does not).

        The claims of existing profiles are listed from the API server, not taken from the
        watch: every replica behind the webhook's Service answers, and a kopf standby's watches
        are paused (its view would be empty or stale, and it would admit a duplicate
        schedulerName or Lease). A failed list raises, and the failure policy refuses."""
        existing = self.client.list_items(f"{GROUP}/{VERSION}", KIND)
        claims = [guards.claim_of(profile) for profile in existing]
        _, refusal = refusals.check(
            body, settings=self.settings, catalog=self.catalog, claims=claims
        )
        return refusal.message if refusal is not None else ""

    def _namespace_labels(self, namespace: str) -> dict[str, str]:
        meta = self.client.get("v1", "Namespace", namespace).get("metadata") or {}
        return dict(meta.get("labels") or {})

    def profile_event(self, kind: str | None, obj: dict[str, Any]) -> None:
        if kind != "DELETED" and self.state.holds_profile(obj):
            return  # the answer of our own status write, stored by it: nothing changed
        name = str(obj["metadata"]["name"])
        versions: list[guards.Claim] = []
        if kind == "DELETED":
            old = self.state.drop_profile(name)
        else:
            old = self.state.put_profile(obj)
            versions.append(guards.claim_of(obj))
        if old is not None:
            versions.append(old)
        self.enqueue(name)
        for other in guards.related(versions, self.state.rivals(versions)):
            self.enqueue(other)

    def enqueue(self, name: str) -> None:
        if self.queue is not None:
            self.queue.add(name)

    # --- background work ---------------------------------------------------------------------

    async def start(self) -> None:
        self.queue = WorkQueue()
        queue = self.queue
        self.metrics.queue_depth.set_function(lambda: float(len(queue)))
        for name in self.state.profile_names():
            self.queue.add(name)
        for _ in range(self.settings.workers):
            self.tasks.append(asyncio.create_task(self.queue.worker(self._process)))
        self.tasks.append(asyncio.create_task(self._resync()))
        self.tasks.append(asyncio.create_task(self._detect()))
        self.tasks.append(asyncio.create_task(self._pod_group_status()))
        self.tasks.append(asyncio.create_task(self._elastic_quota_status()))
        if self.engines is not None:
            self.tasks.append(asyncio.create_task(self._supervise()))
        if self.metrics_serving is not None:
            self.tasks.append(asyncio.create_task(self._serve_metrics(self.metrics_serving)))
        if self.webhook is not None:
            self.tasks.append(asyncio.create_task(self.webhook.renew()))

    async def stop(self) -> None:
        for task in self.tasks:
            task.cancel()
        await asyncio.gather(*self.tasks, return_exceptions=True)
        self.tasks.clear()
        if self.webhook is not None:
            self.webhook.close()
        if self.queue is not None:
            self.queue.close()
        if self.engines is not None:
            self.engines.stop_all()
        self.pool.shutdown(wait=False, cancel_futures=True)

    async def _in_thread(self, fn: Any, *args: Any) -> Any:
        return await asyncio.get_running_loop().run_in_executor(self.pool, fn, *args)

    async def _process(self, name: str) -> None:
        started = time.monotonic()
        try:
            await self._in_thread(self.reconciler.reconcile, name)
        except apply.TransientError:
            self.metrics.reconciled("retry", time.monotonic() - started)
            raise
        except Exception:
            self.metrics.reconciled("error", time.monotonic() - started)
            log.exception("reconcile of %s failed unexpectedly (a bug; retrying)", name)
            raise
        self.metrics.reconciled("ok", time.monotonic() - started)

    async def _resync(self) -> None:
        """Every profile is reconciled at least once per ``--resync`` period: those the watches
        did not already bring within it are queued (:meth:`Reconciler.due`)."""
        period = self.settings.resync
        tick = min(period, max(RESYNC_TICK_MIN_SECONDS, period / RESYNC_TICKS))
        counted = time.monotonic()
        while True:
            await asyncio.sleep(tick)
            if self.queue is not None and await self._in_thread(self.gate.active):
                for name, generation in self.state.generations().items():
                    # Queued or in progress: it will be reconciled (an add would re-run it).
                    if name not in self.queue and self.reconciler.due(name, generation, period):
                        self.queue.add(name)
            if time.monotonic() - counted >= period:
                counted = time.monotonic()
                named = self.state.each_profile(
                    lambda b: (b["metadata"]["name"], profile_conditions(b))
                )
                self.metrics.set_profiles(dict(named))

    async def _detect(self) -> None:
        period = max(1.0, min(10.0, self.settings.pending_threshold / 3))
        while True:
            await asyncio.sleep(period)
            active = await self._in_thread(self.gate.active)
            self.metrics.active.set(1 if active else 0)
            self.is_active = active
            if not active:
                continue
            for name in await self._in_thread(self.detect_once):
                self.enqueue(name)

    async def _pod_group_status(self) -> None:
        """scheduler-plugins' PodGroup status controller, from the first time some profile
        enables Coscheduling on (corral.controller.podgroup_status); writes only while this
        replica is the active one."""
        while not self.state.any_enables(podgroup_status.COSCHEDULING):
            await asyncio.sleep(ENGINE_SUPERVISE_SECONDS)
        log.info("a profile enables Coscheduling: keeping PodGroup status")
        loop = asyncio.get_running_loop()

        def post(group: Any, reason: str, message: str) -> None:
            meta = group.get("metadata") or {}
            ref = {"apiVersion": "scheduling.x-k8s.io/v1alpha1", "kind": "PodGroup",
                   "namespace": str(meta.get("namespace", "")),
                   "name": str(meta.get("name", "")), "uid": str(meta.get("uid", ""))}  # fmt: skip
            loop.run_in_executor(
                self.pool, lambda: self.recorder.post(ref, "Warning", reason, message)
            )

        aio = AsyncClient(self.client)
        controller = podgroup_status.PodGroupStatusController(
            aio, post_event=post, active=lambda: self.is_active
        )
        try:
            await controller.run()
        finally:
            await aio.close()

    async def _elastic_quota_status(self) -> None:
        """scheduler-plugins' ElasticQuota status controller, from the first time some profile
        enables CapacityScheduling on (corral.controller.elasticquota_status); writes only
        while this replica is the active one."""
        while not self.state.any_enables(elasticquota_status.CAPACITY_SCHEDULING):
            await asyncio.sleep(ENGINE_SUPERVISE_SECONDS)
        log.info("a profile enables CapacityScheduling: keeping ElasticQuota status")
        aio = AsyncClient(self.client)
        controller = elasticquota_status.ElasticQuotaStatusController(
            aio, active=lambda: self.is_active
        )
        try:
            await controller.run()
        finally:
            await aio.close()

    def detect_once(self) -> set[str]:
        """One detector pass (a worker thread): classify, post new Events, update the metric;
        return the profiles whose pendingPods count changed.

        The profiles are read only when some pod has waited past the threshold (only such
        pods are classified): reading every profile each pass, pending pods or not, made
        the pass O(profiles) every few seconds for as long as a fleet's rollout lasts, 3.5% of
        the operator's busy samples at 1,000 profiles against 0.3% at 250 (py-spy,
        bench.operator_apply)."""
        pods = self.detector.pods()
        now = time.time()
        threshold = self.settings.pending_threshold
        waiting = any(now - p.created >= threshold for p in pods)
        served = dict(self.state.each_profile(pending.served_by)) if waiting else {}
        labels: dict[str, dict[str, str]] = {}

        def namespace_labels(ns: str) -> dict[str, str]:
            if ns not in labels:
                try:
                    meta = self.client.get("v1", "Namespace", ns).get("metadata", {})
                    labels[ns] = dict(meta.get("labels") or {})
                except Exception:  # unknown labels: the selector cannot match
                    labels[ns] = {}
            return labels[ns]

        findings = pending.classify(
            pods,
            served,
            now=now,
            threshold=threshold,
            reserved=self.settings.reserved_scheduler_names,
            namespace_labels=namespace_labels,
        )
        fresh, changed = self.detector.record(findings)
        for f in fresh:
            ref = pod_ref(f.pod.namespace, f.pod.name, f.pod.uid)
            self.recorder.post(ref, "Warning", f.reason, f.message)
        self.metrics.set_pending(Counter((f.pod.scheduler_name, f.reason) for f in findings))
        return changed

    async def _supervise(self) -> None:
        assert self.engines is not None
        while True:
            await asyncio.sleep(ENGINE_SUPERVISE_SECONDS)
            if await self._in_thread(self.gate.active):
                self.engines.supervise()

    async def _serve_metrics(self, serving: MetricsServing) -> None:
        await metrics_server.serve(serving, self.metrics.registry, self.client)


def connection_info(client: Client) -> kopf.ConnectionInfo:
    """kopf's credentials from the same source as ours (kubeconfig or in-cluster)."""
    config = client.configuration
    auth = client.authorization() or ""
    scheme, _, token = auth.partition(" ")
    return kopf.ConnectionInfo(
        server=client.server,
        ca_path=client.ca_file,
        insecure=not config.verify_ssl,
        scheme=scheme or None,
        token=token or None,
        certificate_path=config.cert_file or None,
        private_key_path=config.key_file or None,
        default_namespace="default",
    )
