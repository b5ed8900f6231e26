"""``python -m bench protocol``: Corral against upstream as interleaved ABBA pairs on fresh
identical clusters (``bench.plan``), judged on the median ratio's interval (``bench.summary``).

Every run is saved as it finishes; ``--resume`` continues a results directory where it stopped,
or extends it to more pairs, as long as it was started with the same sizes, control plane and
pinning (the directory records them).
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from bench import pinning, procstat, profiling, summary
from bench.driver import run_one
from bench.plan import Progress, estimate_s, order
from bench.schedulers import SchedulerConfig, corral_unavailable_reason
from bench.workloads import Workload, workloads

RESULTS = Path("bench/results")
BUSY_LOAD = 0.5  # a 1-minute load average above this at the start is noted in the results


class ProtocolError(ValueError):
    """Arguments or an existing results directory the protocol cannot run with."""


def mode(args: argparse.Namespace, pin: pinning.Pinning | None) -> dict[str, Any]:
    mode: dict[str, Any] = {
        "full": args.full,
        "lean": not args.full_cluster,
        "pin": pin.to_json() if pin else None,
        "sizes": [args.nodes, args.init_pods, args.pods],
    }
    if args.corral_arg:  # only when given: runs without it keep the mode they were run with
        mode["corral_args"] = list(args.corral_arg)
    if not args.no_ceiling:  # likewise: runs before the ceiling keep theirs
        mode["ceiling"] = True
    return mode


def ceiling_workloads(args: argparse.Namespace, names: list[str]) -> list[str]:
    """The workloads whose pairs also run the ceiling: the API-bound ones (bench.goals), unless
    ``--no-ceiling``."""
    available = workloads(full=args.full, named=True)
    return [] if args.no_ceiling else [n for n in names if available[n].goals.ceiling is not None]


def _document(args: argparse.Namespace, out: Path, mode: dict[str, Any]) -> dict[str, Any]:
    path = out / "results.json"
    if args.resume and path.exists():
        try:
            document: dict[str, Any] = json.loads(path.read_text())
        except ValueError as exc:
            raise ProtocolError(f"--resume: {path} is not a results file: {exc}") from None
        if document.get("mode") != mode:
            raise ProtocolError(
                f"--resume: {path} was run with {document.get('mode')}, not {mode}; "
                "use another --out"
            )
        document["pairs"] = max(int(document.get("pairs", 0)), args.pairs)
        document.setdefault("resumed", []).append(
            {"command": _command(), "at": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "code": _code()}
        )
        return document
    if path.exists():
        raise ProtocolError(f"{path} exists: pass --resume to continue it, or another --out")
    return {
        "kind": "protocol",
        "command": _command(),
        "started": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "code": _code(),
        "machine": procstat.machine(),
        "mode": mode,
        "pairs": args.pairs,
        "runs": [],
        "notes": [],
    }


def _code() -> str:
    """The commit measured (``-dirty`` with uncommitted changes), so that two runs can be told
    apart as repetitions or as measurements of different code; "unknown" outside a git tree."""
    try:
        described = subprocess.run(
            ["git", "describe", "--always", "--dirty", "--abbrev=7"], cwd=Path(__file__).parent,
            capture_output=True, text=True, timeout=10, check=True,
        )  # fmt: skip
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return described.stdout.strip() or "unknown"


def _command() -> str:
    return "python -m bench " + " ".join(shlex.quote(a) for a in sys.argv[1:])


def checked(args: argparse.Namespace) -> tuple[list[str], pinning.Pinning | None]:
    """The workloads named (all by default) and the pinning, or the reason the protocol cannot
    run with these arguments (``ProtocolError``)."""
    available = workloads(full=args.full, named=True)
    names: list[str] = args.workload or list(workloads(full=args.full))
    unknown = [n for n in names if n not in available]
    if unknown:
        raise ProtocolError(f"unknown workload(s) {unknown}; known: {', '.join(available)}")
    if args.pairs < 1:
        raise ProtocolError(f"--pairs must be at least 1, got {args.pairs}")
    pin = pinning.parse(args.pin)
    reason = corral_unavailable_reason()
    if reason:
        raise ProtocolError(reason)
    return names, pin


def run(args: argparse.Namespace) -> int:
    names, pin = checked(args)
    available = workloads(full=args.full, named=True)
    out = Path(args.out or RESULTS / time.strftime("protocol-%Y%m%d-%H%M%S"))
    sized = {n: available[n].sized(args.nodes, args.init_pods, args.pods) for n in names}
    document = measure(args, out, sized, mode(args, pin), pin)
    print((out / "protocol.md").read_text())
    return _judged(args, document)


def measure(
    args: argparse.Namespace,
    out: Path,
    sized: dict[str, Workload],
    mode: dict[str, Any],
    pin: pinning.Pinning | None,
) -> dict[str, Any]:
    """Run (or resume) the protocol over ``sized`` into ``out``; the finished document, also
    written as ``results.json`` and ``protocol.md`` there."""
    out.mkdir(parents=True, exist_ok=True)
    session = _Session(args, out, _document(args, out, mode), pin)
    if session.pprof is not None:
        session.document["notes"].append(
            f"kube-apiserver was CPU-profiled for {session.pprof.seconds} s of each measured "
            f"phase (--apiserver-pprof): a diagnosis, its figures are not a clean measurement"
        )
    load = os.getloadavg()[0]
    if load > BUSY_LOAD:
        note = (f"the machine was busy when this invocation started (1-minute load {load:.1f}): "
                "its figures measure the other load as much as the schedulers")  # fmt: skip
        print(f"*** warning: {note} ***", file=sys.stderr)
        session.document["notes"].append(note)
    session.run(sized)
    document = session.document
    document["finished"] = time.strftime("%Y-%m-%dT%H:%M:%S%z")
    document["summary"] = [s.to_json() for s in summary.summarize(document)]
    session.save()
    (out / "protocol.md").write_text(summary.markdown(document))
    return document


def _judged(args: argparse.Namespace, document: dict[str, Any]) -> int:
    """1 when a workload missed one of its goals (bench.goals), else 0. The goals hold for a
    workload's own sizes: with sizes given on the command line nothing is judged."""
    if (args.nodes, args.init_pods, args.pods) != (None, None, None):
        print("goals not judged: --nodes, --init-pods or --pods changed the workloads' sizes")
        return 0
    lines = summary.missed(summary.summarize(document))
    for line in lines:
        print(f"goal missed: {line}", file=sys.stderr)
    return 1 if lines else 0


