"""Operator benchmark (not a test): the operator at fleet size.

    .venv/bin/python -m bench.operator_apply --profiles 1000           # its own cluster
    .venv/bin/python -m bench.operator_apply --dir /tmp/b --profiles 1 200   # a running one

For each count, ``corral operator`` runs as a subprocess and the harness creates that many
SchedulerProfiles (replicas 1, 16 creations in flight), watching them from before the first
creation (a watch, not a list every ``POLL_S`` seconds: :class:`Observer`). Per profile it
records when its creation was sent, when the operator had
applied its children and written its status (``status.observedGeneration`` reached the
profile's generation: the operator writes status only after applying), and when it became
``Ready=True`` (kube-controller-manager created the ReplicaSet and pod, kube-scheduler placed
it, kwok reported it ready, the operator saw it). Reported:

- **all applied**: from the first creation to the last profile's status; the target is 30 s
  at 200 profiles (issue 18) and 60 s at 1,000 (issue 38);
- **apply -> Ready** p50 / p95 / max per profile, and the part of it after the status was
  written (**rollout**: kube-controller-manager, kube-scheduler and kwok, not the operator);
- the operator's RSS when idle, at the end and at its peak (VmHWM), and its CPU seconds;
- the operator's **API requests per profile**, by method (its ``rest_client_requests_total``,
  scraped from its ``/metrics`` before and after; kopf's watch streams are not counted), and its
  **reconciles per profile** (``corral_reconcile_total``, every result).

``--py-spy`` samples the operator with py-spy from the first creation to the end of the count
(``<out>/operator-<count>.pyspy.txt``, collapsed stacks) and writes the functions ranked by
samples beside it (``.md``): where the operator's CPU goes.

Results go to ``<out>/operator.json`` and a line each on stdout. The profiles are deleted
after each count.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Final

from prometheus_client.parser import text_string_to_metric_families

from bench import procstat, profiling, stats
from corral.k8s import JSON, Client
from corral.testing import LocalCluster
from corral.testing.processes import free_port

ROOT = Path(__file__).resolve().parents[1]
API, KIND = "corral.dev/v1alpha1", "SchedulerProfile"
NAMESPACE: Final = "corral-bench"
POLL_S: Final = 0.25
TIMEOUT_S: Final = 900.0
RECONCILES: Final = "reconciles"


def target_applied_s(count: int) -> float:
    """Issue 18: 30 s at 200 profiles; issue 38: 60 s at 1,000."""
    return 30.0 if count <= 200 else 60.0


def wait_for_metrics(port: int, op: subprocess.Popen[bytes], timeout: float = 180.0) -> None:
    """Until the operator serves /metrics (it starts serving from kopf's startup handler)."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            requests_by_method(port)
            return
        except OSError:
            if op.poll() is not None or time.monotonic() > deadline:
                raise
            time.sleep(0.5)


def requests_by_method(port: int) -> dict[str, float]:
    """The operator's rest_client_requests_total, summed by method, and its reconciles
    (corral_reconcile_total, every result) under the key ``RECONCILES``."""
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as answer:
        text = answer.read().decode()
    out: dict[str, float] = {RECONCILES: 0.0}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name == "rest_client_requests_total":
                method = sample.labels["method"]
                out[method] = out.get(method, 0.0) + sample.value
            elif sample.name == "corral_reconcile_total":
                out[RECONCILES] += sample.value
    return out


def rss_mib(pid: int) -> tuple[float, float]:
    """(VmRSS, VmHWM) in MiB."""
    fields = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        fields[key] = value.strip()
    return int(fields["VmRSS"].split()[0]) / 1024, int(fields["VmHWM"].split()[0]) / 1024


def _condition(obj: JSON, kind: str) -> bool:
    for c in (obj.get("status") or {}).get("conditions") or []:
        if c.get("type") == kind:
            return bool(c.get("status") == "True")
    return False


def _applied(obj: JSON) -> bool:
    observed = (obj.get("status") or {}).get("observedGeneration")
    return observed is not None and int(observed) >= int(obj["metadata"].get("generation", 1))


def note(
    obj: JSON, now: float, wanted: set[str], applied: dict[str, float], ready: dict[str, float]
) -> None:
    """Record the first time ``obj`` (one of ``wanted``) was seen applied, and Ready."""
    name = obj["metadata"]["name"]
    if name not in wanted:
        return
    if name not in applied and _applied(obj):
        applied[name] = now
    if name not in ready and _condition(obj, "Ready"):
        ready[name] = now
        applied.setdefault(name, now)


class Observer:
    """Watches the profiles from before the first creation until every wanted one is Ready
    (or ``TIMEOUT_S``): each is timed when its watch event arrives. A watch, not a list every
    ``POLL_S``: listing 1,000 profiles four times a second cost the API server about 400 ms a
    list (``apiserver_request_duration_seconds``, 302 lists in a run), time the operator's own
    requests then waited for."""

    def __init__(self, kube: Client, names: list[str]) -> None:
        self.kube = kube
        self.wanted = set(names)
        self.applied: dict[str, float] = {}
        self.ready: dict[str, float] = {}
        self.done = threading.Event()
        self.path = kube.resource(API, KIND).path(None)
        answer = kube.request("GET", self.path)
        self.version = str(answer["metadata"]["resourceVersion"])
        for obj in answer.get("items") or []:
            note(obj, time.monotonic(), self.wanted, self.applied, self.ready)
        self.thread = threading.Thread(target=self._watch, name="observer", daemon=True)
        self.thread.start()

    def _watch(self) -> None:
        while not self.done.is_set():
            params: dict[str, str | int | bool] = {"watch": "true", "resourceVersion": self.version,
                      "allowWatchBookmarks": "true", "timeoutSeconds": 30}  # fmt: skip
            try:
                for event in self.kube.stream(self.path, params=params, timeout=60):
                    obj = event.get("object") or {}
                    if event.get("type") == "ERROR":
                        # 410 Gone: start again from a fresh list.
                        answer = self.kube.request("GET", self.path)
                        self.version = str(answer["metadata"]["resourceVersion"])
                        for item in answer.get("items") or []:
                            note(item, time.monotonic(), self.wanted, self.applied, self.ready)
                        break
                    self.version = str(obj["metadata"]["resourceVersion"])
                    if event.get("type") in ("ADDED", "MODIFIED"):
                        note(obj, time.monotonic(), self.wanted, self.applied, self.ready)
                    if len(self.ready) >= len(self.wanted):
                        self.done.set()
                        return
            except Exception as exc:  # a dropped watch resumes from the last version seen
                print(f"warning: profile watch: {exc}", file=sys.stderr)
                time.sleep(POLL_S)

    def wait(self, created: dict[str, float]) -> tuple[dict[str, float], dict[str, float]]:
        """Until every profile is Ready; the time each was first seen applied and Ready."""
        start = min(created.values())
        while not self.done.wait(POLL_S):
            if time.monotonic() - start > TIMEOUT_S:
                # The operator's figures (applied, CPU, requests) still stand: report them,
                # with what did not become Ready (a rollout outside the operator, on a busy
                # machine).
                print(
                    f"warning: {len(self.wanted) - len(self.ready)} of {len(self.wanted)} "
                    f"profiles not Ready after {TIMEOUT_S:.0f} s ({len(self.applied)} applied)",
                    file=sys.stderr,
                )
                self.done.set()
                break
        return dict(self.applied), dict(self.ready)


def figures(
    count: int, created: dict[str, float], applied: dict[str, float], ready: dict[str, float]
) -> dict[str, Any]:
    start = min(created.values())
    done = [n for n in created if n in ready]
    apply_to_ready = [ready[n] - created[n] for n in done] or [float("nan")]
    rollout = [ready[n] - applied[n] for n in done] or [float("nan")]
    every = len(applied) == len(created)
    return {
        "profiles": count,
        "created_s": max(created.values()) - start,
        # None: not every profile was applied before the timeout (then the target is missed).
        "all_applied_s": max(applied.values()) - start if every else None,
        "all_applied_target_s": target_applied_s(count),
        "not_applied": len(created) - len(applied),
        "not_ready": len(created) - len(done),
        "all_ready_s": max(ready.values()) - start if len(done) == len(created) else None,
        "apply_to_ready_s": stats.percentiles(apply_to_ready)
        | {"p95": stats.percentile(apply_to_ready, 95)},
        "rollout_s": stats.percentiles(rollout) | {"p95": stats.percentile(rollout, 95)},
    }


def run(cluster: LocalCluster, count: int, spy: Path | None = None) -> dict[str, Any]:
    kube = cluster.admin
    log = (cluster.directory / f"bench-operator-{count}.log").open("wb")
    env = {**os.environ, "PYTHONPATH": str(ROOT / "operator")}
    metrics_port = free_port()
    op = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "corral",
            "operator",
            f"--kubeconfig={cluster.kubeconfig}",
            f"--metrics-address=127.0.0.1:{metrics_port}",
            "--metrics-insecure",
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
        env=env,
    )
    tag = uuid.uuid4().hex[:6]
    names = [f"bench-{tag}-{i}" for i in range(count)]
    created: dict[str, float] = {}

    def create(name: str) -> None:
        created[name] = time.monotonic()
        kube.create({"apiVersion": API, "kind": KIND, "metadata": {"name": name},
                     "spec": {"namespace": NAMESPACE, "replicas": 1}})  # fmt: skip

    try:
        wait_for_metrics(metrics_port, op)  # its startup handlers ran: watches are up
        time.sleep(3)
        idle = rss_mib(op.pid)
        cpu0 = procstat.cpu_seconds(op.pid)
        requests0 = requests_by_method(metrics_port)
        profiler = profiling.Profiler(op.pid, spy / f"operator-{count}.pyspy.txt") if spy else None
        observer = Observer(kube, names)
        with ThreadPoolExecutor(max_workers=16) as pool:
            list(pool.map(create, names))
        applied, ready = observer.wait(created)
        rss, peak = rss_mib(op.pid)
        cpu = procstat.cpu_seconds(op.pid) - cpu0
        requests = requests_by_method(metrics_port)
        if profiler is not None:
            raw = profiler.stop()
            raw.with_suffix(".md").write_text(profiling.summarize(raw, top=40))
        per_profile = {
            method: (n - requests0.get(method, 0.0)) / count for method, n in requests.items()
        }
        reconciles = per_profile.pop(RECONCILES)
        result = figures(count, created, applied, ready) | {
            "operator_rss_mib": {"idle": idle[0], "end": rss, "peak": peak},
            "operator_cpu_s": cpu,
            "api_requests_per_profile": per_profile | {"total": sum(per_profile.values())},
            "reconciles_per_profile": reconciles,
        }
    finally:
        op.terminate()
        op.wait(30)
        log.close()
        for name in names:
            kube.delete(API, KIND, name)
    return result


