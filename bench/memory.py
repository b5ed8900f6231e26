"""``python -m bench.memory``: what the engine process holds before its first pod (issue 42).

A lean control plane gets a workload's scene (nodes and init pods, ``bench.driver``); then a
child process runs the engine in-process, as ``corral scheduler`` builds it, and reports at each
stage of its start:

- ``interpreter``: Python itself, before anything of Corral is imported;
- ``imports``: every module ``corral scheduler`` imports (NumPy among them);
- ``engine``: the engine built (frameworks, plugins, queue, cache, clients, metrics);
- ``synced``: the informers listed (every node and pod in the caches), before any pod is
  scheduled.

At each stage: the resident set (``VmRSS``) and the peak (``VmHWM``) from ``/proc/self/status``.
With ``--trace`` the child also runs tracemalloc from its first line, and reports what the
heap holds at ``synced`` by package (``numpy``, ``corral.scheduler.backend``, ...) and by
allocating line (the top ``--top``), and how it grew from stage to stage. tracemalloc costs
memory itself, so the RSS figures of a ``--trace`` run are not the process's: compare RSS from
runs without it.

``--repeat`` runs the child that many times on the same cluster, alternating with a child
running the engine of the ``--against`` checkout when given (the paired comparison of a
change: this checkout's engine, then the other's, then this one's...). Nothing is scheduled
and nothing is timed, so a busy machine changes these figures little.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import os
import subprocess
import sys
import tempfile
import time
import tracemalloc
from collections import defaultdict
from pathlib import Path
from statistics import median
from typing import Any, Final

STAGES: Final = ("interpreter", "imports", "engine", "synced")


def _status_mb() -> dict[str, float]:
    """VmRSS and VmHWM of this process, MB."""
    out = {}
    for line in Path("/proc/self/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            out[key] = int(value.split()[0]) / 1024
    return out


def _package(filename: str) -> str:
    """A traced file's package: ``corral.scheduler.backend``, ``numpy``, ``<frozen ...>``, or
    the standard library's top module."""
    parts = Path(filename).with_suffix("").parts
    if "site-packages" in parts:
        rest = parts[parts.index("site-packages") + 1 :]
        return rest[0] if rest else filename
    if "corral" in parts:
        rest = parts[len(parts) - 1 - parts[::-1].index("corral") :]
        return ".".join(rest[:3]) if len(rest) > 2 else ".".join(rest[:2])
    if filename.startswith("<"):
        return filename
    return f"stdlib:{parts[-1]}" if parts else filename


def _by_package(snapshot: tracemalloc.Snapshot) -> dict[str, float]:
    sizes: dict[str, float] = defaultdict(float)
    for stat in snapshot.statistics("filename"):
        sizes[_package(stat.traceback[0].filename)] += stat.size / 2**20
    return dict(sorted(sizes.items(), key=lambda kv: -kv[1]))


def child(args: argparse.Namespace) -> int:
    """The engine's start, stage by stage; one JSON document on stdout."""
    if args.trace:
        tracemalloc.start(args.frames)
    stages: dict[str, dict[str, float]] = {"interpreter": _status_mb()}
    traced: dict[str, float] = {}
    snapshots: dict[str, tracemalloc.Snapshot] = {}

    def mark(stage: str) -> None:
        stages[stage] = _status_mb()
        if args.trace:
            traced[stage] = tracemalloc.get_traced_memory()[0] / 2**20
            snapshots[stage] = tracemalloc.take_snapshot()

    from corral.cli import scheduler as cli  # noqa: PLC0415  (measured: the imports stage)
    from corral.scheduler.engine import gc_tuning  # noqa: PLC0415
    from corral.scheduler.engine.app import Engine, EngineOptions  # noqa: PLC0415
    from corral.scheduler.engine.frameworks import load_engine_config  # noqa: PLC0415

    mark("imports")
    config = load_engine_config(Path(args.config))
    client = cli.make_client(args.kubeconfig, None)
    options = EngineOptions(identity="bench-memory", bind_host="127.0.0.1", bind_port=0,
                            freeze_gc_after_sync=True)  # fmt: skip
    gc_tuning.configure()
    engine = Engine(config, client, options)
    mark("engine")

    async def synced() -> None:
        tasks = [asyncio.create_task(i.run()) for i in engine.informers]
        try:
            for informer in engine.informers:
                await informer.synced.wait()
            gc_tuning.freeze()
            mark("synced")
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            await engine.aio.close()

    asyncio.run(synced())
    pods = engine.informers[1] if len(engine.informers) > 1 else None
    out: dict[str, Any] = {"stages": stages, "nodes": len(engine.node_informer),
                           "pods": len(pods) if pods is not None else None}  # fmt: skip
    if args.trace:
        final = snapshots["synced"]
        out["traced_mb"] = traced
        out["by_package"] = {k: round(v, 2) for k, v in _by_package(final).items()}
        out["growth_by_package"] = {
            f"{a}->{b}": {k: round(v, 2) for k, v in _growth(snapshots[a], snapshots[b]).items()}
            for a, b in itertools.pairwise(STAGES[1:])
        }
        out["top_lines"] = [
            {"where": f"{s.traceback[0].filename}:{s.traceback[0].lineno}",
             "mb": round(s.size / 2**20, 2), "blocks": s.count}
            for s in final.statistics("lineno")[: args.top]
        ]  # fmt: skip
    json.dump(out, sys.stdout)
    return 0


