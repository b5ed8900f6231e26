"""``python -m bench.conformance``: random scenarios through upstream and the candidates.

Each seed is run for each scenario kind asked (``--kinds``, ``--list-kinds``); sizes default
to each kind's own.

Exit code 0 when every candidate agreed on every pod, 1 otherwise (the report lists each
disagreement with upstream's scores), 2 for usage errors. A PodGroup condition that differs
only as upstream's own race allows (``bench.conformance.groups``) agrees, and is counted
apart: "agree N, agree within upstream's race M, disagree K".
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

from bench.cluster import interruptible
from bench.conformance import harness, kinds
from bench.conformance.generate import Scenario
from bench.schedulers import corral_unavailable_reason
from corral.testing import LocalCluster


def _seeds(text: str) -> list[int]:
    seeds: list[int] = []
    for part in text.split(","):
        first, _, last = part.partition("-")
        seeds.extend(range(int(first), int(last or first) + 1))
    return seeds


def _run_seed(
    scenario: Scenario, candidates: list[str], disabled: tuple[str, ...], *, verbose: bool
) -> harness.Report:
    with tempfile.TemporaryDirectory(prefix=f"corral-conformance-{scenario.seed}-") as tmp:
        gates = dict(kinds.get(scenario.kind).feature_gates)
        cluster = LocalCluster.up(Path(tmp), feature_gates=gates or None)
        try:
            return harness.run(
                cluster,
                scenario,
                candidates,
                disabled_plugins=disabled,
                say=print if verbose else lambda _: None,
            )
        finally:
            cluster.down()


def _judge(
    scenario: Scenario, candidates: list[str], disabled: tuple[str, ...], *, verbose: bool
) -> harness.Report | None:
    """The seed's report; drops ``corral`` from ``candidates`` when its engine cannot start."""
    while candidates:
        try:
            return _run_seed(scenario, candidates, disabled, verbose=verbose)
        except harness.SchedulerNotReadyError as exc:
            if not (exc.exited and exc.kind == "corral"):
                raise
            # The engine refused to start (e.g. a default plugin it lacks): say so loudly,
            # keep judging what can be judged.
            print(f"*** corral engine not available (exited at startup): {exc} ***",
                  file=sys.stderr)  # fmt: skip
            candidates.remove("corral")
    return None


def _list_kinds() -> None:
    for name in kinds.names():
        kind = kinds.get(name)
        sizes = kind.sizes
        print(f"{name:12} {kind.summary} "
              f"({sizes.nodes} nodes, {sizes.running} running, {sizes.pods} pods)")  # fmt: skip


def _kinds(text: str) -> list[str] | None:
    chosen = kinds.names() if text == "all" else [k for k in text.split(",") if k]
    try:
        for name in chosen:
            kinds.get(name)
    except ValueError as exc:
        print(exc, file=sys.stderr)
        return None
    return chosen


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.conformance", description=__doc__)
    parser.add_argument("--seeds", default="1-10", help="e.g. 1-10 or 3,7 (default %(default)s)")
    parser.add_argument(
        "--kinds",
        default="basic",
        help="comma-separated scenario kinds, or 'all' (default %(default)s; see --list-kinds)",
    )
    parser.add_argument("--list-kinds", action="store_true", help="list the kinds and exit")
    parser.add_argument("--nodes", type=int, help="nodes per seed (default: the kind's)")
    parser.add_argument("--running", type=int, help="running pods per seed (default: the kind's)")
    parser.add_argument("--pods", type=int, help="pods to schedule per seed (default: the kind's)")
    parser.add_argument(
        "--candidates",
        default="upstream,corral",
        help="schedulers judged against upstream; 'upstream' is the self-check, 'simulate' "
        "corral simulate deciding from a snapshot of the cluster (default %(default)s)",
    )
    parser.add_argument(
        "--disable-plugins",
        help="comma-separated plugins disabled for upstream and the candidates alike",
    )
    parser.add_argument("--out", help="directory for per-seed JSON and summary.json")
    parser.add_argument("--verbose", action="store_true")
    args = parser.parse_args(argv)
    if args.list_kinds:
        _list_kinds()
        return 0
    chosen = _kinds(args.kinds)
    if chosen is None:
        return 2
    interruptible()

    candidates = [c for c in args.candidates.split(",") if c]
    if "corral" in candidates:
        reason = corral_unavailable_reason()
        if reason:
            print(f"*** {reason}: judging the upstream self-check only ***", file=sys.stderr)
            candidates.remove("corral")
    if not candidates:
        print("no candidate to judge", file=sys.stderr)
        return 2
    out = Path(args.out or f"bench/results/conformance-{time.strftime('%Y%m%d-%H%M%S')}")
    reports = []
    disabled = tuple(p for p in (args.disable_plugins or "").split(",") if p)
    runs = [(name, seed) for name in chosen for seed in _seeds(args.seeds)]
    for name, seed in runs:
        scenario = kinds.scenario(name, seed, nodes=args.nodes, running=args.running,
                                  pods=args.pods)  # fmt: skip
        report = _judge(scenario, candidates, disabled, verbose=args.verbose)
        if report is None:
            return 2
        harness.save(report, scenario, out / f"seed-{name}-{seed}.json")
        reports.append(report)
        line = ", ".join(
            f"{c} {a}/{t}" + (f" ({m} within upstream's race)" if m else "")
            for c in report.candidates
            for (a, t), m in [(report.agreement(c), report.within_race(c))]
        )
        print(f"{name} seed {seed}: {report.counts()}; agreement: {line}", flush=True)
    summary = harness.summary(reports)
    (out / "summary.json").write_text(json.dumps(summary, indent=1))
    ok = True
    for candidate, figures in summary.items():
        exact, race = figures["agree"] - figures["race"], figures["race"]
        print(f"{candidate}: {figures['total']} judged: agree {exact}, agree within "
              f"upstream's race {race}, disagree {figures['disagree']} "
              f"({figures['rate']:.1%} agree)")  # fmt: skip
        for d in figures["disagreements"]:
            ok = False
            verdict = d["verdicts"][candidate]
            print(f"  {d['kind']} seed {d['seed']} {d['pod']}: {verdict['kind']}\n    "
                  + verdict["detail"].replace("\n", "\n    "))  # fmt: skip
    print(f"results: {out}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