def line(r: dict[str, Any]) -> str:
    applied_s = r["all_applied_s"]
    met = "met" if applied_s is not None and applied_s <= r["all_applied_target_s"] else "MISSED"
    shown = f"{applied_s:6.1f}s" if applied_s is not None else f"{r['not_applied']} not applied"
    unready = f"  {r['not_ready']} NOT READY at the timeout" if r.get("not_ready") else ""
    return (
        f"profiles={r['profiles']:4d}{unready}  all applied+status {shown} "
        f"(target {r['all_applied_target_s']:.0f}s: {met})  apply->Ready p50 "
        f"{r['apply_to_ready_s']['p50']:.1f}s p95 {r['apply_to_ready_s']['p95']:.1f}s  "
        f"rollout p95 {r['rollout_s']['p95']:.1f}s  operator RSS idle "
        f"{r['operator_rss_mib']['idle']:.0f} end {r['operator_rss_mib']['end']:.0f} peak "
        f"{r['operator_rss_mib']['peak']:.0f} MiB  CPU {r['operator_cpu_s']:.1f}s  "
        f"API requests/profile {r['api_requests_per_profile']['total']:.1f} "
        + " ".join(
            f"{k} {v:.1f}" for k, v in sorted(r["api_requests_per_profile"].items()) if k != "total"
        )
        + f"  reconciles/profile {r.get('reconciles_per_profile', float('nan')):.1f}"
    )


