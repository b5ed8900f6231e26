"""VolumeZone (PreFilter, Filter).

PreFilter reads the zone/region labels of the PVs bound to the pod's claims (values split on
"__"); unbound claims of WaitForFirstConsumer classes are skipped, other lookup failures are
UnschedulableAndUnresolvable with upstream's messages. Filter: a node without any zone/region
label passes; otherwise every PV label must be matched by the node's same label (a beta PV
label may be matched by the node's GA label) → else UnschedulableAndUnresolvable
``node(s) had no available volume zone``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

import numpy as np

from corral.scheduler.framework import cluster_events as ev
from corral.scheduler.framework.cluster_events import (
    NODE,
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    QueueingHint,
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
from corral.scheduler.plugins.helper import volumes

NAME: Final = names.VOLUME_ZONE
STATE_KEY: Final = "PreFilter" + NAME
ERR_REASON_CONFLICT: Final = "node(s) had no available volume zone"
TOPOLOGY_LABELS: Final = (
    "failure-domain.beta.kubernetes.io/zone",
    "failure-domain.beta.kubernetes.io/region",
    "topology.kubernetes.io/zone",
    "topology.kubernetes.io/region",
)
_TO_GA: Final = {
    "failure-domain.beta.kubernetes.io/zone": "topology.kubernetes.io/zone",
    "failure-domain.beta.kubernetes.io/region": "topology.kubernetes.io/region",
}
_CONFLICT: Final = Status.of(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_CONFLICT)


@dataclass(frozen=True, slots=True)
class _State:
    topologies: tuple[tuple[str, frozenset[str]], ...]

    def clone(self) -> _State:
        return self


class VolumeZone:
    name: str = NAME

    def __init__(self, handle: Handle | None) -> None:
        self.handle = handle

    def pre_filter(
        self, state: CycleState, pod: PodInfo, snapshot: Snapshot
    ) -> tuple[PreFilterResult | None, Status | None]:
        claims = [name for name, ephemeral in volumes.claims(pod) if not ephemeral]
        if not claims:
            return None, Status(Code.SKIP)
        topologies: list[tuple[str, frozenset[str]]] = []
        for name in claims:
            if not name:
                return None, volumes.unresolvable("PersistentVolumeClaim had no name")
            claim, failure = volumes.find_pvc(self.handle, pod.namespace, name)
            if claim is None:
                return None, failure
            pv_name = volumes.volume_name(claim)
            if not pv_name:
                sc_name = volumes.claim_class(claim)
                if not sc_name:
                    msg = "PersistentVolumeClaim had no pv name and storageClass name"
                    return None, volumes.unresolvable(msg)
                sc = volumes.storage_class(self.handle, sc_name)
                if sc is None:
                    return None, volumes.unresolvable(
                        volumes.not_found("storageclass.storage.k8s.io", sc_name)
                    )
                mode = sc.get("volumeBindingMode")
                if mode is None:
                    msg = f'VolumeBindingMode not set for StorageClass "{sc_name}"'
                    return None, volumes.unresolvable(msg)
                if mode == volumes.WAIT_FOR_FIRST_CONSUMER:
                    continue
                return None, volumes.unresolvable("PersistentVolume had no name")
            pv = volumes.pv(self.handle, pv_name)
            if pv is None:
                return None, volumes.unresolvable(volumes.not_found("persistentvolume", pv_name))
            topologies.extend(pv_topologies(pv))
        state.write(STATE_KEY, _State(tuple(topologies)))
        return None, None

    def pre_filter_extensions(self) -> PreFilterExtensions | None:
        return None

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status | None:
        s = state.read(STATE_KEY, _State)
        if s is None or not s.topologies:
            return None
        if not any(key in node.labels for key in TOPOLOGY_LABELS):
            return None
        for key, values in s.topologies:
            value = node.labels.get(key)
            if value is None:
                value = node.labels.get(_TO_GA.get(key, key))
            if value is None or value not in values:
                return _CONFLICT
        return None

    def filter_batch(self, state: CycleState, pod: PodInfo, snapshot: Snapshot) -> FilterVerdict:
        s = state.read(STATE_KEY, _State)
        cap = snapshot.capacity
        passed = np.ones(cap, dtype=np.bool_)
        if s is None or not s.topologies:
            return FilterVerdict.uniform(passed, _CONFLICT)
        constrained = np.zeros(cap, dtype=np.bool_)
        for key in TOPOLOGY_LABELS:
            column = snapshot.label(key)
            if column is not None:
                constrained |= column >= 0
        for key, values in s.topologies:
            own = snapshot.label(key)
            ga = snapshot.label(_TO_GA.get(key, key))
            ok = np.zeros(cap, dtype=np.bool_)
            for k, column in ((key, own), (_TO_GA.get(key, key), ga)):
                if column is None:
                    continue
                vocab = snapshot.label_vocab[k]
                ids = [vocab.ids[v] for v in values if v in vocab.ids]
                match = np.isin(column, ids) if ids else np.zeros(cap, dtype=np.bool_)
                if k == key:
                    ok |= match
                else:  # the GA label only counts where the node lacks the beta one
                    ok |= match & ((own < 0) if own is not None else True)
            passed &= ok
        return FilterVerdict.uniform(passed | ~constrained, _CONFLICT)

    # --- queueing hints (objects: the API's raw JSON) ---------------------------------------

    def events_to_register(self) -> Sequence[ClusterEventWithHint]:
        add_update = ActionType.ADD | ActionType.UPDATE
        return (
            ClusterEventWithHint(ClusterEvent("StorageClass", ActionType.ADD), _class_added),
            # Any added or relabelled node may be in the volumes' zone.
            ClusterEventWithHint(ClusterEvent(NODE, ActionType.ADD | ActionType.UPDATE_NODE_LABEL)),
            ClusterEventWithHint(ClusterEvent("PersistentVolumeClaim", add_update), _claim_changed),
            ClusterEventWithHint(ClusterEvent("PersistentVolume", add_update), _volume_changed),
        )


def pv_topologies(pv: Mapping[str, Any]) -> list[tuple[str, frozenset[str]]]:
    """The PV's zone/region labels, values split on "__" (upstream ``getPVTopologies``)."""
    labels = (pv.get("metadata") or {}).get("labels") or {}
    return [
        (key, frozenset(v for v in str(labels[key]).split("__") if v))
        for key in TOPOLOGY_LABELS
        if key in labels
    ]


