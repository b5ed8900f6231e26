"""corral.testing's FakeHandle and builders, as a plugin author uses them."""

from __future__ import annotations

import pytest

from corral.scheduler.framework.cycle_state import CycleState
from corral.scheduler.plugins import inter_pod_affinity, node_affinity
from corral.testing.builders import node, pod, pod_info, snapshot_of
from corral.testing.framework import FakeHandle


def test_objects_are_filed_under_their_kind() -> None:
    handle = FakeHandle({"kind": "Namespace", "metadata": {"name": "prod"}})
    handle.add({"kind": "Service", "metadata": {"name": "s", "namespace": "prod"}})
    assert handle.objects.get("Namespace", "", "prod") == {
        "kind": "Namespace",
        "metadata": {"name": "prod"},
    }
    assert [s["metadata"]["name"] for s in handle.objects.list("Service", "prod")] == ["s"]


def test_an_object_without_a_kind_is_refused() -> None:
    with pytest.raises(KeyError, match="kind"):
        FakeHandle({"metadata": {"name": "x"}})


def test_a_plugin_runs_on_a_fake_handle_and_built_objects() -> None:
    plugin = node_affinity.new(None, FakeHandle())
    snapshot = snapshot_of([node("a", labels={"zone": "1"}), node("b")], [pod("running")])
    wanted = pod_info("p", node_selector={"zone": "1"})
    state = CycleState()
    _, status = plugin.pre_filter(state, wanted, snapshot)
    assert status is None
    verdicts = [plugin.filter(state, wanted, snapshot.node_info(i)) for i in range(2)]
    assert [v is None for v in verdicts] == [True, False]


def test_the_fake_has_no_waiting_pods_and_no_extensions() -> None:
    handle = FakeHandle()
    assert handle.get_waiting_pod("uid") is None
    assert list(handle.iterate_waiting_pods()) == []
    assert handle.reject_waiting_pod("uid") is False
    assert handle.has_pre_filter_extensions(CycleState()) is False
    assert handle.snapshot() is None
    assert inter_pod_affinity.new(None, handle).name == inter_pod_affinity.NAME
