"""TenantSpread (PreScore, Score, NormalizeScore) — Corral's own.

Spreads each tenant's pods over nodes: a node's raw score is the number of pods on it (bound or
assumed, in any namespace, not terminating) whose label ``labelKey`` has the same value as the
incoming pod's; NormalizeScore reverses it to 0..100 (``100 - 100 * s / max``; all 100 when no
node has such a pod), so nodes with the fewest pods of the same tenant win. A pod without the
label is not scored (PreScore returns Skip).

Batch form: the label column of the pod table, ``bincount`` over node slots.
"""

from __future__ import annotations

from typing import Final

import numpy as np

from corral.scheduler.config import plugin_args
from corral.scheduler.config.args import TenantSpreadArgs
from corral.scheduler.framework.cycle_state import CycleState
from corral.scheduler.framework.interface import Handle, Scores, Slots
from corral.scheduler.framework.snapshot import Snapshot
from corral.scheduler.framework.status import Code, Status
from corral.scheduler.framework.types import NodeInfo, PodInfo
from corral.scheduler.plugins import helper, names

NAME: Final = names.TENANT_SPREAD
EXTENSION_POINTS: Final = ("preScore", "score")


class TenantSpread:
    name: str = NAME

    def __init__(self, args: TenantSpreadArgs) -> None:
        self.key = args.label_key or ""  # defaulted and validated by plugin_args

    def pre_score(
        self, state: CycleState, pod: PodInfo, snapshot: Snapshot, slots: Slots
    ) -> Status | None:
        return None if self.key in pod.labels else Status(Code.SKIP)

    def score(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> tuple[int, Status | None]:
        tenant = pod.labels.get(self.key)
        if tenant is None:
            return 0, None
        same = sum(1 for p in node.pods if not p.deleting and p.labels.get(self.key) == tenant)
        return same, None

    def score_batch(
        self, state: CycleState, pod: PodInfo, snapshot: Snapshot, slots: Slots
    ) -> tuple[Scores, Status | None]:
        table = snapshot.pods
        tenant = pod.labels.get(self.key)
        column = table.label_columns.get(self.key)
        vid = table.label_ids.get(self.key, {}).get(tenant or "")
        if tenant is None or column is None or vid is None:
            return np.zeros(len(slots), dtype=np.int64), None
        rows = (column[: table.size] == vid) & ~table.deleting[: table.size]
        return table.per_slot(rows, snapshot.capacity)[slots], None

    def normalize_score(self, state: CycleState, pod: PodInfo, scores: Scores) -> Status | None:
        helper.default_normalize_score(scores, reverse=True)
        return None


def new(args: object, handle: Handle) -> TenantSpread:
    return TenantSpread(plugin_args(NAME, args))
