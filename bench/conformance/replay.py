"""Replay recorded conformance runs offline: Corral's simulator against upstream's decisions.

A conformance run (``python -m bench.conformance --out DIR``) records, per seed, the scenario
and what upstream kube-scheduler decided for every pod: the node it bound (with its top-scored
set) or the FailedScheduling message. Those decisions stay true for the pinned version, so they
can judge Corral again without a control plane: for pod *i*, the state is the scenario's nodes
and running pods plus pods 0..i-1 bound where upstream put them (exactly what the live harness
creates), and :class:`corral.scheduler.engine.simulate.Simulator` decides pod *i* with upstream's
default configuration at ``percentageOfNodesToScore: 100``.

The verdict follows :mod:`bench.conformance.compare`: a node in upstream's top set, or the
identical message. It judges the scheduling framework and plugins only; the live harness also
covers the engine's informers, cache, queue and API writes, so a replay never replaces it.

    python -m bench.conformance.replay bench/results/<run>    # exit 1 on any disagreement
    python -m bench.conformance.replay --save decisions.json.gz bench/results/<run>

``--save`` keeps only what a replay reads (the scenarios and upstream's decisions) in one
gzipped file; ``tests/unit/benchharness/data/upstream-decisions.json.gz`` is such a file, and
the unit suite replays it on every run.
"""

from __future__ import annotations

import argparse
import copy
import gzip
import json
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from bench.cluster import UNSCHEDULABLE_TAINT
from bench.conformance import kinds
from bench.conformance.generate import Scenario
from corral.scheduler.engine.frameworks import load_engine_config
from corral.scheduler.engine.simulate import SimulatedEngine, Simulator

JSON = dict[str, Any]

CONFIG: Final[JSON] = {
    "apiVersion": "kubescheduler.config.k8s.io/v1",
    "kind": "KubeSchedulerConfiguration",
    "percentageOfNodesToScore": 100,
    "profiles": [{"schedulerName": "default-scheduler"}],
}


@dataclass(frozen=True)
class Replayed:
    seed: int
    index: int
    pod: str
    agree: bool
    want: str  # upstream: "node in [top]" or the message
    got: str  # Corral: the node or the message


def load(path: Path) -> list[JSON]:
    """The recorded seeds in ``path``: one ``seed-N.json`` or a ``--save`` file (a list)."""
    raw = path.read_bytes()
    if path.suffix == ".gz":
        raw = gzip.decompress(raw)
    data = json.loads(raw)
    return data if isinstance(data, list) else [data]


def trimmed(data: JSON) -> JSON:
    """What a replay reads of one recorded seed."""
    results = [{"index": r["index"], "reference": r["reference"], "top": r["top"]}
               for r in data["report"]["results"]]  # fmt: skip
    return {"scenario": data["scenario"], "report": {"results": results}}


# DynamicResources' PostFilter reason for a pod without claims up to 1.36; 1.37 (Corral's
# target) gives none. Recordings made with 1.36 binaries carry it (a no-op once re-recorded).
_DROPPED_IN_1_37: Final = "no new claims to deallocate, "


def save(seeds: list[JSON], path: Path) -> None:
    text = json.dumps([trimmed(s) for s in seeds], separators=(",", ":"), sort_keys=True)
    path.write_bytes(gzip.compress(text.encode(), compresslevel=9, mtime=0))


def replayable(data: JSON) -> bool:
    """Whether its kind can be judged offline (no extender to call, no victims to restore)."""
    return kinds.get(data["scenario"].get("kind", "basic")).replayable


def _as_controlled(node: JSON) -> JSON:
    """The node as the live cluster holds it: the node lifecycle controller taints a cordoned
    node (PodTopologySpread's nodeTaintsPolicy: Honor then leaves it out of its counts)."""
    if not node.get("spec", {}).get("unschedulable"):
        return node
    taints = node["spec"].get("taints") or []
    if any(t.get("key") == UNSCHEDULABLE_TAINT for t in taints):
        return node
    node = copy.deepcopy(node)
    node["spec"]["taints"] = [*taints, {"key": UNSCHEDULABLE_TAINT, "effect": "NoSchedule"}]
    return node


def replay_seed(data: JSON) -> Iterator[Replayed]:
    """Judge Corral on every pod of one recorded seed (of a ``replayable`` kind)."""
    scenario, results = data["scenario"], data["report"]["results"]
    parsed = Scenario.from_json(scenario)
    config = copy.deepcopy(CONFIG)
    config["profiles"][0].update(copy.deepcopy(parsed.profile))
    engine = load_engine_config(config)
    objects = [*parsed.cluster_objects(), *parsed.objects]
    placed: list[JSON] = []
    for result in results:
        index = result["index"]
        simulator = Simulator([SimulatedEngine("upstream's configuration", engine)])
        for obj in objects:
            simulator.add_object(obj)
        for node in scenario["nodes"]:
            simulator.add_node(_as_controlled(node))
        for pod in (*scenario["running"], *placed):
            simulator.add_running_pod(pod)
        original = scenario["pods"][index]
        placement = simulator.schedule(copy.deepcopy(original))
        reference = result["reference"]
        if reference["node"]:
            top = result["top"] or [reference["node"]]
            want = f"{reference['node']} in {top}"
            agree = placement.node in top
        else:
            want = str(reference["message"]).replace(_DROPPED_IN_1_37, "")
            agree = placement.node is None and placement.message == want
        got = placement.node or placement.message
        yield Replayed(scenario["seed"], index, original["metadata"]["name"], agree, want, got)
        if reference["node"]:
            bound = copy.deepcopy(original)
            bound["spec"]["nodeName"] = reference["node"]
            placed.append(bound)


def seed_files(paths: list[Path]) -> list[Path]:
    files: list[Path] = []
    for path in paths:
        if path.is_dir():
            files.extend(sorted(path.glob("seed-*.json*")))
        else:
            files.append(path)
    return files


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.conformance.replay",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("paths", nargs="+", type=Path, help="run directories or seed files")
    parser.add_argument(
        "--save",
        type=Path,
        metavar="FILE",
        help="write the scenarios and upstream's decisions here (gzipped JSON)",
    )
    args = parser.parse_args(argv)
    missing = [str(p) for p in args.paths if not p.exists()]
    if missing:
        print(f"no such file or directory: {', '.join(missing)}", file=sys.stderr)
        return 2
    files = seed_files(args.paths)
    if not files:
        print("no seed-*.json found", file=sys.stderr)
        return 2
    try:
        seeds = [seed for path in files for seed in load(path)]
    except (OSError, ValueError) as exc:  # unreadable, not gzip, not JSON
        print(f"cannot read a recorded run: {exc}", file=sys.stderr)
        return 2
    if args.save:
        save(seeds, args.save)
        print(f"saved {len(seeds)} seed(s) to {args.save}")
    agree = total = 0
    skipped = [s for s in seeds if not replayable(s)]
    if skipped:
        print(f"{len(skipped)} seed(s) of kinds judged only live: "
              + ", ".join(sorted({s["scenario"]["kind"] for s in skipped})))  # fmt: skip
    for seed in (s for s in seeds if replayable(s)):
        for r in replay_seed(seed):
            total += 1
            agree += r.agree
            if not r.agree:
                print(f"seed {r.seed} {r.pod}: DISAGREE\n  upstream: {r.want}\n  corral:   {r.got}")
    if not total:
        print("nothing to replay")
        return 2
    print(f"{agree}/{total} agree ({agree / total:.1%}) over {len(seeds) - len(skipped)} seed(s)")
    return 0 if agree == total else 1


if __name__ == "__main__":
    sys.exit(main())
