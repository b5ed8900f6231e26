"""Upstream validation of KubeSchedulerConfiguration v1, reported with field paths."""

from __future__ import annotations

from typing import Any

import pytest

from corral.scheduler.config import (
    KubeSchedulerProfile,
    Plugin,
    Plugins,
    PluginSet,
    ValidationError,
    load_config,
    parse_duration,
)
from corral.scheduler.config.defaults import enabled_plugin_names
from corral.scheduler.config.errors import FieldPath
from corral.scheduler.config.validation import validate_profile


def config(**extra: Any) -> dict[str, Any]:
    return {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        **extra,
    }


def args_of(name: str, args: dict[str, Any]) -> dict[str, Any]:
    return config(profiles=[{"schedulerName": "s", "pluginConfig": [{"name": name, "args": args}]}])


@pytest.mark.parametrize(
    ("data", "path", "fragment"),
    [
        pytest.param(
            config(apiVersion="v1"), "apiVersion", 'must be "kubescheduler', id="apiVersion"
        ),
        pytest.param(config(parallelism=0), "parallelism", "greater than zero", id="parallelism"),
        pytest.param(
            config(clientConnection={"qps": 1e-40}),
            "clientConnection.qps",
            "1e-40: must be at least 0.01 (one request per 100s), or 0 or less for no limit",
            id="a qps that would sleep for ever",
        ),
        pytest.param(
            config(clientConnection={"qps": 1e39}),
            "clientConnection.qps",
            "1e+39 does not fit in a 32-bit float",
            id="qps past float32",
        ),
        pytest.param(
            config(parallelism=10**400),
            "parallelism",
            "100000000000...000000 (401 digits) does not fit in a 32-bit integer",
            id="a 401-digit integer",
        ),
        pytest.param(
            config(podMaxBackoffSeconds=2**63),
            "podMaxBackoffSeconds",
            "9223372036854775808 does not fit in a 64-bit integer",
            id="int64 + 1",
        ),
        pytest.param(
            config(parallelism=True),
            "parallelism",
            "must be an integer, got boolean",
            id="bool is not int",
        ),
        pytest.param(
            config(percentageOfNodesToScore=101),
            "percentageOfNodesToScore",
            "[0-100]",
            id="percentage",
        ),
        pytest.param(
            config(podInitialBackoffSeconds=0),
            "podInitialBackoffSeconds",
            "greater than 0",
            id="initial backoff",
        ),
        pytest.param(
            config(podInitialBackoffSeconds=5, podMaxBackoffSeconds=4),
            "podMaxBackoffSeconds",
            "greater than or equal",
            id="max backoff",
        ),
        pytest.param(
            config(leaderElection={"leaseDuration": "5s"}),
            "leaderElection.leaseDuration",
            "greater than renewDeadline",
            id="lease vs renew",
        ),
        pytest.param(
            config(leaderElection={"resourceLock": "endpoints"}),
            "leaderElection.resourceLock",
            '"leases"',
            id="resource lock",
        ),
        pytest.param(
            config(leaderElection={"retryPeriod": "two seconds"}),
            "leaderElection.retryPeriod",
            "invalid duration",
            id="duration syntax",
        ),
        pytest.param(
            config(profiles=[{"schedulerName": "a"}, {"schedulerName": "a"}]),
            "profiles[1].schedulerName",
            "duplicate",
            id="duplicate profile",
        ),
        pytest.param(
            config(profiles=[{"schedulerName": "a"}, {}]),
            "profiles[1].schedulerName",
            "required",
            id="unnamed profile",
        ),
        pytest.param(
            config(
                profiles=[
                    {
                        "schedulerName": "a",
                        "plugins": {"filter": {"enabled": [{"name": "EBSLimits"}]}},
                    }
                ]
            ),
            "profiles[0].plugins.filter.enabled[0]",
            "was invalid",
            id="removed plugin",
        ),
        pytest.param(
            args_of("NodeResourcesFit", {"scoringStrategy": {"resources": [{"Name": "cpu"}]}}),
            "profiles[0].pluginConfig[0].args.scoringStrategy.resources[0].Name",
            "unknown field",
            id="args item with unknown fields is reported, not defaulted",
        ),
        pytest.param(
            config(
                profiles=[
                    {
                        "schedulerName": "s",
                        "plugins": {"podGroupPostFilter": {"enabled": [{"name": "GCEPDLimits"}]}},
                    }
                ]
            ),
            "profiles[0].plugins.podGroupPostFilter.enabled[0]",
            "was invalid",
            id="removed plugin at podGroupPostFilter (1.37)",
        ),
        pytest.param(
            config(
                profiles=[{"schedulerName": "a", "pluginConfig": [{"name": "X"}, {"name": "X"}]}]
            ),
            "profiles[0].pluginConfig[1]",
            "duplicate",
            id="duplicate pluginConfig",
        ),
        pytest.param(
            config(profiles=[{"schedulerName": "a", "surprise": 1}]),
            "profiles[0].surprise",
            "unknown field",
            id="unknown field",
        ),
        pytest.param(
            config(extenders=[{"urlPrefix": "http://x", "prioritizeVerb": "p"}]),
            "extenders[0].weight",
            "positive weight",
            id="extender weight",
        ),
        pytest.param(
            config(
                extenders=[
                    {"urlPrefix": "http://a", "bindVerb": "b"},
                    {"urlPrefix": "http://b", "bindVerb": "b"},
                ]
            ),
            "extenders",
            "only one may",
            id="two binders",
        ),
        pytest.param(
            config(extenders=[{"urlPrefix": "http://a", "managedResources": [{"name": "cpu"}]}]),
            "extenders[0].managedResources[0].name",
            "invalid extended resource",
            id="native resource",
        ),
        pytest.param(
            config(
                extenders=[
                    {
                        "urlPrefix": "http://a",
                        "managedResources": [{"name": "x.io/g"}, {"name": "x.io/g"}],
                    }
                ]
            ),
            "extenders[0].managedResources[1].name",
            "duplicate",
            id="duplicate managed",
        ),
        pytest.param(
            config(extenders=[{"urlPrefix": "http://[::1/x", "filterVerb": "f"}]),
            "extenders[0].urlPrefix",
            '"http://[::1/x": is not a valid URL (Invalid IPv6 URL)',
            id="a bracketed IPv6 URL left open",
        ),
        pytest.param(
            config(extenders=[{"urlPrefix": "http://e:99999", "filterVerb": "f"}]),
            "extenders[0].urlPrefix",
            "is not a valid URL (Port out of range 0-65535)",
            id="a port past 65535",
        ),
        pytest.param(
            config(extenders=[{"urlPrefix": "http://e:port", "filterVerb": "f"}]),
            "extenders[0].urlPrefix",
            "is not a valid URL",
            id="a port that is a word",
        ),
        pytest.param(
            config(extenders=[{"urlPrefix": "gopher://e", "filterVerb": "f"}]),
            "extenders[0].urlPrefix",
            "must be an http:// or https:// URL",
            id="scheme",
        ),
        pytest.param(
            config(extenders=[{"urlPrefix": "http:///x", "filterVerb": "f"}]),
            "extenders[0].urlPrefix",
            "must name a host",
            id="no host",
        ),
        pytest.param(
            config(extenders=[{"urlPrefix": "http://e/x?watch=1", "filterVerb": "f"}]),
            "extenders[0].urlPrefix",
            '"http://e/x?***": must not carry a query or a fragment',
            id="a query",
        ),
        pytest.param(
            config(extenders=[{"urlPrefix": "http://e/x y", "filterVerb": "f"}]),
            "extenders[0].urlPrefix",
            "must not contain spaces",
            id="a space",
        ),
        pytest.param(
            config(extenders=[{"urlPrefix": "https://u:s3cr3t@e", "filterVerb": "f"}]),
            "extenders[0].urlPrefix",
            '"https://***@e": must not carry credentials (user:password@)',
            id="credentials in the URL, not echoed",
        ),
        pytest.param(
            config(extenders=[{"urlPrefix": "http://e", "filterVerb": "../.."}]),
            "extenders[0].filterVerb",
            '"../..": must be one path segment',
            id="a verb climbing the path",
        ),
        pytest.param(
            config(extenders=[{"urlPrefix": "http://e", "bindVerb": "bind?watch=1"}]),
            "extenders[0].bindVerb",
            '"bind?watch=1": must be one path segment',
            id="a verb with a query",
        ),
        pytest.param(
            config(extenders=[{"urlPrefix": "http://e", "preemptVerb": ".."}]),
            "extenders[0].preemptVerb",
            "must be one path segment",
            id="verb ..",
        ),
        pytest.param(
            config(extenders=[{"urlPrefix": "http://e", "prioritizeVerb": "a/b", "weight": 1}]),
            "extenders[0].prioritizeVerb",
            "must be one path segment",
            id="verb a/b",
        ),
        pytest.param(
            config(extenders=[{"urlPrefix": "https://a", "tlsConfig": {"certFile": "/c"}}]),
            "extenders[0].tlsConfig",
            "a client certificate needs both a cert and a key",
            id="a certificate without its key (the engine would not start)",
        ),
        pytest.param(
            config(
                extenders=[
                    {"urlPrefix": "https://a", "tlsConfig": {"insecure": True, "caFile": "/ca"}}
                ]
            ),
            "extenders[0].tlsConfig.insecure",
            "specifying a root certificates file with the insecure flag is not allowed",
            id="insecure with a CA (the engine would not start)",
        ),
        pytest.param(
            config(extenders=[{"urlPrefix": "https://a", "tlsConfig": {"caData": "-----BEGIN"}}]),
            "extenders[0].tlsConfig.caData",
            "illegal base64 data",
            id="caData not base64",
        ),
        pytest.param(
            args_of(
                "DefaultPreemption",
                {"minCandidateNodesPercentage": 0, "minCandidateNodesAbsolute": 0},
            ),
            "profiles[0].pluginConfig[0].args.minCandidateNodesPercentage",
            "cannot be zero",
            id="preemption both zero",
        ),
        pytest.param(
            args_of("DefaultPreemption", {"minCandidateNodesPercentage": 101}),
            "profiles[0].pluginConfig[0].args.minCandidateNodesPercentage",
            "[0, 100]",
            id="preemption percentage",
        ),
        pytest.param(
            args_of("InterPodAffinity", {"hardPodAffinityWeight": 101}),
            "profiles[0].pluginConfig[0].args.hardPodAffinityWeight",
            "[0, 100]",
            id="hard affinity weight",
        ),
        pytest.param(
            args_of(
                "NodeResourcesBalancedAllocation", {"resources": [{"name": "cpu", "weight": 2}]}
            ),
            "profiles[0].pluginConfig[0].args.resources[0].weight",
            "must be 1",
            id="balanced weight",
        ),
        pytest.param(
            args_of("NodeResourcesFit", {"scoringStrategy": {"type": "Best"}}),
            "profiles[0].pluginConfig[0].args.scoringStrategy.type",
            "supported values",
            id="fit strategy",
        ),
        pytest.param(
            args_of(
                "NodeResourcesFit",
                {
                    "scoringStrategy": {
                        "type": "MostAllocated",
                        "resources": [{"name": "cpu", "weight": 101}],
                    }
                },
            ),
            "profiles[0].pluginConfig[0].args.scoringStrategy.resources[0].weight",
            "(0, 100]",
            id="fit resource weight",
        ),
        pytest.param(
            args_of("NodeResourcesFit", {"scoringStrategy": {"type": "RequestedToCapacityRatio"}}),
            "profiles[0].pluginConfig[0].args.scoringStrategy.requestedToCapacityRatio",
            "must be specified",
            id="ratio needs shape",
        ),
        pytest.param(
            args_of(
                "NodeResourcesFit",
                {
                    "scoringStrategy": {
                        "type": "RequestedToCapacityRatio",
                        "requestedToCapacityRatio": {
                            "shape": [
                                {"utilization": 50, "score": 1},
                                {"utilization": 40, "score": 11},
                            ]
                        },
                    }
                },
            ),
            "profiles[0].pluginConfig[0].args.scoringStrategy.requestedToCapacityRatio.shape[1].utilization",
            "increasing",
            id="shape order",
        ),
        pytest.param(
            args_of("NodeResourcesFit", {"ignoredResourceGroups": ["a/b"]}),
            "profiles[0].pluginConfig[0].args.ignoredResourceGroups[0]",
            "can't contain '/'",
            id="resource group",
        ),
        pytest.param(
            args_of(
                "PodTopologySpread",
                {
                    "defaultConstraints": [
                        {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"}
                    ]
                },
            ),
            "profiles[0].pluginConfig[0].args.defaultingType",
            '"List"',
            id="system with constraints",
        ),
        pytest.param(
            args_of(
                "PodTopologySpread",
                {
                    "defaultingType": "List",
                    "defaultConstraints": [
                        {"maxSkew": 0, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"}
                    ],
                },
            ),
            "profiles[0].pluginConfig[0].args.defaultConstraints[0].maxSkew",
            "(0, inf)",
            id="max skew",
        ),
        pytest.param(
            args_of("VolumeBinding", {"bindTimeoutSeconds": -1}),
            "profiles[0].pluginConfig[0].args.bindTimeoutSeconds",
            "negative",
            id="bind timeout",
        ),
        pytest.param(
            args_of(
                "VolumeBinding",
                {"shape": [{"utilization": 50, "score": 1}, {"utilization": 10, "score": 2}]},
            ),
            "profiles[0].pluginConfig[0].args.shape[1].utilization",
            "10: values must be sorted in increasing order",
            id="shape unsorted",
        ),
        pytest.param(
            args_of(
                "NodeAffinity",
                {
                    "addedAffinity": {
                        "requiredDuringSchedulingIgnoredDuringExecution": {
                            "nodeSelectorTerms": [
                                {"matchExpressions": [{"key": "a", "operator": "In"}]}
                            ]
                        }
                    }
                },
            ),
            "profiles[0].pluginConfig[0].args.addedAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].values",
            "must be specified",
            id="affinity values",
        ),
        pytest.param(
            args_of("NodeAffinity", {"kind": "FitArgs"}),
            "profiles[0].pluginConfig[0].args.kind",
            '"NodeAffinityArgs"',
            id="args kind",
        ),
        pytest.param(
            args_of("CheckPodCountLimit", {}),
            "profiles[0].pluginConfig[0].args.podCountLimit",
            "required",
            id="pod count limit required",
        ),
        pytest.param(
            args_of("CheckPodLimitResources", {"limitRatio": {"cpu": 0}}),
            "profiles[0].pluginConfig[0].args.limitRatio[cpu]",
            "greater than 0",
            id="limit ratio",
        ),
    ],
)
def test_invalid_config_reports_path(data: dict[str, Any], path: str, fragment: str) -> None:
    with pytest.raises(ValidationError) as info:
        load_config(data)
    found = [e for e in info.value.errors if e.path == path]
    assert found, [str(e) for e in info.value.errors]
    assert any(fragment in e.message for e in found), [str(e) for e in found]


def test_yaml_syntax_error_has_position() -> None:
    with pytest.raises(ValidationError) as info:
        load_config("apiVersion: [unclosed\n")
    assert info.value.errors[0].path.startswith("line ")


def test_hand_written_config_loads() -> None:
    cfg = load_config(
        """
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
leaderElection: {leaderElect: false}
profiles:
- schedulerName: bin-packing
  pluginConfig:
  - name: NodeResourcesFit
    args:
      kind: NodeResourcesFitArgs
      apiVersion: kubescheduler.config.k8s.io/v1
      scoringStrategy: {type: MostAllocated}
"""
    )
    assert cfg.profiles[0].scheduler_name == "bin-packing"


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        pytest.param("15s", 15.0, id="seconds"),
        pytest.param("1m30s", 90.0, id="compound"),
        pytest.param("1.5h", 5400.0, id="fraction"),
        pytest.param("300ms", 0.3, id="millis"),
        pytest.param("0", 0.0, id="bare zero"),
    ],
)
def test_parse_duration(text: str, seconds: float) -> None:
    assert parse_duration(text) == pytest.approx(seconds)


