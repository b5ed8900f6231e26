"""Extenders inside the cycle, as upstream ``schedule_one.go`` runs them.

- Filter (``findNodesThatPassExtenders``): after the plugins' Filter, in configured order
  (ignorable extenders last), each interested filtering extender sees the survivors of the one
  before it. Its FailedAndUnresolvableNodes become UnschedulableAndUnresolvable statuses, its
  FailedNodes Unschedulable ones (the former wins for a node in both); a node dropped without a
  reason gets no status, as upstream. An error fails the cycle unless the extender is ignorable.
- Prioritize (``prioritizeNodes``): every interested prioritizing extender is called in
  parallel; each returned score adds ``score * weight * (MAX_NODE_SCORE / MAX_EXTENDER_PRIORITY)``
  to that node's total, unnormalized and unchecked. Errors only drop that extender's scores.
- Bind (``extendersBinding``): the first interested binder binds instead of the Bind plugins; an
  ignorable binder that fails hands over to the next binder or the plugins.
- Preemption (``callExtenders`` of the preemption evaluator): for the preemption plugin.
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace

import numpy as np
import numpy.typing as npt

from corral.scheduler.framework import interface as fw
from corral.scheduler.framework.diagnosis import Diagnosis
from corral.scheduler.framework.extender import (
    EXTENDER_NAME,
    MAX_EXTENDER_PRIORITY,
    Extender,
    ExtenderError,
    HostPriority,
)
from corral.scheduler.framework.runtime.recording import CycleRecording
from corral.scheduler.framework.snapshot import Snapshot
from corral.scheduler.framework.status import Code, Status, StatusError
from corral.scheduler.framework.types import NodeRecord, PodInfo

_SCALE = fw.MAX_NODE_SCORE // MAX_EXTENDER_PRIORITY


def has_filters(extenders: Sequence[Extender]) -> bool:
    return any(e.is_filter() for e in extenders)


def has_prioritizers(extenders: Sequence[Extender]) -> bool:
    return any(e.is_prioritizer() for e in extenders)


def _records(snapshot: Snapshot, slots: npt.NDArray[np.intp]) -> list[NodeRecord]:
    out = []
    for slot in slots.tolist():
        record = snapshot.records[slot]
        assert record is not None, f"slot {slot} of a feasible node holds no node"
        out.append(record)
    return out


def find_nodes_that_pass_extenders(
    extenders: Sequence[Extender],
    pod: PodInfo,
    snapshot: Snapshot,
    feasible: npt.NDArray[np.intp],
    diagnosis: Diagnosis,
    *,
    recorder: CycleRecording | None = None,
) -> npt.NDArray[np.intp]:
    """The feasible slots every interested extender keeps; raises :class:`StatusError`."""
    before = len(feasible)
    for ext in extenders:
        if len(feasible) == 0:
            break
        if not ext.is_filter() or not ext.is_interested(pod):
            continue
        sent = {snapshot.names[slot]: slot for slot in feasible.tolist()}
        try:
            result = ext.filter(pod, _records(snapshot, feasible))
        except ExtenderError as exc:
            if ext.is_ignorable():
                if recorder is not None:
                    recorder.filter_extender(ext.name, sent, (), {}, error=str(exc))
                continue
            raise StatusError(Status.error(str(exc))) from exc
        unresolvable = result.failed_and_unresolvable
        # Only nodes this extender was asked about can carry its verdict: a name it invents
        # has no slot, and a node rejected earlier already has its status.
        for name, msg in unresolvable.items():
            if name in sent:
                status = Status.of(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, msg)
                diagnosis.node_to_status.set(sent[name], status)
        for name, msg in result.failed.items():
            if name in sent and name not in unresolvable:
                diagnosis.node_to_status.set(sent[name], Status.of(Code.UNSCHEDULABLE, msg))
        feasible = np.fromiter(
            (sent[name] for name in result.node_names if name in sent),
            dtype=np.intp,
            count=-1,
        )
        diagnosis.extender_node_objects |= result.as_node_objects
        if recorder is not None:
            statuses = {n: diagnosis.node_to_status.get(slot) for n, slot in sent.items()}
            kept = [n for n in result.node_names if n in sent]
            found = {n: st for n, st in statuses.items() if st is not None}
            recorder.filter_extender(ext.name, sent, kept, found)
    if len(feasible) != before:
        diagnosis.unschedulable_plugins.add(EXTENDER_NAME)
    if recorder is not None:
        recorder.feasible(feasible)
    return feasible


def scoring_snapshot(snapshot: Snapshot, slots: npt.NDArray[np.intp]) -> Snapshot:
    """``snapshot`` as the Score plugins see the nodes at ``slots`` after an extender returned
    them as Node objects: upstream's ``HTTPExtender.Filter`` builds a new NodeInfo of each, so
    no pod is on them, nothing is requested and they hold no image states (NodeResourcesFit,
    BalancedAllocation, ImageLocality, PodTopologySpread's hostname counts). Only for Score:
    PreScore reads upstream's snapshot lister, which still has every pod."""
    requested = snapshot.requested.copy()
    requested[:, slots] = 0
    non_zero = snapshot.non_zero_requested.copy()
    non_zero[:, slots] = 0
    fresh = set(slots.tolist())
    images = {
        image: {slot: size for slot, size in holders.items() if slot not in fresh}
        for image, holders in snapshot.images.items()
    }
    table = snapshot.pods
    node_slot = table.node_slot.copy()
    node_slot[np.isin(node_slot, slots)] = -1  # -1: a row on no node of the snapshot
    pods = replace(table, node_slot=node_slot, _memo={})
    return replace(
        snapshot, requested=requested, non_zero_requested=non_zero, images=images, pods=pods
    )


def _prioritize_one(
    ext: Extender, pod: PodInfo, nodes: Sequence[NodeRecord]
) -> tuple[Sequence[HostPriority], int] | None:
    try:
        return ext.prioritize(pod, nodes)
    except ExtenderError:
        # Upstream: "Prioritization errors from extender can be ignored, let k8s/other
        # extenders determine the priorities".
        return None


def _int64(value: int) -> int:
    return (value + 2**63) % 2**64 - 2**63


def extender_scores(
    extenders: Sequence[Extender],
    pod: PodInfo,
    snapshot: Snapshot,
    slots: npt.NDArray[np.intp],
    *,
    recorder: CycleRecording | None = None,
) -> dict[str, npt.NDArray[np.int64]]:
    """Each answering extender's scaled, weighted scores over ``slots``, by extender name."""
    callers = [e for e in extenders if e.is_prioritizer() and e.is_interested(pod)]
    if not callers or len(slots) == 0:
        return {}
    nodes = _records(snapshot, slots)
    if len(callers) == 1:
        answers = [_prioritize_one(callers[0], pod, nodes)]
    else:
        # HTTP calls release the GIL; one thread per extender mirrors upstream's goroutines.
        with ThreadPoolExecutor(max_workers=len(callers)) as pool:
            answers = list(pool.map(lambda e: _prioritize_one(e, pod, nodes), callers))
    index = {snapshot.names[slot]: i for i, slot in enumerate(slots.tolist())}
    out: dict[str, npt.NDArray[np.int64]] = {}
    for ext, answer in zip(callers, answers, strict=True):
        if answer is None:
            continue
        priorities, weight = answer
        scores = np.zeros(len(slots), dtype=np.int64)
        for hp in priorities:
            i = index.get(hp.host)
            if i is not None:  # upstream adds only the nodes being scored
                # int64 arithmetic as upstream's: an absurd score or weight wraps, never raises.
                scores[i] = _int64(int(scores[i]) + hp.score * weight * _SCALE)
        out[ext.name] = scores
        if recorder is not None:
            raw = {hp.host: hp.score for hp in priorities if hp.host in index}
            added = {name: int(scores[i]) for name, i in index.items()}
            recorder.score_extender(ext.name, weight, _SCALE, raw, added)
    return out


def extenders_binding(
    extenders: Sequence[Extender], pod: PodInfo, node_name: str
) -> tuple[bool, Status | None]:
    """(whether an extender took the binding, its failure). Not taken: run the Bind plugins."""
    for ext in extenders:
        if not ext.is_binder() or not ext.is_interested(pod):
            continue
        try:
            ext.bind(pod, node_name)
        except ExtenderError as exc:
            if ext.is_ignorable():
                continue
            return True, Status.error(str(exc))
        return True, None
    return False, None
