"""``types.on_node`` is ``dataclasses.replace(pod, node_name=...)``: every field the same object,
only the node set (the cache's and the pod-group fork's assume use it)."""

from __future__ import annotations

import dataclasses

import pytest

from corral.scheduler.framework import types
from corral.testing.builders import pod_info


@pytest.mark.parametrize(
    "pod",
    [
        pytest.param(pod_info("plain"), id="plain"),
        pytest.param(pod_info("requests", cpu="100m", memory="1Gi", priority=7,
                              labels={"app": "a"}, node_selector={"zone": "z"}),
                     id="requests-labels-selector"),
        pytest.param(pod_info("bound", node_name="old"), id="already-on-a-node"),
        pytest.param(pod_info("tolerating", tolerations=[{"key": "k", "operator": "Exists"}]),
                     id="tolerations"),
    ],
)  # fmt: skip
def test_on_node_is_replace_of_the_node_name(pod: types.PodInfo) -> None:
    mine, theirs = types.on_node(pod, "n1"), dataclasses.replace(pod, node_name="n1")
    assert type(mine) is types.PodInfo
    for f in dataclasses.fields(types.PodInfo):
        if f.name == "node_name":
            assert mine.node_name == theirs.node_name == "n1"
        else:
            assert getattr(mine, f.name) is getattr(theirs, f.name), f.name
    assert pod.node_name != "n1"  # the original is left as it was


def test_pod_info_is_a_plain_record() -> None:
    """What on_node relies on: no field computed at construction."""
    assert not hasattr(types.PodInfo, "__post_init__")
    assert all(f.init for f in dataclasses.fields(types.PodInfo))
