"""Run one workload with one scheduler on a fresh local control plane and measure it.

Sequence (identical for both schedulers):

1. start a control plane without any scheduler; create namespaces, PriorityClasses, nodes and
   the init pods (already bound, see ``workloads``);
2. start the scheduler under test from the shared KubeSchedulerConfiguration; it is ready when
   a canary pod gets bound (the canary is then deleted); for Unschedulable, also when every
   init pod carries PodScheduled=False;
3. watch the measured namespace for pods with ``spec.nodeName`` set, then create the measured
   pods as fast as the API server takes them (admin identity, no client-side limit,
   ``CREATE_CONCURRENCY`` in flight), churning if the workload says so;
4. stop when every measured pod is bound, or nothing was bound for ``stall_timeout`` seconds.

Times are client-side ``time.monotonic()``: a pod's creation time is when its POST was sent
(the API server's creationTimestamp has whole-second resolution), its bound time is when the
watch event showing ``spec.nodeName`` reached the harness. Both include harness overhead, the
same for both schedulers.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import tempfile
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, Final

from bench import dra_scene, pinning, probe, procstat, profiling, scrape, sp_scene, stats
from bench.cluster import make_schedulable
from bench.pinning import Pinning
from bench.schedulers import CEILING, SchedulerConfig, SchedulerProcess, gate_args
from bench.workloads import (
    INIT_NAMESPACE,
    JSON,
    MEASURED_NAMESPACE,
    NOISE_LABEL,
    OPEN_LABEL,
    PRIORITY_CLASSES,
    Workload,
    large_cpu_high_priority_pod,
)
from corral.k8s import CONTENT_MERGE_PATCH, ApiError, Client
from corral.k8s.aio import AsyncClient
from corral.testing import LocalCluster, fake_node
from corral.testing.nodes import wait_ready
from corral.testing.processes import ProcessError

CREATE_CONCURRENCY: Final = 32
SETTLE_QUIET_S: Final = 2.0  # QueueingHintsChurn: no attempt for this long = settled
SETTLE_TIMEOUT_S: Final = 60.0
READY_TIMEOUT: Final = 180.0


@dataclass
class RunResult:
    workload: str
    scheduler: str
    params: JSON
    order: int  # 0: this scheduler ran first for this workload and repetition
    repetition: int
    measured_pods: int
    bound: int
    complete: bool
    duration_s: float  # first creation sent -> last pod bound
    throughput_mean: float  # bound / duration
    throughput_series: list[int]  # pods bound in each second after the first creation
    created_series: list[int]  # pods created in each second (the offered load)
    latency_s: dict[str, float]  # p50 / p90 / p99 / max, creation -> bound
    scheduler_cpu_s: float  # during the measured phase
    scheduler_cpu_total_s: float  # since the scheduler started (startup, sync, canary too)
    scheduler_peak_rss_mb: float
    apiserver_cpu_s: float  # during the measured phase
    setup_s: float
    ready_s: float  # scheduler start -> canary bound
    # The machine's speed (bench.probe): fixed-loop CPU ms just before and just after the
    # measured phase. The same work costs more CPU when the host is busier.
    probe_ms: list[float] = field(default_factory=list)
    error: str | None = None
    startup_failure: bool = False  # the scheduler exited before binding the canary
    notes: list[str] = field(default_factory=list)
    lean: bool = False  # etcd and kube-apiserver only (see LocalCluster.up)
    # CPUs each process may run on, read back from /proc (scheduler, kube-apiserver, etcd,
    # harness): proves the pinning.
    cpus: dict[str, str] = field(default_factory=dict)
    # The scheduler's API requests in the measured phase (bench.scrape.scheduler_requests).
    api_requests: dict[str, Any] = field(default_factory=dict)
    # Scheduling attempts in the measured phase, by result (bench.scrape.attempts).
    attempts: dict[str, float] = field(default_factory=dict)
    # Corral only: the engine's phases in the measured phase (bench.scrape.engine_phases).
    engine_phases: dict[str, dict[str, float]] = field(default_factory=dict)
    wall_s: float = 0.0  # the whole run: cluster up to down

    def to_json(self) -> JSON:
        return asdict(self)


def _namespace(name: str) -> JSON:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}


def _priority_class(name: str, value: int) -> JSON:
    return {
        "apiVersion": "scheduling.k8s.io/v1",
        "kind": "PriorityClass",
        "metadata": {"name": name},
        "value": value,
    }


async def create_all(
    client: AsyncClient,
    objects: list[JSON],
    concurrency: int,
    counter: Counter[str] | None = None,
    collection: str = "/api/v1/namespaces/{namespace}/pods",
) -> list[float]:
    """POST every object to ``collection`` (pods by default; only the namespace varies);
    returns send times. ``counter`` counts every attempt as ``POST pods`` (the harness's own API
    requests)."""
    sent = [0.0] * len(objects)
    semaphore = asyncio.Semaphore(concurrency)

    async def one(i: int, obj: JSON) -> None:
        async with semaphore:
            path = collection.format(namespace=obj["metadata"]["namespace"])
            sent[i] = time.monotonic()
            for attempt in range(5):
                if counter is not None:
                    counter["POST pods"] += 1
                try:
                    await client.request("POST", path, body=obj)
                    return
                except ApiError as exc:
                    if exc.status not in (0, 429, 500, 503, 504) or attempt == 4:
                        raise
                    await asyncio.sleep(0.2 * (attempt + 1))

    await asyncio.gather(*(one(i, o) for i, o in enumerate(objects)))
    return sent


class BoundWatcher:
    """Records the first time each pod of a namespace is seen with ``spec.nodeName``."""

    def __init__(self, client: AsyncClient, namespace: str) -> None:
        self.client = client
        self.path = f"/api/v1/namespaces/{namespace}/pods"
        self.bound: dict[str, float] = {}
        self.nodes: dict[str, str] = {}
        self.progress = asyncio.Event()
        self._version = ""

    async def prime(self) -> None:
        page = await self.client.request("GET", self.path, params={"limit": 1})
        self._version = page["metadata"]["resourceVersion"]

    async def run(self) -> None:
        while True:
            params: dict[str, str | int | bool] = {
                "resourceVersion": self._version,
                "fieldSelector": "spec.nodeName!=",
                "timeoutSeconds": 3600,
            }
            try:
                async for event in self.client.watch(self.path, params):
                    obj = event.get("object") or {}
                    version = obj.get("metadata", {}).get("resourceVersion")
                    if version:
                        self._version = version
                    if event.get("type") in ("ADDED", "MODIFIED"):
                        name = obj["metadata"]["name"]
                        node = obj.get("spec", {}).get("nodeName")
                        if node and name not in self.bound:
                            self.bound[name] = time.monotonic()
                            self.nodes[name] = node
                            self.progress.set()
            except ApiError:
                await asyncio.sleep(0.2)  # resume from the last version seen


async def _wait_bound(
    admin: AsyncClient, namespace: str, name: str, timeout: float, scheduler: SchedulerProcess
) -> bool:
    deadline = time.monotonic() + timeout
    path = f"/api/v1/namespaces/{namespace}/pods/{name}"
    while time.monotonic() < deadline and scheduler.alive():
        obj = await admin.request("GET", path)
        if obj.get("spec", {}).get("nodeName"):
            return True
        await asyncio.sleep(0.1)
    return False


async def _wait_gone(admin: AsyncClient, path: str, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            await admin.request("GET", path)
        except ApiError as exc:
            if exc.not_found:
                return
            raise
        await asyncio.sleep(0.1)
    raise TimeoutError(f"{path} still exists after {timeout:.0f}s")


async def _all_tried(admin: AsyncClient, namespace: str, count: int, timeout: float) -> bool:
    """True once ``count`` pods of ``namespace`` carry PodScheduled=False (tried, unschedulable)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        items = (await admin.request("GET", f"/api/v1/namespaces/{namespace}/pods"))["items"]
        tried = sum(
            1
            for p in items
            if any(
                c.get("type") == "PodScheduled" and c.get("status") == "False"
                for c in p.get("status", {}).get("conditions") or []
            )
        )
        if tried >= count:
            return True
        await asyncio.sleep(0.5)
    return False