def _claim_changed(pod: PodInfo, old: object, new: object) -> QueueingHint:
    """A claim the pod names (same namespace) was added or changed."""
    _, claim = ev.as_objects(old, new, dict)
    assert claim is not None
    meta = claim.get("metadata") or {}
    named = {name for name, ephemeral in volumes.claims(pod) if not ephemeral}
    if meta.get("namespace") == pod.namespace and meta.get("name") in named:
        return QueueingHint.QUEUE
    return QueueingHint.QUEUE_SKIP


def _class_added(pod: PodInfo, old: object, new: object) -> QueueingHint:
    """Only a WaitForFirstConsumer class lets an unbound claim wait instead of failing."""
    _, added = ev.as_objects(old, new, dict)
    assert added is not None
    wffc = added.get("volumeBindingMode") == volumes.WAIT_FOR_FIRST_CONSUMER
    return QueueingHint.QUEUE if wffc else QueueingHint.QUEUE_SKIP


def _volume_changed(pod: PodInfo, old: object, new: object) -> QueueingHint:
    """An added PV, or one whose zone/region labels changed."""
    original, modified = ev.as_objects(old, new, dict)
    assert modified is not None
    if original is None or pv_topologies(original) != pv_topologies(modified):
        return QueueingHint.QUEUE
    return QueueingHint.QUEUE_SKIP


def new(args: object, handle: Handle) -> VolumeZone:
    if args is not None:
        raise TypeError(f"{NAME} takes no args")
    return VolumeZone(handle)
