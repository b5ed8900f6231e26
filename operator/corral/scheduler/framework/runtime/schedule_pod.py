"""Find a node for one pod: PreFilter → Filter (sampled) → PreScore → Score → select host.

Follows upstream ``schedule_one.go`` (``schedulePod``, ``findNodesThatFitPod``,
``findNodesThatPassFilters``, ``prioritizeNodes``, ``selectHost``) with columns instead of
goroutines:

- Filter: each batch plugin yields a mask over all slots; a node fails at the first plugin (in
  profile order) that rejects it, and only that plugin's reasons count. Nodes are taken in
  rotation order from ``next_start_node_index`` until ``num_feasible_nodes_to_find`` feasible
  ones are found; only the nodes up to that point count as processed (feasible + statuses),
  which advances the index. With per-node plugins in the profile the nodes are walked one by
  one and the walk stops there, so those plugins never run on later nodes (as upstream's). Its
  16 parallel workers stop at about the same point; sequential order makes ours exact.
- Score: batch scores over the feasible slots; normalize; each plugin's scores must lie in
  [0, 100]; weighted sum.
- Extenders (``runtime/extenders.py``) filter the feasible nodes after the plugins and add
  their scores after the plugins'; their HTTP calls block the cycle, as upstream's do.
- selectHost picks uniformly among the top-scored nodes, the distribution of upstream's
  reservoir sampling (1.30-1.34) and of its per-node random tiebreak (1.35+).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from time import perf_counter
from typing import Final

import numpy as np
import numpy.typing as npt

from corral.scheduler import metrics as m
from corral.scheduler.framework import interface as fw
from corral.scheduler.framework.cycle_state import CycleState
from corral.scheduler.framework.diagnosis import NO_NODES_AVAILABLE, Diagnosis, FitError
from corral.scheduler.framework.runtime import extenders as ext
from corral.scheduler.framework.runtime import nominated
from corral.scheduler.framework.runtime.framework import FilterStep, Framework, ScoreStep
from corral.scheduler.framework.runtime.recording import CycleRecording, recording
from corral.scheduler.framework.snapshot import Snapshot
from corral.scheduler.framework.status import Code, Status, StatusError
from corral.scheduler.framework.types import NodeInfo, PodInfo

SingleFilter = Callable[[CycleState, PodInfo, NodeInfo], Status | None]
MIN_FEASIBLE_NODES_TO_FIND: Final = 100
MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND: Final = 5
# The status a point is recorded with when it raised (upstream's Filter and Score: Error).
_ERRED: Final = Status(Code.ERROR)


def num_feasible_nodes_to_find(percentage: int, num_all_nodes: int) -> int:
    """Upstream ``numFeasibleNodesToFind``: 0 is adaptive (50 - n/125, at least 5%)."""
    if num_all_nodes < MIN_FEASIBLE_NODES_TO_FIND:
        return num_all_nodes
    if percentage == 0:
        percentage = max(50 - num_all_nodes // 125, MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND)
    return max(num_all_nodes * percentage // 100, MIN_FEASIBLE_NODES_TO_FIND)


@dataclass(frozen=True, slots=True)
class ScheduleResult:
    suggested_host: str
    evaluated_nodes: int
    feasible_nodes: int
    # Per-plugin weighted scores over the feasible slots, for --explain and logs.
    slots: npt.NDArray[np.intp] = field(default_factory=lambda: np.zeros(0, dtype=np.intp))
    plugin_scores: dict[str, npt.NDArray[np.int64]] = field(default_factory=dict)


def _no_mark(phase: str) -> None:
    pass


class PodScheduler:
    """The state one profile keeps across cycles: the rotating start index and the RNG."""

    def __init__(
        self,
        fwk: Framework,
        *,
        percentage_of_nodes_to_score: int = 0,
        rng: random.Random | None = None,
    ) -> None:
        self.fwk = fwk
        self.extenders = fwk.extenders  # the Framework's, given at its construction
        profile_pct = fwk.profile.percentage_of_nodes_to_score
        self.percentage = percentage_of_nodes_to_score if profile_pct is None else profile_pct
        self.rng = rng or random.Random()
        fwk.rng = self.rng
        self.next_start_node_index = 0
        # A timing hook: books the time since its previous call to the named phase (the
        # engine's PhaseClock.mark); a no-op unless the engine sets it.
        self.mark: Callable[[str], None] = _no_mark

    def schedule_pod(self, state: CycleState, pod: PodInfo, snapshot: Snapshot) -> ScheduleResult:
        """Raises :class:`FitError` when no node fits, :class:`StatusError` on an Error."""
        if snapshot.num_nodes == 0:
            # Upstream's ErrNoNodesAvailable: Unschedulable (waiting for a node), not an error.
            raise StatusError(Status.of(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, NO_NODES_AVAILABLE))
        self.fwk.set_snapshot(snapshot)
        rec = recording(state)
        feasible, diagnosis = self._find_nodes_that_fit(state, pod, snapshot)
        self.mark("filter")
        if len(feasible) == 0:
            raise FitError(pod.key, snapshot.num_nodes, diagnosis)
        evaluated = len(feasible) + len(diagnosis.node_to_status)
        if len(feasible) == 1:
            if rec is not None:  # upstream scores nothing when one node is feasible
                rec.selected(feasible, None, snapshot.names[int(feasible[0])])
            return ScheduleResult(snapshot.names[int(feasible[0])], evaluated, 1, feasible)
        total, per_plugin = self._prioritize(
            state, pod, snapshot, feasible, as_node_objects=diagnosis.extender_node_objects
        )
        top = total.max()
        ties = np.flatnonzero(total == top)
        chosen = int(feasible[int(ties[self.rng.randrange(len(ties))])])
        if rec is not None:
            rec.selected(feasible, total, snapshot.names[chosen])
        self.mark("score")
        return ScheduleResult(
            snapshot.names[chosen], evaluated, len(feasible), feasible, per_plugin
        )

    # --- filter -----------------------------------------------------------------------------

    def _find_nodes_that_fit(
        self, state: CycleState, pod: PodInfo, snapshot: Snapshot
    ) -> tuple[npt.NDArray[np.intp], Diagnosis]:
        fwk = self.fwk
        diagnosis = Diagnosis()
        pre_res, s, with_nodes = fwk.run_pre_filter(state, pod, snapshot)
        diagnosis.unschedulable_plugins = set(with_nodes)
        if s is not None and not s.is_success:
            if not s.is_rejected:
                raise StatusError(s)
            diagnosis.node_to_status.absent = s
            diagnosis.pre_filter_msg = s.message
            diagnosis.add_plugin_status(s)
            return np.zeros(0, dtype=np.intp), diagnosis

        # A nominated node (set by an earlier preemption) is tried alone first, before any
        # PreFilterResult restriction; if it fits it is the only feasible node.
        nominated_slot = snapshot.slot_of.get(pod.nominated_node_name, -1)
        if pod.nominated_node_name and nominated_slot >= 0:
            trial = Diagnosis()
            only = np.array([nominated_slot], dtype=np.intp)
            found = self._pass_filters(state, pod, snapshot, trial, only)
            if len(found) and self.extenders:
                found = ext.find_nodes_that_pass_extenders(
                    self.extenders, pod, snapshot, found, trial, recorder=recording(state)
                )
            if len(found):
                return found, trial
            diagnosis.unschedulable_plugins |= trial.unschedulable_plugins
            diagnosis.pending_plugins |= trial.pending_plugins

        num_all = snapshot.num_nodes
        nodes = snapshot.order
        if pre_res is not None and pre_res.node_names is not None:
            wanted = {snapshot.slot_of[n] for n in pre_res.node_names if n in snapshot.slot_of}
            nodes = nodes[np.isin(nodes, np.fromiter(wanted, dtype=np.intp, count=len(wanted)))]
            msg = f"node(s) didn't satisfy plugin(s) [{' '.join(sorted(with_nodes))}]"
            diagnosis.node_to_status.absent = Status.of(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, msg)
        feasible = np.zeros(0, dtype=np.intp)
        try:
            feasible = self._pass_filters(state, pod, snapshot, diagnosis, nodes)
        finally:
            # Advanced even when the cycle errors, so that every node gets its turn.
            processed = len(feasible) + len(diagnosis.node_to_status)
            self.next_start_node_index = (self.next_start_node_index + processed) % num_all
        if self.extenders:
            feasible = ext.find_nodes_that_pass_extenders(
                self.extenders, pod, snapshot, feasible, diagnosis, recorder=recording(state)
            )
        return feasible, diagnosis

    def _pass_filters(
        self,
        state: CycleState,
        pod: PodInfo,
        snapshot: Snapshot,
        diagnosis: Diagnosis,
        nodes: npt.NDArray[np.intp],
    ) -> npt.NDArray[np.intp]:
        """Upstream ``findNodesThatPassFilters``; it records the Filter point (Success, or Error
        when a filter errs) once per call over all nodes, when the profile has filters."""
        if not self.fwk.filter_steps or len(nodes) == 0:
            return self._filter(state, pod, snapshot, diagnosis, nodes)
        started = perf_counter()
        status: Status | None = _ERRED
        try:
            feasible = self._filter(state, pod, snapshot, diagnosis, nodes)
            status = None
            return feasible
        finally:
            self.fwk.observe_point(m.FILTER, status, started)

    def _filter(
        self,
        state: CycleState,
        pod: PodInfo,
        snapshot: Snapshot,
        diagnosis: Diagnosis,
        nodes: npt.NDArray[np.intp],
    ) -> npt.NDArray[np.intp]:
        fwk = self.fwk
        n = len(nodes)
        if n == 0:
            return nodes
        to_find = num_feasible_nodes_to_find(self.percentage, n)
        if not (
            fwk.has_score_plugins
            or ext.has_prioritizers(self.extenders)
            or ext.has_filters(self.extenders)
        ):
            to_find = 1
        start = self.next_start_node_index % n
        rotated = np.concatenate([nodes[start:], nodes[:start]]) if start else nodes
        steps = [p for p in fwk.filter_steps if p.name not in state.skip_filter_plugins]
        rec = recording(state)
        if rec is not None:
            rec.begin(snapshot, rotated, [p.name for p in fwk.filter_steps])
            rec.filter_skipped(p.name for p in fwk.filter_steps if p not in steps)
        if not steps:
            if rec is not None:
                rec.filtered(rotated[:to_find], rotated[:to_find])
            return rotated[:to_find]

        alive = np.zeros(snapshot.capacity, dtype=np.bool_)
        alive[nodes] = True
        failed_at = np.full(snapshot.capacity, -1, dtype=np.int16)
        sampled = state.record_plugin_metrics
        verdicts, singles = _batch_filters(
            fwk, steps, state, pod=pod, snapshot=snapshot, alive=alive, failed_at=failed_at,
            rec=rec, nodes=rotated,
        )  # fmt: skip
        # Nodes with nominated pods of >= priority must also pass with those pods added; that
        # first pass's failure is the node's status (RunFilterPluginsWithNominatedPods).
        stage = len(steps)
        explicit = nominated.first_pass_failures(fwk, state, pod, snapshot, nodes)
        if rec is not None:
            rec.filter_nominated(nodes, explicit)
        for slot in explicit:
            alive[slot] = False
            failed_at[slot] = stage
        verdicts.append(None)
        names = [step.name for step in steps] + ["nominated"]
        if singles:
            processed, feasible = self._pass_per_node(
                state, pod, snapshot, rotated, to_find,
                stage=stage, singles=singles, failed_at=failed_at, explicit=explicit,
                observe=fwk.observe_plugin if sampled else None, rec=rec,
            )  # fmt: skip
            if rec is not None:
                rec.filtered(processed, feasible)
            failed = processed[failed_at[processed] >= 0]
            if len(failed):
                _record_failures(
                    diagnosis, names=names, verdicts=verdicts, explicit=explicit,
                    failed=failed, stages=failed_at[failed],
                )  # fmt: skip
            return feasible

        passed = alive[rotated]
        positions = np.flatnonzero(passed)
        if len(positions) > to_find:
            processed = rotated[: int(positions[to_find - 1]) + 1]
            feasible = rotated[positions[:to_find]]
        else:
            processed = rotated
            feasible = rotated[positions]
        if rec is not None:
            rec.filtered(processed, feasible)
        failed = processed[~alive[processed]]
        if len(failed):
            _record_failures(
                diagnosis,
                names=names,
                verdicts=verdicts,
                explicit=explicit,
                failed=failed,
                stages=failed_at[failed],
            )
        return feasible

    @staticmethod
    def _pass_per_node(
        state: CycleState,
        pod: PodInfo,
        snapshot: Snapshot,
        rotated: npt.NDArray[np.intp],
        to_find: int,
        *,
        stage: int,
        singles: list[tuple[int, str, SingleFilter]],
        failed_at: npt.NDArray[np.int16],
        explicit: dict[int, Status],
        observe: Callable[[str, str, Status | None, float], None] | None = None,
        rec: CycleRecording | None = None,
    ) -> tuple[npt.NDArray[np.intp], npt.NDArray[np.intp]]:
        """Node by node in rotation order, as upstream's ``findNodesThatPassFilters``: each node
        meets the filters in profile order (the batch ones answered from their verdicts, in
        ``failed_at``) up to its first rejection, and the walk stops once ``to_find`` nodes
        passed. Per-node filters (the costly ones, e.g. DynamicResources' allocator) so never
        run on nodes past that point. Records rejections in ``failed_at``/``explicit``;
        returns the processed nodes and the feasible ones. ``stage``: the index meaning "no
        rejection" (one past the last filter). ``observe``: each call's duration is recorded
        (a sampled cycle), as upstream's per-node Filter calls are."""
        feasible: list[int] = []
        end = len(rotated)
        for position, slot in enumerate(rotated.tolist()):
            if slot in explicit:
                continue  # failed the with-nominated-pods pass, which comes first
            limit = int(failed_at[slot])
            limit = stage if limit < 0 else limit
            node = None
            for i, name, single in singles:
                if i >= limit:
                    break
                if node is None:
                    node = snapshot.node_info(slot)
                begun = perf_counter() if observe is not None else 0.0
                s = single(state, pod, node)
                if observe is not None:
                    observe(name, m.FILTER, s, begun)
                if rec is not None:
                    rec.filter_node(name, slot, s)
                if s is None or s.is_success:
                    continue
                if not s.is_rejected:
                    msg = f"running {name!r} filter plugin: {s.message}"
                    raise StatusError(Status.error(msg).with_plugin(name))
                failed_at[slot] = i
                explicit[slot] = s.with_plugin(name)
                break
            if failed_at[slot] >= 0:
                continue
            feasible.append(slot)
            if len(feasible) == to_find:
                end = position + 1
                break
        return rotated[:end], np.array(feasible, dtype=np.intp)

    # --- score ------------------------------------------------------------------------------

    def _prioritize(
        self,
        state: CycleState,
        pod: PodInfo,
        snapshot: Snapshot,
        slots: npt.NDArray[np.intp],
        *,
        as_node_objects: bool = False,
    ) -> tuple[npt.NDArray[np.int64], dict[str, npt.NDArray[np.int64]]]:
        """``as_node_objects``: an extender returned the nodes as Node objects; PreScore still
        reads the whole snapshot (upstream's shared lister), Score sees them as new NodeInfos
        (``ext.scoring_snapshot``)."""
        fwk = self.fwk
        if not fwk.has_score_plugins and not self.extenders:
            return np.ones(len(slots), dtype=np.int64), {}
        s = fwk.run_pre_score(state, pod, snapshot, slots)
        if s is not None:
            raise StatusError(s)
        scoring = ext.scoring_snapshot(snapshot, slots) if as_node_objects else snapshot
        started = perf_counter()
        status: Status | None = _ERRED
        try:
            total, per_plugin = self._score(state, pod, scoring, slots)
            status = None
        finally:
            fwk.observe_point(m.SCORE, status, started)
        answered = ext.extender_scores(
            self.extenders, pod, snapshot, slots, recorder=recording(state)
        )
        for name, scores in answered.items():
            per_plugin[name] = scores
            total += scores
        return total, per_plugin

    def _score(
        self, state: CycleState, pod: PodInfo, scoring: Snapshot, slots: npt.NDArray[np.intp]
    ) -> tuple[npt.NDArray[np.int64], dict[str, npt.NDArray[np.int64]]]:
        """Upstream ``RunScorePlugins``: every Score plugin that did not Skip, normalized,
        checked and weighted; raises :class:`StatusError` on a plugin's error."""
        fwk = self.fwk
        total = np.zeros(len(slots), dtype=np.int64)
        per_plugin: dict[str, npt.NDArray[np.int64]] = {}
        sampled = state.record_plugin_metrics
        rec = recording(state)
        for step in fwk.score_steps:
            if step.name in state.skip_score_plugins:
                if rec is not None:
                    rec.score_skipped(step.name, step.weight)
                continue
            begun = perf_counter() if sampled else 0.0
            scores, s = _score_one(step, state, pod, scoring, slots)
            raw = scores.copy() if rec is not None else scores
            if sampled:
                fwk.observe_plugin(step.name, m.SCORE, s, begun)
            if s is not None and not s.is_success:
                msg = f'running Score plugins: plugin "{step.name}" failed with: {s.message}'
                raise StatusError(Status.error(msg).with_plugin(step.name))
            if step.normalize is not None:
                begun = perf_counter() if sampled else 0.0
                s = step.normalize(state, pod, scores)
                if sampled:
                    fwk.observe_plugin(step.name, m.SCORE_EXTENSION_NORMALIZE, s, begun)
                if s is not None and not s.is_success:
                    msg = (
                        f'running Normalize on Score plugins: plugin "{step.name}" '
                        f"failed with: {s.message}"
                    )
                    raise StatusError(Status.error(msg).with_plugin(step.name))
            if len(scores) and (
                scores.min() < fw.MIN_NODE_SCORE or scores.max() > fw.MAX_NODE_SCORE
            ):
                bad = (scores < fw.MIN_NODE_SCORE) | (scores > fw.MAX_NODE_SCORE)
                value = int(scores[np.flatnonzero(bad)[0]])
                msg = (
                    f'applying score defaultWeights on Score plugins: plugin "{step.name}" '
                    f"returns an invalid score {value}, it should in the range of "
                    f"[{fw.MIN_NODE_SCORE}, {fw.MAX_NODE_SCORE}] after normalizing"
                )
                raise StatusError(Status.error(msg).with_plugin(step.name))
            weighted = scores * np.int64(step.weight)
            per_plugin[step.name] = weighted
            total += weighted
            if rec is not None:
                rec.score(step.name, step.weight, slots, raw, scores)
        return total, per_plugin


def _batch_filters(
    fwk: Framework,
    steps: Sequence[FilterStep],
    state: CycleState,
    *,
    pod: PodInfo,
    snapshot: Snapshot,
    alive: npt.NDArray[np.bool_],
    failed_at: npt.NDArray[np.int16],
    rec: CycleRecording | None = None,
    nodes: npt.NDArray[np.intp] | None = None,
) -> tuple[list[fw.FilterVerdict | None], list[tuple[int, str, SingleFilter]]]:
    """Each step's batch verdict (None for a per-node one, returned among the singles with its
    index), the nodes it rejects first marked in ``failed_at`` and cleared from ``alive``;
    ``rec`` gets each verdict over ``nodes`` (a batch plugin evaluates every node it is asked
    about)."""
    verdicts: list[fw.FilterVerdict | None] = []
    singles: list[tuple[int, str, SingleFilter]] = []
    sampled = state.record_plugin_metrics
    for i, step in enumerate(steps):
        begun = perf_counter() if sampled else 0.0
        verdict = None if step.batch is None else step.batch(state, pod, snapshot)
        if sampled and verdict is not None:  # one call over every node
            fwk.observe_plugin(step.name, m.FILTER, None, begun)
        if verdict is None:  # a per-node plugin, or a batch one declining for this pod
            if step.single is None:
                msg = f"filter plugin {step.name!r} declined its batch form and has no other"
                raise StatusError(Status.error(msg).with_plugin(step.name))
            verdicts.append(None)
            singles.append((i, step.name, step.single))
            continue
        newly = alive & ~verdict.passed
        failed_at[newly] = i
        alive &= verdict.passed
        verdicts.append(verdict)
        if rec is not None and nodes is not None:
            rec.filter_batch(step.name, nodes, verdict)
    return verdicts, singles


def _score_one(
    step: ScoreStep,
    state: CycleState,
    pod: PodInfo,
    snapshot: Snapshot,
    slots: npt.NDArray[np.intp],
) -> tuple[npt.NDArray[np.int64], Status | None]:
    if step.batch is not None:
        scores, s = step.batch(state, pod, snapshot, slots)
        return np.array(scores, dtype=np.int64, copy=True), s
    assert step.single is not None
    out = np.zeros(len(slots), dtype=np.int64)
    for i, slot in enumerate(slots.tolist()):
        value, s = step.single(state, pod, snapshot.node_info(slot))
        if s is not None and not s.is_success:
            return out, s
        out[i] = value
    return out, None


def _record_failures(
    diagnosis: Diagnosis,
    *,
    names: list[str],
    verdicts: list[fw.FilterVerdict | None],
    explicit: dict[int, Status],
    failed: npt.NDArray[np.intp],
    stages: npt.NDArray[np.int16],
) -> None:
    """Statuses of the processed nodes that failed, each by its first failing plugin."""
    for i, name in enumerate(names):
        slots = failed[stages == i]
        if not len(slots):
            continue
        found = verdicts[i]
        if found is None:
            for slot in slots.tolist():
                diagnosis.node_to_status.set(slot, explicit[slot])
            diagnosis.add_plugin_status(explicit[int(slots[0])])
            continue
        diagnosis.node_to_status.add_batch(slots, found, name)
        # One status tells the rejection kind (filters only reject); describing every code
        # would cost a np.unique per cycle for nothing.
        code = 0 if found.reasons is None else int(found.reasons[slots[0]])
        diagnosis.add_plugin_status(found.describe(code).with_plugin(name))
