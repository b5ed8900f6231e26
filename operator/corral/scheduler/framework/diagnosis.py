"""Why a pod fits nowhere: per-node statuses and upstream's FailedScheduling message.

``NodeToStatus`` holds the statuses of the nodes the cycle rejected. Batch filters contribute
whole verdicts, resolved to statuses only when asked (the message counts codes with
``np.unique`` instead of building one Status per node). Nodes without an explicit status get
the ``absent`` status (PreFilter rejections and nodes outside a PreFilterResult), as upstream's
``NodeToStatus.AbsentNodesStatus``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Final

import numpy as np
import numpy.typing as npt

from corral.scheduler.framework.status import Code, Status

if TYPE_CHECKING:
    from corral.scheduler.framework.interface import FilterVerdict

NO_NODE_AVAILABLE_FMT: Final = "0/{} nodes are available:"
NO_NODES_AVAILABLE: Final = "no nodes available to schedule pods"


class NodeToStatus:
    def __init__(self) -> None:
        self._explicit: dict[int, Status] = {}
        self._batches: list[tuple[npt.NDArray[np.intp], FilterVerdict, str]] = []
        self._batch_count = 0
        self.absent: Status | None = None

    def set(self, slot: int, status: Status) -> None:
        self._explicit[slot] = status

    def add_batch(self, slots: npt.NDArray[np.intp], verdict: FilterVerdict, plugin: str) -> None:
        """``slots`` failed ``plugin``'s batch filter (and passed every plugin before it)."""
        if len(slots):
            self._batches.append((slots, verdict, plugin))
            self._batch_count += len(slots)

    def __len__(self) -> int:
        """Number of nodes with an explicit status."""
        return len(self._explicit) + self._batch_count

    def items(self) -> Iterator[tuple[int, Status]]:
        """Explicit (slot, status) pairs; batch statuses are materialized here."""
        yield from self._explicit.items()
        for slots, verdict, plugin in self._batches:
            codes = verdict.reasons
            cache: dict[int, Status] = {}
            for slot in slots.tolist():
                code = 0 if codes is None else int(codes[slot])
                status = cache.get(code)
                if status is None:
                    status = cache[code] = verdict.describe(code).with_plugin(plugin)
                yield slot, status

    def get(self, slot: int) -> Status | None:
        status = self._explicit.get(slot)
        if status is not None:
            return status
        for slots, verdict, plugin in self._batches:
            if np.any(slots == slot):
                code = 0 if verdict.reasons is None else int(verdict.reasons[slot])
                return verdict.describe(code).with_plugin(plugin)
        return self.absent

    def reason_counts(self) -> Counter[str]:
        counts: Counter[str] = Counter()
        for status in self._explicit.values():
            counts.update(status.reasons)
        for slots, verdict, _plugin in self._batches:
            if verdict.reasons is None:
                for reason in verdict.describe(0).reasons:
                    counts[reason] += len(slots)
                continue
            codes, per_code = np.unique(verdict.reasons[slots], return_counts=True)
            for code, n in zip(codes.tolist(), per_code.tolist(), strict=True):
                for reason in verdict.describe(code).reasons:
                    counts[reason] += n
        return counts


@dataclass(slots=True)
class Diagnosis:
    node_to_status: NodeToStatus = field(default_factory=NodeToStatus)
    unschedulable_plugins: set[str] = field(default_factory=set)
    pending_plugins: set[str] = field(default_factory=set)
    pre_filter_msg: str = ""
    post_filter_msg: str = ""
    # An extender returned the feasible nodes as Node objects: they are scored as upstream's
    # new NodeInfos of them, without pods (runtime.extenders.scoring_snapshot).
    extender_node_objects: bool = False

    def add_plugin_status(self, status: Status) -> None:
        if not status.plugin:
            return
        if status.is_rejected:
            self.unschedulable_plugins.add(status.plugin)
        if status.code is Code.PENDING:
            self.pending_plugins.add(status.plugin)


class FitError(Exception):
    """The pod fits on no node; ``str()`` is upstream's FailedScheduling message."""

    def __init__(self, pod_key: str, num_all_nodes: int, diagnosis: Diagnosis) -> None:
        self.pod_key = pod_key
        self.num_all_nodes = num_all_nodes
        self.diagnosis = diagnosis
        super().__init__(self.message())

    def message(self) -> str:
        d = self.diagnosis
        msg = NO_NODE_AVAILABLE_FMT.format(self.num_all_nodes)
        if d.pre_filter_msg:
            # All nodes carry the PreFilter status; listing them again would repeat it.
            msg += f" {d.pre_filter_msg}."
        else:
            counts = d.node_to_status.reason_counts()
            absent_nodes = self.num_all_nodes - len(d.node_to_status)
            if absent_nodes > 0 and d.node_to_status.absent is not None:
                for reason in d.node_to_status.absent.reasons:
                    counts[reason] += absent_nodes
            # Sorted as strings, like upstream: "10 x" sorts before "2 y".
            histogram = sorted(f"{n} {reason}" for reason, n in counts.items())
            if histogram:
                msg += f" {', '.join(histogram)}."
        if d.post_filter_msg:
            msg += f" {d.post_filter_msg}"
        return msg