class _Churn:
    """Every ``interval`` s: create a node, a Service and an unschedulable pod; delete the
    previous round's (scheduler_perf's churn op in ``recreate`` mode)."""

    def __init__(
        self,
        admin: AsyncClient,
        scheduler_name: str,
        interval: float,
        *,
        lean: bool = False,
        counter: Counter[str] | None = None,
    ) -> None:
        self.admin = admin
        self.scheduler_name = scheduler_name
        self.interval = interval
        self.lean = lean  # no kwok: the node is created Ready
        self.counter = counter if counter is not None else Counter()
        self.rounds = 0

    async def run(self) -> None:
        previous: list[str] = []
        while True:
            i = self.rounds
            node = fake_node(f"churn-{i}", cpu="4", memory="32Gi", pods=110, ready=self.lean)
            service = {
                "apiVersion": "v1",
                "kind": "Service",
                "metadata": {"name": f"churn-{i}", "namespace": INIT_NAMESPACE},
                "spec": {"ports": [{"port": 80}], "selector": {"churn": str(i)}},
            }
            churn_pod = large_cpu_high_priority_pod(
                f"churn-{i}", INIT_NAMESPACE, self.scheduler_name
            )
            paths = [
                "/api/v1/nodes",
                f"/api/v1/namespaces/{INIT_NAMESPACE}/services",
                f"/api/v1/namespaces/{INIT_NAMESPACE}/pods",
            ]
            for path, obj in zip(paths, (node, service, churn_pod), strict=True):
                self.counter[f"POST {path.rsplit('/', 1)[1]}"] += 1
                with contextlib.suppress(ApiError):
                    await self.admin.request("POST", path, body=obj)
            for path in previous:
                self.counter[f"DELETE {path.rsplit('/', 2)[1]}"] += 1
                with contextlib.suppress(ApiError):
                    await self.admin.request(
                        "DELETE", path, body={"gracePeriodSeconds": 0, "kind": "DeleteOptions",
                                              "apiVersion": "v1"}
                    )  # fmt: skip
            previous = [f"{p}/churn-{i}" for p in paths]
            self.rounds += 1
            await asyncio.sleep(self.interval)


