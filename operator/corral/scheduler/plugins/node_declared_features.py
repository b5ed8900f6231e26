"""NodeDeclaredFeatures (PreFilter, Filter): a pod that needs a node feature only goes to nodes
whose ``status.declaredFeatures`` list it.

What a pod needs is inferred from its spec as upstream 1.37.2's registry does
(``k8s.io/component-helpers/nodedeclaredfeatures``); of its nine features only three are ever
needed for scheduling (the others matter for pod updates only, and none has a maximum version):

- ``RestartAllContainersOnContainerExits``: a container or init container has a
  ``restartPolicyRules`` entry with action ``RestartAllContainers``;
- ``UserNamespacesHostNetworkSupport``: ``hostNetwork`` with ``hostUsers: false``;
- ``VolumeBindMountOptions``: a container, init or ephemeral container mounts a volume with
  ``bindMountOptions``.

PreFilter returns Skip when the pod needs none (almost every pod), so Filter costs nothing then.
A node lacking one → UnschedulableAndUnresolvable (preemption cannot add a feature). Upstream's
gated deferred-resize skip (InPlacePodVerticalScalingSchedulerPreemption, off) is not ported.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

import numpy as np

from corral.scheduler.framework.cluster_events import (
    NODE,
    UNSCHEDULED_POD,
    ActionType,
    ClusterEvent,
)
from corral.scheduler.framework.cycle_state import CycleState
from corral.scheduler.framework.interface import (
    FilterVerdict,
    Handle,
    PreFilterExtensions,
    PreFilterResult,
)
from corral.scheduler.framework.snapshot import Snapshot
from corral.scheduler.framework.status import Code, Status
from corral.scheduler.framework.types import NodeInfo, PodInfo
from corral.scheduler.plugins import names

NAME: Final = names.NODE_DECLARED_FEATURES
PRE_FILTER_STATE_KEY: Final = "PreFilter" + NAME
ERR_REASON_UNSATISFIED_REQUIREMENTS: Final = "node(s) didn't match Pod's required features"

RESTART_ALL_CONTAINERS: Final = "RestartAllContainersOnContainerExits"
USER_NAMESPACES_HOST_NETWORK: Final = "UserNamespacesHostNetworkSupport"
VOLUME_BIND_MOUNT_OPTIONS: Final = "VolumeBindMountOptions"

_REJECTED: Final = Status.of(
    Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_UNSATISFIED_REQUIREMENTS
)


def _containers(spec: Mapping[str, Any], *keys: str) -> list[Mapping[str, Any]]:
    return [c for key in keys for c in spec.get(key) or () if isinstance(c, Mapping)]


def _restarts_all(spec: Mapping[str, Any]) -> bool:
    return any(
        isinstance(rule, Mapping) and rule.get("action") == "RestartAllContainers"
        for c in _containers(spec, "containers", "initContainers")
        for rule in c.get("restartPolicyRules") or ()
    )


def _user_namespace_host_network(spec: Mapping[str, Any]) -> bool:
    return spec.get("hostNetwork") is True and spec.get("hostUsers") is False


def _bind_mount_options(spec: Mapping[str, Any]) -> bool:
    return any(
        isinstance(mount, Mapping) and bool(mount.get("bindMountOptions"))
        for c in _containers(spec, "containers", "initContainers", "ephemeralContainers")
        for mount in c.get("volumeMounts") or ()
    )


# Upstream's registry order is by name; the set is what matters.
_INFERENCES: Final = (
    (RESTART_ALL_CONTAINERS, _restarts_all),
    (USER_NAMESPACES_HOST_NETWORK, _user_namespace_host_network),
    (VOLUME_BIND_MOUNT_OPTIONS, _bind_mount_options),
)


def required_features(spec: Mapping[str, Any]) -> frozenset[str]:
    """The node features scheduling ``spec`` (a PodSpec as JSON) requires."""
    return frozenset(name for name, needs in _INFERENCES if needs(spec))


@dataclass(frozen=True, slots=True)
class _PreFilterState:
    required: frozenset[str]


class NodeDeclaredFeatures:
    name: str = NAME

    def pre_filter(
        self, state: CycleState, pod: PodInfo, snapshot: Snapshot
    ) -> tuple[PreFilterResult | None, Status | None]:
        spec = pod.raw.get("spec")
        required = required_features(spec) if isinstance(spec, Mapping) else frozenset()
        if not required:
            return None, Status(Code.SKIP)
        state.write(PRE_FILTER_STATE_KEY, _PreFilterState(required))
        return None, None

    def pre_filter_extensions(self) -> PreFilterExtensions | None:
        return None

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status | None:
        s = state.read(PRE_FILTER_STATE_KEY, _PreFilterState)
        if s is None:
            return Status.of(Code.ERROR, f'reading "{PRE_FILTER_STATE_KEY}" from cycle state')
        return None if s.required <= node.declared_features else _REJECTED

    def filter_batch(self, state: CycleState, pod: PodInfo, snapshot: Snapshot) -> FilterVerdict:
        s = state.read(PRE_FILTER_STATE_KEY, _PreFilterState)
        if s is None:
            return FilterVerdict.uniform(
                np.zeros(snapshot.capacity, dtype=np.bool_),
                Status.of(Code.ERROR, f'reading "{PRE_FILTER_STATE_KEY}" from cycle state'),
            )
        passed = np.fromiter(
            (r is not None and s.required <= r.declared_features for r in snapshot.records),
            dtype=np.bool_,
            count=snapshot.capacity,
        )
        return FilterVerdict.uniform(passed, _REJECTED)

    def events_to_register(self) -> Sequence[ClusterEvent]:
        # Upstream: Node Add|UpdateNodeDeclaredFeature and the pod's own update. The cache
        # classifies no node update as a declared-feature change yet (no such ActionType), so
        # only a new node requeues the pod (a gap in requeueing, not in decisions).
        return (
            ClusterEvent(NODE, ActionType.ADD),
            ClusterEvent(UNSCHEDULED_POD, ActionType.UPDATE),
        )


def new(args: object, handle: Handle) -> NodeDeclaredFeatures:
    if args is not None:
        raise TypeError(f"{NAME} takes no args")
    return NodeDeclaredFeatures()
