"""``python -m bench scaling``: the scaling curve, how each scheduler's throughput and CPU per
pod grow with the cluster (issue 42), and its plots.

For each cluster size (default 100, 500, 1,000, 2,000 and 5,000 nodes) the protocol runs every
workload named, at that size, into ``OUT/nodes-<N>/`` (resumable, like the protocol): each
workload's scene keeps its density (init pods per node) and its measured pods
(``Workload.at_nodes``). A size's run is a protocol run (its mode says ``scaling``), so its pairs,
ceiling, pinning and intervals are the protocol's. The goals are not judged here: they hold for
the workloads' own sizes.

``plot`` draws one PNG per workload from those runs: pods/s (left) and CPU milliseconds per pod
(right, the same figure as CPU seconds per 1,000 pods) against nodes, upstream's and Corral's
medians with their intervals, and the ceiling's pods/s where it was measured. ``bench docs``
keeps the runs in ``docs/benchmarks/scaling/runs/`` and draws the plots from there.
"""

from __future__ import annotations

import argparse
import sys
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from bench import pinning, protocol, summary
from bench.intervals import Interval
from bench.workloads import workloads

SIZES: Final = (100, 500, 1000, 2000, 5000)
RESULTS: Final = Path("bench/results")
Document = dict[str, Any]


class ScalingError(ValueError):
    """Arguments the scaling curve cannot run with."""


def is_scaling(document: Document) -> bool:
    return bool(document.get("mode", {}).get("scaling"))


def _sizes(text: str) -> list[int]:
    try:
        sizes = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise ScalingError(
            f"--sizes: {text!r} is not a comma-separated list of node counts"
        ) from None
    if not sizes or min(sizes) < 1:
        raise ScalingError(f"--sizes: {text!r} needs node counts of at least 1")
    return sorted(set(sizes))


def run(args: argparse.Namespace) -> int:
    sizes = _sizes(args.sizes)
    args.full, args.nodes, args.init_pods = False, None, None  # what the protocol reads
    names, pin = protocol.checked(args)
    available = workloads()
    outside = [n for n in names if n not in available]
    if outside:  # the pod-group workloads: no per-node sizing yet (bench.workloads.POD_GROUPS)
        raise ScalingError(f"--workload: {outside} have no scaling curve; known: "
                           f"{', '.join(available)}")  # fmt: skip
    base = Path(args.out or RESULTS / "scaling")
    documents = []
    for nodes in sizes:
        sized = {n: available[n].at_nodes(nodes, args.pods) for n in names}
        mode = {**protocol.mode(args, pin), "scaling": True, "sizes": [nodes, None, args.pods]}
        print(f"scaling: {nodes} nodes", flush=True)
        documents.append(protocol.measure(args, base / f"nodes-{nodes}", sized, mode, pin))
    written = plot(documents, base)
    print(table(documents))
    print(f"plots: {', '.join(str(p) for p in written.values())}")
    return 0


# --- the curve -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Point:
    """One workload at one size: each scheduler's figure (and the ceiling's pods/s)."""

    nodes: int
    upstream: Interval
    corral: Interval
    ceiling: Interval | None = None


def curves(documents: list[Document]) -> dict[str, dict[str, list[Point]]]:
    """workload -> figure ("throughput", "cpu_per_1000") -> points by nodes; a size measured
    twice keeps its latest run."""
    found: dict[str, dict[str, dict[int, Point]]] = defaultdict(lambda: defaultdict(dict))
    for document in sorted(documents, key=lambda d: str(d.get("started", ""))):
        for s in summary.of(document):
            nodes = int(s.params["nodes"])
            for figure in ("throughput", "cpu_per_1000"):
                up, co = s.upstream.get(figure), s.corral.get(figure)
                if up is None or co is None:
                    continue
                wall = s.ceiling.get("pods_s") if figure == "throughput" else None
                found[s.workload][figure][nodes] = Point(nodes, up, co, wall)
    return {w: {f: [by[n] for n in sorted(by)] for f, by in figures.items()}
            for w, figures in found.items()}  # fmt: skip