def prepare(cluster: LocalCluster, biggest: int) -> None:
    """The CRD, the namespace, and kwok nodes with room for every profile's pod."""
    kube = cluster.admin
    kube.apply({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}},
               field_manager="corral-bench")  # fmt: skip
    cluster.kubectl("apply", "-k", str(ROOT / "config" / "crd"))
    cluster.kubectl("wait", "--for=condition=Established", "crd/schedulerprofiles.corral.dev")
    nodes = kube.list_items("v1", "Node")
    missing = (biggest + 50) // 100 + 1 - len(nodes)
    if missing > 0:
        cluster.add_nodes(missing, pods=110, prefix="bench")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--dir", type=Path, help="a running dev cluster with kube-scheduler "
                        "(default: start one, and stop it afterwards)")  # fmt: skip
    parser.add_argument("--profiles", type=int, nargs="+", default=[200])
    parser.add_argument("--out", type=Path, help="write operator.json here (a directory)")
    parser.add_argument("--py-spy", action="store_true",
                        help="sample the operator with py-spy (files in --out)")  # fmt: skip
    args = parser.parse_args(argv)
    if any(n < 1 for n in args.profiles):
        print(f"error: --profiles: every count must be at least 1, got {args.profiles}",
              file=sys.stderr)  # fmt: skip
        return 2
    out = args.out or ROOT / "bench" / "results" / time.strftime("operator-%Y%m%d-%H%M%S")
    machine = procstat.machine()  # before the runs: its load average is the one at the start
    with tempfile.TemporaryDirectory(prefix="corral-bench-operator-") as tmp:
        own = args.dir is None
        cluster = (
            LocalCluster.up(Path(tmp), with_kube_scheduler=True)
            if own
            else LocalCluster.attach(args.dir)
        )
        try:
            prepare(cluster, max(args.profiles))
            results = []
            for count in args.profiles:
                results.append(run(cluster, count, out if args.py_spy else None))
                print(line(results[-1]), flush=True)
                time.sleep(5)  # garbage collection of the previous round
        finally:
            if own:
                cluster.down()
    out.mkdir(parents=True, exist_ok=True)
    document = {"command": " ".join(sys.argv), "machine": machine, "runs": results}
    (out / "operator.json").write_text(json.dumps(document, indent=1))
    print(f"results: {out / 'operator.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
