"""Operator benchmark (not a test): apply -> Ready for N SchedulerProfiles, and the operator's
memory. Runs ``corral operator`` as a subprocess against a running local cluster.

    hack/dev-cluster up --with-kube-scheduler --nodes 3 --dir /tmp/b
    .venv/bin/python bench/operator_apply.py --dir /tmp/b --profiles 1 200

Each profile has replicas 1 (kwok pods), so "Ready" means: every child applied, the
Deployment's pod scheduled by kube-scheduler and reported ready by kwok, status written.
Reports wall time from the first create to the last Ready, and the operator's RSS (VmRSS at
the end, VmHWM peak) from /proc.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
import uuid
from pathlib import Path

from corral.k8s import ApiError, Client
from corral.testing import LocalCluster

ROOT = Path(__file__).resolve().parents[1]
API, KIND = "corral.dev/v1alpha1", "SchedulerProfile"


def rss_kib(pid: int) -> tuple[int, int]:
    fields = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        fields[key] = value.strip()
    return int(fields["VmRSS"].split()[0]), int(fields["VmHWM"].split()[0])


def ready(kube: Client, name: str) -> bool:
    try:
        obj = kube.get(API, KIND, name)
    except ApiError:
        return False
    conds = {c["type"]: c for c in obj.get("status", {}).get("conditions", [])}
    return bool(conds.get("Ready", {}).get("status") == "True")


def run(cluster: LocalCluster, count: int, namespace: str) -> None:
    kube = cluster.admin
    log = open(cluster.directory / f"bench-operator-{count}.log", "wb")  # noqa: SIM115
    env = {**os.environ, "PYTHONPATH": str(ROOT / "operator")}
    op = subprocess.Popen(
        [sys.executable, "-m", "corral", "operator", f"--kubeconfig={cluster.kubeconfig}"],
        stdout=log,
        stderr=subprocess.STDOUT,
        env=env,
    )
    names = [f"bench-{uuid.uuid4().hex[:6]}-{i}" for i in range(count)]
    try:
        time.sleep(3)  # the operator's watches are up
        idle = rss_kib(op.pid)
        started = time.monotonic()
        for name in names:
            kube.create(
                {
                    "apiVersion": API,
                    "kind": KIND,
                    "metadata": {"name": name},
                    "spec": {"namespace": namespace, "replicas": 1},
                }
            )
        created = time.monotonic() - started
        pending = set(names)
        while pending:
            pending = {n for n in pending if not ready(kube, n)}
            if time.monotonic() - started > 900:
                raise TimeoutError(f"{len(pending)} profiles not Ready after 900 s")
            time.sleep(0.5)
        elapsed = time.monotonic() - started
        rss, peak = rss_kib(op.pid)
        print(
            f"profiles={count:4d}  created in {created:6.2f}s  all Ready after {elapsed:7.2f}s "
            f"({elapsed / count * 1000:7.1f} ms/profile)  operator RSS idle {idle[0] / 1024:.0f} "
            f"MiB, after {rss / 1024:.0f} MiB, peak {peak / 1024:.0f} MiB",
            flush=True,
        )
    finally:
        op.terminate()
        op.wait(30)
        log.close()
        for name in names:
            kube.delete(API, KIND, name)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--dir", type=Path, required=True, help="a running dev cluster")
    parser.add_argument("--profiles", type=int, nargs="+", default=[1, 200])
    args = parser.parse_args()
    cluster = LocalCluster.attach(args.dir)
    kube = cluster.admin
    kube.apply(
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "corral-bench"}},
        field_manager="corral-bench",
    )
    cluster.kubectl("apply", "-k", str(ROOT / "config" / "crd"))
    biggest = max(args.profiles)
    nodes = kube.list_items("v1", "Node")
    if len(nodes) * 100 < biggest + 50:
        cluster.add_nodes((biggest + 50) // 100 + 1 - len(nodes), pods=110, prefix="bench")
    for count in args.profiles:
        run(cluster, count, "corral-bench")
        time.sleep(5)  # garbage collection of the previous round
    return 0


if __name__ == "__main__":
    sys.exit(main())