def _growth(a: tracemalloc.Snapshot, b: tracemalloc.Snapshot) -> dict[str, float]:
    sizes: dict[str, float] = defaultdict(float)
    for stat in b.compare_to(a, "filename"):
        sizes[_package(stat.traceback[0].filename)] += stat.size_diff / 2**20
    return {k: v for k, v in sorted(sizes.items(), key=lambda kv: -kv[1]) if abs(v) >= 0.05}


def _run_child(
    python: str, checkout: Path, config: Path, kubeconfig: Path, *, trace: bool, top: int
) -> dict[str, Any]:
    # The engine from ``checkout``, this harness's child (the other checkout may predate it).
    here = Path(__file__).resolve().parents[1]
    env = {**os.environ, "PYTHONPATH": f"{checkout / 'operator'}:{here}"}
    argv = [python, "-m", "bench.memory", "child", "--config", str(config),
            "--kubeconfig", str(kubeconfig), "--top", str(top)]  # fmt: skip
    if trace:
        argv.append("--trace")
    done = subprocess.run(argv, env=env, cwd=here, capture_output=True, text=True,
                          check=False, timeout=600)  # fmt: skip
    if done.returncode != 0:
        raise RuntimeError(f"the engine's child failed ({done.returncode}): {done.stderr[-2000:]}")
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def main(args: argparse.Namespace) -> int:
    from bench.driver import setup_cluster  # noqa: PLC0415
    from bench.schedulers import SchedulerConfig  # noqa: PLC0415
    from bench.workloads import workloads  # noqa: PLC0415
    from corral.testing import LocalCluster  # noqa: PLC0415

    workload = workloads(full=args.full)[args.workload].sized(args.nodes, args.init_pods, 0)
    here = Path(__file__).resolve().parents[1]
    sides = [("this", sys.executable, here)]
    if args.against:
        other = Path(args.against).resolve()
        sides.append(("against", sys.executable, other))
    results: dict[str, list[dict[str, Any]]] = {name: [] for name, _, _ in sides}
    with tempfile.TemporaryDirectory(prefix="corral-bench-memory-") as tmp:
        cluster = LocalCluster.up(Path(tmp), lean=True)
        try:
            config = SchedulerConfig()
            setup_cluster(cluster, workload, config.scheduler_name, lean=True)
            path = config.write(cluster)
            kubeconfig = cluster.directory / "scheduler.kubeconfig"
            for rep in range(args.repeat):
                order = sides if rep % 2 == 0 else sides[::-1]
                for name, python, checkout in order:
                    got = _run_child(python, checkout, path, kubeconfig, trace=args.trace,
                                     top=args.top)  # fmt: skip
                    results[name].append(got)
                    synced = got["stages"]["synced"]
                    print(f"  {name:<8} rep {rep + 1}: synced RSS {synced['VmRSS']:.1f} MB "
                          f"(peak {synced['VmHWM']:.1f})", flush=True)  # fmt: skip
        finally:
            cluster.down()
    report = {"workload": workload.name, "nodes": workload.nodes, "init_pods": workload.init_pods,
              "trace": args.trace, "started": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
              "results": results}  # fmt: skip
    if args.out:
        Path(args.out).write_text(json.dumps(report, indent=1))
    print(table(report))
    return 0


def table(report: dict[str, Any]) -> str:
    """Median RSS per stage for each side (and with --trace, the heap by package)."""
    sides = list(report["results"])
    lines = ["| stage | " + " | ".join(f"{s} RSS MB (median)" for s in sides) + " |",
             "|---|" + "---|" * len(sides)]  # fmt: skip
    for stage in STAGES:
        cells = [f"{median(r['stages'][stage]['VmRSS'] for r in report['results'][s]):.1f}"
                 for s in sides]  # fmt: skip
        lines.append(f"| {stage} | " + " | ".join(cells) + " |")
    text = "\n".join(lines) + "\n"
    first = report["results"][sides[0]][0]
    if "by_package" in first:
        text += "\n| package (heap at synced, tracemalloc) | MB |\n|---|---|\n"
        text += "".join(f"| {k} | {v:.2f} |\n" for k, v in list(first["by_package"].items())[:25])
    return text


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m bench.memory",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = parser.add_subparsers(dest="command")
    kid = sub.add_parser("child", help="(internal) the engine's start in this process")
    kid.add_argument("--config", required=True)
    kid.add_argument("--kubeconfig", required=True)
    kid.add_argument("--trace", action="store_true")
    kid.add_argument("--frames", type=int, default=1)
    kid.add_argument("--top", type=int, default=30)
    parser.add_argument("--workload", default="SchedulingBasic")
    parser.add_argument("--full", action="store_true", help="the workload at scheduler_perf's size")
    parser.add_argument("--nodes", type=int)
    parser.add_argument("--init-pods", type=int)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--trace", action="store_true", help="tracemalloc breakdown")
    parser.add_argument("--top", type=int, default=30, help="allocating lines shown")
    parser.add_argument("--against", help="another checkout (its .venv) to interleave with")
    parser.add_argument("--out", help="also write the report as JSON here")
    return parser.parse_args(argv)


if __name__ == "__main__":
    parsed = parse(sys.argv[1:])
    sys.exit(child(parsed) if parsed.command == "child" else main(parsed))
