"""Micro-benchmark: the event loop's work per victim deletion while preemptors wait (not a test).

PreemptionBasic's queue without a cluster: ``--waiting`` preemptors rejected by NodeResourcesFit,
each gated by DefaultPreemption's PreEnqueue (its preemption under way), as in the engine (the
default profile's events and hints, the engine's queue). Then ``--deletions`` assigned-pod
deletions, each through ``move_all_to_active_or_backoff`` as the engine's informer handler sends
it. Upstream's rule (v1.37.2): every such deletion re-evaluates each gated preemptor
(DefaultPreemption registered AssignedPod/Delete; NodeResourcesFit's hint queues it for any
deleted scheduled pod) and runs PreEnqueue again, which keeps it gated. Times with
``time.process_time``: microseconds per deletion and per waiting preemptor.

    .venv/bin/python -m bench.requeue_cycle [--waiting 100] [--deletions 600] [--repeat 5]
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Sequence
from statistics import median

from corral.scheduler.backend.queue import SchedulingQueue
from corral.scheduler.backend.records import pod_from_json
from corral.scheduler.framework import cluster_events as events
from corral.scheduler.framework.runtime.framework import Framework
from corral.scheduler.framework.status import Status
from corral.scheduler.framework.types import PodInfo
from corral.scheduler.plugins.registry import default_profile, in_tree_registry


class _Running:
    """A preemption executor whose every preemption is under way once ``running`` is set."""

    running = False

    def preempt(self, *_args: object) -> Status | None:
        return None

    def preempt_group(self, *_args: object) -> Status | None:
        return None

    def clear_nominated_node_name(self, pods: Sequence[PodInfo]) -> None:
        pass

    def is_running_preemption(self, uid: str) -> bool:
        return self.running

    def may_evict(self, pod: PodInfo) -> bool:
        return True


def _pod(name: str, cpu: str, priority: int, node: str = "") -> PodInfo:
    spec: dict[str, object] = {
        "priority": priority,
        "schedulerName": "default-scheduler",
        "containers": [{"name": "c", "resources": {"requests": {"cpu": cpu}}}],
    }
    if node:
        spec["nodeName"] = node
    meta = {"name": name, "namespace": "bench", "uid": f"uid-{name}"}
    return pod_from_json({"metadata": meta, "spec": spec})


def measure(waiting: int, deletions: int) -> tuple[float, int]:
    """(CPU microseconds per deletion, gated preemptors at the end)."""
    executor = _Running()
    fwk = Framework(default_profile(), in_tree_registry(), pod_binder=lambda _p, _n: None,
                    preemption_executor=executor)  # fmt: skip
    queue = SchedulingQueue(
        less=fwk.less,
        pre_enqueue=fwk.run_pre_enqueue,
        events_by_profile={"default-scheduler": dict(fwk.events_by_plugin())},
    )
    for i in range(waiting):
        queue.add(_pod(f"high-{i}", "3", 1000))
    for _ in range(waiting):
        qpi = queue.pop(timeout=0)
        assert qpi is not None
        qpi.unschedulable_plugins = frozenset({"NodeResourcesFit"})
        queue.add_unschedulable_if_not_present(qpi, queue.scheduling_cycle)
    executor.running = True  # every preemptor has preempted: the next deletion gates it
    victims = [_pod(f"low-{i}", "900m", 1, f"n{i % 200}") for i in range(deletions)]
    start = time.process_time()
    for victim in victims:
        queue.move_all_to_active_or_backoff(events.ASSIGNED_POD_DELETE, victim, None)
    spent = time.process_time() - start
    return spent / deletions * 1e6, queue.pending().gated


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--waiting", type=int, default=100)
    parser.add_argument("--deletions", type=int, default=600)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    runs = [measure(args.waiting, args.deletions) for _ in range(args.repeat)]
    per_deletion = median(r[0] for r in runs)
    gated = runs[-1][1]
    print(f"{args.waiting} gated preemptors, {args.deletions} deletions: "
          f"{per_deletion:.1f} us per deletion, {per_deletion / args.waiting:.2f} us per "
          f"deletion and preemptor (median of {args.repeat}); gated after: {gated}")  # fmt: skip


if __name__ == "__main__":
    main()
