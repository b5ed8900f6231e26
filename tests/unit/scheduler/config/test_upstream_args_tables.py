"""Every args block upstream accepts, Corral accepts, and defaults the same way.

The rows are upstream's own tables for v1.36.3 (``pkg/scheduler/apis/config``):
``v1/defaults_test.go`` ``TestPluginArgsDefaults`` (input -> defaulted args, with the feature
gates at their 1.36 defaults) and the accepted rows of
``validation/validation_pluginargs_test.go``, written as the v1 JSON a user would write. Each
block goes through both doors: a KubeSchedulerConfiguration (``corral scheduler``) and a
SchedulerProfile's ``spec.pluginConfig`` (``corral validate``, the webhook).
"""

from __future__ import annotations

from typing import Any

import pytest

from corral.api import check_profile
from corral.scheduler.config import load_config

_CPU_MEMORY = [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}]
_NODE_AFFINITY = {
    "requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [
            {"matchExpressions": [{"key": "label-1", "operator": "In", "values": ["label-1-val"]}]}
        ]
    },
    "preferredDuringSchedulingIgnoredDuringExecution": [
        {
            "weight": 1,
            "preference": {
                "matchFields": [{"key": "metadata.name", "operator": "In", "values": ["node-1"]}]
            },
        }
    ],
}
_DEFAULT_SHAPE = [{"utilization": 30, "score": 3}]

# TestPluginArgsDefaults: (plugin, args in, args defaulted).
DEFAULTS = [
    pytest.param(
        "DefaultPreemption",
        {},
        {"minCandidateNodesPercentage": 10, "minCandidateNodesAbsolute": 100},
        id="DefaultPreemptionArgs empty",
    ),
    pytest.param(
        "DefaultPreemption",
        {"minCandidateNodesPercentage": 50},
        {"minCandidateNodesPercentage": 50, "minCandidateNodesAbsolute": 100},
        id="DefaultPreemptionArgs with value",
    ),
    pytest.param(
        "InterPodAffinity",
        {},
        {"hardPodAffinityWeight": 1, "ignorePreferredTermsOfExistingPods": False},
        id="InterPodAffinityArgs empty",
    ),
    pytest.param(
        "InterPodAffinity",
        {"hardPodAffinityWeight": 0},
        {"hardPodAffinityWeight": 0, "ignorePreferredTermsOfExistingPods": False},
        id="InterPodAffinityArgs explicit 0",
    ),
    pytest.param(
        "InterPodAffinity",
        {"hardPodAffinityWeight": 5},
        {"hardPodAffinityWeight": 5, "ignorePreferredTermsOfExistingPods": False},
        id="InterPodAffinityArgs with value",
    ),
    pytest.param(
        "NodeResourcesBalancedAllocation",
        {},
        {"resources": _CPU_MEMORY},
        id="NodeResourcesBalancedAllocationArgs resources empty",
    ),
    pytest.param(
        "NodeResourcesBalancedAllocation",
        {"resources": [{"name": "scalar.io/scalar1", "weight": 1}]},
        {"resources": [{"name": "scalar.io/scalar1", "weight": 1}]},
        id="NodeResourcesBalancedAllocationArgs with scalar resource",
    ),
    pytest.param(
        "NodeResourcesBalancedAllocation",
        {"resources": [{"name": "cpu", "weight": 1}, {"name": "scalar.io/scalar1", "weight": 1}]},
        {"resources": [{"name": "cpu", "weight": 1}, {"name": "scalar.io/scalar1", "weight": 1}]},
        id="NodeResourcesBalancedAllocationArgs with mixed resources",
    ),
    pytest.param(
        "NodeResourcesBalancedAllocation",
        {
            "resources": [
                {"name": "cpu"},
                {"name": "scalar.io/scalar0"},
                {"name": "scalar.io/scalar1", "weight": 1},
            ]
        },
        {
            "resources": [
                {"name": "cpu", "weight": 1},
                {"name": "scalar.io/scalar0", "weight": 1},
                {"name": "scalar.io/scalar1", "weight": 1},
            ]
        },
        id="NodeResourcesBalancedAllocationArgs have resource no weight",
    ),
    pytest.param(
        "PodTopologySpread",
        {},
        {"defaultingType": "System"},
        id="PodTopologySpreadArgs resources empty",
    ),
    pytest.param(
        "PodTopologySpread",
        {
            "defaultConstraints": [
                {"topologyKey": "planet", "whenUnsatisfiable": "DoNotSchedule", "maxSkew": 2}
            ],
            # Upstream's row pairs these constraints with System defaulting; its validation then
            # refuses them ("when .defaultingType is System"), so the accepted form is List.
            "defaultingType": "List",
        },
        {
            "defaultConstraints": [
                {"topologyKey": "planet", "whenUnsatisfiable": "DoNotSchedule", "maxSkew": 2}
            ],
            "defaultingType": "List",
        },
        id="PodTopologySpreadArgs resources with value",
    ),
    pytest.param(
        "NodeResourcesFit",
        {},
        {"scoringStrategy": {"type": "LeastAllocated", "resources": _CPU_MEMORY}},
        id="NodeResourcesFitArgs not set",
    ),
    pytest.param(
        "NodeResourcesFit",
        {"scoringStrategy": {"type": "MostAllocated"}},
        {"scoringStrategy": {"type": "MostAllocated", "resources": _CPU_MEMORY}},
        id="NodeResourcesFitArgs Resources empty",
    ),
    pytest.param(
        "VolumeBinding",
        {},
        {
            "bindTimeoutSeconds": 600,
            "shape": [{"utilization": 0, "score": 10}, {"utilization": 100, "score": 0}],
        },
        id="VolumeBindingArgs empty, StorageCapacityScoring enabled",
    ),
    pytest.param(
        "DynamicResources",
        {},
        {"filterTimeout": "10s", "bindingTimeout": "10m0s"},
        id="DynamicResourcesArgs defaults, DRADeviceBindingConditions enabled",
    ),
]

