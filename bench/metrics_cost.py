"""The CPU the engine's metrics add per pod: a paired before/after (not a test).

    git archive <before> operator | tar -x -C /tmp/before   # the tree without the change
    .venv/bin/python -m bench.metrics_cost --before /tmp/before/operator [--nodes 500] \
        [--pods 3000] [--pairs 6]

Each run is a fresh process that schedules ``--pods`` pods, one at a time, through exactly the
path the engine's scheduling and binding threads take per pod, with upstream's default plugins
over ``--nodes`` nodes (bench.engine_cycle's cluster): queue add, pop, the scheduling cycle,
the binding cycle (a Binding that goes nowhere), done, and the outcome's metrics as the
engine's reporter records them; on the tree with ``rest_client_*`` also the two requests a
bound pod costs (its Binding and its Event) told to the request observer. CPU is the
process's (``time.process_time``) over the measured pods, after a warm-up. Runs alternate
before/after in pairs (ABBA order), and the per-pod difference of each pair is reported with
its mean and spread: the machine may be busy, but a pair runs back to back.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def _reporter(app: Any, engine: Any) -> Any:
    """The engine's outcome reporter with no event loop: Events are not posted."""
    if hasattr(app, "_Reporter"):  # a tree before the reporter split (engine/reporter.py)
        return app._Reporter(engine)
    from corral.scheduler.engine.handoff import LoopHandoff  # noqa: PLC0415
    from corral.scheduler.engine.reporter import OutcomeReporter  # noqa: PLC0415

    no_client: Any = None  # never called: no status patch is spawned
    return OutcomeReporter(engine.recorder, {}, LoopHandoff(), lambda _coro: None, no_client)


def child(nodes: int, pods: int, warmup: int) -> float:
    """CPU seconds per pod on the tree ``corral`` is imported from."""
    from bench.engine_cycle import build, pod_json  # noqa: PLC0415
    from corral.scheduler.backend.queue import SchedulingQueue  # noqa: PLC0415
    from corral.scheduler.backend.records import pod_from_json  # noqa: PLC0415
    from corral.scheduler.engine import app, loop  # noqa: PLC0415
    from corral.scheduler.engine import metrics as engine_metrics  # noqa: PLC0415
    from corral.scheduler.framework.cycle_state import CycleState  # noqa: PLC0415
    from corral.scheduler.framework.runtime import framework as runtime  # noqa: PLC0415
    from corral.scheduler.framework.runtime.schedule_one import (  # noqa: PLC0415
        binding_cycle,
        scheduling_cycle,
    )
    from corral.scheduler.framework.runtime.schedule_pod import PodScheduler  # noqa: PLC0415
    from corral.scheduler.plugins.registry import default_profile, in_tree_registry  # noqa: PLC0415

    after = hasattr(engine_metrics, "EngineMetrics")
    kwargs: dict[str, Any] = {}
    observer: Any = None
    if after:
        metrics = engine_metrics.EngineMetrics()
        kwargs["metrics"] = metrics.recorder
        observer = metrics
        engine = SimpleNamespace(recorder=metrics.recorder)
    else:
        old = engine_metrics.SchedulerMetrics  # type: ignore[attr-defined]  # the tree before
        engine = SimpleNamespace(metrics=old())
    reporter = _reporter(app, engine)
    cache = build(nodes, running_per_node=5)
    fwk = runtime.Framework(
        default_profile(), in_tree_registry(), pod_binder=lambda _pod, _node: None, **kwargs
    )
    scheduler = PodScheduler(fwk, rng=random.Random(1))
    queue = SchedulingQueue(less=fwk.less, pre_enqueue=fwk.run_pre_enqueue, **kwargs)
    sample = getattr(runtime, "sample_plugin_metrics", None)
    random.seed(2)
    started = 0.0
    for i in range(warmup + pods):
        if i == warmup:
            started = time.process_time()
        queue.add(pod_from_json(pod_json(i, affinity=False)))
        qpi = queue.pop(timeout=0)
        assert qpi is not None
        begun = time.monotonic()
        state = CycleState(record_plugin_metrics=sample()) if sample else CycleState()
        outcome = scheduling_cycle(scheduler, state, qpi.pod, cache.snapshot(), cache)
        assert outcome.ok, "the cluster is sized to fit every pod"
        assert outcome.result is not None
        host = outcome.result.suggested_host
        assert binding_cycle(scheduler, state, qpi.pod, host, cache) is None
        queue.done(qpi.pod.uid)
        now = time.monotonic()
        fields: dict[str, Any] = {"attempts": qpi.attempts}
        if after:
            fields["since_first_attempt"] = now - (qpi.initial_attempt_timestamp or now)
        reporter.scheduled(loop.Success(qpi.pod, "default-scheduler", host, 1, 1, now - begun,
                                        **fields))  # fmt: skip
        if observer is not None:
            for _ in range(2):  # the Binding and the Event
                observer.requested("POST", "127.0.0.1:6443", 201, 0.002)
    return (time.process_time() - started) / pods


def run_one(tree: Path, args: argparse.Namespace) -> float:
    env = {**os.environ, "PYTHONPATH": f"{tree}{os.pathsep}{ROOT}"}
    out = subprocess.run(
        [sys.executable, "-m", "bench.metrics_cost", "--child", "--nodes", str(args.nodes),
         "--pods", str(args.pods)],
        env=env, cwd=ROOT, check=True, capture_output=True, text=True,
    ).stdout  # fmt: skip
    return float(json.loads(out)["cpu_per_pod"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", type=Path, help="operator/ of the tree without the change")
    parser.add_argument("--nodes", type=int, default=500)
    parser.add_argument("--pods", type=int, default=3000)
    parser.add_argument("--warmup", type=int, default=200)
    parser.add_argument("--pairs", type=int, default=6)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps({"cpu_per_pod": child(args.nodes, args.pods, args.warmup)}))
        return
    if args.before is None:
        parser.error("--before is required")
    after_tree = ROOT / "operator"
    diffs: list[float] = []
    for i in range(args.pairs):
        order = [(args.before, "before"), (after_tree, "after")]
        if i % 2:
            order.reverse()  # ABBA: drift on a busy machine cancels out
        got = {label: run_one(tree, args) for tree, label in order}
        diffs.append(got["after"] - got["before"])
        print(
            f"pair {i + 1}: before {got['before'] * 1e6:7.1f} µs/pod, "
            f"after {got['after'] * 1e6:7.1f} µs/pod, added {diffs[-1] * 1e6:+6.1f} µs",
            flush=True,
        )
    mean = statistics.mean(diffs)
    spread = statistics.stdev(diffs) if len(diffs) > 1 else 0.0
    print(
        f"added per pod: {mean * 1e6:+.1f} µs (sd {spread * 1e6:.1f} µs over {len(diffs)} "
        f"pairs; {args.nodes} nodes, {args.pods} pods a run)"
    )


if __name__ == "__main__":
    main()