class _RelabelChurn:
    """Once every pod is created and has been tried once, round after round: one more node gets
    :data:`OPEN_LABEL` (an event that helps the pods waiting for an open node), then another one
    a changed noise label (an event that helps nobody). A queue without hints retries every
    waiting pod on both; with hints, on the first only. Each step waits until the scheduler's
    attempts have settled (``settled``), so the counts do not depend on its speed."""

    def __init__(
        self,
        admin: AsyncClient,
        settled: Callable[[], Awaitable[None]],
        *,
        counter: Counter[str],
    ) -> None:
        self.admin = admin
        self.settled = settled
        self.counter = counter

    async def _label(self, node: str, labels: dict[str, str]) -> None:
        self.counter["PATCH nodes"] += 1
        with contextlib.suppress(ApiError):
            await self.admin.request(
                "PATCH", f"/api/v1/nodes/{node}", body={"metadata": {"labels": labels}},
                content_type=CONTENT_MERGE_PATCH,
            )  # fmt: skip
        await self.settled()

    async def run(self, *, after: asyncio.Task[Any], pods: int) -> None:
        await asyncio.wait({after})
        await _all_tried(self.admin, MEASURED_NAMESPACE, pods, READY_TIMEOUT)
        await self.settled()
        self.counter["GET nodes"] += 1
        listed = await self.admin.request("GET", "/api/v1/nodes")
        nodes = sorted(n["metadata"]["name"] for n in listed["items"])
        for i, node in enumerate(nodes):
            await self._label(node, {OPEN_LABEL: "true"})
            await self._label(nodes[(i + len(nodes) // 2) % len(nodes)], {NOISE_LABEL: str(i)})


async def _attempts_settled(
    cluster: LocalCluster, scheduler: SchedulerProcess, quiet: float = SETTLE_QUIET_S
) -> None:
    """Until the scheduler's attempt counter has not moved for ``quiet`` seconds (at most
    ``SETTLE_TIMEOUT_S``). Pods moved by an event are popped at once even while backing off
    (SchedulerPopFromBackoffQ, both schedulers), so a quiet counter means the event is done."""
    last, since = -1.0, time.monotonic()
    deadline = since + SETTLE_TIMEOUT_S
    while time.monotonic() < deadline:
        total = last
        with contextlib.suppress(OSError):  # a failed scrape: try again
            text = await asyncio.to_thread(_scheduler_metrics, cluster, scheduler)
            total = sum(scrape.attempts(scrape.parse(text, scrape.ATTEMPTS[:1])).values())
        if total != last:
            last, since = total, time.monotonic()
        elif time.monotonic() - since >= quiet:
            return
        await asyncio.sleep(0.25)


def setup_cluster(
    cluster: LocalCluster, workload: Workload, scheduler_name: str, *, lean: bool = False
) -> None:
    """Namespaces, PriorityClasses, nodes (schedulable before this returns) and init pods.
    ``lean``: the nodes are created Ready (no kwok, no not-ready taint to lift)."""
    admin = cluster.admin
    for namespace in (INIT_NAMESPACE, MEASURED_NAMESPACE):
        admin.create(_namespace(namespace))
    for name, value in PRIORITY_CLASSES.items():
        admin.create(_priority_class(name, value))
    nodes = cluster.add_nodes(
        workload.nodes,
        cpu="4",
        memory="32Gi",
        pods=110,
        zones=workload.zones,
        labels=dict(workload.node_labels),
        wait=False,
        ready=lean,
    )
    if lean:
        wait_ready(admin, nodes, timeout=60.0, schedulable=True)  # proves they are, at once
    else:
        make_schedulable(admin, nodes)
    if workload.devices_per_node:
        dra_scene.publish(admin, nodes, workload.devices_per_node)
        claims = dra_scene.claims_for(workload.measured_pods)
        dra_scene.create_claims(admin, MEASURED_NAMESPACE, claims)
        dra_scene.create_claims(admin, INIT_NAMESPACE, dra_scene.claims_for(workload.init_pods))
    if workload.pods_per_group:  # before the measured phase, as scheduler_perf's createPodGroups
        groups = workload.pod_groups(MEASURED_NAMESPACE)
        asyncio.run(_create_sync(cluster.admin, groups, POD_GROUPS_COLLECTION))
    if workload.sp_gang_sizes:  # scheduler-plugins' PodGroups, likewise before
        sp_scene.install(admin)
        groups = workload.sp_pod_groups(MEASURED_NAMESPACE)
        asyncio.run(_create_sync(cluster.admin, groups, sp_scene.POD_GROUPS_COLLECTION))
    if workload.sp_quotas:  # scheduler-plugins' ElasticQuotas, likewise before
        sp_scene.install(admin, crd=sp_scene.ELASTIC_QUOTA_CRD, kind="ElasticQuota")
        quotas = workload.elastic_quotas(INIT_NAMESPACE, MEASURED_NAMESPACE)
        asyncio.run(_create_sync(cluster.admin, quotas, sp_scene.ELASTIC_QUOTAS_COLLECTION))
    if workload.init is not None and workload.init_pods:
        pods = []
        for i in range(workload.init_pods):
            obj = workload.init(f"init-{i}", INIT_NAMESPACE, scheduler_name)
            if workload.init_bound:
                obj["spec"]["nodeName"] = _init_node(workload, i, nodes)
            pods.append(obj)
        asyncio.run(_create_sync(cluster.admin, pods))
        if workload.devices_per_node:
            dra_scene.allocate_for_bound_pods(
                admin, INIT_NAMESPACE, nodes, workload.devices_per_node
            )


def _init_node(workload: Workload, index: int, nodes: list[str]) -> str:
    """Round-robin; a DRA workload's pod goes where its claim is allocated."""
    if workload.devices_per_node:
        return dra_scene.claim_node(index // dra_scene.PODS_PER_CLAIM, nodes)
    return nodes[index % len(nodes)]


POD_GROUPS_COLLECTION: Final = "/apis/scheduling.k8s.io/v1beta1/namespaces/{namespace}/podgroups"


async def _create_sync(
    admin: Client, objects: list[JSON], collection: str = "/api/v1/namespaces/{namespace}/pods"
) -> None:
    client = AsyncClient(admin, qps=0, burst=1)
    try:
        await create_all(client, objects, CREATE_CONCURRENCY, collection=collection)
    finally:
        await client.close()


async def _ready(
    admin: AsyncClient,
    workload: Workload,
    scheduler: SchedulerProcess,
    config: SchedulerConfig,
    result: RunResult,
) -> None:
    """Ready: a canary pod gets bound (and is removed, leaving the state as it was)."""
    canary = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "canary", "namespace": "default"},
        "spec": {
            "schedulerName": config.scheduler_name,
            "terminationGracePeriodSeconds": 0,
            "containers": [
                {"name": "c", "image": "registry.k8s.io/pause:3.10",
                 "resources": {"requests": {"cpu": "1m"}}}
            ],
        },
    }  # fmt: skip
    await admin.request("POST", "/api/v1/namespaces/default/pods", body=canary)
    if not await _wait_bound(admin, "default", "canary", READY_TIMEOUT, scheduler):
        if not scheduler.alive():
            result.startup_failure = True
        state = "exited" if not scheduler.alive() else f"timed out after {READY_TIMEOUT:.0f}s"
        raise RuntimeError(
            f"{scheduler.kind} did not bind the canary pod ({state}); log tail:\n"
            f"{scheduler.log_tail(10)}"
        )
    result.ready_s = time.monotonic() - scheduler.started
    await admin.request(
        "DELETE",
        "/api/v1/namespaces/default/pods/canary",
        body={"apiVersion": "v1", "kind": "DeleteOptions", "gracePeriodSeconds": 0},
    )
    await _wait_gone(admin, "/api/v1/namespaces/default/pods/canary")
    # The ceiling tries no pod: Unschedulable's init pods stay as they were created.
    pending = workload.init_pods if not workload.init_bound and scheduler.kind != CEILING else 0
    if pending and not await _all_tried(admin, INIT_NAMESPACE, pending, READY_TIMEOUT):
        result.notes.append("not every unschedulable init pod was tried before measuring")


async def _measure(
    cluster: LocalCluster,
    workload: Workload,
    scheduler: SchedulerProcess,
    config: SchedulerConfig,
    *,
    stall_timeout: float,
    result: RunResult,
    profile: Path | None = None,
    lean: bool = False,
    apiserver_pprof: profiling.ApiServerPprof | None = None,
) -> None:
    admin = AsyncClient(cluster.admin, qps=0, burst=1)
    watch_client = AsyncClient(cluster.admin, qps=0, burst=1)
    tasks: list[asyncio.Task[None]] = []
    profiler: profiling.Profiler | None = None
    apiserver_profile: profiling.ApiServerProfile | None = None
    try:
        await _ready(admin, workload, scheduler, config, result)
        if profile is not None:
            profiler = profiling.Profiler(scheduler.pid, profile)
        watcher = BoundWatcher(watch_client, MEASURED_NAMESPACE)
        await watcher.prime()
        tasks.append(asyncio.create_task(watcher.run()))
        harness: Counter[str] = Counter()  # the harness's own requests in the measured phase
        names = [f"pod-{i}" for i in range(workload.measured_pods)]
        objects = [
            workload.measured_pod(n, MEASURED_NAMESPACE, config.scheduler_name) for n in names
        ]
        apiserver_pid = cluster.component("kube-apiserver").pid
        result.probe_ms.append(probe.cpu_ms())
        counters0 = _scrape(cluster, scheduler, result)
        if workload.churn_interval and workload.churn != "relabel":
            churn = _Churn(admin, config.scheduler_name, workload.churn_interval, lean=lean,
                           counter=harness)  # fmt: skip
            tasks.append(asyncio.create_task(churn.run()))
        cpu0, api0 = scheduler.usage().cpu_seconds, procstat.cpu_seconds(apiserver_pid)
        if apiserver_pprof is not None:
            name = f"{workload.name}-{scheduler.kind}-r{result.repetition}.pprof"
            apiserver_profile = profiling.ApiServerProfile(
                cluster.admin, apiserver_pprof.directory / name, apiserver_pprof.seconds
            )
        t0 = time.monotonic()
        creating = asyncio.create_task(create_all(admin, objects, CREATE_CONCURRENCY, harness))
        if workload.churn_interval and workload.churn == "relabel":
            relabel = _RelabelChurn(
                admin, lambda: _attempts_settled(cluster, scheduler), counter=harness
            )
            tasks.append(asyncio.create_task(relabel.run(after=creating, pods=len(names))))
        await _until_bound(
            watcher, len(names), creating, scheduler, stall_timeout=stall_timeout, result=result
        )
        sent = await creating
        for task in tasks[1:]:  # the churn: its requests end with the phase
            task.cancel()
        _record_usage(result, scheduler, cpu0, apiserver_pid, api0)
        counters1 = _scrape(cluster, scheduler, result)
        _record_counters(result, counters0, counters1, harness, len(watcher.bound))

        _summarise(result, dict(zip(names, sent, strict=True)), watcher.bound, t0)
        if apiserver_profile is not None and apiserver_pprof is not None:
            missing = apiserver_profile.wait(timeout=apiserver_pprof.seconds + 35.0)
            if missing:
                result.notes.append(missing)
    finally:
        if profiler is not None:
            profiler.stop()
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError, ApiError):
                await task
        await admin.close()
        await watch_client.close()


def _record_usage(
    result: RunResult, scheduler: SchedulerProcess, cpu0: float, apiserver_pid: int, api0: float
) -> None:
    """The measured phase is over: CPU and memory figures, then the machine probe."""
    usage = scheduler.usage()
    result.scheduler_cpu_s = usage.cpu_seconds - cpu0
    result.scheduler_cpu_total_s = usage.cpu_seconds
    result.scheduler_peak_rss_mb = usage.peak_rss_bytes / 2**20
    result.apiserver_cpu_s = procstat.cpu_seconds(apiserver_pid) - api0
    result.probe_ms.append(probe.cpu_ms())


def _summarise(
    result: RunResult, created: dict[str, float], seen: dict[str, float], t0: float
) -> None:
    bound = {n: t for n, t in seen.items() if n in created}
    result.bound = len(bound)
    result.complete = len(bound) == len(created)
    result.duration_s = max(bound.values(), default=t0) - t0
    result.throughput_mean = len(bound) / result.duration_s if result.duration_s > 0 else 0.0
    result.throughput_series = stats.per_second([t - t0 for t in bound.values()])
    result.created_series = stats.per_second([t - t0 for t in created.values()])
    result.latency_s = stats.percentiles([bound[n] - created[n] for n in bound])


async def _until_bound(
    watcher: BoundWatcher,
    count: int,
    creating: asyncio.Task[list[float]],
    scheduler: SchedulerProcess,
    *,
    stall_timeout: float,
    result: RunResult,
) -> None:
    """Until ``count`` pods are bound, or nothing was bound for ``stall_timeout`` seconds after
    the last creation, or the scheduler died (the last two are the run's error)."""
    last_progress = time.monotonic()
    while len(watcher.bound) < count:
        watcher.progress.clear()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(watcher.progress.wait(), timeout=1.0)
        if watcher.progress.is_set() or not creating.done():
            last_progress = time.monotonic()
        elif time.monotonic() - last_progress > stall_timeout:
            result.error = (
                f"stalled: {len(watcher.bound)}/{count} bound, nothing bound for "
                f"{stall_timeout:.0f}s"
            )
            return
        if not scheduler.alive():
            result.error = f"{scheduler.kind} exited; log tail:\n{scheduler.log_tail()}"
            return


def _scheduler_metrics(cluster: LocalCluster, scheduler: SchedulerProcess) -> str:
    """The scheduler's /metrics text: Corral's over HTTP; kube-scheduler's over HTTPS with the
    admin's token and its self-signed certificate."""
    if scheduler.kind.startswith("corral"):
        return scrape.fetch(f"http://127.0.0.1:{scheduler.port}/metrics")
    token = (cluster.admin.authorization() or "").removeprefix("Bearer ")
    return scrape.fetch(f"https://127.0.0.1:{scheduler.port}/metrics", token, verify=False)


def _scrape(
    cluster: LocalCluster, scheduler: SchedulerProcess, result: RunResult
) -> dict[str, scrape.Samples]:
    """The API server's request counters and the scheduler's attempts; for Corral, the engine's
    phase counters too. A failed scrape is a note, not a failed run."""
    out: dict[str, scrape.Samples] = {}
    admin = cluster.admin
    token = (admin.authorization() or "").removeprefix("Bearer ")
    try:
        text = scrape.fetch(f"{cluster.state.server}/metrics", token, admin.ca_file)
        out["apiserver"] = scrape.parse(text, scrape.APISERVER)
    except OSError as exc:
        result.notes.append(f"kube-apiserver /metrics: {exc}")
    if scheduler.kind == CEILING:
        return out  # the ceiling's binder serves no metrics
    try:
        text = _scheduler_metrics(cluster, scheduler)
        if scheduler.kind.startswith("corral"):
            out["engine"] = scrape.parse(text, scrape.ENGINE)
        out["attempts"] = scrape.parse(text, scrape.ATTEMPTS)
    except OSError as exc:
        result.notes.append(f"{scheduler.kind} /metrics: {exc}")
    return out


def _record_counters(
    result: RunResult,
    before: dict[str, scrape.Samples],
    after: dict[str, scrape.Samples],
    harness: Counter[str],
    pods: int,
) -> None:
    if "apiserver" in before and "apiserver" in after:
        grown = scrape.growth(before["apiserver"], after["apiserver"])
        result.api_requests = scrape.scheduler_requests(grown, harness, pods)
        result.api_requests["harness"] = dict(harness)
    if "attempts" in before and "attempts" in after:
        result.attempts = scrape.attempts(scrape.growth(before["attempts"], after["attempts"]))
    if "engine" in before and "engine" in after:
        result.engine_phases = scrape.engine_phases(
            scrape.growth(before["engine"], after["engine"])
        )


CLUSTER_START_ATTEMPTS: Final = 2


def _start_cluster(
    directory: Path,
    *,
    lean: bool,
    say: Any,
    profiling: bool = False,
    feature_gates: dict[str, bool] | None = None,
) -> LocalCluster | None:
    """A fresh control plane, started again once if it fails (nothing is measured yet, so a
    second start biases nothing); None when both attempts failed, each failure said."""
    for attempt in range(1, CLUSTER_START_ATTEMPTS + 1):
        try:
            return LocalCluster.up(
                directory / f"cluster-{attempt}", lean=lean, apiserver_profiling=profiling,
                feature_gates=feature_gates or None,
            )  # fmt: skip
        except ProcessError as exc:
            say(f"  control plane start {attempt} of {CLUSTER_START_ATTEMPTS} failed: "
                f"{str(exc).splitlines()[0]}")  # fmt: skip
    return None


def run_one(
    workload: Workload,
    kind: str,
    config: SchedulerConfig,
    *,
    order: int,
    repetition: int,
    stall_timeout: float = 60.0,
    keep_logs: Path | None = None,
    profile: Path | None = None,
    say: Any = print,
    lean: bool = False,
    pin: Pinning | None = None,
    apiserver_pprof: profiling.ApiServerPprof | None = None,
) -> RunResult:
    """One workload with one scheduler on a fresh cluster, always torn down afterwards.

    ``profile``: if set, py-spy samples the scheduler during the measured phase into this file
    (collapsed stacks). ``lean``: etcd and kube-apiserver only. ``pin``: the scheduler is
    started on ``pin.scheduler``'s CPUs (the caller has pinned itself, and so the control
    plane it starts, to ``pin.rest``). ``apiserver_pprof``: kube-apiserver is CPU-profiled during
    the measured phase (:class:`bench.profiling.ApiServerProfile`)."""
    started = time.monotonic()
    result = RunResult(
        workload=workload.name, scheduler=kind, params=workload.params(), order=order,
        repetition=repetition, measured_pods=workload.measured_pods, bound=0, complete=False,
        duration_s=0.0, throughput_mean=0.0, throughput_series=[], created_series=[],
        latency_s={}, scheduler_cpu_s=0.0, scheduler_cpu_total_s=0.0,
        scheduler_peak_rss_mb=0.0, apiserver_cpu_s=0.0, setup_s=0.0, ready_s=0.0,
        lean=lean,
    )  # fmt: skip
    with tempfile.TemporaryDirectory(prefix=f"corral-bench-{kind}-") as tmp:
        cluster = _start_cluster(
            Path(tmp), lean=lean, say=say, profiling=apiserver_pprof is not None,
            feature_gates=workload.feature_gates,
        )  # fmt: skip
        if cluster is None:
            result.error = "the control plane did not start (twice); see the log above"
            result.wall_s = time.monotonic() - started
            say(f"  {workload.name:<26} {kind:<8} ERROR {result.error}")
            return result
        scheduler: SchedulerProcess | None = None
        try:
            t = time.monotonic()
            setup_cluster(cluster, workload, config.scheduler_name, lean=lean)
            result.setup_s = time.monotonic() - t
            if workload.profile_extra:
                config = replace(config, profile_extra={**config.profile_extra,
                                                        **workload.profile_extra})  # fmt: skip
            path = config.write(cluster)
            with pinning.on_cpus(pin.scheduler if pin else None):
                extra = list(config.corral_args) if kind.startswith("corral") else []
                if kind != CEILING:
                    extra += gate_args(workload.feature_gates)
                scheduler = SchedulerProcess.start(
                    kind, cluster, path, extra_args=extra, scheduler_name=config.scheduler_name
                )
            result.cpus = _cpus(cluster, scheduler)
            asyncio.run(
                _measure(
                    cluster,
                    workload,
                    scheduler,
                    config,
                    stall_timeout=stall_timeout,
                    result=result,
                    profile=profile,
                    lean=lean,
                    apiserver_pprof=apiserver_pprof,
                )
            )
        except Exception as exc:  # a failed run is reported, not fatal to the whole benchmark
            result.error = f"{type(exc).__name__}: {exc}"
        finally:
            if scheduler is not None:
                scheduler.stop()
                if keep_logs is not None:
                    keep_logs.mkdir(parents=True, exist_ok=True)
                    with contextlib.suppress(OSError):
                        target = keep_logs / f"{workload.name}-{kind}-r{repetition}.log"
                        target.write_bytes(scheduler.log.read_bytes()[-2_000_000:])
            cluster.down()
    result.wall_s = time.monotonic() - started
    say(
        f"  {workload.name:<26} {kind:<8} {result.throughput_mean:8.1f} pods/s  "
        f"p99 {result.latency_s.get('p99', 0):6.2f}s  cpu {result.scheduler_cpu_s:6.1f}s  "
        f"rss {result.scheduler_peak_rss_mb:6.0f}MB"
        + (f"  ERROR {result.error.splitlines()[0]}" if result.error else "")
    )
    return result


def _cpus(cluster: LocalCluster, scheduler: SchedulerProcess) -> dict[str, str]:
    pids = {"scheduler": scheduler.pid, "harness": os.getpid()}
    for name in ("kube-apiserver", "etcd"):
        pids[name] = cluster.component(name).pid
    return {name: pinning.allowed(pid) for name, pid in pids.items()}
