"""The extender contract the runtime calls (upstream ``framework.Extender``).

The HTTP implementation lives at the top of the scheduler package
(:mod:`corral.scheduler.extender`); the framework only knows this Protocol, so the runtime can
run extenders without importing HTTP code, and tests can pass in-process fakes.

Contract:
- Every call is synchronous and may block on I/O: filter and prioritize run inside the
  scheduling cycle (they hold the cycle, as upstream's do); bind runs in the binding cycle.
- A failed call raises :class:`ExtenderError`; the caller decides whether the extender's
  ``ignorable`` flag lets the cycle go on without it.
- Node names are the identity: results name nodes, never snapshot slots.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Final, Protocol

from corral.scheduler.framework.types import NodeRecord, PodInfo

# Upstream extenderv1.MaxExtenderPriority: prioritize scores are scaled by
# MAX_NODE_SCORE // MAX_EXTENDER_PRIORITY (= 10) before they join the plugins' total.
MAX_EXTENDER_PRIORITY: Final = 10
MIN_EXTENDER_PRIORITY: Final = 0

# Upstream framework.ExtenderName: the pseudo-plugin recorded in Diagnosis.unschedulable_plugins
# when extenders filtered nodes out. The queue has no events registered for it, so any cluster
# event moves such a pod (upstream issue 122019).
EXTENDER_NAME: Final = "Extender"


class ExtenderError(Exception):
    """A transport failure, a non-200 reply, an undecodable body, or a reply's ``Error``."""


@dataclass(frozen=True, slots=True)
class FilterResult:
    """What one extender's filter kept and why it dropped the others (by node name)."""

    node_names: tuple[str, ...]
    failed: Mapping[str, str] = field(default_factory=dict)
    # Takes precedence over ``failed`` for a node listed in both.
    failed_and_unresolvable: Mapping[str, str] = field(default_factory=dict)
    # The kept nodes came back as Node objects (no nodeCacheCapable name list): upstream's
    # HTTPExtender.Filter makes new NodeInfos of them, so scoring sees them without pods.
    as_node_objects: bool = False


@dataclass(frozen=True, slots=True)
class HostPriority:
    host: str
    score: int


@dataclass(frozen=True, slots=True)
class Victims:
    """Pods a preemption would evict on one node (upstream ``extenderv1.Victims``)."""

    pods: tuple[PodInfo, ...]
    num_pdb_violations: int = 0


# Node name → the pods currently on it; raises KeyError for a node it does not know.
PodsOnNode = Callable[[str], Sequence[PodInfo]]


class Extender(Protocol):
    """One configured extender. ``name`` is its URL prefix, as upstream."""

    @property
    def name(self) -> str: ...

    @property
    def weight(self) -> int: ...

    def is_interested(self, pod: PodInfo) -> bool:
        """False when managed resources are configured and the pod requests none of them."""
        ...

    def is_filter(self) -> bool: ...

    def is_prioritizer(self) -> bool: ...

    def is_binder(self) -> bool: ...

    def is_ignorable(self) -> bool: ...

    def supports_preemption(self) -> bool: ...

    def filter(self, pod: PodInfo, nodes: Sequence[NodeRecord]) -> FilterResult:
        """Names of the nodes kept (a subset of ``nodes``) and the reasons for the others."""
        ...

    def prioritize(
        self, pod: PodInfo, nodes: Sequence[NodeRecord]
    ) -> tuple[Sequence[HostPriority], int]:
        """Raw scores in [0, MAX_EXTENDER_PRIORITY] by node name, and this extender's weight."""
        ...

    def bind(self, pod: PodInfo, node_name: str) -> None: ...

    def process_preemption(
        self,
        pod: PodInfo,
        node_to_victims: Mapping[str, Victims],
        pods_on_node: PodsOnNode,
    ) -> dict[str, Victims]:
        """The candidates this extender accepts, with the victims it chose on each."""
        ...
