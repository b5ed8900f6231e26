"""Cluster events that can make an unschedulable pod schedulable (upstream ``ClusterEvent``)
and the queueing hints that judge them (upstream ``ClusterEventWithHint``, ``QueueingHintFn``).

Contract: a plugin that can reject pods declares, through ``events_to_register()``, which events
may change its verdict, each optionally with a hint ``(pod, old, new) -> QueueingHint``: the
queue asks the hints of the pod's rejectors whether this occurrence may make the pod
schedulable. ``old``/``new`` are the event's objects as the engine holds them (``NodeRecord``
for nodes, ``PodInfo`` for pods; ``None`` for the side an add or delete lacks). A registration
without a hint, and a hint that raises, mean ``QUEUE`` (a wrong Skip could strand a pod; a
wrong Queue costs one attempt).
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final, TypeVar, cast

if TYPE_CHECKING:
    from corral.scheduler.framework.types import PodInfo


class ActionType(enum.IntFlag):
    ADD = 1
    DELETE = 2
    UPDATE_NODE_ALLOCATABLE = 4
    UPDATE_NODE_LABEL = 8
    UPDATE_NODE_TAINT = 16
    UPDATE_NODE_CONDITION = 32
    UPDATE_NODE_ANNOTATION = 64
    UPDATE_POD_LABEL = 128
    UPDATE_POD_SCALE_DOWN = 256
    UPDATE_POD_TOLERATION = 512
    UPDATE_POD_SCHEDULING_GATES_ELIMINATED = 1024
    UPDATE_POD_GENERATED_RESOURCE_CLAIM = 2048
    UPDATE = (
        UPDATE_NODE_ALLOCATABLE
        | UPDATE_NODE_LABEL
        | UPDATE_NODE_TAINT
        | UPDATE_NODE_CONDITION
        | UPDATE_NODE_ANNOTATION
        | UPDATE_POD_LABEL
        | UPDATE_POD_SCALE_DOWN
        | UPDATE_POD_TOLERATION
        | UPDATE_POD_SCHEDULING_GATES_ELIMINATED
        | UPDATE_POD_GENERATED_RESOURCE_CLAIM
    )
    ALL = ADD | DELETE | UPDATE


NODE: Final = "Node"
# Registering ``Pod`` covers the three pod resources below (upstream ``matchEventResources``).
POD: Final = "Pod"
# Bound pods (upstream ``AssignedPod``): their add, update and delete.
ASSIGNED_POD: Final = "AssignedPod"
# Pods that are not yet bound (upstream ``UnscheduledPod``): updates of other pending pods.
UNSCHEDULED_POD: Final = "UnscheduledPod"
# The pending pod itself (upstream ``TargetPod``): its own update may make it schedulable.
TARGET_POD: Final = "TargetPod"
# The resource of the queue's own "unschedulable timeout" flush and other catch-all moves.
WILDCARD: Final = "*"
# scheduling.k8s.io PodGroups (GenericWorkload); their objects travel as raw JSON.
POD_GROUP: Final = "PodGroup"


@dataclass(frozen=True, slots=True)
class ClusterEvent:
    resource: str
    action: ActionType
    label: str = ""

    def matches(self, registered: ClusterEvent) -> bool:
        """Whether this (occurring) event is covered by ``registered`` (upstream
        ``MatchClusterEvents``): a wildcard, or a matching resource and an action within the
        registered ones, so that a general ``Update`` reaches only general registrations."""
        if WILDCARD in (self.resource, registered.resource):
            return self.resource == WILDCARD or bool(self.action & registered.action)
        if registered.resource != self.resource and not (
            registered.resource == POD and self.resource in _POD_RESOURCES
        ):
            return False
        return bool(self.action & registered.action) and self.action <= registered.action


_POD_RESOURCES: Final = frozenset({ASSIGNED_POD, UNSCHEDULED_POD, TARGET_POD})

UNSCHEDULABLE_TIMEOUT: Final = ClusterEvent(WILDCARD, ActionType.ALL, "UnschedulableTimeout")
# For one pod (the event's new object): Activate on a pod in flight.
FORCE_ACTIVATE: Final = ClusterEvent(WILDCARD, ActionType.ALL, "ForceActivate")
NODE_ADD: Final = ClusterEvent(NODE, ActionType.ADD, "NodeAdd")
NODE_DELETE: Final = ClusterEvent(NODE, ActionType.DELETE, "NodeDelete")
ASSIGNED_POD_ADD: Final = ClusterEvent(ASSIGNED_POD, ActionType.ADD, "AssignedPodAdd")
ASSIGNED_POD_DELETE: Final = ClusterEvent(ASSIGNED_POD, ActionType.DELETE, "AssignedPodDelete")
# A new pending pod, and an update of one (the labels the queue's metric gives them); with
# GenericWorkload the add is also a queueing event (upstream's pod-add handler).
UNSCHEDULED_POD_ADD: Final = ClusterEvent(UNSCHEDULED_POD, ActionType.ADD)
UNSCHEDULED_POD_UPDATE: Final = ClusterEvent(UNSCHEDULED_POD, ActionType.UPDATE)
POD_GROUP_ADD: Final = ClusterEvent(POD_GROUP, ActionType.ADD)
POD_GROUP_UPDATE: Final = ClusterEvent(POD_GROUP, ActionType.UPDATE)
POD_GROUP_DELETE: Final = ClusterEvent(POD_GROUP, ActionType.DELETE)

# Upstream's EventResource of the kinds upstream qualifies with their API group.
_UPSTREAM_RESOURCES: Final = {
    "CSINode": "storage.k8s.io/CSINode",
    "CSIDriver": "storage.k8s.io/CSIDriver",
    "VolumeAttachment": "storage.k8s.io/VolumeAttachment",
    "CSIStorageCapacity": "storage.k8s.io/CSIStorageCapacity",
    "StorageClass": "storage.k8s.io/StorageClass",
    "ResourceClaim": "resource.k8s.io/ResourceClaim",
    "ResourceSlice": "resource.k8s.io/ResourceSlice",
    "DeviceClass": "resource.k8s.io/DeviceClass",
    "PodGroup": "scheduling.k8s.io/PodGroup",
}
_LABELS: dict[ClusterEvent, str] = {}


def label(event: ClusterEvent) -> str:
    """Upstream's ``ClusterEvent.Label()``: the custom label, else the resource (as upstream
    spells it) and the action (``NodeAdd``, ``AssignedPodDelete``, ``NodeUpdateNodeTaint``);
    the event label of scheduler_queue_incoming_pods_total. Memoized: events are few."""
    found = _LABELS.get(event)
    if found is None:
        if event.label:
            found = event.label
        else:
            action = event.action.name or ""
            # A combination has no name upstream (ActionType.String() is "" for it).
            words = "" if "|" in action else "".join(p.capitalize() for p in action.split("_"))
            found = _UPSTREAM_RESOURCES.get(event.resource, event.resource) + words
        _LABELS[event] = found
    return found


class QueueingHint(enum.Enum):
    """A hint's verdict on one event for one rejected pod (upstream ``fwk.QueueingHint``)."""

    QUEUE_SKIP = 0  # the event cannot make the pod schedulable: leave it where it waits
    QUEUE = 1  # it may: retry the pod (after its backoff, or at once for a Pending rejector)


