"""VolumeBinding as upstream 1.37's binder: the matching rules, provisioning and capacity checks,
the reasons per node (cases after upstream's binder_test.go / volume_binding_test.go), the
assume cache between pods, PreBind's writes and wait, and capacity scoring."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pytest

from corral.scheduler.backend.objects import ObjectStore
from corral.scheduler.backend.pod_labels import PodLabelIndex
from corral.scheduler.backend.records import node_from_json, pod_from_json
from corral.scheduler.config.args import UtilizationShapePoint, VolumeBindingArgs
from corral.scheduler.framework import listers
from corral.scheduler.framework.cluster_events import QueueingHint, QueueingHintFn
from corral.scheduler.framework.cycle_state import CycleState
from corral.scheduler.framework.status import Code, Status
from corral.scheduler.framework.types import PodInfo
from corral.scheduler.plugins import (
    volume_binding,
)
from corral.scheduler.plugins import volume_binding as vb
from corral.scheduler.plugins.volume_binding import hints as vb_hints
from corral.testing.builders import build_cache, node, snapshot_of
from corral.testing.framework import FakeHandle
from support.hints import CLAIM, SKIP, Q, with_volumes
from support.storage import (
    capacity,
    csi_driver,
    pod_with_claims,
    pv,
    pvc,
    storage_class,
)
from support.volume_pods import (
    EPHEMERAL_POD,
    PVC_POD,
    claim_pair,
    class_pair,
    pairs_handle,
    pre_filter_status,
)

UUR = Code.UNSCHEDULABLE_AND_UNRESOLVABLE
NODES = [
    node("n1", labels={"zone": "a"}),
    node("n2", labels={"zone": "a"}),
    node("n3", labels={"zone": "b"}),
]
CSI = "csi.example.com"
WFFC = storage_class("wffc")
IMMEDIATE = storage_class("immediate", mode="Immediate")
DYNAMIC = storage_class("dynamic", CSI)
ZONED = storage_class("zoned", CSI, topologies=[{"zone": ["b"]}])


def ok() -> None:
    return None


def fail(*reasons: str) -> Status:
    return Status.of(UUR, *reasons)


BIND = fail(vb.ERR_REASON_BIND_CONFLICT)
NODE_CONFLICT = fail(vb.ERR_REASON_NODE_CONFLICT)
SPACE = fail(vb.ERR_REASON_NOT_ENOUGH_SPACE)
PV_GONE = fail(vb.ERR_REASON_PV_NOT_EXIST)


class Updater:
    """The API seam: stores what PreBind writes, with a new resourceVersion, or refuses."""

    def __init__(self, store: ObjectStore, refuse: str = "") -> None:
        self.store = store
        self.refuse = refuse
        self.writes: list[tuple[str, str]] = []

    def update(self, kind: str, obj: Mapping[str, Any]) -> Mapping[str, Any]:
        if self.refuse:
            raise RuntimeError(self.refuse)
        rv = str(int(obj["metadata"]["resourceVersion"]) + 1)
        stored = {**obj, "metadata": {**obj["metadata"], "resourceVersion": rv}}
        self.store.apply(kind, "MODIFIED", stored)
        self.writes.append((kind, obj["metadata"]["name"]))
        return stored


def handle(objects: Sequence[Mapping[str, Any]]) -> FakeHandle:
    """The objects, and an object updater writing back into them."""
    fake = FakeHandle(*objects)
    fake.object_updater = Updater(fake.objects)
    return fake


def plugin_for(objects: Sequence[Mapping[str, Any]], **kw: Any) -> vb.VolumeBinding:
    return vb.VolumeBinding(handle(objects), **kw)


def pod_of(*claims: str) -> PodInfo:
    return pod_from_json(pod_with_claims("p", *claims))


def verdicts(plugin: vb.VolumeBinding, pod: PodInfo) -> dict[str, Status | None] | Status:
    """PreFilter's failure, or each node's Filter status (batch and per node must agree)."""
    snap = snapshot_of(NODES)
    state = CycleState()
    _, status = plugin.pre_filter(state, pod, snap)
    if status is not None:
        return status
    batch = plugin.filter_batch(state, pod, snap)
    out: dict[str, Status | None] = {}
    for slot in snap.order:
        info = snap.node_info(int(slot))
        per_node = plugin.filter(state, pod, info)
        from_batch = None if batch.passed[slot] else batch.describe(int(batch.reasons[slot]))  # type: ignore[index]
        assert per_node == from_batch, info.name
        out[info.name] = per_node
    return out


def everywhere(status: Status | None) -> dict[str, Status | None]:
    return {"n1": status, "n2": status, "n3": status}


def only(nodes: str, elsewhere: Status | None) -> dict[str, Status | None]:
    return {n: (None if n in nodes.split(",") else elsewhere) for n in ("n1", "n2", "n3")}


CASES = [
    # --- bound claims (upstream "bound-pvc", "immediate-bound-pvc-wrong-node", ...) ---
    pytest.param(
        [
            WFFC,
            pvc(volume="pv-a", bound=True),
            pv("pv-a", node="n1", claim=("default", "data", "")),
        ],
        ["data"],
        only("n1", NODE_CONFLICT),
        id="bound claim: only its PV's node",
    ),
    pytest.param(
        [WFFC, pvc(volume="pv-gone", bound=True)],
        ["data"],
        everywhere(PV_GONE),
        id="bound claim to a missing PV",
    ),
    pytest.param(
        [WFFC, pvc(volume="pv-a")],
        ["data"],
        fail(vb.ERR_REASON_UNBOUND_IMMEDIATE),
        id="prebound claim not yet bind-completed is not waited for",
    ),
    pytest.param(
        [IMMEDIATE, pvc(storage_class="immediate")],
        ["data"],
        fail(vb.ERR_REASON_UNBOUND_IMMEDIATE),
        id="immediate unbound claim",
    ),
    pytest.param(
        [pvc(storage_class="missing-class")],
        ["data"],
        fail(vb.ERR_REASON_UNBOUND_IMMEDIATE),
        id="claim of a missing class counts as immediate",
    ),
    # --- matching existing PVs ---
    pytest.param(
        [WFFC, pvc(), pv("pv-a", node="n1")],
        ["data"],
        only("n1", BIND),
        id="unbound claim: PV on one node",
    ),
    pytest.param(
        [WFFC, pvc(), pv("pv-a")],
        ["data"],
        everywhere(None),
        id="PV without node affinity fits anywhere",
    ),
    pytest.param(
        [WFFC, pvc(size="20Gi"), pv("pv-a", "10Gi", node="n1")],
        ["data"],
        everywhere(BIND),
        id="PV too small",
    ),
    pytest.param(
        [WFFC, pvc(volume_mode="Block"), pv("pv-a", node="n1")],
        ["data"],
        everywhere(BIND),
        id="volume mode differs",
    ),
    pytest.param(
        [WFFC, pvc(modes=("ReadWriteMany",)), pv("pv-a", node="n1")],
        ["data"],
        everywhere(BIND),
        id="access mode not offered",
    ),
    pytest.param(
        [WFFC, pvc(selector={"matchLabels": {"tier": "gold"}}), pv("pv-a", node="n1")],
        ["data"],
        everywhere(BIND),
        id="selector does not match",
    ),
    pytest.param(
        [
            WFFC,
            pvc(selector={"matchLabels": {"tier": "gold"}}),
            pv("pv-a", node="n1", labels={"tier": "gold"}),
        ],
        ["data"],
        only("n1", BIND),
        id="selector matches",
    ),
    pytest.param(
        [WFFC, pvc(), pv("pv-a", node="n1", phase="Released")],
        ["data"],
        everywhere(BIND),
        id="PV not Available",
    ),
    pytest.param(
        [WFFC, pvc(), pv("pv-a", "10Gi", "other", node="n1")],
        ["data"],
        everywhere(BIND),
        id="PV of another class",
    ),
    pytest.param(
        [WFFC, pvc(), pv("pv-a", node="n1", claim=("default", "someone-else", ""))],
        ["data"],
        everywhere(BIND),
        id="PV bound to another claim",
    ),
    pytest.param(
        [
            WFFC,
            pvc(uid="u1"),
            pv("pv-a", node="n1", claim=("default", "data", "u1"), phase="Bound"),
            pv("pv-b", node="n2"),
        ],
        ["data"],
        only("n1", BIND),
        id="PV pre-bound to the claim decides alone",
    ),
    pytest.param(
        [
            WFFC,
            pvc("small", "1Gi"),
            pvc("big", "8Gi"),
            pv("pv-s", "2Gi", node="n1"),
            pv("pv-b", "10Gi", node="n1"),
        ],
        ["big", "small"],
        only("n1", BIND),
        id="two claims, smallest first, each its own PV",
    ),
    pytest.param(
        [WFFC, pvc("a"), pvc("b"), pv("pv-1", node="n1"), pv("pv-2", node="n2")],
        ["a", "b"],
        everywhere(BIND),
        id="two claims, one PV per node: no node holds both",
    ),
    pytest.param(
        [
            WFFC,
            pvc("a", volume="pv-1", bound=True),
            pvc("b"),
            pv("pv-1", node="n1", claim=("default", "a", "")),
            pv("pv-2", node="n2"),
        ],
        ["a", "b"],
        {
            "n1": BIND,
            "n2": NODE_CONFLICT,
            "n3": fail(vb.ERR_REASON_NODE_CONFLICT, vb.ERR_REASON_BIND_CONFLICT),
        },
        id="one bound, one unbound: reasons in upstream's order",
    ),
    # --- provisioning ---
    pytest.param(
        [DYNAMIC, pvc(storage_class="dynamic")],
        ["data"],
        everywhere(None),
        id="provisioned anywhere",
    ),
    pytest.param(
        [ZONED, pvc(storage_class="zoned")],
        ["data"],
        only("n3", BIND),
        id="allowedTopologies restrict provisioning",
    ),
    pytest.param(
        [WFFC, pvc()],
        ["data"],
        everywhere(BIND),
        id="no PV and no provisioner",
    ),
    pytest.param(
        [WFFC, DYNAMIC, pvc("a"), pvc("b", storage_class="dynamic"), pv("pv-1", node="n2")],
        ["a", "b"],
        only("n2", BIND),
        id="one matched, one provisioned",
    ),
    pytest.param(
        [DYNAMIC, pvc(storage_class="dynamic", selected_node="n2")],
        ["data"],
        only("n2", BIND),
        id="claim already selected for another node",
    ),
    # --- storage capacity ---
    pytest.param(
        [
            DYNAMIC,
            csi_driver(CSI),
            pvc(storage_class="dynamic"),
            capacity("c-a", "dynamic", "10Gi", topology={"zone": "a"}),
        ],
        ["data"],
        only("n1,n2", SPACE),
        id="capacity in one topology",
    ),
    pytest.param(
        [
            DYNAMIC,
            csi_driver(CSI),
            pvc(storage_class="dynamic", size="20Gi"),
            capacity("c-a", "dynamic", "10Gi", topology={"zone": "a"}),
        ],
        ["data"],
        everywhere(SPACE),
        id="capacity too small",
    ),
    pytest.param(
        [
            DYNAMIC,
            csi_driver(CSI),
            pvc(storage_class="dynamic"),
            capacity("c-a", "dynamic", "100Gi", topology={"zone": "a"}, maximum="1Gi"),
        ],
        ["data"],
        everywhere(SPACE),
        id="maximumVolumeSize too small",
    ),
    pytest.param(
        [
            DYNAMIC,
            csi_driver(CSI),
            pvc(storage_class="dynamic"),
            capacity("c-a", "dynamic", "10Gi", topology=None),
        ],
        ["data"],
        everywhere(SPACE),
        id="capacity without node topology reaches no node",
    ),
    pytest.param(
        [
            DYNAMIC,
            csi_driver(CSI),
            pvc(storage_class="dynamic"),
            capacity("c-a", "other", "10Gi", topology={"zone": "a"}),
        ],
        ["data"],
        everywhere(SPACE),
        id="capacity of another class",
    ),
    pytest.param(
        [DYNAMIC, csi_driver(CSI, storage_capacity=False), pvc(storage_class="dynamic")],
        ["data"],
        everywhere(None),
        id="driver without capacity tracking",
    ),
    pytest.param(
        [DYNAMIC, csi_driver(CSI), pvc(storage_class="dynamic", size=None)],
        ["data"],
        everywhere(None),
        id="claim without a storage request",
    ),
    pytest.param(
        [
            ZONED,
            csi_driver(CSI),
            pvc(storage_class="zoned"),
            capacity("c-a", "zoned", "10Gi", topology={"zone": "a"}),
        ],
        ["data"],
        {"n1": BIND, "n2": BIND, "n3": SPACE},
        id="topology checked before capacity",
    ),
]


@pytest.mark.parametrize(("objects", "claims", "want"), CASES)
def test_filter(
    objects: list[dict[str, Any]], claims: list[str], want: dict[str, Status | None] | Status
) -> None:
    assert verdicts(plugin_for(objects), pod_of(*claims)) == want


def test_pod_without_claims_is_skipped() -> None:
    state = CycleState()
    _, status = plugin_for([]).pre_filter(state, pod_of(), snapshot_of(NODES))
    assert status == Status(Code.SKIP)


def reserve_on(plugin: vb.VolumeBinding, pod: PodInfo, node_name: str) -> CycleState:
    state = CycleState()
    plugin.pre_filter(state, pod, snapshot_of(NODES))
    assert plugin.filter_batch(state, pod, snapshot_of(NODES)).passed.any()
    assert plugin.reserve(state, pod, node_name) is None
    return state


def test_assumed_pv_is_not_offered_to_the_next_pod() -> None:
    objects = [WFFC, pvc("a", uid="ua"), pvc("b", uid="ub"), pv("pv-1", node="n1")]
    plugin = plugin_for(objects)
    state = reserve_on(plugin, pod_of("a"), "n1")
    assert verdicts(plugin, pod_of("b")) == everywhere(BIND)
    plugin.unreserve(state, pod_of("a"), "n1")
    assert verdicts(plugin, pod_of("b")) == only("n1", BIND)


def test_assumed_claim_carries_the_selected_node() -> None:
    plugin = plugin_for([DYNAMIC, pvc(storage_class="dynamic")])
    reserve_on(plugin, pod_of("data"), "n2")
    assert verdicts(plugin, pod_of("data")) == only("n2", BIND)


def complete_binding(store: ObjectStore) -> None:
    """What the PV controller does once the binder wrote: the claim bound, bind-completed."""
    for claim in store.list(listers.PERSISTENT_VOLUME_CLAIM):
        meta = claim["metadata"]
        volume = next(
            (p["metadata"]["name"] for p in store.list(listers.PERSISTENT_VOLUME)
             if (p["spec"].get("claimRef") or {}).get("name") == meta["name"]),
            None,
        )  # fmt: skip
        if volume is None:  # a provisioner's new PV
            volume = f"pv-{meta['name']}"
            made = pv(volume, claim=("default", meta["name"], "u"), phase="Bound")
            store.apply(listers.PERSISTENT_VOLUME, "ADDED", made)
        done = {
            **claim,
            "metadata": {**meta, "resourceVersion": str(int(meta["resourceVersion"]) + 1),
                         "annotations": {**(meta.get("annotations") or {}),
                                         "pv.kubernetes.io/bind-completed": "yes"}},
            "spec": {**claim["spec"], "volumeName": volume},
        }  # fmt: skip
        store.apply(listers.PERSISTENT_VOLUME_CLAIM, "MODIFIED", done)
    for volume in store.list(listers.PERSISTENT_VOLUME):
        ref = volume["spec"].get("claimRef")
        if ref is not None and not ref.get("uid"):
            fixed = {**volume, "spec": {**volume["spec"], "claimRef": {**ref, "uid": "u"}}}
            store.apply(listers.PERSISTENT_VOLUME, "MODIFIED", fixed)


class Clock:
    def __init__(self, on_sleep: Any = None) -> None:
        self.now = 0.0
        self.on_sleep = on_sleep

    def sleep(self, seconds: float) -> None:
        self.now += seconds
        if self.on_sleep is not None:
            self.on_sleep()


def pre_bind(
    objects: list[dict[str, Any]], claims: list[str], node_name: str, *, controller: bool,
    timeout: int = 5, refuse: str = "",
) -> tuple[Status | None, vb.VolumeBinding, FakeHandle]:  # fmt: skip
    plugin = plugin_for(objects, bind_timeout_seconds=timeout)
    handle: FakeHandle = plugin.handle  # type: ignore[assignment]
    assert handle.object_updater is not None
    handle.object_updater.refuse = refuse
    clock = Clock((lambda: complete_binding(handle.objects)) if controller else None)
    plugin.sleep, plugin.clock = clock.sleep, lambda: clock.now
    pod = pod_of(*claims)
    state = reserve_on(plugin, pod, node_name)
    return plugin.pre_bind(state, pod, node_name), plugin, handle


def test_pre_bind_writes_the_pv_and_waits_for_the_controller() -> None:
    objects = [WFFC, pvc(uid="u1"), pv("pv-1", node="n1")]
    status, _, handle = pre_bind(objects, ["data"], "n1", controller=True)
    assert status is None
    written = handle.objects.get(listers.PERSISTENT_VOLUME, "", "pv-1")
    assert written is not None
    assert written["spec"]["claimRef"]["name"] == "data"
    assert written["metadata"]["annotations"]["pv.kubernetes.io/bound-by-controller"] == "yes"


def test_pre_bind_sets_the_selected_node_for_provisioning() -> None:
    status, _, handle = pre_bind(
        [DYNAMIC, pvc(storage_class="dynamic")], ["data"], "n3", controller=True
    )
    assert status is None
    claim = handle.objects.get(listers.PERSISTENT_VOLUME_CLAIM, "default", "data")
    assert claim is not None
    assert claim["metadata"]["annotations"]["volume.kubernetes.io/selected-node"] == "n3"


@pytest.mark.parametrize(
    ("objects", "refuse", "want"),
    [
        pytest.param(
            [WFFC, pvc(uid="u1"), pv("pv-1", node="n1")],
            "",
            "binding volumes: context deadline exceeded",
            id="never bound: timeout",
        ),
        pytest.param(
            [WFFC, pvc(uid="u1"), pv("pv-1", node="n1")],
            'Operation cannot be fulfilled on persistentvolumes "pv-1"',
            'Operation cannot be fulfilled on persistentvolumes "pv-1"',
            id="the API refuses the PV update",
        ),
    ],
)
def test_pre_bind_failures(objects: list[dict[str, Any]], refuse: str, want: str) -> None:
    status, _plugin, _ = pre_bind(objects, ["data"], "n1", controller=False, refuse=refuse)
    assert status == Status.error(want)


# (id, the pod is deleted after this many polls (None: never), the controller binds, the status,
# the seconds the wait took)
GONE = 'binding volumes: pod does not exist any more: pod "p" not found'
DELETED_WHILE_BINDING = [
    pytest.param(None, True, None, 1.0, id="kept: bound once the controller has run"),
    pytest.param(None, False, "binding volumes: context deadline exceeded", 5.0,
                 id="kept, never bound: the timeout"),
    pytest.param(0, False, GONE, 0.0, id="deleted before the first check: at once"),
    pytest.param(2, False, GONE, 2.0, id="deleted after two polls: then, not at the timeout"),
]  # fmt: skip


@pytest.mark.parametrize(("deleted_after", "controller", "want", "waited"), DELETED_WHILE_BINDING)
def test_a_pod_deleted_while_its_volumes_bind_ends_the_wait(
    deleted_after: int | None, controller: bool, want: str | None, waited: float
) -> None:
    """Upstream checkBindings asks the pod lister first: the wait of a deleted pod held its
    binding thread (and its place in flight) for bindTimeoutSeconds, 10 minutes by default."""
    objects = [WFFC, pvc(uid="u1"), pv("pv-1", node="n1")]
    index = PodLabelIndex()
    plugin = plugin_for(objects, bind_timeout_seconds=5)
    handle: FakeHandle = plugin.handle  # type: ignore[assignment]
    handle.pod_lister = index
    pod = pod_of("data")
    index.put(pod)
    polls = 0

    def tick() -> None:
        nonlocal polls
        polls += 1
        if controller:
            complete_binding(handle.objects)
        if polls == deleted_after:
            index.remove(pod.uid)

    clock = Clock(tick)
    plugin.sleep, plugin.clock = clock.sleep, lambda: clock.now
    state = reserve_on(plugin, pod, "n1")
    if deleted_after == 0:
        index.remove(pod.uid)
    status = plugin.pre_bind(state, pod, "n1")
    assert (status, clock.now) == (None if want is None else Status.error(want), waited)


def test_pre_bind_claim_ref_reset() -> None:
    objects = [WFFC, pvc(uid="u1"), pv("pv-1", node="n1")]
    plugin = plugin_for(objects, bind_timeout_seconds=5)
    handle: FakeHandle = plugin.handle  # type: ignore[assignment]

    def reset() -> None:
        volume = handle.objects.get(listers.PERSISTENT_VOLUME, "", "pv-1")
        assert volume is not None
        rv = str(int(volume["metadata"]["resourceVersion"]) + 1)
        cleared = {**volume, "metadata": {**volume["metadata"], "resourceVersion": rv},
                   "spec": {**volume["spec"], "claimRef": None}}  # fmt: skip
        handle.objects.apply(listers.PERSISTENT_VOLUME, "MODIFIED", cleared)

    clock = Clock(reset)
    plugin.sleep, plugin.clock = clock.sleep, lambda: clock.now
    state = reserve_on(plugin, pod_of("data"), "n1")
    status = plugin.pre_bind(state, pod_of("data"), "n1")
    assert status == Status.error('binding volumes: ClaimRef got reset for pv "pv-1"')


def test_pre_bind_provisioning_moved_elsewhere() -> None:
    plugin = plugin_for([DYNAMIC, pvc(storage_class="dynamic")], bind_timeout_seconds=5)
    handle: FakeHandle = plugin.handle  # type: ignore[assignment]

    def reschedule() -> None:
        claim = handle.objects.get(listers.PERSISTENT_VOLUME_CLAIM, "default", "data")
        assert claim is not None
        meta = claim["metadata"]
        moved = {**claim, "metadata": {**meta, "resourceVersion": "9",
                 "annotations": {"volume.kubernetes.io/selected-node": "n3"}}}  # fmt: skip
        handle.objects.apply(listers.PERSISTENT_VOLUME_CLAIM, "MODIFIED", moved)

    clock = Clock(reschedule)
    plugin.sleep, plugin.clock = clock.sleep, lambda: clock.now
    state = reserve_on(plugin, pod_of("data"), "n1")
    status = plugin.pre_bind(state, pod_of("data"), "n1")
    assert status == Status.error('binding volumes: provisioning failed for PVC "data"')


def scores(objects: list[dict[str, Any]], claims: list[str]) -> dict[str, int]:
    plugin = plugin_for(objects)
    pod = pod_of(*claims)
    snap = snapshot_of(NODES)
    state = CycleState()
    plugin.pre_filter(state, pod, snap)
    verdict = plugin.filter_batch(state, pod, snap)
    slots = [int(s) for s in snap.order if verdict.passed[s]]
    assert plugin.pre_score(state, pod, snap, slots) is None  # type: ignore[arg-type]
    got, _ = plugin.score_batch(state, pod, snap, slots)  # type: ignore[arg-type]
    return {snap.names[s]: int(v) for s, v in zip(slots, got, strict=True)}


@pytest.mark.parametrize(
    ("objects", "want"),
    [
        pytest.param(
            [WFFC, pvc(size="5Gi"), pv("pv-1", "10Gi", node="n1"), pv("pv-2", "50Gi", node="n2")],
            {"n1": 50, "n2": 90},
            id="static: the emptier PV scores higher",
        ),
        pytest.param(
            [
                DYNAMIC,
                csi_driver(CSI),
                pvc(storage_class="dynamic", size="5Gi"),
                capacity("c-a", "dynamic", "10Gi", topology={"zone": "a"}),
                capacity("c-b", "dynamic", "100Gi", topology={"zone": "b"}),
            ],
            {"n1": 50, "n2": 50, "n3": 95},
            id="dynamic: by the topology's capacity",
        ),
        pytest.param(
            [DYNAMIC, pvc(storage_class="dynamic")],
            {"n1": 0, "n2": 0, "n3": 0},
            id="dynamic without capacity tracking: no preference",
        ),
    ],
)
def test_capacity_scoring(objects: list[dict[str, Any]], want: dict[str, int]) -> None:
    assert scores(objects, ["data"]) == want


def test_args_shape_and_timeout() -> None:
    args = VolumeBindingArgs(
        bind_timeout_seconds=30,
        shape=[UtilizationShapePoint(0, 0), UtilizationShapePoint(100, 10)],
    )
    plugin = vb.new(args, handle([]))
    assert plugin.bind_timeout == 30
    assert plugin.shape == ((0, 0), (100, 100))


def test_pre_bind_stops_waiting_when_the_engine_stops() -> None:
    plugin = plugin_for([WFFC, pvc(uid="u1"), pv("pv-1", node="n1")], bind_timeout_seconds=600)
    clock = Clock(plugin.close)
    plugin.sleep, plugin.clock = clock.sleep, lambda: clock.now
    state = reserve_on(plugin, pod_of("data"), "n1")
    status = plugin.pre_bind(state, pod_of("data"), "n1")
    assert status == Status.error("binding volumes: context canceled")
    assert clock.now == 1.0


def test_affinity_masks_follow_node_label_changes() -> None:
    """A PV's node-affinity mask is kept across pods only while the label columns it reads are
    the same; relabelling a node makes the next pod see the change."""
    plugin = plugin_for([WFFC, pvc(), pv("pv-a", node="n1")])
    zoned = pv("pv-z")
    zoned["spec"]["nodeAffinity"] = {"required": {"nodeSelectorTerms": [
        {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["b"]}]}]}}  # fmt: skip
    handle: FakeHandle = plugin.handle  # type: ignore[assignment]
    handle.objects.apply(listers.PERSISTENT_VOLUME, "ADDED", zoned)
    cache = build_cache(NODES)

    def feasible() -> list[str]:
        snap = cache.snapshot()
        state = CycleState()
        plugin.pre_filter(state, pod_of("data"), snap)
        verdict = plugin.filter_batch(state, pod_of("data"), snap)
        return sorted(snap.names[int(s)] for s in snap.order if verdict.passed[s])

    assert feasible() == ["n1", "n3"]
    assert feasible() == ["n1", "n3"]  # from the kept masks
    cache.add_node(node_from_json(node("n2", labels={"zone": "b"})))
    assert feasible() == ["n1", "n2", "n3"]


@pytest.mark.parametrize(
    ("objects", "claims", "acts"),
    [
        pytest.param([WFFC], [], False, id="no claims: nothing to bind"),
        pytest.param([WFFC, pvc(volume="pv-a", bound=True),
                      pv("pv-a", node="n1", claim=("default", "data", "u1"), phase="Bound")],
                     ["data"], False, id="every claim bound: nothing to bind"),
        pytest.param([WFFC, pvc(uid="u1"), pv("pv-1", node="n1")], ["data"], True,
                     id="a claim to bind to a PV"),
        pytest.param([DYNAMIC, pvc(storage_class="dynamic")], ["data"], True,
                     id="a claim to provision"),
    ],
)  # fmt: skip
def test_pre_bind_pre_flight_says_whether_pre_bind_will_act(
    objects: list[dict[str, Any]], claims: list[str], acts: bool
) -> None:
    plugin = plugin_for(objects)
    pod = pod_of(*claims)
    if claims:
        state = reserve_on(plugin, pod, "n1")
    else:
        state = CycleState()
        _, status = plugin.pre_filter(state, pod, snapshot_of(NODES))
        assert status == Status(Code.SKIP)
    want = None if acts else Status(Code.SKIP)
    assert plugin.pre_bind_pre_flight(state, pod, "n1") == want


_EPHEMERAL = {"name": "scratch", "ephemeral": {"volumeClaimTemplate": {"spec": {}}}}


_INLINE_CSI = {"name": "i", "csi": {"driver": "csi.example.com"}}


def _obj(name: str, namespace: str | None = None, **fields: Any) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name}
    if namespace is not None:
        meta["namespace"] = namespace
    return {"metadata": meta, **fields}


def _capacity(**fields: str) -> dict[str, Any]:
    return _obj("cap", "kube-system", **fields)


def _driver(capacity: bool) -> dict[str, Any]:
    return _obj("csi.example.com", spec={"storageCapacity": capacity})


_VB_POD = with_volumes("p", CLAIM, _EPHEMERAL, _INLINE_CSI)


@pytest.mark.parametrize(
    ("hint", "old", "new", "want"),
    [
        pytest.param(
            vb_hints.after_claim_change,
            None,
            _obj("claim", "default"),
            Q,
            id="queue-on-pvc-the-pod-uses",
        ),
        pytest.param(
            vb_hints.after_claim_change,
            None,
            _obj("p-scratch", "default"),
            Q,
            id="queue-on-generic-ephemeral-pvc",
        ),
        pytest.param(
            vb_hints.after_claim_change,
            None,
            _obj("claim", "other"),
            SKIP,
            id="skip-queue-on-pvc-in-another-namespace",
        ),
        pytest.param(
            vb_hints.after_claim_change,
            None,
            _obj("other", "default"),
            SKIP,
            id="skip-queue-on-unrelated-pvc",
        ),
        pytest.param(
            vb_hints.after_class_change, None, _obj("sc"), Q, id="queue-on-storage-class-added"
        ),
        pytest.param(
            vb_hints.after_class_change,
            _obj("sc", allowedTopologies=[]),
            _obj("sc", allowedTopologies=[{"matchLabelExpressions": []}]),
            Q,
            id="queue-on-allowed-topologies-changed",
        ),
        pytest.param(
            vb_hints.after_class_change,
            _obj("sc", parameters={"a": "1"}),
            _obj("sc", parameters={"a": "2"}),
            SKIP,
            id="skip-queue-on-unrelated-storage-class-change",
        ),
        pytest.param(
            vb_hints.after_csi_node_change, None, _obj("n"), Q, id="queue-on-csinode-added"
        ),
        pytest.param(
            vb_hints.after_csi_node_change,
            _obj("n"),
            {"metadata": {"name": "n", "annotations": {vb_hints.MIGRATED_PLUGINS: "x"}}},
            Q,
            id="queue-on-migrated-plugins-changed",
        ),
        pytest.param(
            vb_hints.after_csi_node_change,
            _obj("n"),
            _obj("n", spec={}),
            SKIP,
            id="skip-queue-on-unrelated-csinode-change",
        ),
        pytest.param(
            vb_hints.after_capacity_change,
            None,
            _capacity(capacity="1Gi"),
            Q,
            id="queue-on-capacity-added",
        ),
        pytest.param(
            vb_hints.after_capacity_change,
            _capacity(capacity="1Gi"),
            _capacity(capacity="2Gi"),
            Q,
            id="queue-on-capacity-increased",
        ),
        pytest.param(
            vb_hints.after_capacity_change,
            _capacity(capacity="2Gi"),
            _capacity(capacity="1Gi"),
            SKIP,
            id="skip-queue-on-capacity-decreased",
        ),
        pytest.param(
            vb_hints.after_capacity_change,
            _capacity(capacity="1Gi", maximumVolumeSize="1Gi"),
            _capacity(capacity="5Gi", maximumVolumeSize="1Gi"),
            SKIP,
            id="skip-queue-on-capacity-increased-but-maximum-volume-size-same",
        ),
        pytest.param(
            vb_hints.after_csi_driver_change,
            _driver(True),
            _driver(False),
            Q,
            id="queue-on-csidriver-storage-capacity-disabled",
        ),
        pytest.param(
            vb_hints.after_csi_driver_change,
            _driver(False),
            _driver(True),
            SKIP,
            id="skip-queue-on-csidriver-storage-capacity-enabled",
        ),
    ],
)
def test_volume_binding_hints(
    hint: QueueingHintFn, old: object, new: object, want: QueueingHint
) -> None:
    assert hint(_VB_POD, old, new) is want


@pytest.mark.parametrize(
    ("objects", "raw", "want"),
    [
        pytest.param(
            (),
            EPHEMERAL_POD,
            Status.of(
                UUR,
                'waiting for ephemeral volume controller to create the persistentvolumeclaim "p-v"',
            ),
            id="ephemeral claim not created yet",
        ),
        pytest.param(
            (claim_pair(storage_class="fast"), class_pair("fast")),
            PVC_POD,
            Status.of(UUR, volume_binding.ERR_REASON_UNBOUND_IMMEDIATE),
            id="unbound immediate",
        ),
        pytest.param(
            (
                claim_pair(storage_class="wffc"),
                class_pair("wffc", volumeBindingMode="WaitForFirstConsumer"),
            ),
            PVC_POD,
            None,
            id="unbound wait-for-first-consumer waits for the node",
        ),
        pytest.param((claim_pair(volume="pv-1"),), PVC_POD, None, id="bound to a missing PV"),
    ],
)
def test_volume_binding_pre_filter(
    objects: tuple[tuple[str, dict[str, Any]], ...], raw: dict[str, Any], want: Status | None
) -> None:
    assert pre_filter_status(volume_binding.new(None, pairs_handle(*objects)), raw) == want
