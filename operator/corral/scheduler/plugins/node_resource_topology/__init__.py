"""NodeResourceTopologyMatch (PreFilter, Filter, Score, Reserve, PostBind) — scheduler-plugins'
semantics (SP ``pkg/noderesourcetopology``, README; KEP 119).

Reads the node's NodeResourceTopology object (``topology.node.k8s.io/v1alpha2``, published by
an exporter: NFD topology-updater, RTE) and runs a simplified kubelet TopologyManager admit:

- Filter (``filtering.py``): a BestEffort pod requesting no device passes; a node without an
  NRT object passes; a stale one ("invalid node topology data") fails. Only the
  ``single-numa-node`` policy is enforced, at pod or container scope (``topology.py`` reads
  policy and scope from the object's attributes or its deprecated ``topologyPolicies``).
- Score: a non-Guaranteed pod scores 100; a node without (or with stale) NRT data 0. The
  strategy (args ``scoringStrategy.type``): LeastAllocated, MostAllocated, BalancedAllocation
  (``scoring.py``, only under single-numa-node, else 0) or LeastNUMANodes (``least_numa.py``,
  under any policy), weighted by ``scoringStrategy.resources``.
- Reserve/Unreserve/PostBind: with ``discardReservedNodes``, a node holding a pod reserved but
  not yet bound has stale data (SP's DiscardReserved cache); otherwise nothing (Passthrough).
- Events: Pod/Delete, Node/Add|UpdateNodeAllocatable and NRT Add|Update, without hints. The
  NRT objects come from the engine's informer, so objects created after the engine started are
  seen (SP #967 is not reproduced).

Corral's departures (docs/plugins/NodeResourceTopologyMatch.md): ``cacheResyncPeriodSeconds >
0`` (SP's overreserve cache, its ``cache`` settings and foreign-pod detection) is accepted and
runs as Passthrough; ``preemptionMode: Enabled`` is accepted and filters preemption candidates
with the NRT data as published (SP's Disabled behaviour).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from corral.scheduler.config import plugin_args
from corral.scheduler.config.args import NodeResourceTopologyMatchArgs
from corral.scheduler.framework import listers
from corral.scheduler.framework.cluster_events import NODE, POD, ActionType, ClusterEvent
from corral.scheduler.framework.cycle_state import CycleState
from corral.scheduler.framework.interface import MAX_NODE_SCORE, Handle
from corral.scheduler.framework.status import Code, Status
from corral.scheduler.framework.types import NodeInfo, PodInfo
from corral.scheduler.plugins import helper, names
from corral.scheduler.plugins.node_resource_topology import filtering, least_numa, scoring
from corral.scheduler.plugins.node_resource_topology import requests as rq
from corral.scheduler.plugins.node_resource_topology.topology import (
    POLICY_SINGLE_NUMA_NODE,
    SCOPE_CONTAINER,
    SCOPE_POD,
    NUMANode,
    TopologyManager,
    numa_nodes,
    topology_manager,
)

NAME: Final = names.NODE_RESOURCE_TOPOLOGY_MATCH
KIND: Final = listers.NODE_RESOURCE_TOPOLOGY
EXTENSION_POINTS: Final = ("preFilter", "filter", "score", "reserve", "postBind")

ERR_INVALID_TOPOLOGY_DATA: Final = "invalid node topology data"

_log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class _Parsed:
    zones: tuple[NUMANode, ...]
    conf: TopologyManager

    def fresh_zones(self) -> list[NUMANode]:
        """A copy the handlers may subtract from."""
        return [z.copy() for z in self.zones]


@dataclass(frozen=True, slots=True)
class _PodView:
    qos: str
    non_native: bool


class NodeResourceTopologyMatch(helper.NoOpPreFilter):
    name: str = NAME

    def __init__(self, args: NodeResourceTopologyMatchArgs, handle: Handle) -> None:
        strategy = args.scoring_strategy
        assert strategy is not None, "defaulted by plugin_args"
        assert strategy.type is not None, "defaulted by plugin_args"
        self.handle = handle
        self.strategy = scoring.STRATEGY_FUNCTIONS.get(strategy.type)  # None: LeastNUMANodes
        weights: dict[str, int] = {}
        for r in strategy.resources:
            weights[r.name] = int(r.weight or 0)  # SP builds a map: a repeated name's last wins
        self.weights: Mapping[str, int] = weights
        self.discard_reserved = bool(args.discard_reserved_nodes)
        if not self.discard_reserved and (args.cache_resync_period_seconds or 0) > 0:
            _log.warning(
                "%s: cacheResyncPeriodSeconds=%d: the overreserve cache is not implemented; "
                "NodeResourceTopology objects are read as published",
                NAME,
                args.cache_resync_period_seconds,
            )
        self._lock = threading.Lock()
        self._reserved: dict[str, set[str]] = {}  # node -> UIDs reserved, not yet bound
        self._parsed: dict[str, tuple[Mapping[str, Any], _Parsed]] = {}
        self._pod: tuple[PodInfo, _PodView] | None = None

    # --- lookups ----------------------------------------------------------------------------

    def topology(self, node_name: str) -> tuple[_Parsed | None, bool]:
        """(the node's parsed NRT object or None, whether its data is fresh)."""
        if self.discard_reserved:
            with self._lock:
                if self._reserved.get(node_name):
                    return None, False
        objects = self.handle.objects
        raw = objects.get(KIND, "", node_name) if objects is not None else None
        if raw is None:
            return None, True
        cached = self._parsed.get(node_name)
        if cached is not None and cached[0] is raw:
            return cached[1], True
        parsed = _Parsed(tuple(numa_nodes(raw)), topology_manager(raw))
        self._parsed[node_name] = (raw, parsed)
        return parsed, True

    def _view(self, pod: PodInfo) -> _PodView:
        last = self._pod
        if last is not None and last[0] is pod:
            return last[1]
        view = _PodView(rq.qos_class(pod), rq.includes_non_native(pod))
        self._pod = (pod, view)
        return view

    # --- Filter -----------------------------------------------------------------------------

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status | None:
        view = self._view(pod)
        if view.qos == rq.BEST_EFFORT and not view.non_native:
            return None
        parsed, fresh = self.topology(node.name)
        if not fresh:
            return Status.of(Code.UNSCHEDULABLE, ERR_INVALID_TOPOLOGY_DATA)
        if parsed is None or parsed.conf.policy != POLICY_SINGLE_NUMA_NODE:
            return None
        zones = parsed.fresh_zones()
        if parsed.conf.scope == SCOPE_POD:
            return filtering.pod_scope(node, zones, view.qos, pod)
        if parsed.conf.scope == SCOPE_CONTAINER:
            return filtering.container_scope(node, zones, view.qos, pod)
        return None

    # --- Score ------------------------------------------------------------------------------

    def score(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> tuple[int, Status | None]:
        view = self._view(pod)
        if view.qos != rq.GUARANTEED:
            return MAX_NODE_SCORE, None
        parsed, fresh = self.topology(node.name)
        if not fresh or parsed is None:
            return 0, None
        conf, zones = parsed.conf, parsed.fresh_zones()
        if self.strategy is None:  # LeastNUMANodes, under any policy
            if conf.scope == SCOPE_POD:
                return least_numa.pod_scope(pod, zones, view.qos, conf.max_numa_nodes), None
            return least_numa.container_scope(pod, zones, view.qos, conf.max_numa_nodes), None
        if conf.policy != POLICY_SINGLE_NUMA_NODE:
            return 0, None
        if conf.scope == SCOPE_POD:
            return scoring.pod_scope(pod, zones, self.strategy, self.weights), None
        return scoring.container_scope(pod, zones, self.strategy, self.weights), None

    # --- Reserve / PostBind (SP's DiscardReserved cache) -------------------------------------

    def reserve(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        if self.discard_reserved:
            with self._lock:
                self._reserved.setdefault(node_name, set()).add(pod.uid)
        return None

    def unreserve(self, state: CycleState, pod: PodInfo, node_name: str) -> None:
        self._release(node_name, pod)

    def post_bind(self, state: CycleState, pod: PodInfo, node_name: str) -> None:
        self._release(node_name, pod)

    def _release(self, node_name: str, pod: PodInfo) -> None:
        if not self.discard_reserved:
            return
        with self._lock:
            held = self._reserved.get(node_name)
            if held is not None:
                held.discard(pod.uid)
                if not held:
                    del self._reserved[node_name]

    # --- events -----------------------------------------------------------------------------

    def events_to_register(self) -> Sequence[ClusterEvent]:
        return (
            ClusterEvent(POD, ActionType.DELETE),
            ClusterEvent(NODE, ActionType.ADD | ActionType.UPDATE_NODE_ALLOCATABLE),
            ClusterEvent(KIND, ActionType.ADD | ActionType.UPDATE),
        )


def new(args: object, handle: Handle) -> NodeResourceTopologyMatch:
    return NodeResourceTopologyMatch(plugin_args(NAME, args), handle)
