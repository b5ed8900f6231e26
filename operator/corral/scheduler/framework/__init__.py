"""Scheduling Framework contracts: statuses, cycle state, extension-point Protocols (per-node
and batch forms), compact pod/node records, the columnar snapshot, and the resolved profile.

The runtime that runs a profile lives in :mod:`corral.scheduler.framework.runtime`.
"""

from corral.scheduler.framework.cluster_events import ActionType, ClusterEvent
from corral.scheduler.framework.cycle_state import CycleState
from corral.scheduler.framework.diagnosis import Diagnosis, FitError, NodeToStatus
from corral.scheduler.framework.interface import (
    BatchFilterPlugin,
    BatchScorePlugin,
    BindPlugin,
    EnqueueExtensions,
    FilterPlugin,
    FilterVerdict,
    Handle,
    PermitPlugin,
    Plugin,
    PluginFactory,
    PodBinder,
    PostBindPlugin,
    PostFilterPlugin,
    PostFilterResult,
    PreBindPlugin,
    PreEnqueuePlugin,
    PreFilterExtensions,
    PreFilterPlugin,
    PreFilterResult,
    PreScorePlugin,
    QueueSortPlugin,
    ReservePlugin,
    ScoreExtensions,
    ScorePlugin,
)
from corral.scheduler.framework.profile import ResolvedProfile, ScorePluginRef
from corral.scheduler.framework.registry import Registry, RegistryError
from corral.scheduler.framework.snapshot import Snapshot
from corral.scheduler.framework.status import Code, Status, StatusError, is_success
from corral.scheduler.framework.types import (
    NodeInfo,
    NodeRecord,
    PodInfo,
    QueuedPodInfo,
    Resources,
)

__all__ = [
    "ActionType",
    "BatchFilterPlugin",
    "BatchScorePlugin",
    "BindPlugin",
    "ClusterEvent",
    "Code",
    "CycleState",
    "Diagnosis",
    "EnqueueExtensions",
    "FilterPlugin",
    "FilterVerdict",
    "FitError",
    "Handle",
    "NodeInfo",
    "NodeRecord",
    "NodeToStatus",
    "PermitPlugin",
    "Plugin",
    "PluginFactory",
    "PodBinder",
    "PodInfo",
    "PostBindPlugin",
    "PostFilterPlugin",
    "PostFilterResult",
    "PreBindPlugin",
    "PreEnqueuePlugin",
    "PreFilterExtensions",
    "PreFilterPlugin",
    "PreFilterResult",
    "PreScorePlugin",
    "QueueSortPlugin",
    "QueuedPodInfo",
    "Registry",
    "RegistryError",
    "ReservePlugin",
    "ResolvedProfile",
    "Resources",
    "ScoreExtensions",
    "ScorePlugin",
    "ScorePluginRef",
    "Snapshot",
    "Status",
    "StatusError",
    "is_success",
]
