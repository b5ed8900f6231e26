"""``python -m bench run|report``: the side-by-side benchmark (see docs/benchmarks.md)."""

from __future__ import annotations

import argparse
import json
import os
import shlex
import sys
import time
from pathlib import Path
from typing import Any

from bench import ceiling, compare, docs, procstat, protocol, report, scaling, summary
from bench.cluster import interruptible
from bench.driver import run_one
from bench.schedulers import SCHEDULERS, SchedulerConfig, corral_unavailable_reason
from bench.workloads import OPT_IN, workloads

RESULTS = Path("bench/results")


def _run(args: argparse.Namespace) -> int:
    available = {**workloads(full=args.full, named=True), **OPT_IN}
    names = args.workload or list(workloads(full=args.full))
    unknown = [n for n in names if n not in available]
    if unknown:
        print(f"unknown workload(s) {unknown}; known: {', '.join(available)}", file=sys.stderr)
        return 2
    kinds = [k for k in args.schedulers.split(",") if k]
    args.profile = [k for k in args.profile.split(",") if k]
    notes: list[str] = []
    if "corral" in kinds:
        reason = corral_unavailable_reason()
        if reason:
            print(f"*** {reason}: running upstream only ***", file=sys.stderr)
            notes.append(reason)
            kinds = [k for k in kinds if k != "corral"]
    config = SchedulerConfig(
        percentage_of_nodes_to_score=args.percentage_of_nodes_to_score,
        disabled_plugins=tuple(p for p in (args.disable_plugins or "").split(",") if p),
    )
    out = Path(args.out or RESULTS / time.strftime("%Y%m%d-%H%M%S"))
    out.mkdir(parents=True, exist_ok=True)
    document: dict[str, Any] = {
        "command": "python -m bench " + " ".join(shlex.quote(a) for a in sys.argv[1:]),
        "started": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "machine": procstat.machine(),
        "schedulers": kinds,
        "config": {
            "qps": config.qps,
            "burst": config.burst,
            "percentageOfNodesToScore": config.percentage_of_nodes_to_score,
            "disabledPlugins": list(config.disabled_plugins),
        },
        "notes": notes,
        "ceilings": [],
        "runs": [],
    }

    def save() -> None:
        (out / "results.json").write_text(json.dumps(document, indent=1))

    basic = available["SchedulingBasic"].sized(args.nodes, args.init_pods, args.pods)
    for repetition in range(args.repeat):
        print(f"repetition {repetition + 1}/{args.repeat}", flush=True)
        if not args.no_ceiling:
            figures = _ceiling(basic.nodes, basic.measured_pods, repetition)
            document["ceilings"].append(figures)
            save()
        for index, name in enumerate(names):
            workload = available[name].sized(args.nodes, args.init_pods, args.pods)
            # Alternate who goes first, per workload and per repetition.
            shift = (index + repetition) % len(kinds) if kinds else 0
            for order, kind in enumerate(kinds[shift:] + kinds[:shift]):
                result = run_one(
                    workload,
                    kind,
                    config,
                    order=order,
                    repetition=repetition,
                    stall_timeout=args.stall_timeout,
                    keep_logs=out / "logs",
                    profile=None,  # sampling costs CPU: measured runs are never profiled
                    say=lambda line: print(line, flush=True),
                )
                document["runs"].append(result.to_json())
                save()
                if kind == "corral" and result.startup_failure:
                    # Refused to start (e.g. a default plugin it lacks): no point paying for
                    # more clusters; the table says why.
                    note = f"corral engine not available (exited at startup): {result.error}"
                    print(f"*** {note}: running upstream only from now on ***", file=sys.stderr)
                    notes.append(note)
                    kinds.remove("corral")
    # Profiles come from one extra run per workload and sampled scheduler, after the measured
    # ones: py-spy takes CPU from the same two cores (Corral's throughput under it dropped by
    # up to 50%), so a profiled run's figures are kept apart and never enter the table.
    kept = [k for k in kinds if k in args.profile]
    if kept:
        print("profiling (not measured)", flush=True)
    for name in names if kept else []:
        workload = available[name].sized(args.nodes, args.init_pods, args.pods)
        for kind in kept:
            result = run_one(
                workload, kind, config, order=0, repetition=args.repeat,
                stall_timeout=args.stall_timeout, keep_logs=out / "logs",
                profile=out / "profiles" / f"{name}-{kind}.txt",
                say=lambda line: print(f"  (profiled) {line.strip()}", flush=True),
            )  # fmt: skip
            document.setdefault("profiled_runs", []).append(result.to_json())
            save()
    document["finished"] = time.strftime("%Y-%m-%dT%H:%M:%S%z")
    document["machine"]["loadavg_at_end"] = list(os.getloadavg())
    save()
    print(f"results: {out / 'results.json'}")
    if not args.no_report:
        report.write(document, out)
        print(f"table: {out / 'table.md'}; plots: {out}/*.png")
    return 0


def _ceiling(nodes: int, pods: int, repetition: int) -> dict[str, Any]:
    figures = {"repetition": repetition, "nodes": nodes, "pods": pods,
               **ceiling.measure(nodes, pods)}  # fmt: skip
    print(
        f"  ceiling ({nodes} nodes, {pods} pods): create {figures['create']:.0f}/s, "
        f"bind {figures['bind']:.0f}/s, create+bind {figures['pipeline']:.0f}/s",
        flush=True,
    )
    return figures


