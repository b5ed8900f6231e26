"""VolumeBinding (PreFilter, Filter, PreScore, Score, Reserve, Unreserve, PreBind), as upstream
1.37's plugin and binder.

PreFilter: a pod without PVC volumes is skipped. A missing, lost or deleting claim, or a generic
ephemeral claim not created yet or not owned by the pod → UnschedulableAndUnresolvable with
upstream's wording. A claim is *bound* once it names a volume and carries the PV controller's
``pv.kubernetes.io/bind-completed``; an unbound claim whose class binds WaitForFirstConsumer (and
that names no volume) waits for this pod, any other unbound claim fails the pod with ``pod has
unbound immediate PersistentVolumeClaims``.

Filter (per node, reasons in upstream's order, all UnschedulableAndUnresolvable):
- bound claims, in order: a PV that does not exist → ERR_REASON_PV_NOT_EXIST; a PV whose node
  affinity rejects the node → ERR_REASON_NODE_CONFLICT (the first failing claim decides);
- a waiting claim already carrying ``volume.kubernetes.io/selected-node`` of another node →
  ERR_REASON_BIND_CONFLICT; the other waiting claims, smallest request first, each take the
  smallest matching PV the node admits (:mod:`.matching`), a PV taken by one claim being
  excluded for the next;
- claims left (selected-node ones first, then unmatched ones) must be provisionable on the
  node: their class has a provisioner and its ``allowedTopologies`` admit the node (else
  ERR_REASON_BIND_CONFLICT); when the class's CSIDriver has ``storageCapacity: true`` and the
  claim requests storage, some CSIStorageCapacity of the class whose ``nodeTopology`` admits
  the node must hold it (else ERR_REASON_NOT_ENOUGH_SPACE). The first failing claim decides.
The claims' candidate PVs, classes and capacities are read once per pod; the node-dependent
parts are masks over the snapshot's label columns.

Score (StorageCapacityScoring, beta and on in 1.37): per class, requested over capacity of the
PVs matched on the node (or, with none, of the CSIStorageCapacity chosen for provisioning),
mapped through ``shape`` and averaged. Reserve assumes the node's PV bindings and selected-node
claims in :class:`~.assume_cache.AssumeCache`; Unreserve restores them. PreBind writes them
(PV ``claimRef``; PVC selected-node) and polls every second until the PV controller and the
provisioners have bound every claim, for at most ``bindTimeoutSeconds``, failing with upstream's
``binding volumes: ...`` messages.

Not done as upstream: in-tree PVs are not translated to CSI for CSINode-migrated plugins before
the node-affinity check.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from corral.scheduler.config import args as config_args
from corral.scheduler.config import plugin_args, quantity
from corral.scheduler.framework import labels, listers
from corral.scheduler.framework.api_types import RawObject
from corral.scheduler.framework.cluster_events import (
    NODE,
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
)
from corral.scheduler.framework.cycle_state import CycleState
from corral.scheduler.framework.interface import (
    FilterVerdict,
    Handle,
    PreFilterExtensions,
    PreFilterResult,
    Scores,
    Slots,
)
from corral.scheduler.framework.snapshot import Snapshot
from corral.scheduler.framework.status import Code, Status
from corral.scheduler.framework.types import NodeInfo, PodInfo
from corral.scheduler.plugins import names
from corral.scheduler.plugins.helper import resource_scoring, volumes
from corral.scheduler.plugins.volume_binding import binder as volume_binder
from corral.scheduler.plugins.volume_binding import columns as volume_columns
from corral.scheduler.plugins.volume_binding import hints
from corral.scheduler.plugins.volume_binding import matching as vm
from corral.scheduler.plugins.volume_binding.assume_cache import AssumeCache

NAME: Final = names.VOLUME_BINDING
STATE_KEY: Final = NAME
ERR_REASON_BIND_CONFLICT: Final = "node(s) didn't find available persistent volumes to bind"
ERR_REASON_NODE_CONFLICT: Final = "node(s) didn't match PersistentVolume's node affinity"
ERR_REASON_NOT_ENOUGH_SPACE: Final = "node(s) did not have enough free storage"
ERR_REASON_PV_NOT_EXIST: Final = (
    "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)"
)
ERR_REASON_UNBOUND_IMMEDIATE: Final = "pod has unbound immediate PersistentVolumeClaims"
DEFAULT_BIND_TIMEOUT_SECONDS: Final = 600
POLL_SECONDS: Final = 1.0
# Upstream checkBindings' error for a pod its lister no longer has (``pod "<name>" not found``
# follows, the lister's NotFound).
POD_GONE: Final = "pod does not exist any more"
# Upstream 1.37's default shape with StorageCapacityScoring on: prefer the emptiest node.
DEFAULT_SHAPE: Final = ((0, 10), (100, 0))

# Filter codes: bits, reported in upstream's order.
_NODE_CONFLICT: Final = volume_columns.NODE_CONFLICT
_BIND_CONFLICT: Final = 2
_NOT_ENOUGH_SPACE: Final = 4
_PV_NOT_EXIST: Final = volume_columns.PV_NOT_EXIST
_ERROR: Final = 16
_REASONS: Final = (
    (_NODE_CONFLICT, ERR_REASON_NODE_CONFLICT),
    (_BIND_CONFLICT, ERR_REASON_BIND_CONFLICT),
    (_NOT_ENOUGH_SPACE, ERR_REASON_NOT_ENOUGH_SPACE),
    (_PV_NOT_EXIST, ERR_REASON_PV_NOT_EXIST),
)

Mask = npt.NDArray[np.bool_]


@dataclass(frozen=True, slots=True)
class _Provision:
    """What provisioning one claim on a node needs, read once per pod."""

    claim: RawObject
    error: str = ""  # the claim's class cannot be read: an Error on every node needing it
    provisioner: bool = False
    topologies: Sequence[Mapping[str, Any]] = ()
    # None: no capacity check; else the class's CSIStorageCapacities large enough, in order.
    capacities: tuple[tuple[RawObject, labels.Selector], ...] | None = None


@dataclass(slots=True)
class _Verdict:
    codes: npt.NDArray[np.int64]
    choice: list[npt.NDArray[np.int64]]  # per claim to match: option index per slot, -1 none
    capacity_of: dict[int, npt.NDArray[np.int64]]  # per provision: capacity index, -1 none


@dataclass(slots=True)
class _State:
    snapshot: Snapshot
    bound: tuple[RawObject | None, ...]  # PVs of bound claims (None: missing), in order
    selected: tuple[str, ...]  # selected-node annotations of waiting claims
    selected_claims: tuple[RawObject, ...]
    to_match: tuple[RawObject, ...]  # waiting claims without selected-node, smallest first
    options: tuple[tuple[RawObject, ...], ...]  # per claim to match: [prebound] or candidates
    prebound: tuple[bool, ...]
    provisions: dict[tuple[str, str], _Provision]
    error: Status | None = None
    verdict: _Verdict | None = None
    # Reserve → PreBind/Unreserve
    all_bound: bool = False
    bindings: list[tuple[RawObject, RawObject]] = field(default_factory=list)  # (pv, claim)
    provisioned: list[RawObject] = field(default_factory=list)
    node_labels: Mapping[str, str] = field(default_factory=dict)

    def clone(self) -> _State:
        return self


def _claim_key(claim: RawObject) -> tuple[str, str]:
    meta = claim.get("metadata") or {}
    return str(meta.get("namespace") or ""), str(meta.get("name") or "")


def _value(amount: Fraction | None) -> int:
    return 0 if amount is None else quantity.value(amount)


def _owned_by(claim: RawObject, pod: PodInfo) -> bool:
    for ref in (claim.get("metadata") or {}).get("ownerReferences") or ():
        if ref.get("controller") and ref.get("uid") == pod.uid:
            return True
    return False


class VolumeBinding:
    name: str = NAME

    def __init__(
        self,
        handle: Handle | None,
        bind_timeout_seconds: int = DEFAULT_BIND_TIMEOUT_SECONDS,
        shape: Sequence[tuple[int, int]] = DEFAULT_SHAPE,
    ) -> None:
        self.handle = handle
        self.cache = AssumeCache(handle.objects if handle is not None else None)
        self.facts = vm.Facts()
        self.masks = volume_columns.AffinityMasks(self.facts)
        self.bind_timeout = float(bind_timeout_seconds)
        self.shape = tuple((u, s * resource_scoring.SHAPE_SCORE_SCALE) for u, s in shape)
        # PreBind's wait ends early when the engine stops (upstream cancels its context).
        self._closing = threading.Event()
        # Seams for tests of the wait (a fake clock, no real sleeping).
        self.sleep: Callable[[float], object] = self._closing.wait
        self.clock: Callable[[], float] = time.monotonic

    def close(self) -> None:
        """Stop every PreBind wait at once (the engine is stopping or lost its lease)."""
        self._closing.set()

    def _objects(self, kind: str) -> Sequence[RawObject]:
        objects = self.handle.objects if self.handle is not None else None
        return objects.list(kind) if objects is not None else ()

    # --- PreFilter ----------------------------------------------------------------------------

    def _check_claims(self, pod: PodInfo) -> tuple[list[RawObject], Status | None]:
        """Upstream ``podHasPVCs``: the pod's claims from the lister, or the first problem."""
        out: list[RawObject] = []
        for name, ephemeral in volumes.claims(pod):
            claim, failure = volumes.find_pvc(self.handle, pod.namespace, name)
            if claim is None:
                if ephemeral:
                    msg = (
                        "waiting for ephemeral volume controller to create the "
                        f'persistentvolumeclaim "{name}"'
                    )
                    return out, volumes.unresolvable(msg)
                return out, failure
            if (claim.get("status") or {}).get("phase") == "Lost":
                msg = (
                    f'persistentvolumeclaim "{name}" bound to non-existent '
                    f'persistentvolume "{volumes.volume_name(claim)}"'
                )
                return out, volumes.unresolvable(msg)
            if (claim.get("metadata") or {}).get("deletionTimestamp") is not None:
                return out, volumes.unresolvable(f'persistentvolumeclaim "{name}" is being deleted')
            if ephemeral and not _owned_by(claim, pod):
                return out, volumes.unresolvable(
                    f"PVC {pod.namespace}/{name} was not created for pod "
                    f"{pod.namespace}/{pod.name} (pod is not owner)"
                )
            out.append(claim)
        return out, None

    def _is_delay_binding(self, claim: RawObject) -> bool:
        class_name = volumes.claim_class(claim)
        if not class_name:
            return False
        sc = volumes.storage_class(self.handle, class_name)
        return sc is not None and sc.get("volumeBindingMode") == volumes.WAIT_FOR_FIRST_CONSUMER

    def pre_filter(
        self, state: CycleState, pod: PodInfo, snapshot: Snapshot
    ) -> tuple[PreFilterResult | None, Status | None]:
        listed, failure = self._check_claims(pod)
        if failure is not None:
            return None, failure
        if not listed:
            return None, Status(Code.SKIP)
        bound: list[RawObject | None] = []
        waiting: list[RawObject] = []
        immediate = False
        for listed_claim in listed:
            ns_, name = _claim_key(listed_claim)
            claim = self.cache.get(listers.PERSISTENT_VOLUME_CLAIM, ns_, name) or listed_claim
            if vm.is_fully_bound(claim):
                bound.append(
                    self.cache.get(listers.PERSISTENT_VOLUME, "", volumes.volume_name(claim))
                )
            elif self._is_delay_binding(claim) and not volumes.volume_name(claim):
                waiting.append(claim)
            else:
                immediate = True
        if immediate:
            return None, volumes.unresolvable(ERR_REASON_UNBOUND_IMMEDIATE)
        selected_claims = tuple(c for c in waiting if vm.ANN_SELECTED_NODE in vm.annotations_of(c))
        to_match = sorted(
            (c for c in waiting if vm.ANN_SELECTED_NODE not in vm.annotations_of(c)),
            key=lambda c: vm.requested(c) or Fraction(0),
        )
        options: list[tuple[RawObject, ...]] = []
        prebound: list[bool] = []
        error: Status | None = None
        for claim in to_match:
            raw_selector = (claim.get("spec") or {}).get("selector")
            selector = labels.parse(raw_selector) if raw_selector is not None else None
            if selector is not None and selector.error and error is None:
                ns_, name = _claim_key(claim)
                error = Status.error(
                    "error creating internal label selector for claim: "
                    f"{ns_}/{name}: {selector.error}"
                )
            pvs = self.cache.list_pvs(volumes.claim_class(claim))
            found = vm.candidates(claim, pvs, selector, self.facts)
            options.append((found.prebound,) if found.prebound is not None else found.volumes)
            prebound.append(found.prebound is not None)
        provisions = {_claim_key(c): self._provision(c) for c in (*selected_claims, *to_match)}
        state.write(
            STATE_KEY,
            _State(
                snapshot=snapshot,
                bound=tuple(bound),
                selected=tuple(vm.annotations_of(c)[vm.ANN_SELECTED_NODE] for c in selected_claims),
                selected_claims=selected_claims,
                to_match=tuple(to_match),
                options=tuple(options),
                prebound=tuple(prebound),
                provisions=provisions,
                error=error,
            ),
        )
        return None, None

    def _provision(self, claim: RawObject) -> _Provision:
        """Upstream ``checkVolumeProvisions``/``hasEnoughCapacity``, the node-independent part."""
        ns_, name = _claim_key(claim)
        class_name = volumes.claim_class(claim)
        if not class_name:
            return _Provision(claim, error=f'no class for claim "{ns_}/{name}"')
        sc = volumes.storage_class(self.handle, class_name)
        if sc is None:
            return _Provision(claim, error=f'failed to find storage class "{class_name}"')
        provisioner = str(sc.get("provisioner") or "")
        if not provisioner or provisioner == vm.NOT_SUPPORTED_PROVISIONER:
            return _Provision(claim)
        topologies = tuple(sc.get("allowedTopologies") or ())
        size = vm.requested(claim)
        driver = volumes.csi_driver(self.handle, provisioner)
        tracked = driver is not None and (driver.get("spec") or {}).get("storageCapacity") is True
        if size is None or not tracked:
            return _Provision(claim, provisioner=True, topologies=topologies)
        capacities = []
        for cap in sorted(self._objects(listers.CSI_STORAGE_CAPACITY), key=_claim_key):
            topology = cap.get("nodeTopology")
            if (
                cap.get("storageClassName") == class_name
                and vm.capacity_sufficient(cap, size)
                and topology is not None
            ):
                capacities.append((cap, labels.parse(topology)))
        return _Provision(
            claim, provisioner=True, topologies=topologies, capacities=tuple(capacities)
        )

    def pre_filter_extensions(self) -> PreFilterExtensions | None:
        return None

    # --- Filter -------------------------------------------------------------------------------

    def _evaluate(self, s: _State) -> _Verdict:
        if s.verdict is None:
            snap = s.snapshot
            codes = volume_columns.bound_codes(s.bound, snap)
            live = np.ones(snap.capacity, dtype=np.bool_)
            for node_name in s.selected:  # a claim already handed to another node's provisioner
                only = np.zeros(snap.capacity, dtype=np.bool_)
                slot = snap.slot_of.get(node_name)
                if slot is not None:
                    only[slot] = True
                live &= only
            codes[~live] |= _BIND_CONFLICT
            choice = volume_columns.choices(s.options, snap, self.masks)
            capacity_of = self._provision_codes(s, choice, live, codes)
            s.verdict = _Verdict(codes, choice, capacity_of)
        return s.verdict

    def _provision_codes(
        self,
        s: _State,
        choice: list[npt.NDArray[np.int64]],
        live: Mask,
        codes: npt.NDArray[np.int64],
    ) -> dict[int, npt.NDArray[np.int64]]:
        """Upstream ``checkVolumeProvisions`` on every live node, claims in upstream's order
        (selected-node ones, then the unmatched); the first failing claim decides."""
        snap = s.snapshot
        size = snap.capacity
        capacity_of: dict[int, npt.NDArray[np.int64]] = {}
        undecided = live.copy()
        order = [(c, None) for c in s.selected_claims] + [
            (c, choice[i] < 0) for i, c in enumerate(s.to_match)
        ]
        for index, (claim, unmatched) in enumerate(order):
            need = undecided if unmatched is None else undecided & unmatched
            p = s.provisions[_claim_key(claim)]
            if p.error:
                codes[need] |= _ERROR
                undecided &= ~need
                continue
            ok = vm.topology_mask(p.topologies, snap) if p.provisioner else np.zeros(size, bool)
            fail = need & ~ok
            codes[fail] |= _BIND_CONFLICT
            undecided &= ~fail
            if p.capacities is None:
                continue
            which = np.full(size, -1, dtype=np.int64)
            for k in range(len(p.capacities) - 1, -1, -1):  # the first that fits wins
                which[vm.label_selector_mask(p.capacities[k][1], snap)] = k
            capacity_of[index] = which
            fail = need & ok & (which < 0)
            codes[fail] |= _NOT_ENOUGH_SPACE
            undecided &= ~fail
        return capacity_of

    def _describe(self, s: _State, code: int) -> Status:
        if code & _ERROR:
            errors = [p.error for p in s.provisions.values() if p.error]
            return Status.error(errors[0] if errors else "volume provisioning failed")
        return Status.of(
            Code.UNSCHEDULABLE_AND_UNRESOLVABLE, *(r for bit, r in _REASONS if code & bit)
        )

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status | None:
        s = state.read(STATE_KEY, _State)
        if s is None:
            return None
        if s.error is not None:
            return s.error
        slot = s.snapshot.slot_of.get(node.name, -1) if node.slot < 0 else node.slot
        if slot < 0:
            return Status.error(f'node "{node.name}" is not in the snapshot')
        code = int(self._evaluate(s).codes[slot])
        return None if code == 0 else self._describe(s, code)

    def filter_batch(self, state: CycleState, pod: PodInfo, snapshot: Snapshot) -> FilterVerdict:
        s = state.read(STATE_KEY, _State)
        if s is None:
            passed = np.ones(snapshot.capacity, dtype=np.bool_)
            return FilterVerdict.uniform(passed, Status.of(Code.UNSCHEDULABLE_AND_UNRESOLVABLE))
        if s.error is not None:
            return FilterVerdict.uniform(np.zeros(snapshot.capacity, dtype=np.bool_), s.error)
        codes = self._evaluate(s).codes
        return FilterVerdict(codes == 0, codes, lambda code: self._describe(s, code))

    # --- the node's bindings --------------------------------------------------------------------

    def _pod_volumes(
        self, s: _State, slot: int
    ) -> tuple[list[tuple[RawObject, RawObject]], list[tuple[RawObject, RawObject | None]]]:
        """Upstream ``PodVolumes`` on one node: (PV, claim) bindings and (claim, capacity)
        provisions, in upstream's order."""
        v = self._evaluate(s)
        static = []
        provisions: list[tuple[RawObject, RawObject | None]] = []
        order = [(c, -1) for c in s.selected_claims]
        for i, claim in enumerate(s.to_match):
            j = int(v.choice[i][slot])
            if j >= 0:
                static.append((s.options[i][j], claim))
            else:
                order.append((claim, -1))
        for index, (claim, _) in enumerate(order):
            p = s.provisions[_claim_key(claim)]
            cap = None
            if p.capacities is not None and index in v.capacity_of:
                k = int(v.capacity_of[index][slot])
                cap = p.capacities[k][0] if k >= 0 else None
            provisions.append((claim, cap))
        return static, provisions

    # --- Score ----------------------------------------------------------------------------------

    def pre_score(
        self, state: CycleState, pod: PodInfo, snapshot: Snapshot, slots: Slots
    ) -> Status | None:
        return None if state.read(STATE_KEY, _State) is not None else Status(Code.SKIP)

    def _node_score(self, s: _State, slot: int) -> int:
        static, provisions = self._pod_volumes(s, slot)
        classes: dict[str, list[int]] = {}  # class → [requested, capacity]
        if static:
            for pv, claim in static:
                entry = classes.setdefault(vm.pv_class(pv), [0, 0])
                entry[0] += _value(vm.requested(claim))
                entry[1] += _value(vm.pv_capacity(pv))
        else:
            for claim, cap in provisions:
                if cap is None:
                    continue
                class_name = str((claim.get("spec") or {}).get("storageClassName") or "")
                entry = classes.setdefault(class_name, [0, 0])
                entry[1] = _value(vm.amount(cap.get("capacity")))
                entry[0] += _value(vm.requested(claim))
        if not classes:
            return 0
        total = 0
        for want, have in classes.values():
            util = resource_scoring.MAX_UTILIZATION
            if have != 0 and want <= have:
                util = want * resource_scoring.MAX_UTILIZATION // have
            total += resource_scoring.broken_linear(self.shape, util)
        return math.floor(total / len(classes) + 0.5)

    def score(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> tuple[int, Status | None]:
        s = state.read(STATE_KEY, _State)
        if s is None:
            return 0, None
        slot = s.snapshot.slot_of.get(node.name, -1) if node.slot < 0 else node.slot
        return (self._node_score(s, slot) if slot >= 0 else 0), None

    def score_batch(
        self, state: CycleState, pod: PodInfo, snapshot: Snapshot, slots: Slots
    ) -> tuple[Scores, Status | None]:
        s = state.read(STATE_KEY, _State)
        out = np.zeros(len(slots), dtype=np.int64)
        if s is not None:
            for i, slot in enumerate(slots):
                out[i] = self._node_score(s, int(slot))
        return out, None

    # --- Reserve / Unreserve ----------------------------------------------------------------------

    def _all_bound(self, s: _State) -> bool:
        """Upstream ``arePodVolumesBound``, through the assume cache."""
        for claim in (*s.selected_claims, *s.to_match):
            ns_, name = _claim_key(claim)
            now = self.cache.get(listers.PERSISTENT_VOLUME_CLAIM, ns_, name)
            if now is None or not vm.is_fully_bound(now):
                return False
        return True

    def reserve(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        s = state.read(STATE_KEY, _State)
        if s is None:
            return None
        slot = s.snapshot.slot_of.get(node_name)
        if slot is None or self._all_bound(s):
            s.all_bound = True
            return None
        s.node_labels = s.snapshot.node_info(slot).labels
        static, provisions = self._pod_volumes(s, slot)
        for pv, claim in static:
            new_pv, dirty = vm.bind_volume_to_claim(pv, claim)
            if dirty:
                failure = self.cache.assume(listers.PERSISTENT_VOLUME, new_pv)
                if failure is not None:
                    self._revert(s)
                    return Status.error(failure)
            s.bindings.append((new_pv, claim))
        for claim, _ in provisions:
            clone = vm.with_selected_node(claim, node_name)
            failure = self.cache.assume(listers.PERSISTENT_VOLUME_CLAIM, clone)
            if failure is not None:
                self._revert(s)
                return Status.error(failure)
            s.provisioned.append(clone)
        return None

    def _revert(self, s: _State) -> None:
        for pv, _ in s.bindings:
            self.cache.restore(listers.PERSISTENT_VOLUME, pv)
        for claim in s.provisioned:
            self.cache.restore(listers.PERSISTENT_VOLUME_CLAIM, claim)

    def unreserve(self, state: CycleState, pod: PodInfo, node_name: str) -> None:
        s = state.read(STATE_KEY, _State)
        if s is not None:
            self._revert(s)

    # --- PreBind ----------------------------------------------------------------------------------

    def pre_bind_pre_flight(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        """PreBind acts only when Reserve left volumes to bind (a pod without claims has no
        state: nothing to bind either)."""
        s = state.read(STATE_KEY, _State)
        return None if s is not None and not s.all_bound else Status(Code.SKIP)

    def pre_bind(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        s = state.read(STATE_KEY, _State)
        if s is None or s.all_bound:
            return None
        failure = volume_binder.write(self.cache, self._updater(), s.bindings, s.provisioned)
        if failure is not None:
            return Status.error(failure)
        # Checked at once, then every second (upstream waits a second first: the same outcome,
        # since the informers cannot have seen the writes yet, but a simulation need not wait).
        deadline = self.clock() + self.bind_timeout
        while True:
            if self._deleted(pod):
                return Status.error(f'binding volumes: {POD_GONE}: pod "{pod.name}" not found')
            done, failure = volume_binder.check(
                self.cache, s.bindings, s.provisioned, node_name, s.node_labels
            )
            if failure is not None:
                return Status.error(f"binding volumes: {failure}")
            if done:
                return None
            if self.clock() >= deadline:
                return Status.error("binding volumes: context deadline exceeded")
            if self._closing.is_set():
                return Status.error("binding volumes: context canceled")
            self.sleep(POLL_SECONDS)

    def _deleted(self, pod: PodInfo) -> bool:
        """Upstream checkBindings asks its pod lister first: a pod deleted while its volumes
        bind ends the wait (it held a binding thread until bindTimeoutSeconds, 10 minutes)."""
        lister = self.handle.pod_lister if self.handle is not None else None
        return lister is not None and lister.get(pod.namespace, pod.name) is None

    def _updater(self) -> listers.ObjectUpdater | None:
        return self.handle.object_updater if self.handle is not None else None

    def events_to_register(self) -> Sequence[ClusterEventWithHint]:
        add_update = ActionType.ADD | ActionType.UPDATE
        csi_driver = ClusterEvent(listers.CSI_DRIVER, ActionType.UPDATE)
        capacity = ClusterEvent(listers.CSI_STORAGE_CAPACITY, add_update)
        return tuple(
            ClusterEventWithHint(event, hint)
            for event, hint in (
                (ClusterEvent("StorageClass", add_update), hints.after_class_change),
                (ClusterEvent("PersistentVolumeClaim", add_update), hints.after_claim_change),
                (ClusterEvent("PersistentVolume", add_update), None),
                (ClusterEvent(NODE, ActionType.ADD | ActionType.UPDATE_NODE_LABEL), None),
                (ClusterEvent(listers.CSI_NODE, add_update), hints.after_csi_node_change),
                (csi_driver, hints.after_csi_driver_change),
                (capacity, hints.after_capacity_change),
            )
        )


def new(args: object, handle: Handle) -> VolumeBinding:
    a: config_args.VolumeBindingArgs = plugin_args(NAME, args)
    timeout = a.bind_timeout_seconds
    shape = tuple((p.utilization, p.score) for p in a.shape or ()) or DEFAULT_SHAPE
    return VolumeBinding(
        handle, DEFAULT_BIND_TIMEOUT_SECONDS if timeout is None else timeout, shape
    )