@pytest.mark.parametrize("text", ["", "15", "s", "1 s", "1d"])
def test_parse_duration_rejects(text: str) -> None:
    with pytest.raises(ValueError, match="invalid duration"):
        parse_duration(text)


def test_pod_group_points_quirks_as_upstream() -> None:
    """validation.go checks removed plugins at podGroupPostFilter but not at the placement
    points; defaults.go's pluginsNames gives default args to no plugin enabled only at
    podGroupPostFilter."""
    removed = PluginSet(enabled=[Plugin("EBSLimits")])
    profile = KubeSchedulerProfile("s", plugins=Plugins(placement_score=removed))
    assert validate_profile(FieldPath(), profile) == []
    plugins = Plugins(pod_group_post_filter=PluginSet(enabled=[Plugin("DefaultPreemption")]))
    assert enabled_plugin_names(plugins) == []


def test_null_leaves_a_field_at_its_default_as_go_does() -> None:
    """scheme_test.go "empty and no plugin args": ``args:`` with no value is accepted."""
    cfg = load_config(
        config(profiles=[{"pluginConfig": [{"name": "DefaultPreemption", "args": None}]}])
    )
    (pc,) = [pc for pc in cfg.profiles[0].plugin_config if pc.name == "DefaultPreemption"]
    assert pc.args["minCandidateNodesAbsolute"] == 100


def test_extender_url_prefix_is_optional_as_upstream() -> None:
    cfg = load_config(config(extenders=[{"prioritizeVerb": "prioritize", "weight": 1}]))
    assert cfg.extenders[0].url_prefix == ""
