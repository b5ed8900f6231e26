"""The runtime's side of ``--explain``: each point of a cycle reports what it evaluated here.

Contract: a cycle is explained when its :class:`CycleState` carries a :class:`CycleRecording`
(``state.recorder``); every hook is called by the runtime at the point it describes, with the
values the point computed (never re-evaluating a plugin), and costs nothing when there is no
recording (the runtime checks ``state.recorder is None`` once per point). Node slots are named
through the snapshot given to :meth:`CycleRecording.begin`. The result is the plain data of
:mod:`corral.scheduler.framework.explanation`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import numpy as np
import numpy.typing as npt

from corral.scheduler.framework import explanation as x
from corral.scheduler.framework.cycle_state import CycleState
from corral.scheduler.framework.interface import FilterVerdict
from corral.scheduler.framework.snapshot import Snapshot
from corral.scheduler.framework.status import Code, Status


def _code(status: Status | None) -> str:
    return Code.SUCCESS.label if status is None else status.code.label


def _message(status: Status | None) -> str:
    return "" if status is None else status.message


class CycleRecording:
    """Implements :class:`corral.scheduler.framework.explanation.Recorder`."""

    def __init__(self, pod: str, profile: str, attempt: int = 0) -> None:
        self.explanation = x.Explanation(pod=pod, profile=profile, attempt=attempt)
        self._names: Sequence[str] = ()

    def _name(self, slot: int) -> str:
        return str(self._names[slot])

    # --- the scheduling cycle, in order -----------------------------------------------------

    def begin(
        self, snapshot: Snapshot, order: npt.NDArray[np.intp], filters: Iterable[str]
    ) -> None:
        """A pass of the Filter stage over ``order`` (a nominated node's trial comes first,
        alone); ``filters``: the profile's Filter plugins, in order."""
        self._names = snapshot.names
        self.explanation.nodes = [self._name(s) for s in order.tolist()]
        for plugin in filters:
            self.explanation.filter_of(plugin)

    def pre_filter(self, plugin: str, status: Status | None, nodes: Iterable[str] | None) -> None:
        names = None if nodes is None else sorted(nodes)
        self.explanation.pre_filter.append(
            x.PointResult(plugin, _code(status), _message(status), node_names=names)
        )

    def filter_skipped(self, plugins: Iterable[str]) -> None:
        for plugin in plugins:
            self.explanation.filter_of(plugin).skipped = True

    def filter_batch(
        self, plugin: str, slots: npt.NDArray[np.intp], verdict: FilterVerdict
    ) -> None:
        """A batch plugin's verdict over ``slots`` (it evaluated all of them at once)."""
        column = self.explanation.filter_of(plugin)
        described: dict[int, x.NodeVerdict] = {}
        for slot in slots.tolist():
            if verdict.passed[slot]:
                column.nodes[self._name(slot)] = x.NodeVerdict(x.SUCCESS)
                continue
            code = 0 if verdict.reasons is None else int(verdict.reasons[slot])
            if code not in described:
                s = verdict.describe(code)
                described[code] = x.NodeVerdict(s.code.label, s.message)
            column.nodes[self._name(slot)] = described[code]

    def filter_node(self, plugin: str, slot: int, status: Status | None) -> None:
        """A per-node plugin run on one node."""
        verdict = x.NodeVerdict(_code(status), _message(status))
        self.explanation.filter_of(plugin).nodes[self._name(slot)] = verdict

    def filter_nominated(self, slots: npt.NDArray[np.intp], failed: Mapping[int, Status]) -> None:
        """The with-nominated-pods pass, for the nodes it applied to."""
        if not failed:
            return
        column = self.explanation.filter_of(x.NOMINATED, x.NOMINATED)
        for slot, status in failed.items():
            column.nodes[self._name(slot)] = x.NodeVerdict(status.code.label, status.message)

    def filter_extender(
        self,
        extender: str,
        sent: Mapping[str, int],
        kept: Iterable[str],
        statuses: Mapping[str, Status],
        error: str = "",
    ) -> None:
        """An extender's Filter answer about the nodes ``sent`` to it; ``error`` when the call
        failed and the extender is ignorable (its answer is then ignored)."""
        column = self.explanation.filter_of(extender, x.EXTENDER)
        if error:
            for name in sent:
                column.nodes[name] = x.NodeVerdict(x.SUCCESS, f"ignored: {error}")
            return
        survivors = set(kept)
        for name in sent:
            s = statuses.get(name)
            if name in survivors:
                column.nodes[name] = x.NodeVerdict(x.SUCCESS)
            elif s is not None:
                column.nodes[name] = x.NodeVerdict(s.code.label, s.message)
            else:  # dropped without a reason: no status, as upstream
                column.nodes[name] = x.NodeVerdict(Code.UNSCHEDULABLE.label, "dropped by the "
                                                   "extender without a reason")  # fmt: skip

    def filtered(self, processed: npt.NDArray[np.intp], feasible: npt.NDArray[np.intp]) -> None:
        self.explanation.processed_nodes = [self._name(s) for s in processed.tolist()]
        self.explanation.feasible_nodes = [self._name(s) for s in feasible.tolist()]

    def feasible(self, feasible: npt.NDArray[np.intp]) -> None:
        """The feasible nodes after the extenders."""
        self.explanation.feasible_nodes = [self._name(s) for s in feasible.tolist()]

    def pre_score(self, plugin: str, status: Status | None) -> None:
        self.explanation.pre_score.append(x.PointResult(plugin, _code(status), _message(status)))

    def score_skipped(self, plugin: str, weight: int) -> None:
        self.explanation.score.append(x.ScoreColumn(plugin, weight, skipped=True))

    def score(
        self,
        plugin: str,
        weight: int,
        slots: npt.NDArray[np.intp],
        raw: npt.NDArray[np.int64],
        normalized: npt.NDArray[np.int64],
    ) -> None:
        nodes = {
            self._name(slot): x.NodeScore(int(r), int(n), int(n) * weight)
            for slot, r, n in zip(slots.tolist(), raw.tolist(), normalized.tolist(), strict=True)
        }
        self.explanation.score.append(x.ScoreColumn(plugin, weight, nodes=nodes))

    def score_extender(
        self,
        extender: str,
        weight: int,
        scale: int,
        raw: Mapping[str, int],
        added: Mapping[str, int],
    ) -> None:
        nodes = {
            name: x.NodeScore(raw.get(name, 0), raw.get(name, 0) * scale, total)
            for name, total in added.items()
        }
        self.explanation.score.append(x.ScoreColumn(extender, weight, x.EXTENDER, nodes=nodes))

    def selected(self, slots: npt.NDArray[np.intp], totals: npt.NDArray[np.int64] | None,
                 host: str) -> None:  # fmt: skip
        if totals is not None:
            self.explanation.totals = {
                self._name(s): int(t) for s, t in zip(slots.tolist(), totals.tolist(), strict=True)
            }
        self.explanation.selected_node = host

    def post_filter(self, plugin: str, status: Status | None, nominated: str | None) -> None:
        self.explanation.post_filter.append(
            x.PointResult(plugin, _code(status), _message(status), nominated_node_name=nominated)
        )

    def preemption(self, preemption: x.Preemption) -> None:
        self.explanation.preemption = preemption

    def reserve(self, plugin: str, status: Status | None) -> None:
        """A plugin's Reserve; a second run in one attempt replaces the first (a pod-group
        member is reserved on the cycle's fork, unreserved, then reserved for real)."""
        kept = [r for r in self.explanation.reserve if r.plugin != plugin]
        self.explanation.reserve = [*kept, x.PointResult(plugin, _code(status), _message(status))]

    def permit(self, plugin: str, status: Status | None, timeout: float | None) -> None:
        wait = timeout if status is not None and status.is_wait else None
        self.explanation.permit.append(
            x.PointResult(plugin, _code(status), _message(status), timeout_seconds=wait)
        )

    def outcome(self, code: str, node: str | None, message: str) -> None:
        self.explanation.outcome = x.Outcome(code, node, message)


def recording(state: CycleState) -> CycleRecording | None:
    """The cycle's recording, if it is explained."""
    rec = state.recorder
    return rec if rec is not None and isinstance(rec, CycleRecording) else None
