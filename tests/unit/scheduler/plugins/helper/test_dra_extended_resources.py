"""Extended resources backed by DRA in NodeResourcesFit: which class provides a resource, the
filter leaving such a resource to DynamicResources only on nodes that do not advertise it
(per node and in batch), and the DeviceClass queueing hint (upstream
``isSchedulableAfterDeviceClassEvent``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, cast

import numpy as np
import pytest

from corral.scheduler.backend.objects import ADDED, ObjectStore
from corral.scheduler.backend.records import pod_from_json
from corral.scheduler.framework import listers
from corral.scheduler.framework.cluster_events import QueueingHint
from corral.scheduler.framework.cycle_state import CycleState
from corral.scheduler.framework.interface import Handle
from corral.scheduler.framework.status import Code, Status
from corral.scheduler.plugins import node_resources_fit
from corral.scheduler.plugins.helper.dra_extended_resources import (
    DeviceClassResolver,
    class_mapping,
    is_dra_extended_resource_name,
)
from corral.testing.builders import container, node, pod, snapshot_of

GPU = "example.com/gpu"
UUR = Code.UNSCHEDULABLE_AND_UNRESOLVABLE


def device_class(
    name: str, resource: str | None = None, created: str = "2026-01-01T00:00:00Z"
) -> dict[str, Any]:
    spec: dict[str, Any] = {"selectors": []}
    if resource is not None:
        spec["extendedResourceName"] = resource
    return {"metadata": {"name": name, "creationTimestamp": created}, "spec": spec}


@dataclass
class _Handle:
    objects: ObjectStore = field(default_factory=ObjectStore)


def handle_with(*classes: dict[str, Any]) -> Handle:
    h = _Handle()
    for cls in classes:
        h.objects.apply(listers.DEVICE_CLASS, ADDED, cls)
    return cast(Handle, h)


@pytest.mark.parametrize(
    ("name", "want"),
    [
        pytest.param(GPU, True, id="extended resource"),
        pytest.param("deviceclass.resource.kubernetes.io/gpu", True, id="implicit class name"),
        pytest.param("nvidia.com/gpu", True, id="any extended name"),
        pytest.param("cpu", False, id="native resource"),
        pytest.param("hugepages-2Mi", False, id="hugepages"),
        pytest.param("example.kubernetes.io/gpu", False, id="kubernetes.io domain"),
    ],
)
def test_dra_extended_resource_name(name: str, want: bool) -> None:
    assert is_dra_extended_resource_name(name) is want


@pytest.mark.parametrize(
    ("classes", "resource", "want"),
    [
        pytest.param([device_class("gpu")], GPU, None, id="no explicit name"),
        pytest.param(
            [device_class("gpu")], "deviceclass.resource.kubernetes.io/gpu", "gpu", id="implicit"
        ),
        pytest.param([device_class("gpu", GPU)], GPU, "gpu", id="explicit"),
        pytest.param(
            [
                device_class("old", GPU, "2026-01-01T00:00:00Z"),
                device_class("new", GPU, "2026-02-01T00:00:00Z"),
            ],
            GPU,
            "new",
            id="the newer class wins a clash",
        ),
        pytest.param(
            [device_class("b", GPU), device_class("a", GPU)],
            GPU,
            "a",
            id="the lower name wins a tie",
        ),
        pytest.param(
            [device_class("new", GPU, "2026-02-01T00:00:00Z"), device_class("old", GPU)],
            "deviceclass.resource.kubernetes.io/old",
            "old",
            id="the loser keeps its implicit name",
        ),
    ],
)
def test_class_mapping(classes: list[dict[str, Any]], resource: str, want: str | None) -> None:
    found = class_mapping(classes).get(resource)
    assert (found["metadata"]["name"] if found is not None else None) == want


def test_resolver_follows_the_informers() -> None:
    h = handle_with()
    resolver = DeviceClassResolver(h.objects)
    assert resolver.get(GPU) is None
    assert h.objects is not None
    cast(ObjectStore, h.objects).apply(listers.DEVICE_CLASS, ADDED, device_class("gpu", GPU))
    found = resolver.get(GPU)
    assert found is not None
    assert found["metadata"]["name"] == "gpu"
    assert resolver.backs_any({GPU: 1, "cpu": 100})
    assert not resolver.backs_any({GPU: 0})
    assert not DeviceClassResolver(None).backs_any({GPU: 1})


GPU_POD = pod("p", containers=[container(**{GPU: "2"})])


@pytest.mark.parametrize(
    ("classes", "node_json", "want"),
    [
        pytest.param(
            (),
            node("n"),
            Status(UUR, (f"Insufficient {GPU}",)),
            id="no class: the classic shortage",
        ),
        pytest.param((device_class("gpu", GPU),), node("n"), None, id="backed by DRA: left to DRA"),
        pytest.param(
            (device_class("gpu", GPU),),
            node("n", extra={GPU: "0"}),
            None,
            id="allocatable 0 counts as not advertised",
        ),
        pytest.param(
            (device_class("gpu", GPU),),
            node("n", extra={GPU: "1"}),
            Status(UUR, (f"Insufficient {GPU}",)),
            id="a node advertising it is checked the classic way",
        ),
        pytest.param(
            (device_class("gpu", GPU),),
            node("n", extra={GPU: "4"}),
            None,
            id="a node advertising enough fits",
        ),
        pytest.param(
            (device_class("gpu"),),
            node("n"),
            Status(UUR, (f"Insufficient {GPU}",)),
            id="only the implicit name is backed",
        ),
    ],
)
def test_filter_leaves_dra_backed_resources_to_dra(
    classes: tuple[dict[str, Any], ...], node_json: Any, want: Status | None
) -> None:
    plugin = node_resources_fit.new(None, handle_with(*classes))
    snapshot = snapshot_of([node_json])
    p = pod_from_json(GPU_POD)
    assert plugin.filter(CycleState(), p, snapshot.node_info(0)) == want
    verdict = plugin.filter_batch(CycleState(), p, snapshot)
    assert bool(verdict.passed[0]) is (want is None)
    if want is not None:
        assert verdict.reasons is not None
        assert verdict.describe(int(verdict.reasons[0])) == want


def test_batch_mixes_advertising_and_dra_nodes() -> None:
    plugin = node_resources_fit.new(None, handle_with(device_class("gpu", GPU)))
    nodes = [node("dra"), node("small", extra={GPU: "1"}), node("big", extra={GPU: "2"})]
    snapshot = snapshot_of(nodes)
    verdict = plugin.filter_batch(CycleState(), pod_from_json(GPU_POD), snapshot)
    assert np.array_equal(verdict.passed[:3], [True, False, True])


@pytest.mark.parametrize(
    ("old", "new", "want"),
    [
        pytest.param(None, device_class("gpu", GPU), QueueingHint.QUEUE, id="added, explicit"),
        pytest.param(
            None,
            device_class("tpu", "example.com/tpu"),
            QueueingHint.QUEUE_SKIP,
            id="added, another resource",
        ),
        pytest.param(None, device_class("gpu"), QueueingHint.QUEUE_SKIP, id="added, no name"),
        pytest.param(
            device_class("gpu"), device_class("gpu", GPU), QueueingHint.QUEUE, id="name set"
        ),
        pytest.param(
            device_class("gpu", GPU),
            device_class("gpu", GPU),
            QueueingHint.QUEUE_SKIP,
            id="same name",
        ),
    ],
)
def test_device_class_hint(
    old: dict[str, Any] | None, new: dict[str, Any], want: QueueingHint
) -> None:
    plugin = node_resources_fit.new(None, handle_with())
    assert plugin.hint_device_class(pod_from_json(GPU_POD), old, new) == want


def test_device_class_hint_implicit_name_on_add() -> None:
    plugin = node_resources_fit.new(None, handle_with())
    implicit = pod("p", containers=[container(**{"deviceclass.resource.kubernetes.io/gpu": "1"})])
    hint = plugin.hint_device_class(pod_from_json(implicit), None, device_class("gpu"))
    assert hint == QueueingHint.QUEUE
