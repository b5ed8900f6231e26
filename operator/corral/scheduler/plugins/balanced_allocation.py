"""NodeResourcesBalancedAllocation (PreScore, Score).

Per configured resource (default cpu and memory, weights must be 1): the fraction
``min(1, requested / allocatable)`` with *actual* requests (no non-zero defaults); resources
with allocatable 0 are left out, and so are scalar resources the pod does not request. ``std``
is ``|f1 - f2| / 2`` for two fractions, the population standard deviation for more, 0 for
fewer; a balance is ``int((1 - std) * 100)``.

Since 1.36 the score rewards the *change* in balance the pod brings, not the balance after it:
with ``with`` the balance counting the pod and ``without`` the node's balance before it,
the score is ``50 + (50 + with - without) / 2`` in Go integer arithmetic (the division
truncates toward zero), so 50 means "the pod makes the node as unbalanced as it can" and 100
"as balanced as it can". PreScore returns Skip for a pod that requests nothing (upstream
#129138, 1.32+). No normalization.

Batch form: the same IEEE double arithmetic in the same order, vectorized over nodes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

import numpy as np
import numpy.typing as npt

from corral.scheduler.config import plugin_args
from corral.scheduler.config.args import NodeResourcesBalancedAllocationArgs
from corral.scheduler.framework import snapshot as snap
from corral.scheduler.framework import types
from corral.scheduler.framework.cycle_state import CycleState
from corral.scheduler.framework.interface import MAX_NODE_SCORE, Handle, Scores, Slots
from corral.scheduler.framework.snapshot import Snapshot
from corral.scheduler.framework.status import Code, Status
from corral.scheduler.framework.types import NodeInfo, PodInfo
from corral.scheduler.plugins import names

NAME: Final = names.NODE_RESOURCES_BALANCED_ALLOCATION
PRE_SCORE_STATE_KEY: Final = "PreScore" + NAME

Floats = npt.NDArray[np.float64]


@dataclass(frozen=True, slots=True)
class _PreScoreState:
    pod_requests: tuple[int, ...]

    def clone(self) -> _PreScoreState:
        return self


def balance(requested: list[int], allocatable: list[int]) -> int:
    """Upstream ``balancedResourceScore``: how balanced ``requested`` is, 0..100."""
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


def go_half(value: int) -> int:
    """``value / 2`` with Go's truncation toward zero (Python's ``//`` floors)."""
    return -(-value // 2) if value < 0 else value // 2


def balanced_score(requested: list[int], allocated: list[int], allocatable: list[int]) -> int:
    """Upstream ``balancedResourceScorer``: ``requested`` counts the pod, ``allocated`` not."""
    change = balance(requested, allocatable) - balance(allocated, allocatable)
    half = MAX_NODE_SCORE // 2
    return half + go_half(half + change)


def _combine(with_pod: Scores, without_pod: Scores) -> Scores:
    """``balanced_score`` over arrays of balances."""
    half = MAX_NODE_SCORE // 2
    change = half + with_pod - without_pod
    halved: Scores = np.sign(change) * (np.abs(change) // 2)
    return halved + half


class BalancedAllocation:
    name: str = NAME

    def __init__(self, args: NodeResourcesBalancedAllocationArgs) -> None:
        self.resources = tuple(r.name for r in args.resources)  # defaulted by plugin_args

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
        allocated: list[int] = []
        allocatable: list[int] = []
        for name, want in zip(self.resources, requests, strict=True):
            alloc, used = 0, 0
            if types.is_scalar_resource(name):
                if want != 0 and name in node.allocatable.scalar:
                    alloc, used = node.allocatable.scalar[name], node.requested.scalar.get(name, 0)
            elif name in (types.CPU, types.MEMORY, types.EPHEMERAL_STORAGE):
                alloc, used = node.allocatable.get(name), node.requested.get(name)
            requested.append(used + want if alloc else 0)
            allocated.append(used if alloc else 0)
            allocatable.append(alloc)
        return balanced_score(requested, allocated, allocatable), None

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
        with_pod: list[Floats] = []
        without_pod: list[Floats] = []
        valid: list[npt.NDArray[np.bool_]] = []
        for name, want in zip(self.resources, requests, strict=True):
            row = fixed.get(name)
            if row is None and types.is_scalar_resource(name) and want != 0:
                row = snapshot.resource_row(name)
            if row is None:
                continue
            alloc = snapshot.allocatable[row, slots]
            used = snapshot.requested[row, slots]
            ok = alloc != 0
            with_pod.append(np.where(ok, _fractions(used + want, alloc), 0.0))
            without_pod.append(np.where(ok, _fractions(used, alloc), 0.0))
            valid.append(ok)
        return _combine(_std_scores(with_pod, valid, n), _std_scores(without_pod, valid, n)), None


def _fractions(requested: npt.NDArray[np.int64], allocatable: npt.NDArray[np.int64]) -> Floats:
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.minimum(requested.astype(np.float64) / allocatable.astype(np.float64), 1.0)


def _cpu_memory_scores(snapshot: Snapshot, slots: Slots, requests: tuple[int, ...]) -> Scores:
    """The default resources: std is ``|f_cpu - f_mem| / 2`` where both allocatables are set,
    0 where fewer are (the same float operations as the general form)."""
    rows = [snap.ROW_CPU, snap.ROW_MEMORY]
    alloc = snapshot.allocatable[rows][:, slots]
    used = snapshot.requested[rows][:, slots]
    both = (alloc != 0).all(axis=0)

    def balances(requested: npt.NDArray[np.int64]) -> Scores:
        f = _fractions(requested, alloc)
        std = np.where(both, np.abs((f[0] - f[1]) / 2), 0.0)
        return ((1 - std) * float(MAX_NODE_SCORE)).astype(np.int64)

    return _combine(balances(used + np.array(requests, dtype=np.int64)[:, None]), balances(used))


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
    return BalancedAllocation(plugin_args(NAME, args))
