"""Soak (not a test): an hour of churn against one engine, its resources sampled every minute.

    .venv/bin/python -m bench.soak                         # make soak: 60 minutes, ~50 pods/s
    .venv/bin/python -m bench.soak --minutes 12 --rate 20  # a shorter look
    .venv/bin/python -m bench.soak --docs                  # also the plot in docs/reliability/

The cluster is its own (kube-apiserver, etcd, kube-controller-manager, kwok; no upstream
scheduler) with :data:`NODES` kwok nodes in three zones, each offering :data:`DEVICES_PER_NODE`
DRA devices. One ``corral scheduler`` (leader election on, one replica, its Lease renewed all
along) schedules the churn of :mod:`bench.soak_workload`: jobs of pods created at ``--rate``
pods per second and deleted after their lifetime, with claims, volumes, spread and
anti-affinity. Every ``--interval`` seconds the sampler records the engine's RSS, threads,
open files, every in-memory structure's entries (``corral_engine_entries``, upstream's
``scheduler_scheduler_cache_size``) and the churn's own counts; ``soak.jsonl`` holds one line
per sample, ``summary.json`` the verdict (:mod:`bench.soak_report`).

It measures growth, not speed: a shared machine only lowers the rate it reaches (reported).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Final

import yaml
from prometheus_client.parser import text_string_to_metric_families

from bench import procstat, soak_report, soak_workload
from corral.k8s import JSON, ApiError, Client
from corral.testing import LocalCluster
from corral.testing.processes import free_port
from corral_dev.dra import TestDriver

RESULTS: Final = Path("bench/results")
NODES: Final = 40
DEVICES_PER_NODE: Final = 16
NAMESPACES: Final = ("soak-0", "soak-1", "soak-2", "soak-3")
SCHEDULER: Final = "corral-soak"
WORKERS: Final = 24
# kube-controller-manager's client at its default 20 QPS cannot keep up with the churn's claims
# (one created, its pod's status written, one deleted, per pod) and volumes (the PV
# controller's phase and binding writes): PVs stayed Pending and pods waited for them. A
# cluster with this churn runs it higher; the soak measures the engine, not that bottleneck.
CONTROLLER_MANAGER_ARGS: Final = ("--kube-api-qps=200", "--kube-api-burst=400")


def engine_config(kubeconfig: Path) -> JSON:
    return {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "clientConnection": {"kubeconfig": str(kubeconfig), "qps": 500, "burst": 1000},
        "leaderElection": {
            "leaderElect": True,
            "resourceName": SCHEDULER,
            "resourceNamespace": "default",
        },
        "profiles": [{"schedulerName": SCHEDULER}],
    }


def _proc(pid: int) -> dict[str, float]:
    status = dict(
        line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines()
    )
    return {
        "rss_mib": int(status["VmRSS"].split()[0]) / 1024,
        "threads": int(status["Threads"]),
        "open_files": len(os.listdir(f"/proc/{pid}/fd")),
        "cpu_s": procstat.cpu_seconds(pid),
    }


def _scrape(port: int) -> dict[str, float]:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=30) as response:
        text = response.read().decode()
    out: dict[str, float] = {}
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            if s.name == "corral_engine_entries":
                out[s.labels["structure"]] = s.value
            elif s.name == "scheduler_scheduler_cache_size":
                out[f"cache_size.{s.labels['type']}"] = s.value
            elif s.name == "scheduler_schedule_attempts_total":
                key = f"attempts.{s.labels['result']}"
                out[key] = out.get(key, 0.0) + s.value
            elif s.name == "scheduler_pending_pods":
                out[f"pending.{s.labels['queue']}"] = s.value
    return out


class Churn:
    """Creates jobs at the target rate and deletes them when due, on a pool of workers."""

    def __init__(self, kube: Client, rate: float, seed: int) -> None:
        self.kube = kube
        self.rate = rate
        self.rng = random.Random(seed)
        self.counts: Counter[str] = Counter()
        self.live: list[soak_workload.Job] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._pool = ThreadPoolExecutor(WORKERS, thread_name_prefix="churn")
        # Backpressure: a slow machine lowers the rate instead of queueing work without end.
        self._slots = threading.BoundedSemaphore(4 * WORKERS)

    def _submit(self, work: Any, job: soak_workload.Job) -> None:
        self._slots.acquire()
        future = self._pool.submit(work, job)
        future.add_done_callback(lambda _: self._slots.release())

    def _create(self, job: soak_workload.Job) -> None:
        for obj in job.objects:
            try:
                self.kube.create(obj)
            except ApiError as exc:
                self.counts[f"create errors {exc.status}"] += 1
                continue
            self.counts[f"created {obj['kind']}"] += 1

    def _delete(self, job: soak_workload.Job) -> None:
        for obj in reversed(job.objects):
            meta = obj["metadata"]
            try:
                if obj["kind"] == "Pod":
                    body = {"apiVersion": "v1", "kind": "DeleteOptions", "gracePeriodSeconds": 0}
                    path = f"/api/v1/namespaces/{meta['namespace']}/pods/{meta['name']}"
                    self.kube.request("DELETE", path, body=body)
                else:
                    self.kube.delete(obj["apiVersion"], obj["kind"], meta["name"],
                                     meta.get("namespace"))  # fmt: skip
            except ApiError as exc:
                if not exc.not_found:
                    self.counts[f"delete errors {exc.status}"] += 1
                continue
            self.counts[f"deleted {obj['kind']}"] += 1

    def run(self, until: float) -> None:
        """Create jobs at ``rate`` pods/s and delete expired ones until ``until``, then delete
        everything left."""
        interval = soak_workload.JOB_PODS / self.rate
        next_at = time.monotonic()
        index = 0
        while time.monotonic() < until and not self._stop.is_set():
            now = time.monotonic()
            ns = NAMESPACES[index % len(NAMESPACES)]
            job = soak_workload.job(self.rng, ns, SCHEDULER, now)
            index += 1
            self._submit(self._create, job)
            with self._lock:
                self.live.append(job)
                due = [j for j in self.live if j.expires <= now]
                self.live = [j for j in self.live if j.expires > now]
            for expired in due:
                self._submit(self._delete, expired)
            next_at += interval
            time.sleep(max(0.0, next_at - time.monotonic()))
            if next_at < time.monotonic() - 5:
                next_at = time.monotonic()  # behind: do not burst to catch up
        with self._lock:
            left, self.live = self.live, []
        for job in left:
            self._submit(self._delete, job)
        self._pool.shutdown(wait=True)

    def stop(self) -> None:
        self._stop.set()


@contextmanager
def _engine(cluster: LocalCluster, out: Path) -> Iterator[tuple[subprocess.Popen[bytes], int]]:
    config = out / "engine.yaml"
    config.write_text(yaml.safe_dump(engine_config(cluster.kubeconfig)))
    port = free_port()
    with (out / "engine.log").open("ab") as log:
        process = subprocess.Popen(
            [sys.executable, "-m", "corral", "scheduler", "--config", str(config),
             f"--bind-address=127.0.0.1:{port}"],
            stdout=log, stderr=subprocess.STDOUT, env={**os.environ, "POD_NAME": "soak-0"},
        )  # fmt: skip
    try:
        yield process, port
    finally:
        process.terminate()
        try:
            process.wait(30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _prepare(cluster: LocalCluster) -> TestDriver:
    kube = cluster.admin
    for ns in NAMESPACES:
        kube.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
    nodes = cluster.add_nodes(NODES, prefix="soak", cpu="64", memory="256Gi", pods=110, zones=3)
    driver = TestDriver(kube, soak_workload.DRIVER)
    for node in nodes:
        driver.publish(node, soak_workload.devices(DEVICES_PER_NODE))
    for obj in soak_workload.setup_objects(list(NAMESPACES)):
        kube.create(obj)
    return driver


def _wait_metrics(port: int, process: subprocess.Popen[bytes], timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while True:
        if process.poll() is not None:
            raise RuntimeError(f"the engine exited with {process.returncode}")
        try:
            if _scrape(port).get("cache_size.nodes", 0) >= NODES:
                return
        except OSError:
            pass
        if time.monotonic() > deadline:
            raise RuntimeError("the engine never synced its nodes")
        time.sleep(1.0)


def run(args: argparse.Namespace) -> int:
    out = Path(args.out or RESULTS / time.strftime("soak-%Y%m%d-%H%M%S"))
    out.mkdir(parents=True, exist_ok=True)
    started_wall = time.strftime("%Y-%m-%dT%H:%M:%S%z")
    with tempfile.TemporaryDirectory(prefix="corral-soak-") as tmp:
        cluster = LocalCluster.up(
            Path(tmp) / "cluster", controller_manager_args=CONTROLLER_MANAGER_ARGS
        )
        try:
            _prepare(cluster)
            with _engine(cluster, out) as (process, port):
                _wait_metrics(port, process)
                samples = _soak(cluster, process, port, args, out)
        finally:
            cluster.down()
    summary = soak_report.summarize(samples, args.minutes, rate=args.rate)
    summary.update(command="python -m bench.soak " + " ".join(sys.argv[1:]),
                   started=started_wall, machine=procstat.machine())  # fmt: skip
    (out / "summary.json").write_text(json.dumps(summary, indent=1) + "\n")
    soak_report.plot(samples, out / "soak.png")
    if args.docs:
        soak_report.plot(samples, soak_report.DOCS_PLOT)
    print(soak_report.table(summary))
    print(f"results in {out}")
    return 0 if summary["flat"] else 1


def _soak(
    cluster: LocalCluster,
    process: subprocess.Popen[bytes],
    port: int,
    args: argparse.Namespace,
    out: Path,
) -> list[dict[str, Any]]:
    churn = Churn(cluster.admin, args.rate, args.seed)
    start = time.monotonic()
    end = start + args.minutes * 60
    worker = threading.Thread(target=churn.run, args=(end,), daemon=True)
    worker.start()
    samples: list[dict[str, Any]] = []
    with (out / "soak.jsonl").open("w") as log:
        next_sample = start + args.interval
        while time.monotonic() < end:
            time.sleep(max(0.0, next_sample - time.monotonic()))
            next_sample += args.interval
            if process.poll() is not None:
                churn.stop()
                raise RuntimeError(f"the engine exited with {process.returncode}")
            sample: dict[str, Any] = {
                "minute": round((time.monotonic() - start) / 60, 2),
                **_proc(process.pid),
                **_scrape(port),
                **{f"churn.{k}": v for k, v in churn.counts.items()},
            }
            samples.append(sample)
            log.write(json.dumps(sample) + "\n")
            log.flush()
            print(soak_report.line(sample), flush=True)
    churn.stop()
    worker.join()
    return samples


def main(argv: list[str] | None = None) -> int:
    summary = (__doc__ or "").split("\n")[0]
    parser = argparse.ArgumentParser(prog="python -m bench.soak", description=summary)
    parser.add_argument("--minutes", type=float, default=60.0)
    parser.add_argument("--rate", type=float, default=50.0, help="pods created per second")
    parser.add_argument("--interval", type=float, default=60.0, help="seconds between samples")
    parser.add_argument("--seed", type=int, default=36)
    parser.add_argument("--out", help="results directory (default bench/results/soak-<time>)")
    parser.add_argument("--docs", action="store_true", help=f"also plot to {soak_report.DOCS_PLOT}")
    return run(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
