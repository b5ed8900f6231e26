"""NodeLabelBonus's tests, as a plugin's author writes them, with ``corral.testing``:

- the plugin alone, over a snapshot of nodes from ``corral.testing.builders`` and a
  ``corral.testing.framework.FakeHandle``;
- through the engine that ``corral simulate`` runs (the real framework, queue and cache), with
  the plugin found through its ``corral.plugins`` entry point as a scheduler finds it:
  ``pip install`` the plugin (or put it on ``PYTHONPATH``) first.

End to end on a real control plane, ``corral.testing``'s pytest plugin gives ``cluster``,
``kube`` and ``fake_nodes`` fixtures (docs/plugins/writing.md).
"""

from __future__ import annotations

from typing import Any

import corral_plugin_example as bonus
import pytest

from corral.scheduler.config import ValidationError
from corral.scheduler.engine.frameworks import load_engine_config
from corral.scheduler.engine.simulate import SimulatedEngine, Simulator
from corral.scheduler.framework import CycleState
from corral.testing.builders import node, pod, pod_info, snapshot_of
from corral.testing.framework import FakeHandle


def test_the_plugin_scores_the_labelled_node() -> None:
    plugin = bonus.new(bonus.Args(label_key="disk", label_value="ssd"), FakeHandle())
    snapshot = snapshot_of([node("fast", labels={"disk": "ssd"}), node("slow")])
    scores = {
        snapshot.names[slot]: plugin.score(CycleState(), pod_info("p"), snapshot.node_info(slot))[0]
        for slot in snapshot.order.tolist()
    }
    assert scores == {"fast": 100, "slow": 0}


def config(args: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [{
            "schedulerName": "bonus",
            "plugins": {"score": {"enabled": [{"name": "NodeLabelBonus", "weight": 10}]}},
            "pluginConfig": [{"name": "NodeLabelBonus", "args": args}],
        }],
    }  # fmt: skip


def place(args: dict[str, Any], nodes: list[dict[str, Any]]) -> str | None:
    simulator = Simulator([SimulatedEngine("test", load_engine_config(config(args)))])
    for raw in nodes:
        simulator.add_node(raw)
    incoming = pod("p")
    incoming["spec"]["schedulerName"] = "bonus"
    return simulator.schedule(incoming).node


@pytest.mark.parametrize(
    ("args", "want"),
    [
        pytest.param({"labelKey": "disk", "labelValue": "ssd"}, "small-ssd", id="the label wins"),
        pytest.param({"labelKey": "disk", "labelValue": "nvme"}, "big", id="no node has it"),
    ],
)
def test_the_labelled_node_wins_over_an_emptier_one(args: dict[str, Any], want: str) -> None:
    nodes = [node("small-ssd", cpu="2", labels={"disk": "ssd"}), node("big", cpu="64")]
    assert place(args, nodes) == want


def test_missing_label_key_is_refused_with_its_field() -> None:
    with pytest.raises(ValidationError) as refused:
        load_engine_config(config({"labelValue": "ssd"}))
    assert [str(e) for e in refused.value.errors] == [
        "profiles[0].pluginConfig[0].args.labelKey: required: the node label to look at"
    ]
