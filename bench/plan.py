"""The protocol's run order, and how long it will take.

**Order.** Every workload gets ``pairs`` pairs; a pair is upstream and Corral back to back, each
on a fresh identical cluster. Pairs are interleaved: round ``r`` runs pair ``r`` of every
workload before any workload's pair ``r + 1``, so a slow hour of the host falls on all
workloads alike instead of on one. Inside a workload the order alternates pair by pair (AB, BA,
AB, ...: ABBA), and successive workloads of a round start with alternating schedulers, so
neither scheduler systematically runs first, after a particular workload, or later in a round.
On the workloads named in ``ceiling`` the pair has a third run between the two: the ceiling
(``bench.schedulers``, no scheduler at all), the same distance in time from each.

**Duration.** A run costs cluster start and stop, nodes, init pods, the scheduler's start, and
the measured pods at the workload's throughput. :data:`PRIOR_PODS_PER_S` holds rough
throughputs from the earlier runs (docs/benchmarks/history.md); :class:`Progress` rescales the
estimate by what the finished runs actually took, so the ETA sharpens as the run goes.
"""

from __future__ import annotations

import time
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from typing import Final

from bench.schedulers import CEILING
from bench.workloads import Workload

SCHEDULERS: Final = ("upstream", "corral")
SOLO: Final = "corral"  # the one scheduler of a workload without a rival

# Pods/s per workload (the slower scheduler's, so estimates err long), from the runs recorded
# in docs/benchmarks/history.md: default sizes from final-s3c, 5,000 nodes from issue 18's figures
# where measured (SchedulingBasic, TopologySpreading, PreemptionBasic), else a guess of half
# the default size's rate.
PRIOR_PODS_PER_S: Final[dict[tuple[str, bool], float]] = {
    ("SchedulingBasic", False): 140.0,
    ("SchedulingPodAntiAffinity", False): 75.0,
    ("SchedulingPodAffinity", False): 100.0,
    ("SchedulingNodeAffinity", False): 120.0,
    ("TopologySpreading", False): 130.0,
    ("PreemptionBasic", False): 15.0,
    ("Unschedulable", False): 150.0,
    ("SchedulingWithMixedChurn", False): 170.0,
    ("SchedulingWithResourceClaim", False): 60.0,  # a guess: never run before
    ("SchedulingBasic", True): 195.0,
    ("SchedulingPodAntiAffinity", True): 40.0,
    ("SchedulingPodAffinity", True): 50.0,
    ("SchedulingNodeAffinity", True): 60.0,
    ("TopologySpreading", True): 48.0,
    ("PreemptionBasic", True): 10.0,
    ("Unschedulable", True): 75.0,
    ("SchedulingWithMixedChurn", True): 85.0,
    ("SchedulingWithResourceClaim", True): 40.0,
    # Pod groups: guesses until the protocol has run them.
    ("GangScheduling", False): 100.0,
    ("PodGroupBasicScheduling", False): 100.0,
    ("GangPreemptionBasic", False): 10.0,
    ("GangScheduling", True): 50.0,
    ("PodGroupBasicScheduling", True): 50.0,
    ("GangPreemptionBasic", True): 5.0,  # one gang of 100 preempting every node at once
}
CLUSTER_S: Final = 20.0  # control plane up and down, scheduler start, canary
NODES_PER_S: Final = 100.0  # created and made schedulable
INIT_PODS_PER_S: Final = 400.0  # created already bound


@dataclass(frozen=True)
class Slot:
    """One run of the protocol."""

    index: int  # position in the whole run
    round: int  # == pair: every workload's pair r runs in round r
    workload: str
    scheduler: str
    position: int  # 0: first of its pair (1: the ceiling, between the two, where there is one)


def order(
    workloads: Sequence[str],
    pairs: int,
    schedulers: Sequence[str] = SCHEDULERS,
    ceiling: Collection[str] = (),
    solo: Collection[str] = (),
) -> list[Slot]:
    """Every run of the protocol in the order it is run (see the module docstring). A ``solo``
    workload has no rival: each round runs it once, with Corral."""
    if len(schedulers) != 2:
        raise ValueError(f"a pair needs exactly two schedulers, got {list(schedulers)}")
    if pairs < 1:
        raise ValueError(f"pairs must be at least 1, got {pairs}")
    slots: list[Slot] = []
    for r in range(pairs):
        for w, workload in enumerate(workloads):
            first = (r + w) % 2
            kinds = [schedulers[first], schedulers[1 - first]]
            if workload in solo:
                kinds = [SOLO]
            elif workload in ceiling:
                kinds.insert(1, CEILING)
            for position, kind in enumerate(kinds):
                slots.append(Slot(len(slots), r, workload, kind, position))
    return slots


def estimate_s(workload: Workload, full: bool) -> float:
    """Rough seconds for one run of ``workload`` (either scheduler)."""
    rate = PRIOR_PODS_PER_S.get((workload.name, full), 50.0)
    return (
        CLUSTER_S
        + workload.nodes / NODES_PER_S
        + workload.init_pods / INIT_PODS_PER_S
        + workload.measured_pods / rate
    )


@dataclass
class Progress:
    """Runs done so far against their estimates; the ETA of the rest."""

    estimates: list[float]  # per slot, in run order
    done: dict[int, float] = field(default_factory=dict)  # slot index -> seconds it took
    started: float = field(default_factory=time.monotonic)

    def finish(self, index: int, seconds: float) -> None:
        self.done[index] = seconds

    @property
    def scale(self) -> float:
        """Observed over estimated time of the finished runs (1.0 before the first)."""
        estimated = sum(self.estimates[i] for i in self.done)
        return sum(self.done.values()) / estimated if estimated > 0 else 1.0

    def remaining_s(self) -> float:
        left = sum(e for i, e in enumerate(self.estimates) if i not in self.done)
        return left * self.scale

    def line(self, slot: Slot, total_pairs: int) -> str:
        finished = len(self.done)
        return (
            f"[{finished}/{len(self.estimates)} runs, {_hm(time.monotonic() - self.started)} "
            f"elapsed, ETA {_hm(self.remaining_s())}] round {slot.round + 1}/{total_pairs}: "
            f"{slot.workload} {slot.scheduler}"
        )


def _hm(seconds: float) -> str:
    minutes = int(seconds // 60)
    return f"{minutes // 60}h{minutes % 60:02d}m"