# The accepted rows of validation_pluginargs_test.go: (plugin, args).
ACCEPTED = [
    pytest.param(
        "DefaultPreemption",
        {"minCandidateNodesPercentage": 10, "minCandidateNodesAbsolute": 100},
        id="DefaultPreemption valid args (default)",
    ),
    pytest.param("InterPodAffinity", {"hardPodAffinityWeight": 10}, id="InterPodAffinity valid"),
    pytest.param(
        "PodTopologySpread",
        {
            "defaultConstraints": [
                {"maxSkew": 1, "topologyKey": "node", "whenUnsatisfiable": "DoNotSchedule"},
                {"maxSkew": 2, "topologyKey": "zone", "whenUnsatisfiable": "ScheduleAnyway"},
            ],
            "defaultingType": "List",
        },
        id="PodTopologySpread valid config",
    ),
    pytest.param(
        "PodTopologySpread",
        {"defaultingType": "List"},
        id="PodTopologySpread list default constraints, no constraints",
    ),
    pytest.param(
        "PodTopologySpread",
        {"defaultingType": "System"},
        id="PodTopologySpread system default constraints",
    ),
    pytest.param(
        "NodeResourcesBalancedAllocation",
        {"resources": _CPU_MEMORY},
        id="NodeResourcesBalancedAllocation valid config",
    ),
    pytest.param("NodeAffinity", {}, id="NodeAffinity empty"),
    pytest.param(
        "NodeAffinity", {"addedAffinity": _NODE_AFFINITY}, id="NodeAffinity valid added affinity"
    ),
    pytest.param("VolumeBinding", {"bindTimeoutSeconds": 0}, id="VolumeBinding zero"),
    pytest.param("VolumeBinding", {"bindTimeoutSeconds": 10}, id="VolumeBinding positive"),
    pytest.param(
        "VolumeBinding",
        {"bindTimeoutSeconds": 10, "shape": None},
        id="VolumeBinding [StorageCapacityScoring=on] shape nil is defaulted",
    ),
    pytest.param(
        "VolumeBinding",
        {
            "bindTimeoutSeconds": 10,
            "shape": [{"utilization": 0, "score": 0}, {"utilization": 100, "score": 10}],
        },
        id="VolumeBinding [StorageCapacityScoring=on] positive value is valid config",
    ),
    pytest.param(
        "NodeResourcesFit",
        {"ignoredResources": ["example.com"]},
        id="NodeResourcesFit IgnoredResources valid args",
    ),
    pytest.param(
        "NodeResourcesFit",
        {"ignoredResourceGroups": ["example.com"]},
        id="NodeResourcesFit IgnoredResourceGroups valid args",
    ),
    pytest.param(
        "NodeResourcesFit",
        {"scoringStrategy": {"type": "LeastAllocated"}},
        id="LeastAllocated default config",
    ),
    pytest.param(
        "NodeResourcesFit",
        {
            "scoringStrategy": {
                "type": "LeastAllocated",
                "resources": [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 10}],
            }
        },
        id="LeastAllocated multi valid resources",
    ),
    pytest.param(
        "NodeResourcesFit",
        {"scoringStrategy": {"type": "MostAllocated"}},
        id="MostAllocated default config",
    ),
    pytest.param(
        "NodeResourcesFit",
        {
            "scoringStrategy": {
                "type": "MostAllocated",
                "resources": [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 10}],
            }
        },
        id="MostAllocated multi valid resources",
    ),
    pytest.param(
        "NodeResourcesFit",
        {
            "scoringStrategy": {
                "type": "RequestedToCapacityRatio",
                "requestedToCapacityRatio": {"shape": _DEFAULT_SHAPE},
            }
        },
        id="RequestedToCapacityRatio valid shapes",
    ),
    pytest.param(
        "DynamicResources",
        {"filterTimeout": "10s", "bindingTimeout": "10m0s"},
        id="DynamicResources valid args (default)",
    ),
    pytest.param("DynamicResources", {}, id="DynamicResources valid args (disabled)"),
    pytest.param(
        "DynamicResources", {"bindingTimeout": "30s"}, id="DynamicResources valid BindingTimeout"
    ),
]