QueueingHintFn = Callable[["PodInfo", object, object], QueueingHint]


@dataclass(frozen=True, slots=True)
class Narrowing:
    """Which pods a hint can queue on an event, told by keys, so that the queue need not ask
    it about the others (an event reaches every waiting pod; most cannot be concerned).

    Contract: whenever ``event_keys(old, new)`` is not ``None``, the hint answers
    ``QUEUE_SKIP`` for every pod whose ``pod_keys`` share none of those keys. ``None``: any
    pod may be concerned (the hint is asked about each). Both must be cheap and must not
    raise on the objects the hint accepts (an error counts as ``None``)."""

    pod_keys: Callable[[PodInfo], frozenset[Hashable]]
    event_keys: Callable[[object, object], frozenset[Hashable] | None]


@dataclass(frozen=True, slots=True)
class ClusterEventWithHint:
    """One registration: the event and the hint judging it (``None``: always ``QUEUE``), and
    optionally the keys narrowing it (:class:`Narrowing`)."""

    event: ClusterEvent
    hint: QueueingHintFn | None = None
    narrowing: Narrowing | None = None


def with_hint(registration: ClusterEvent | ClusterEventWithHint) -> ClusterEventWithHint:
    """A registration in its full form (plugins may register a bare ``ClusterEvent``)."""
    if isinstance(registration, ClusterEventWithHint):
        return registration
    return ClusterEventWithHint(registration)


T = TypeVar("T")


def as_objects(old: object, new: object, kind: type[T]) -> tuple[T | None, T | None]:
    """The event's objects as ``kind`` (upstream ``util.As``); ``TypeError`` otherwise, which
    the queue turns into ``QUEUE``."""
    for obj in (old, new):
        if obj is not None and not isinstance(obj, kind):
            raise TypeError(f"expected {kind.__name__}, got {type(obj).__name__}")
    return cast("T | None", old), cast("T | None", new)


def pod_changes(old: PodInfo, new: PodInfo, *, target: bool) -> tuple[ClusterEvent, ...]:
    """The events one pod update makes (upstream ``PodSchedulingPropertiesChange``): its
    resource is AssignedPod when bound, else TargetPod (the pending pod itself) or
    UnscheduledPod (another pending pod); the general ``UPDATE`` when nothing specific changed.
    Scale-ups are not told apart (no plugin registers them without in-place resize)."""
    resource = ASSIGNED_POD if new.node_name else TARGET_POD if target else UNSCHEDULED_POD
    actions = []
    if old.labels != new.labels:
        actions.append(ActionType.UPDATE_POD_LABEL)
    if _scaled_down(old, new):
        actions.append(ActionType.UPDATE_POD_SCALE_DOWN)
    if old.scheduling_gates and not new.scheduling_gates:
        actions.append(ActionType.UPDATE_POD_SCHEDULING_GATES_ELIMINATED)
    if len(old.tolerations) != len(new.tolerations):  # tolerations can only be added
        actions.append(ActionType.UPDATE_POD_TOLERATION)
    if _claim_statuses(old) != _claim_statuses(new):
        actions.append(ActionType.UPDATE_POD_GENERATED_RESOURCE_CLAIM)
    return tuple(ClusterEvent(resource, a) for a in actions or (ActionType.UPDATE,))


def _scaled_down(old: PodInfo, new: PodInfo) -> bool:
    """A request of ``old`` removed or lowered in ``new`` (upstream ``extractPodScaleDown``)."""
    was, now = old.requests, new.requests
    if (
        now.milli_cpu < was.milli_cpu
        or now.memory < was.memory
        or now.ephemeral_storage < was.ephemeral_storage
    ):
        return True
    return any(name not in now.scalar or now.scalar[name] < v for name, v in was.scalar.items())


def _claim_statuses(pod: PodInfo) -> object:
    status = pod.raw.get("status")
    if not isinstance(status, Mapping):
        return None
    return status.get("resourceClaimStatuses"), status.get("extendedResourceClaimStatus")
