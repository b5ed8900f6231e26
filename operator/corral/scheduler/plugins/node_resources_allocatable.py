"""NodeResourcesAllocatable (Score, NormalizeScore) — scheduler-plugins' semantics.

Favors nodes by their *allocatable* resources, not their free capacity (SP
``pkg/noderesources/allocatable.go``): a node's raw score is
``sum(weight_r * (-allocatable_r if mode is Least, +allocatable_r if Most)) / sum(weight_r)``, with
Go's integer division (truncated toward zero); cpu counts in millicores, memory and storage in
bytes, a scalar resource in its units, and any other resource (``pods``) as 0. NormalizeScore
maps the lowest raw score to 0 and the highest to 100 linearly (Go integer arithmetic); when
every node has the same raw score, every node gets 0.

Batch form: the snapshot's allocatable rows, one weighted sum over the feasible slots.
"""

from __future__ import annotations

from typing import Final

import numpy as np

from corral.scheduler.config import plugin_args
from corral.scheduler.config.args import NodeResourcesAllocatableArgs
from corral.scheduler.framework import types
from corral.scheduler.framework.cycle_state import CycleState
from corral.scheduler.framework.interface import (
    MAX_NODE_SCORE,
    MIN_NODE_SCORE,
    Handle,
    Scores,
    Slots,
)
from corral.scheduler.framework.snapshot import Snapshot
from corral.scheduler.framework.status import Status
from corral.scheduler.framework.types import NodeInfo, PodInfo
from corral.scheduler.plugins import names

NAME: Final = names.NODE_RESOURCES_ALLOCATABLE
EXTENSION_POINTS: Final = ("score",)


def _go_div(numerator: Scores, denominator: int) -> Scores:
    """Go's int64 division: truncated toward zero."""
    q = np.abs(numerator) // denominator
    return np.where(numerator < 0, -q, q)


def _allocatable(node: NodeInfo, resource: str) -> int:
    if resource in (types.CPU, types.MEMORY, types.EPHEMERAL_STORAGE):
        return node.allocatable.get(resource)
    if types.is_scalar_resource(resource):
        return node.allocatable.scalar.get(resource, 0)
    return 0


class NodeResourcesAllocatable:
    name: str = NAME

    def __init__(self, args: NodeResourcesAllocatableArgs) -> None:
        # Defaulted and validated by plugin_args: weights > 0, mode Least or Most. A resource
        # listed twice keeps its last weight (SP builds a map).
        weights: dict[str, int] = {}
        for r in args.resources:
            weights[r.name] = int(r.weight or 0)
        self.weights = weights
        self.sign = -1 if args.mode == "Least" else 1
        self.weight_sum = sum(weights.values())

    def score(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> tuple[int, Status | None]:
        total = sum(self.sign * _allocatable(node, r) * w for r, w in self.weights.items())
        q = abs(total) // self.weight_sum
        return (-q if total < 0 else q), None

    def score_batch(
        self, state: CycleState, pod: PodInfo, snapshot: Snapshot, slots: Slots
    ) -> tuple[Scores, Status | None]:
        total = np.zeros(len(slots), dtype=np.int64)
        for resource, weight in self.weights.items():
            counted = resource in (types.CPU, types.MEMORY, types.EPHEMERAL_STORAGE)
            row = snapshot.resource_row(resource)
            if row is None or not (counted or types.is_scalar_resource(resource)):
                continue
            total += self.sign * snapshot.allocatable[row, slots] * weight
        return _go_div(total, self.weight_sum), None

    def normalize_score(self, state: CycleState, pod: PodInfo, scores: Scores) -> Status | None:
        if len(scores) == 0:
            return None
        highest, lowest = int(scores.max()), int(scores.min())
        old_range = highest - lowest
        if old_range == 0:
            scores[:] = MIN_NODE_SCORE
            return None
        new_range = MAX_NODE_SCORE - MIN_NODE_SCORE
        scores[:] = (scores - lowest) * new_range // old_range + MIN_NODE_SCORE
        return None


def new(args: object, handle: Handle) -> NodeResourcesAllocatable:
    return NodeResourcesAllocatable(plugin_args(NAME, args))