def table(documents: list[Document]) -> str:
    """The curve as markdown: a row per workload and size, medians of both schedulers."""
    lines = ["| workload | nodes | pods/s up / Corral (ceiling) | CPU ms per pod up / Corral |",
             "|---|---|---|---|"]  # fmt: skip
    for workload, figures in curves(documents).items():
        cpu = {p.nodes: p for p in figures.get("cpu_per_1000", [])}
        for p in figures.get("throughput", []):
            wall = f" ({p.ceiling.median:.0f})" if p.ceiling else ""
            c = cpu.get(p.nodes)
            cost = f"{c.upstream.median:.2f} / {c.corral.median:.2f}" if c else "-"
            lines.append(f"| {workload} | {p.nodes} | {p.upstream.median:.1f} / "
                         f"{p.corral.median:.1f}{wall} | {cost} |")  # fmt: skip
    return "\n".join(lines) + "\n"


def plot(documents: list[Document], out: Path) -> dict[str, Path]:
    """One PNG per workload, ``out/<workload>.png``. Returns workload -> path."""
    import matplotlib  # noqa: PLC0415  (the `bench` extra)

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # noqa: PLC0415

    out.mkdir(parents=True, exist_ok=True)
    written: dict[str, Path] = {}
    for workload, figures in curves(documents).items():
        fig, axes = plt.subplots(1, 2, figsize=(10, 3.6), dpi=100)
        panels = ((axes[0], "throughput", "pods/s"),
                  (axes[1], "cpu_per_1000", "scheduler CPU ms per pod"))  # fmt: skip
        for ax, figure, label in panels:
            points = figures.get(figure, [])
            x = [p.nodes for p in points]
            for side, color, name in (("upstream", "tab:blue", "upstream"),
                                      ("corral", "tab:orange", "Corral")):  # fmt: skip
                ivs = [getattr(p, side) for p in points]
                spread = [[i.median - i.low for i in ivs], [i.high - i.median for i in ivs]]
                ax.errorbar(x, [i.median for i in ivs], yerr=spread, marker="o", capsize=3,
                            color=color, label=name)  # fmt: skip
            walls = [(p.nodes, p.ceiling.median) for p in points if p.ceiling is not None]
            if walls:
                ax.plot(*zip(*walls, strict=True), ls="--", color="gray", label="ceiling")
            ax.set_xscale("log")
            ax.set_xticks(x, [f"{n:,}" for n in x])
            ax.minorticks_off()
            ax.set_xlabel("nodes")
            ax.set_ylabel(label)
            ax.set_ylim(bottom=0)
            ax.grid(alpha=0.3)
        axes[0].legend(fontsize=8)
        fig.suptitle(f"{workload}: median and interval over the pairs", fontsize=10)
        fig.tight_layout()
        path = out / f"{workload}.png"
        fig.savefig(path)
        plt.close(fig)
        written[workload] = path
    return written


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "scaling",
        help="the scaling curve: the protocol at several cluster sizes, one plot per workload",
    )
    p.add_argument("--sizes", default=",".join(str(n) for n in SIZES),
                   help="node counts, comma-separated (default %(default)s)")  # fmt: skip
    p.add_argument("--pairs", type=int, default=3, help="pairs per workload and size "
                   "(default %(default)s: 75%% intervals; 6 reach 95%%)")  # fmt: skip
    p.add_argument("--workload", action="append", help="only this workload (repeatable)")
    p.add_argument("--pods", type=int, help="measured pods of every workload (default: each "
                   "workload's own, bounded by its nodes)")  # fmt: skip
    p.add_argument("--full-cluster", action="store_true", help="as the protocol's")
    p.add_argument("--pin", default="auto", help="as the protocol's (default %(default)s)")
    p.add_argument("--stall-timeout", type=float, default=60.0)
    p.add_argument("--out", help="results directory (default bench/results/scaling): one "
                   "protocol run per size in OUT/nodes-<N>/, the plots in OUT")  # fmt: skip
    p.add_argument("--resume", action="store_true", help="continue the runs in --out")
    p.add_argument("--corral-arg", action="append", metavar="ARG",
                   help="pass ARG to `corral scheduler` (repeatable)")  # fmt: skip
    p.add_argument(
        "--no-ceiling",
        action="store_true",
        help="leave out the ceiling runs of the API-bound workloads",
    )
    p.set_defaults(handler=_handler)


def _handler(args: argparse.Namespace) -> int:
    try:
        return run(args)
    except (ScalingError, protocol.ProtocolError, pinning.PinningError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
