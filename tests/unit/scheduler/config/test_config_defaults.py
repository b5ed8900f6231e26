"""Upstream defaulting: the plugin-set merge rules and default values and args."""

from __future__ import annotations

from typing import Any

import pytest

from corral.scheduler.config import (
    Plugin,
    PluginSet,
    dump_config,
    load_config,
    merge_plugin_set,
    typed_args,
)

DEFAULTS = PluginSet(enabled=[Plugin("A", 1), Plugin("B", 2), Plugin("C")])


def names(pset: PluginSet) -> list[tuple[str, int | None]]:
    return [(p.name, p.weight) for p in pset.enabled]


@pytest.mark.parametrize(
    ("custom", "want"),
    [
        pytest.param(PluginSet(), [("A", 1), ("B", 2), ("C", None)], id="no custom keeps defaults"),
        pytest.param(
            PluginSet(disabled=[Plugin("B")]),
            [("A", 1), ("C", None)],
            id="disabled default dropped",
        ),
        pytest.param(
            PluginSet(disabled=[Plugin("*")], enabled=[Plugin("X")]),
            [("X", None)],
            id="star drops every default",
        ),
        pytest.param(
            PluginSet(enabled=[Plugin("X"), Plugin("B", 7)]),
            [("A", 1), ("B", 7), ("C", None), ("X", None)],
            id="same name replaces in place with new weight, others appended",
        ),
        pytest.param(
            PluginSet(enabled=[Plugin("X"), Plugin("X")]),
            [("A", 1), ("B", 2), ("C", None), ("X", None), ("X", None)],
            id="duplicated custom entries are kept for the framework to reject",
        ),
    ],
)
def test_merge_plugin_set(custom: PluginSet, want: list[tuple[str, int | None]]) -> None:
    assert names(merge_plugin_set(DEFAULTS, custom)) == want


def minimal(**extra: Any) -> dict[str, Any]:
    return {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        **extra,
    }


def test_top_level_defaults_match_upstream() -> None:
    cfg = dump_config(load_config(minimal()))
    assert cfg["parallelism"] == 16
    assert cfg["percentageOfNodesToScore"] == 0
    assert cfg["podInitialBackoffSeconds"] == 1
    assert cfg["podMaxBackoffSeconds"] == 10
    assert cfg["enableProfiling"] is True
    assert cfg["enableContentionProfiling"] is True
    assert cfg["leaderElection"] == {
        "leaderElect": True,
        "leaseDuration": "15s",
        "renewDeadline": "10s",
        "retryPeriod": "2s",
        "resourceLock": "leases",
        "resourceName": "kube-scheduler",
        "resourceNamespace": "kube-system",
    }
    assert cfg["clientConnection"] == {
        "contentType": "application/vnd.kubernetes.protobuf",
        "qps": 50.0,
        "burst": 100,
    }
    (profile,) = cfg["profiles"]
    assert profile["schedulerName"] == "default-scheduler"
    multi = [(p["name"], p.get("weight")) for p in profile["plugins"]["multiPoint"]["enabled"]]
    assert multi[:8] == [
        ("SchedulingGates", None),
        ("PrioritySort", None),
        ("NodeName", None),
        ("NodeUnschedulable", None),
        ("TaintToleration", 3),
        ("NodeAffinity", 2),
        ("NodePorts", None),
        ("NodeResourcesFit", 1),
    ]
    assert multi[-4:] == [
        ("NodeResourcesBalancedAllocation", 1),
        ("ImageLocality", 1),
        ("DefaultBinder", None),
        ("NodeDeclaredFeatures", None),
    ]
    assert "EBSLimits" not in dict(multi)


def test_two_profiles_get_no_default_name() -> None:
    cfg = load_config(minimal(profiles=[{"schedulerName": "a"}, {"schedulerName": "b"}]))
    assert [p.scheduler_name for p in cfg.profiles] == ["a", "b"]


def test_default_args_are_appended_sorted_for_enabled_plugins() -> None:
    cfg = load_config(minimal(profiles=[{"schedulerName": "x"}]))
    (profile,) = cfg.profiles
    assert [pc.name for pc in profile.plugin_config] == [
        "DefaultPreemption",
        "DynamicResources",
        "InterPodAffinity",
        "NodeAffinity",
        "NodeResourcesBalancedAllocation",
        "NodeResourcesFit",
        "PodTopologySpread",
        "VolumeBinding",
    ]
    args = {pc.name: pc.args for pc in profile.plugin_config}
    assert args["DefaultPreemption"]["minCandidateNodesPercentage"] == 10
    assert args["DefaultPreemption"]["minCandidateNodesAbsolute"] == 100
    assert args["InterPodAffinity"]["hardPodAffinityWeight"] == 1
    assert args["PodTopologySpread"]["defaultingType"] == "System"
    assert args["VolumeBinding"]["bindTimeoutSeconds"] == 600
    # StorageCapacityScoring is on from 1.37.
    assert args["VolumeBinding"]["shape"] == [
        {"utilization": 0, "score": 10},
        {"utilization": 100, "score": 0},
    ]
    fit = typed_args("NodeResourcesFit", args["NodeResourcesFit"])
    assert fit.scoring_strategy.type == "LeastAllocated"
    assert [(r.name, r.weight) for r in fit.scoring_strategy.resources] == [
        ("cpu", 1),
        ("memory", 1),
    ]


def test_user_args_are_defaulted_in_place() -> None:
    cfg = load_config(
        minimal(
            profiles=[
                {
                    "schedulerName": "x",
                    "pluginConfig": [
                        {
                            "name": "NodeResourcesFit",
                            "args": {
                                "scoringStrategy": {
                                    "type": "MostAllocated",
                                    "resources": [{"name": "cpu"}, {"name": "gpu", "weight": 3}],
                                }
                            },
                        }
                    ],
                }
            ]
        )
    )
    first = cfg.profiles[0].plugin_config[0]
    assert first.name == "NodeResourcesFit"
    fit = typed_args("NodeResourcesFit", first.args)
    assert fit.scoring_strategy.type == "MostAllocated"
    assert [(r.name, r.weight) for r in fit.scoring_strategy.resources] == [("cpu", 1), ("gpu", 3)]
