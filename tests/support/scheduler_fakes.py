"""Fake plugins for runtime tests (upstream's testing/framework/fake_plugins.go in spirit)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from corral.scheduler.framework.cycle_state import CycleState
from corral.scheduler.framework.interface import FilterVerdict, PreFilterResult, Scores, Slots
from corral.scheduler.framework.snapshot import Snapshot
from corral.scheduler.framework.status import Code, Status
from corral.scheduler.framework.types import NodeInfo, PodInfo


class FakePreFilter:
    def __init__(
        self, name: str, result: PreFilterResult | None = None, status: Status | None = None
    ) -> None:
        self.name = name
        self.result = result
        self.status = status
        self.calls = 0

    def pre_filter(
        self, state: CycleState, pod: PodInfo, snapshot: Snapshot
    ) -> tuple[PreFilterResult | None, Status | None]:
        self.calls += 1
        return self.result, self.status

    def pre_filter_extensions(self) -> None:
        return None


class FakeBatchFilter:
    """Rejects nodes whose name is in ``reject`` with ``status``."""

    def __init__(self, name: str, reject: set[str], status: Status) -> None:
        self.name = name
        self.reject = reject
        self.status = status

    def filter_batch(self, state: CycleState, pod: PodInfo, snapshot: Snapshot) -> FilterVerdict:
        passed = np.array([n not in self.reject for n in snapshot.names], dtype=np.bool_)
        return FilterVerdict.uniform(passed, self.status)


class FakeNodeFilter:
    """A per-node-only filter, like a simple third-party plugin."""

    def __init__(self, name: str, verdict: Callable[[NodeInfo], Status | None]) -> None:
        self.name = name
        self.verdict = verdict
        self.seen: list[str] = []

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status | None:
        self.seen.append(node.name)
        return self.verdict(node)


class FakeScore:
    """Per-node score from a name → score table; optional normalization by a function."""

    def __init__(
        self, name: str, table: dict[str, int], normalize: Callable[[Scores], None] | None = None
    ) -> None:
        self.name = name
        self.table = table
        self._normalize = normalize
        self.calls = 0

    def score(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> tuple[int, Status | None]:
        self.calls += 1
        return self.table.get(node.name, 0), None


class FakeNormalizedScore(FakeScore):
    def normalize_score(self, state: CycleState, pod: PodInfo, scores: Scores) -> Status | None:
        assert self._normalize is not None
        self._normalize(scores)
        return None


class FakeBatchScore:
    def __init__(self, name: str, value: int) -> None:
        self.name = name
        self.value = value

    def score_batch(
        self, state: CycleState, pod: PodInfo, snapshot: Snapshot, slots: Slots
    ) -> tuple[Scores, Status | None]:
        return np.full(len(slots), self.value, dtype=np.int64), None


class FakeReserve:
    def __init__(self, name: str, status: Status | None = None) -> None:
        self.name = name
        self.status = status
        self.log: list[str] = []

    def reserve(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        self.log.append(f"reserve {node_name}")
        return self.status

    def unreserve(self, state: CycleState, pod: PodInfo, node_name: str) -> None:
        self.log.append(f"unreserve {node_name}")


class FakePermit:
    def __init__(self, name: str, status: Status | None, timeout: float = 0.0) -> None:
        self.name = name
        self.status = status
        self.timeout = timeout

    def permit(
        self, state: CycleState, pod: PodInfo, node_name: str
    ) -> tuple[Status | None, float]:
        return self.status, self.timeout


class FakePreBind:
    """A PreBind plugin; with ``pre_flight`` also a PreBindPreFlight one answering it."""

    def __init__(self, name: str, status: Status | None = None) -> None:
        self.name = name
        self.status = status
        self.log: list[str] = []

    def pre_bind(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        self.log.append(f"pre_bind {node_name}")
        return self.status


class FakePreBindPreFlight(FakePreBind):
    def __init__(self, name: str, pre_flight: Status | None, status: Status | None = None) -> None:
        super().__init__(name, status)
        self.pre_flight = pre_flight

    def pre_bind_pre_flight(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        self.log.append(f"pre_flight {node_name}")
        return self.pre_flight


class FakeBind:
    def __init__(self, name: str, status: Status | None) -> None:
        self.name = name
        self.status = status
        self.bound: list[tuple[str, str]] = []

    def bind(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        if self.status is None:
            self.bound.append((pod.name, node_name))
        return self.status


class FakeQueueSort:
    name = "FakeQueueSort"

    def less(self, a: Any, b: Any) -> bool:
        return bool(a.timestamp < b.timestamp)


SKIP = Status(Code.SKIP)


def registry_of(*plugins: Any) -> dict[str, Callable[[object, object], Any]]:
    """Factories returning the given instances (so tests can inspect them)."""
    out: dict[str, Callable[[object, object], Any]] = {}
    for plugin in (FakeQueueSort(), FakeBind("FakeBind", None), *plugins):
        out[plugin.name] = lambda _args, _handle, p=plugin: p
    return out