def _ceiling_only(args: argparse.Namespace) -> int:
    basic = workloads(full=args.full)["SchedulingBasic"].sized(args.nodes, None, args.pods)
    path = Path(args.results)
    document = json.loads(path.read_text()) if path.exists() else {"runs": [], "ceilings": []}
    for repetition in range(args.repeat):
        figures = _ceiling(basic.nodes, basic.measured_pods, repetition)
        if args.note:
            figures["note"] = args.note
        document.setdefault("ceilings", []).append(figures)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(document, indent=1))
    return 0


def _report(args: argparse.Namespace) -> int:
    path = Path(args.results)
    document = json.loads((path / "results.json" if path.is_dir() else path).read_text())
    out = Path(args.out or (path if path.is_dir() else path.parent))
    report.write(document, out)
    print((out / "table.md").read_text())
    return 0


def _load(path: str) -> dict[str, Any]:
    p = Path(path)
    document: dict[str, Any] = json.loads((p / "results.json" if p.is_dir() else p).read_text())
    return document


def _compare(args: argparse.Namespace) -> int:
    try:
        a, b = _load(args.run_a), _load(args.run_b)
    except (OSError, ValueError) as exc:
        print(f"cannot read a run: {exc}", file=sys.stderr)
        return 2
    if summary.is_protocol(a) != summary.is_protocol(b):
        print("cannot compare a protocol run with a `bench run` run", file=sys.stderr)
        return 2
    text = summary.compare(a, b) if summary.is_protocol(a) else compare.compare(a, b)
    if args.out:
        Path(args.out).write_text(text)
    print(text)
    return 0


def _docs(args: argparse.Namespace) -> int:
    try:
        docs.write([Path(r) for r in args.runs], Path(args.records), page=Path(args.doc),
                   history=Path(args.history), curve=Path(args.scaling),
                   plots=None if args.no_plots else Path(args.plots))  # fmt: skip
    except docs.DocsError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"updated {args.doc}, {args.history}"
          + ("" if args.no_plots else f" and the plots in {args.plots}"))  # fmt: skip
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="run workloads side by side and write results")
    run.add_argument("--full", action="store_true", help="scheduler_perf sizes (5000 nodes)")
    run.add_argument("--workload", action="append", help="only this workload (repeatable)")
    run.add_argument("--schedulers", default=",".join(SCHEDULERS), help="default: %(default)s")
    run.add_argument("--nodes", type=int, help="override every workload's node count")
    run.add_argument("--init-pods", type=int, help="override every workload's init pods")
    run.add_argument("--pods", type=int, help="override every workload's measured pods")
    run.add_argument("--repeat", type=int, default=2, help="repetitions (default %(default)s)")
    run.add_argument("--percentage-of-nodes-to-score", type=int, default=None)
    run.add_argument(
        "--disable-plugins",
        help="comma-separated plugins disabled for both schedulers (multiPoint)",
    )
    run.add_argument(
        "--profile",
        default="corral",
        help="schedulers to sample with py-spy in one extra, unmeasured run per workload "
        "(comma-separated; '' for none; default %(default)s)",
    )
    run.add_argument("--stall-timeout", type=float, default=60.0)
    run.add_argument("--no-ceiling", action="store_true")
    run.add_argument("--no-report", action="store_true")
    run.add_argument("--out", help="results directory (default bench/results/<timestamp>)")
    run.set_defaults(handler=_run)
    ceil = sub.add_parser("ceiling", help="measure only the ceiling (added to a results.json)")
    ceil.add_argument("results", help="results.json to add the figures to (created if missing)")
    ceil.add_argument("--full", action="store_true")
    ceil.add_argument("--nodes", type=int)
    ceil.add_argument("--pods", type=int)
    ceil.add_argument("--repeat", type=int, default=1)
    ceil.add_argument("--note", help="shown beside these figures in the table")
    ceil.set_defaults(handler=_ceiling_only)
    rep = sub.add_parser("report", help="table and plots from a results.json")
    rep.add_argument("results", help="a results directory or results.json")
    rep.add_argument("--out", help="where table.md and the PNGs go (default: beside it)")
    rep.set_defaults(handler=_report)
    cmp = sub.add_parser(
        "compare",
        help="two runs side by side: protocol runs agree within their intervals? (`bench run` "
        "runs: every figure within 15%%?)",
    )
    cmp.add_argument("run_a", help="a results directory or results.json")
    cmp.add_argument("run_b", help="another one")
    cmp.add_argument("--out", help="also write the markdown here")
    cmp.set_defaults(handler=_compare)
    protocol.add_parser(sub)
    scaling.add_parser(sub)
    gen = sub.add_parser("docs", help="docs/benchmarks.md's latest verdicts and "
                         "docs/benchmarks/history.md from the recorded protocol runs")  # fmt: skip
    gen.add_argument("runs", nargs="*", help="protocol results directories to add to the "
                     "records first (both sizes; the runs of one size are compared), or a "
                     "scaling run's directory (`bench scaling --out`)")  # fmt: skip
    gen.add_argument("--records", default=str(docs.RECORDS),
                     help="where every run is kept (default %(default)s)")  # fmt: skip
    gen.add_argument("--doc", default=str(docs.PAGE))
    gen.add_argument("--history", default=str(docs.HISTORY))
    gen.add_argument("--plots", default=str(docs.PLOTS))
    gen.add_argument("--scaling", default=str(docs.SCALING),
                     help="the scaling curve's plots, its records in runs/ below (default "
                     "%(default)s)")  # fmt: skip
    gen.add_argument(
        "--no-plots",
        action="store_true",
        help="the pages only (the plots need the `bench` extra's matplotlib)",
    )
    gen.set_defaults(handler=_docs)
    args = parser.parse_args(argv)
    interruptible()
    code: int = args.handler(args)
    return code


if __name__ == "__main__":
    sys.exit(main())