def _scheduler_config(plugin: str, args: dict[str, Any]) -> dict[str, Any]:
    cfg = load_config(
        {
            "apiVersion": "kubescheduler.config.k8s.io/v1",
            "kind": "KubeSchedulerConfiguration",
            "profiles": [{"pluginConfig": [{"name": plugin, "args": args}]}],
        }
    )
    defaulted = next(pc.args for pc in cfg.profiles[0].plugin_config if pc.name == plugin)
    return {k: v for k, v in defaulted.items() if k not in ("apiVersion", "kind")}


def _profile_errors(plugin: str, args: dict[str, Any]) -> list[str]:
    _, errors = check_profile(
        {
            "apiVersion": "corral.dev/v1alpha1",
            "kind": "SchedulerProfile",
            "metadata": {"name": "upstream-args"},
            "spec": {"pluginConfig": [{"name": plugin, "args": args}]},
        }
    )
    return [str(e) for e in errors]


@pytest.mark.parametrize(("plugin", "args", "defaulted"), DEFAULTS)
def test_upstream_defaults_table(plugin: str, args: dict[str, Any], defaulted: Any) -> None:
    assert _scheduler_config(plugin, args) == defaulted
    assert _profile_errors(plugin, args) == []


@pytest.mark.parametrize(("plugin", "args"), ACCEPTED)
def test_upstream_accepted_args(plugin: str, args: dict[str, Any]) -> None:
    _scheduler_config(plugin, args)  # raises ValidationError if refused
    assert _profile_errors(plugin, args) == []
