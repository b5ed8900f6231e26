"""CapacityScheduling (PreFilter with AddPod/RemovePod, PostFilter, Reserve) — scheduler-plugins'
semantics (SP ``pkg/capacityscheduling``, KEP 9): per-namespace ElasticQuotas
(``scheduling.x-k8s.io/v1alpha1``; ``spec.min``, ``spec.max``) with borrowing.

- PreFilter: the quotas as of this cycle go into the cycle state. A pod in a namespace without
  a quota passes. Otherwise, with ``in_quota`` = its request plus the requests of pods nominated
  in its namespace at least as important, and ``all`` = ``in_quota`` plus those nominated in
  other quotas still within their min: ``used + in_quota > max`` is Unschedulable (``… is more
  than Max``), and so is ``Σ used + all > Σ min`` over every quota (``total ElasticQuota used
  is more than min``): a namespace exceeds its min only while other quotas leave theirs unused.
  Both are Unschedulable, not Unresolvable, so PostFilter may preempt.
- AddPod/RemovePod keep the cycle's quotas in step with preemption's what-if pods.
- PostFilter: the shared evaluator with SP's victim selection and eligibility (``victims.py``),
  dry-running every candidate node from the first, preempting on one node.
- Reserve/Unreserve: a reserved pod counts in its quota until the snapshot shows it.

What a namespace uses is summed from the cycle's snapshot (its bound and assumed pods that are
not Succeeded or Failed, by their requests) plus the pods reserved and not yet in it. SP keeps a
running sum fed by its pod informer instead; see docs/plugins/CapacityScheduling.md for what
that changes (a quota created after its namespace's pods counts them; overhead and sidecars
count as the node's accounting counts them). One quota per namespace: where several exist, the
oldest (then the first by name) is the namespace's.
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Collection, Mapping, Sequence
from typing import Any, Final

import numpy as np

from corral.scheduler.framework import listers
from corral.scheduler.framework.cluster_events import POD, ActionType, ClusterEvent
from corral.scheduler.framework.cycle_state import CycleState
from corral.scheduler.framework.diagnosis import NodeToStatus
from corral.scheduler.framework.interface import Handle, PostFilterResult, PreFilterResult
from corral.scheduler.framework.pod_table import PodTable
from corral.scheduler.framework.snapshot import Snapshot
from corral.scheduler.framework.status import Code, Status
from corral.scheduler.framework.types import NodeInfo, PodInfo, Resources, on_node
from corral.scheduler.plugins import names
from corral.scheduler.plugins.capacity_scheduling import elastic_quota as eq
from corral.scheduler.plugins.capacity_scheduling.victims import (
    NOT_ELIGIBLE_NO_STATE,
    PRE_FILTER_STATE_KEY,
    SNAPSHOT_KEY,
    PreFilterState,
    QuotaSnapshot,
    nominated_node_check,
    select_victims_on_node,
    states,
)
from corral.scheduler.plugins.helper.preemption.evaluator import Evaluator

NAME: Final = names.CAPACITY_SCHEDULING

__all__ = ["NAME", "CapacityScheduling", "new", "over_max", "over_min"]


def over_max(pod: PodInfo, namespace: str) -> str:
    return (
        f"Pod {pod.namespace}/{pod.name} is rejected in PreFilter because ElasticQuota "
        f"{namespace} is more than Max"
    )


def over_min(pod: PodInfo) -> str:
    return (
        f"Pod {pod.namespace}/{pod.name} is rejected in PreFilter because total ElasticQuota "
        "used is more than min"
    )


class _Candidates:
    # The evaluator's numCandidates args; unused with every_candidate.
    min_candidate_nodes_percentage: int | None = 100
    min_candidate_nodes_absolute: int | None = 0


class CapacityScheduling:
    name: str = NAME

    def __init__(
        self, handle: Handle, *, rng: random.Random | None = None, clock: Any = time.time
    ) -> None:
        self.handle = handle
        self._lock = threading.Lock()
        self._reserved: dict[str, PodInfo] = {}  # uid -> pod reserved, not yet in a snapshot
        self._parsed: dict[tuple[str, str], tuple[Mapping[str, Any], eq.ElasticQuota | None]] = {}
        self.evaluator = Evaluator(
            NAME,
            handle,
            _Candidates(),
            rng=rng,
            clock=clock,
            select_victims=select_victims_on_node,
            nominated_node_check=nominated_node_check,
            every_candidate=True,
        )

    # --- the quotas -------------------------------------------------------------------------

    def elastic_quotas(self) -> dict[str, eq.ElasticQuota]:
        """The namespace's ElasticQuota, by namespace (the oldest where there are several)."""
        objects = self.handle.objects
        if objects is None:
            return {}
        chosen: dict[str, eq.ElasticQuota] = {}
        seen: set[tuple[str, str]] = set()
        for raw in objects.list(listers.SP_ELASTIC_QUOTA):
            meta = raw.get("metadata") or {}
            key = (str(meta.get("namespace") or ""), str(meta.get("name") or ""))
            seen.add(key)
            cached = self._parsed.get(key)
            if cached is not None and cached[0] is raw:
                quota = cached[1]
            else:  # the store replaces an object on each change: identity tells a change
                try:
                    quota = eq.elastic_quota_from_json(raw)
                except (ValueError, TypeError):
                    quota = None
                self._parsed[key] = (raw, quota)
            if quota is None:
                continue
            other = chosen.get(quota.namespace)
            if other is None or (quota.created, quota.name) < (other.created, other.name):
                chosen[quota.namespace] = quota
        for key in [k for k in self._parsed if k not in seen]:
            del self._parsed[key]
        return chosen

    def quota_infos(self, snapshot: Snapshot) -> eq.QuotaInfos:
        """Each quota with what its namespace uses as of ``snapshot`` (and reserved pods)."""
        quotas = self.elastic_quotas()
        infos = {ns: eq.new_quota_info(ns, q.min, q.max) for ns, q in quotas.items()}
        for each in infos.values():
            each.bound_counted = True
        if not infos:
            return infos
        for namespace, used in namespace_requests(snapshot.pods, infos).items():
            infos[namespace].used = used
        with self._lock:
            for uid, pod in list(self._reserved.items()):
                info = infos.get(pod.namespace)
                if info is None or _in_snapshot(snapshot, pod):
                    del self._reserved[uid]  # the snapshot has it now (or no quota any more)
                else:
                    info.pods.add(uid)
                    info.reserve(pod.requests)
        return infos

    # --- PreFilter --------------------------------------------------------------------------

    def pre_filter(
        self, state: CycleState, pod: PodInfo, snapshot: Snapshot
    ) -> tuple[PreFilterResult | None, Status | None]:
        infos = self.quota_infos(snapshot)
        state.write(SNAPSHOT_KEY, QuotaSnapshot(infos))
        request = pod.requests
        own = infos.get(pod.namespace)
        if own is None:
            state.write(PRE_FILTER_STATE_KEY, PreFilterState(request, eq.ZERO, eq.ZERO))
            return None, None
        in_quota, everywhere = [request], [request]
        nominator = self.handle.nominator
        if nominator is not None:
            for node_name in nominator.nominated_node_names():
                if node_name not in snapshot.slot_of:
                    continue
                for p in nominator.nominated_pods_for_node(node_name):
                    theirs = infos.get(p.namespace)
                    if p.uid == pod.uid or theirs is None:
                        continue
                    if p.namespace == pod.namespace and p.priority >= pod.priority:
                        in_quota.append(p.requests)
                        everywhere.append(p.requests)
                    elif p.namespace != pod.namespace and not theirs.used_over_min():
                        everywhere.append(p.requests)
        pre = PreFilterState(request, eq.total(in_quota), eq.total(everywhere))
        state.write(PRE_FILTER_STATE_KEY, pre)
        if own.used_over_max_with(pre.in_quota):
            return None, Status.of(Code.UNSCHEDULABLE, over_max(pod, own.namespace))
        if eq.aggregated_used_over_min_with(infos, pre.all):
            return None, Status.of(Code.UNSCHEDULABLE, over_min(pod))
        return None, None

    def pre_filter_extensions(self) -> CapacityScheduling:
        return self

    def add_pod(
        self, state: CycleState, pod: PodInfo, pod_to_add: PodInfo, node: NodeInfo
    ) -> Status | None:
        quotas, _ = states(state)
        if quotas is None:
            return Status.error(f'error reading "{SNAPSHOT_KEY}" from cycleState')
        info = quotas.infos.get(pod_to_add.namespace)
        if info is not None:
            info.add_pod_if_absent(pod_to_add)
        return None

    def remove_pod(
        self, state: CycleState, pod: PodInfo, pod_to_remove: PodInfo, node: NodeInfo
    ) -> Status | None:
        quotas, _ = states(state)
        if quotas is None:
            return Status.error(f'error reading "{SNAPSHOT_KEY}" from cycleState')
        info = quotas.infos.get(pod_to_remove.namespace)
        if info is not None:
            info.delete_pod_if_present(pod_to_remove)
        return None

    # --- PostFilter -------------------------------------------------------------------------

    def post_filter(
        self, state: CycleState, pod: PodInfo, statuses: NodeToStatus
    ) -> tuple[PostFilterResult | None, Status | None]:
        if pod.preemption_policy != "Never" and states(state)[1] is None:
            return None, Status.of(Code.UNSCHEDULABLE, "preemption: " + NOT_ELIGIBLE_NO_STATE)
        return self.evaluator.preempt(state, pod, statuses)

    # --- Reserve ----------------------------------------------------------------------------

    def reserve(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        if pod.namespace in self.elastic_quotas():
            with self._lock:
                self._reserved[pod.uid] = on_node(pod, node_name)
        return None

    def unreserve(self, state: CycleState, pod: PodInfo, node_name: str) -> None:
        with self._lock:
            self._reserved.pop(pod.uid, None)

    def reserved(self) -> Sequence[PodInfo]:
        with self._lock:
            return list(self._reserved.values())

    # --- events -----------------------------------------------------------------------------

    def events_to_register(self) -> Sequence[ClusterEvent]:
        return (
            ClusterEvent(POD, ActionType.DELETE),
            ClusterEvent(listers.SP_ELASTIC_QUOTA, ActionType.ALL),
        )


def namespace_requests(table: PodTable, namespaces: Collection[str]) -> dict[str, Resources]:
    """What the pods of each of ``namespaces`` in ``table`` request together: its live rows
    (on a node of the snapshot) not Succeeded or Failed, summed in columns; scalar resources
    from the few pods that request any."""
    ids = {table.namespace_ids[ns]: ns for ns in namespaces if ns in table.namespace_ids}
    size = table.size
    if not ids or not size:
        return {}
    spaces = table.namespace[:size]
    wanted = np.array(list(ids), dtype=np.int32)
    rows = np.flatnonzero(table.live() & ~table.terminal[:size] & np.isin(spaces, wanted))
    if not rows.size:
        return {}
    rows = rows[np.argsort(spaces[rows], kind="stable")]
    grouped = spaces[rows]
    starts = np.flatnonzero(np.diff(grouped, prepend=-1))
    sums = [np.add.reduceat(column[rows], starts).tolist()
            for column in (table.req_milli_cpu, table.req_memory, table.req_ephemeral)]  # fmt: skip
    scalar_rows = table.req_scalar[rows]
    out: dict[str, Resources] = {}
    ends = [*starts[1:].tolist(), len(rows)]
    for k, (start, end) in enumerate(zip(starts.tolist(), ends, strict=True)):
        scalar: dict[str, int] = {}
        for row in rows[start:end][scalar_rows[start:end]].tolist():
            pod = table.infos[row]
            for name, value in (pod.requests.scalar if pod is not None else {}).items():
                scalar[name] = scalar.get(name, 0) + value
        out[ids[int(grouped[start])]] = Resources(
            milli_cpu=sums[0][k], memory=sums[1][k], ephemeral_storage=sums[2][k], scalar=scalar
        )
    return out


def _in_snapshot(snapshot: Snapshot, pod: PodInfo) -> bool:
    slot = snapshot.slot_of.get(pod.node_name)
    if slot is None:
        return False
    table = snapshot.pods
    return any(
        (p := table.infos[row]) is not None and p.uid == pod.uid for row in table.rows_on(slot)
    )


def new(args: object, handle: Handle) -> CapacityScheduling:
    if args is not None:
        raise TypeError(f"{NAME} takes no args")
    return CapacityScheduling(handle)