class _Session:
    """One invocation: runs the slots not yet in the document, saving after each."""

    def __init__(
        self,
        args: argparse.Namespace,
        out: Path,
        document: dict[str, Any],
        pin: pinning.Pinning | None,
    ) -> None:
        self.args = args
        self.out = out
        self.document = document
        self.pin = pin
        seconds = getattr(args, "apiserver_pprof", None)
        self.pprof = profiling.ApiServerPprof(out / "pprof", seconds) if seconds else None

    def save(self) -> None:
        (self.out / "results.json").write_text(json.dumps(self.document, indent=1))

    def run(self, sized: dict[str, Workload]) -> None:
        pairs = int(self.document["pairs"])
        ceiling = ceiling_workloads(self.args, list(sized))
        solo = [name for name, w in sized.items() if w.corral_only]
        slots = order(list(sized), pairs, ceiling=ceiling, solo=solo)
        progress = Progress([estimate_s(sized[s.workload], self.args.full) for s in slots])
        done = {(r["workload"], r["repetition"], r["scheduler"]): r for r in self.document["runs"]}
        for s in slots:
            if (finished := done.get((s.workload, s.round, s.scheduler))) is not None:
                progress.finish(
                    s.index, float(finished.get("wall_s") or progress.estimates[s.index])
                )
        self.save()
        print(f"protocol: {len(slots)} runs planned, {len(progress.done)} already done; "
              f"results: {self.out / 'results.json'}")  # fmt: skip
        config = SchedulerConfig(corral_args=tuple(self.args.corral_arg or ()))
        # The control planes started from here inherit the harness's CPUs.
        with pinning.on_cpus(self.pin.rest if self.pin else None):
            for slot in slots:
                if slot.index in progress.done:
                    continue
                print(progress.line(slot, pairs), flush=True)
                result = run_one(
                    sized[slot.workload], slot.scheduler, config, order=slot.position,
                    repetition=slot.round, stall_timeout=self.args.stall_timeout,
                    keep_logs=self.out / "logs", say=lambda line: print(line, flush=True),
                    lean=not self.args.full_cluster, pin=self.pin,
                    apiserver_pprof=self.pprof,
                )  # fmt: skip
                self.document["runs"].append(result.to_json())
                self.save()
                progress.finish(slot.index, result.wall_s)


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "protocol",
        help="Corral vs upstream as interleaved ABBA pairs; median ratios with 95%% intervals",
    )
    p.add_argument("--pairs", type=int, default=6,
                   help="pairs per workload (default %(default)s: the fewest whose "
                   "min..max interval reaches 95%%)")  # fmt: skip
    p.add_argument("--full", action="store_true", help="scheduler_perf sizes (5000 nodes)")
    p.add_argument("--workload", action="append", help="only this workload (repeatable)")
    p.add_argument("--nodes", type=int, help="override every workload's node count")
    p.add_argument("--init-pods", type=int, help="override every workload's init pods")
    p.add_argument("--pods", type=int, help="override every workload's measured pods")
    p.add_argument("--full-cluster", action="store_true",
                   help="measure on the full local cluster (kube-controller-manager, kwok) "
                   "instead of the lean one (etcd + kube-apiserver)")  # fmt: skip
    p.add_argument("--pin", default="auto",
                   help="CPU pinning: auto (scheduler on the highest CPU, the rest on the "
                   "others), off, or SCHED:REST like 1:0 (default %(default)s)")  # fmt: skip
    p.add_argument("--stall-timeout", type=float, default=60.0)
    p.add_argument("--out", help="results directory (default bench/results/protocol-<time>)")
    p.add_argument("--resume", action="store_true",
                   help="continue (or extend to --pairs) the run in --out")  # fmt: skip
    p.add_argument("--corral-arg", action="append", metavar="ARG",
                   help="pass ARG to `corral scheduler` (repeatable), e.g. --corral-arg="
                   "--pod-watch-encoding=protobuf; recorded in the results")  # fmt: skip
    p.add_argument("--no-ceiling", action="store_true",
                   help="leave out the ceiling run (no scheduler: the same pods bound by a "
                   "minimal binder) that API-bound workloads' pairs have between their two "
                   "schedulers")  # fmt: skip
    p.add_argument("--apiserver-pprof", type=int, metavar="SECONDS",
                   help="diagnosis, not measurement: CPU-profile kube-apiserver for SECONDS "
                   "of each measured phase into OUT/pprof/ (go tool pprof -top -cum)")  # fmt: skip
    p.set_defaults(handler=_handler)


def _handler(args: argparse.Namespace) -> int:
    try:
        return run(args)
    except (ProtocolError, pinning.PinningError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
