"""A fake framework :class:`~corral.scheduler.framework.interface.Handle` for testing one plugin
at a time, after upstream's ``testing/framework`` helpers.

Contract: every member is what the engine would wire, or None (empty) where the test gives
none, so a plugin that reads only its args and the snapshot needs only ``FakeHandle()``:
``node_affinity.new(None, FakeHandle())``. The cluster objects beyond nodes and pods are an
:class:`ObjectStore` filled with the raw objects given (each filed under its ``kind``). There are
no waiting pods, and the what-if runners (preemption's) answer as a framework whose PreFilter
plugins have no extensions and whose filters pass.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from corral.scheduler.backend.objects import ADDED, ObjectStore
from corral.scheduler.framework.cycle_state import CycleState
from corral.scheduler.framework.extender import Extender
from corral.scheduler.framework.interface import Handle, PodBinder, PodGroupManager, WaitingPod
from corral.scheduler.framework.listers import (
    ObjectUpdater,
    PodLister,
    PodNominator,
    PreemptionExecutor,
    ResourceClaimWriter,
)
from corral.scheduler.framework.snapshot import Snapshot
from corral.scheduler.framework.status import Status
from corral.scheduler.framework.types import NodeInfo, PodInfo


class FakeHandle:
    """A :class:`Handle` over the given objects and collaborators (all optional; each is a
    plain attribute a test may set later, e.g. an ``object_updater`` over :attr:`objects`)."""

    def __init__(
        self,
        *objects: Mapping[str, Any],
        pod_binder: PodBinder | None = None,
        nominator: PodNominator | None = None,
        preemption_executor: PreemptionExecutor | None = None,
        claim_writer: ResourceClaimWriter | None = None,
        object_updater: ObjectUpdater | None = None,
        extenders: Sequence[Extender] = (),
        snapshot: Snapshot | None = None,
        pod_groups: PodGroupManager | None = None,
        pod_lister: PodLister | None = None,
    ) -> None:
        self.objects = ObjectStore()
        self.pod_lister = pod_lister
        self.add(*objects)
        self.pod_binder = pod_binder
        self.nominator = nominator
        self.preemption_executor = preemption_executor
        self.claim_writer = claim_writer
        self.object_updater = object_updater
        self.extenders = tuple(extenders)
        self._snapshot = snapshot
        # GenericWorkload: on when a pod-group manager (e.g. a Cache(generic_workload=True)) is
        # given; pods the plugin activates and waiting pods a test puts in are kept here.
        self.pod_groups = pod_groups
        self.generic_workload = pod_groups is not None
        self.activated: list[str] = []
        self.waiting: dict[str, WaitingPod] = {}

    def add(self, *objects: Mapping[str, Any]) -> FakeHandle:
        """File more raw objects in :attr:`objects` (each under its ``kind``); returns self."""
        for obj in objects:
            self.objects.apply(str(obj["kind"]), ADDED, obj)
        return self

    # --- Handle -----------------------------------------------------------------------------

    def get_waiting_pod(self, uid: str) -> WaitingPod | None:
        return self.waiting.get(uid)

    def iterate_waiting_pods(self) -> Iterator[WaitingPod]:
        return iter(list(self.waiting.values()))

    def reject_waiting_pod(self, uid: str) -> bool:
        return False

    def snapshot(self) -> Snapshot | None:
        return self._snapshot

    def set_snapshot(self, snapshot: Snapshot) -> None:
        self._snapshot = snapshot

    def activate(self, uids: Sequence[str]) -> None:
        self.activated.extend(uids)

    def run_reserve(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        return None

    def run_unreserve(self, state: CycleState, pod: PodInfo, node_name: str) -> None:
        return None

    def has_pre_filter_extensions(self, state: CycleState) -> bool:
        return False

    def run_pre_filter_extension_add_pod(
        self, state: CycleState, pod: PodInfo, pod_to_add: PodInfo, node: NodeInfo
    ) -> Status | None:
        return None

    def run_pre_filter_extension_remove_pod(
        self, state: CycleState, pod: PodInfo, pod_to_remove: PodInfo, node: NodeInfo
    ) -> Status | None:
        return None

    def run_filter_plugins_with_nominated_pods(
        self, state: CycleState, pod: PodInfo, node: NodeInfo
    ) -> Status | None:
        return None


if TYPE_CHECKING:
    _is_a_handle: Handle = FakeHandle()
