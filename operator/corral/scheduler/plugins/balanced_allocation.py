"""NodeResourcesBalancedAllocation (PreScore, Score).

Per configured resource (default cpu and memory, weights must be 1): the fraction
``min(1, (node requested + pod request) / allocatable)`` with *actual* requests (no non-zero
defaults); resources with allocatable 0 are left out, and so are scalar resources the pod does
not request. ``std`` is ``|f1 - f2| / 2`` for two fractions, the population standard deviation
for more, 0 for fewer; the score is ``int((1 - std) * 100)``. PreScore returns Skip for a pod
that requests nothing (upstream #129138, 1.32+). No normalization.

Batch form: the same IEEE double arithmetic in the same order, vectorized over nodes.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from corral.scheduler.framework import snapshot as snap
from corral.scheduler.framework import types
from corral.scheduler.framework.cycle_state import CycleState
from corral.scheduler.framework.interface import MAX_NODE_SCORE, Handle, Scores, Slots
from corral.scheduler.framework.snapshot import Snapshot
from corral.scheduler.framework.status import Code, Status
from corral.scheduler.framework.types import NodeInfo, PodInfo
from corral.scheduler.plugins import helper, names

NAME: Final = names.NODE_RESOURCES_BALANCED_ALLOCATION
PRE_SCORE_STATE_KEY: Final = "PreScore" + NAME

Floats = npt.NDArray[np.float64]


@dataclass(frozen=True, slots=True)
class NodeResourcesBalancedAllocationArgs:
    resources: tuple[tuple[str, int], ...] = ((types.CPU, 1), (types.MEMORY, 1))

    @classmethod
    def from_mapping(cls, raw: Mapping[str, Any]) -> NodeResourcesBalancedAllocationArgs:
        resources = raw.get("resources")
        if not resources:
            return cls()
        return cls(tuple((str(r["name"]), int(r.get("weight") or 1)) for r in resources))

    def validate(self) -> None:
        """Upstream ``ValidateNodeResourcesBalancedAllocationArgs``."""
        errors: list[str] = []
        seen: set[str] = set()
        for i, (name, weight) in enumerate(self.resources):
            if name in seen:
                errors.append(f"resources[{i}].name: Duplicate value: {name!r}")
            seen.add(name)
            if weight != 1:
                errors.append(f"resources[{i}].weight: Invalid value: {weight}: must be 1")
        if errors:
            raise ValueError("; ".join(errors))


@dataclass(frozen=True, slots=True)
class _PreScoreState:
    pod_requests: tuple[int, ...]

    def clone(self) -> _PreScoreState:
        return self


def balanced_score(requested: list[int], allocatable: list[int]) -> int:
    """Upstream ``balancedResourceScorer`` on one node."""
    fractions: list[float] = []
    total = 0.0
    for req, alloc in zip(requested, allocatable, strict=True):
        if alloc == 0:
            continue
        fraction = min(float(req) / float(alloc), 1.0)
        total += fraction
        fractions.append(fraction)
    std = 0.0
    if len(fractions) == 2:
        std = abs((fractions[0] - fractions[1]) / 2)
    elif len(fractions) > 2:
        mean = total / len(fractions)
        acc = 0.0
        for f in fractions:
            acc = acc + (f - mean) * (f - mean)
        std = float(np.sqrt(acc / len(fractions)))
    return int((1 - std) * float(MAX_NODE_SCORE))


class BalancedAllocation:
    name: str = NAME

    def __init__(self, args: NodeResourcesBalancedAllocationArgs) -> None:
        args.validate()
        self.resources = tuple(name for name, _ in args.resources)

    def _pod_requests(self, pod: PodInfo) -> tuple[int, ...]:
        return tuple(pod.requests.get(n) if n != types.PODS else 0 for n in self.resources)

    def _requests(self, state: CycleState, pod: PodInfo) -> tuple[int, ...]:
        s = state.read(PRE_SCORE_STATE_KEY, _PreScoreState)
        return s.pod_requests if s is not None else self._pod_requests(pod)

    def pre_score(
        self, state: CycleState, pod: PodInfo, snapshot: Snapshot, slots: Slots
    ) -> Status | None:
        requests = self._pod_requests(pod)
        if not any(requests):
            return Status(Code.SKIP)
        state.write(PRE_SCORE_STATE_KEY, _PreScoreState(requests))
        return None

    def score(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> tuple[int, Status | None]:
        requests = self._requests(state, pod)
        if not any(requests):
            return 0, None
        requested: list[int] = []
        allocatable: list[int] = []
        for name, want in zip(self.resources, requests, strict=True):
            alloc, used = 0, 0
            if types.is_scalar_resource(name):
                if want != 0 and name in node.allocatable.scalar:
                    alloc, used = node.allocatable.scalar[name], node.requested.scalar.get(name, 0)
            elif name in (types.CPU, types.MEMORY, types.EPHEMERAL_STORAGE):
                alloc, used = node.allocatable.get(name), node.requested.get(name)
            requested.append(used + want if alloc else 0)
            allocatable.append(alloc)
        return balanced_score(requested, allocatable), None

    def score_batch(
        self, state: CycleState, pod: PodInfo, snapshot: Snapshot, slots: Slots
    ) -> tuple[Scores, Status | None]:
        n = len(slots)
        requests = self._requests(state, pod)
        if not any(requests):
            return np.zeros(n, dtype=np.int64), None
        fixed = {types.CPU: snap.ROW_CPU, types.MEMORY: snap.ROW_MEMORY}
        fixed[types.EPHEMERAL_STORAGE] = snap.ROW_EPHEMERAL
        if self.resources == (types.CPU, types.MEMORY):
            return _cpu_memory_scores(snapshot, slots, requests), None
        fractions: list[Floats] = []
        valid: list[npt.NDArray[np.bool_]] = []
        for name, want in zip(self.resources, requests, strict=True):
            row = fixed.get(name)
            if row is None and types.is_scalar_resource(name) and want != 0:
                row = snapshot.resource_row(name)
            if row is None:
                continue
            alloc = snapshot.allocatable[row, slots]
            req = snapshot.requested[row, slots] + want
            ok = alloc != 0
            with np.errstate(divide="ignore", invalid="ignore"):
                f = np.minimum(req.astype(np.float64) / alloc.astype(np.float64), 1.0)
            fractions.append(np.where(ok, f, 0.0))
            valid.append(ok)
        return _std_scores(fractions, valid, n), None


def _cpu_memory_scores(snapshot: Snapshot, slots: Slots, requests: tuple[int, ...]) -> Scores:
    """The default resources: std is ``|f_cpu - f_mem| / 2`` where both allocatables are set,
    0 where fewer are (the same float operations as the general form)."""
    rows = [snap.ROW_CPU, snap.ROW_MEMORY]
    alloc = snapshot.allocatable[rows][:, slots]
    req = snapshot.requested[rows][:, slots] + np.array(requests, dtype=np.int64)[:, None]
    with np.errstate(divide="ignore", invalid="ignore"):
        f = np.minimum(req.astype(np.float64) / alloc.astype(np.float64), 1.0)
    both = (alloc != 0).all(axis=0)
    std = np.where(both, np.abs((f[0] - f[1]) / 2), 0.0)
    return ((1 - std) * float(MAX_NODE_SCORE)).astype(np.int64)


def _std_scores(fractions: list[Floats], valid: list[npt.NDArray[np.bool_]], n: int) -> Scores:
    count = np.zeros(n, dtype=np.int64)
    total = np.zeros(n, dtype=np.float64)
    first = np.zeros(n, dtype=np.float64)
    second = np.zeros(n, dtype=np.float64)
    for f, ok in zip(fractions, valid, strict=True):
        total = total + f  # invalid entries add an exact 0.0
        second = np.where(ok & (count == 1), f, second)
        first = np.where(ok & (count == 0), f, first)
        count += ok
    std = np.zeros(n, dtype=np.float64)
    two = count == 2
    std[two] = np.abs((first[two] - second[two]) / 2)
    many = count > 2
    if many.any():
        mean = total[many] / count[many]
        acc = np.zeros(int(many.sum()), dtype=np.float64)
        for f, ok in zip(fractions, valid, strict=True):
            d = f[many] - mean
            acc = acc + np.where(ok[many], d * d, 0.0)
        std[many] = np.sqrt(acc / count[many])
    return ((1 - std) * float(MAX_NODE_SCORE)).astype(np.int64)


def new(args: object, handle: Handle) -> BalancedAllocation:
    return BalancedAllocation(
        helper.coerce_args(
            args,
            NodeResourcesBalancedAllocationArgs,
            NodeResourcesBalancedAllocationArgs.from_mapping,
        )
    )
