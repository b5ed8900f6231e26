"""SchedulerProfile parsing, defaulting and validation with field paths."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from corral.api import apply_defaults, check_profile, load_profile, scheduler_config_data
from corral.api.parse import parse_profile


def profile(spec: dict[str, Any] | None = None, name: str = "team-a") -> dict[str, Any]:
    return {
        "apiVersion": "corral.dev/v1alpha1",
        "kind": "SchedulerProfile",
        "metadata": {"name": name},
        "spec": spec or {},
    }


def test_defaults() -> None:
    p = load_profile(profile())
    s = p.spec
    assert (s.scheduler_name, s.namespace, s.replicas, s.log_level) == (
        "team-a",
        "corral-system",
        2,
        "Normal",
    )
    le = s.leader_election
    assert le is not None
    assert (le.leader_elect, le.lease_duration, le.renew_deadline, le.retry_period) == (
        True,
        "15s",
        "10s",
        "2s",
    )
    assert le.resource_name == "team-a"


def test_defaulting_does_not_mutate_input() -> None:
    parsed, errs = parse_profile(profile())
    assert parsed is not None
    assert not errs
    before = copy.deepcopy(parsed)
    apply_defaults(parsed)
    assert parsed == before


def test_server_metadata_and_status_are_ignored() -> None:
    data = profile()
    data["metadata"].update(resourceVersion="7", generation=3, managedFields=[{}], uid="u-1")
    data["status"] = {"conditions": []}
    assert load_profile(data).metadata.uid == "u-1"


def fit(args: dict[str, Any]) -> dict[str, Any]:
    return {"pluginConfig": [{"name": "NodeResourcesFit", "args": args}]}


@pytest.mark.parametrize(
    ("data", "path", "fragment"),
    [
        pytest.param(profile(name="Team_A"), "metadata.name", "DNS-1035", id="name syntax"),
        pytest.param(profile(name="a" * 41), "metadata.name", "no more than 40", id="name length"),
        pytest.param(
            {**profile(), "metadata": {"name": "team-a", "namespace": "team-a"}},
            "metadata.namespace",
            "'team-a': a SchedulerProfile is cluster-scoped and belongs to no namespace; "
            "spec.namespace says where its scheduler runs",
            id="metadata.namespace on a cluster-scoped kind",
        ),
        pytest.param(
            {**profile(), "apiVersion": "corral.dev/v1"},
            "apiVersion",
            '"corral.dev/v1alpha1"',
            id="apiVersion",
        ),
        pytest.param(
            profile({"schedulerName": "default-scheduler"}),
            "spec.schedulerName",
            "reserved",
            id="default-scheduler",
        ),
        pytest.param(profile({"replicas": 0}), "spec.replicas", "at least 1", id="replicas"),
        pytest.param(
            profile({"replicas": "2"}),
            "spec.replicas",
            "must be an integer, got string",
            id="replicas type",
        ),
        pytest.param(
            profile({"replicas": 3, "leaderElection": {"leaderElect": False}}),
            "spec.leaderElection.leaderElect",
            "must be true when replicas is 3",
            id="ha needs election",
        ),
        pytest.param(
            profile({"leaderElection": {"leaseDuration": "10s"}}),
            "spec.leaderElection.leaseDuration",
            "greater than renewDeadline",
            id="lease vs renew",
        ),
        pytest.param(
            profile({"leaderElection": {"renewDeadline": "2s", "leaseDuration": "15s"}}),
            "spec.leaderElection.renewDeadline",
            "1.2 x retryPeriod",
            id="renew vs retry",
        ),
        pytest.param(
            profile({"leaderElection": {"leaseDuration": "fifteen"}}),
            "spec.leaderElection.leaseDuration",
            "invalid duration",
            id="duration syntax",
        ),
        pytest.param(
            profile({"logLevel": "Verbose"}),
            "spec.logLevel",
            '"Normal", "Debug", "Trace"',
            id="log level",
        ),
        pytest.param(
            profile({"percentageOfNodesToScore": 101}),
            "spec.percentageOfNodesToScore",
            "between 0 and 100",
            id="percentage",
        ),
        pytest.param(
            profile({"podInitialBackoffSeconds": 20}),
            "spec.podMaxBackoffSeconds",
            "at least podInitialBackoffSeconds",
            id="backoff order",
        ),
        pytest.param(
            profile({"plugins": {"filter": {"enabled": [{"name": "NodeResourceFit"}]}}}),
            "spec.plugins.filter.enabled[0].name",
            'unknown plugin "NodeResourceFit"; did you mean "NodeResourcesFit"?',
            id="did you mean",
        ),
        pytest.param(
            profile({"plugins": {"filter": {"enabled": [{"name": "ImageLocality"}]}}}),
            "spec.plugins.filter.enabled[0].name",
            "does not extend filter; it extends: score",
            id="wrong extension point",
        ),
        pytest.param(
            profile(
                {"plugins": {"score": {"enabled": [{"name": "ImageLocality", "weight": 101}]}}}
            ),
            "spec.plugins.score.enabled[0].weight",
            "between 0 and 100",
            id="weight range",
        ),
        pytest.param(
            profile({"plugins": {"queueSort": {"disabled": [{"name": "*"}]}}}),
            "spec.plugins.queueSort",
            "exactly one queue sort",
            id="no queue sort",
        ),
        pytest.param(
            profile({"plugins": {"bogus": {}}}),
            "spec.plugins.bogus",
            "unknown field",
            id="unknown extension point",
        ),
        pytest.param(
            profile(fit({"scoringStrategy": {"type": "MostAllocated"}, "extra": 1})),
            "spec.pluginConfig[0].args.extra",
            "unknown field; allowed fields: ignoredResourceGroups, ignoredResources, "
            "scoringStrategy",
            id="unknown arg",
        ),
        pytest.param(
            profile(fit({"ignoredResources": "gpu"})),
            "spec.pluginConfig[0].args.ignoredResources",
            "must be a list, got string",
            id="arg type",
        ),
        pytest.param(
            profile(fit({"scoringStrategy": {"type": "Packed"}})),
            "spec.pluginConfig[0].args.scoringStrategy.type",
            "supported values",
            id="upstream arg rule",
        ),
        pytest.param(
            profile({"pluginConfig": [{"name": "NodeResourcesFitt", "args": {}}]}),
            "spec.pluginConfig[0].name",
            'did you mean "NodeResourcesFit"',
            id="unknown pluginConfig",
        ),
        pytest.param(
            profile({"pluginConfig": [{"name": "TenantSpread", "args": {}}]}),
            "spec.pluginConfig[0].name",
            "not enabled in this profile",
            id="config for disabled plugin",
        ),
        pytest.param(
            profile({"pluginConfig": [{"name": "ImageLocality", "args": {"x": 1}}]}),
            "spec.pluginConfig[0].args",
            "takes no args",
            id="args for argless plugin",
        ),
        pytest.param(
            profile(
                {
                    "plugins": {"filter": {"enabled": [{"name": "CheckPodCountLimit"}]}},
                    "pluginConfig": [{"name": "CheckPodCountLimit", "args": {"podCountLimit": 0}}],
                }
            ),
            "spec.pluginConfig[0].args.podCountLimit",
            "must be >= 1",
            id="corral plugin arg",
        ),
        pytest.param(
            profile({"extenders": [{"urlPrefix": "ftp://x", "filterVerb": "f"}]}),
            "spec.extenders[0].urlPrefix",
            "http:// or https://",
            id="extender url",
        ),
        pytest.param(
            profile({"extenders": [{"urlPrefix": "http://x"}]}),
            "spec.extenders[0]",
            "sets no verb",
            id="extender verbs",
        ),
        pytest.param(
            profile({"extenders": [{"urlPrefix": "http://x", "prioritizeVerb": "p"}]}),
            "spec.extenders[0].weight",
            "positive weight",
            id="extender weight",
        ),
        pytest.param(profile({"tenancy": {}}), "spec.tenancy", "sets nothing", id="empty tenancy"),
        pytest.param(
            profile({"tenancy": {"nodeSelector": {"pool": "a"}, "assignPods": True}}),
            "spec.tenancy.assignPods",
            "needs namespaces or namespaceSelector: it gives this scheduler to the pods created "
            "there",
            id="assignPods without namespaces",
        ),
        pytest.param(
            profile({"tenancy": {"namespaces": ["a", "a"]}}),
            "spec.tenancy.namespaces[1]",
            "duplicate",
            id="duplicate namespace",
        ),
        pytest.param(
            profile({"tenancy": {"namespaces": ["Team A"]}}),
            "spec.tenancy.namespaces[0]",
            "RFC 1123 label",
            id="namespace syntax",
        ),
        pytest.param(
            profile({"tenancy": {"nodeSelector": {"pool": "a b"}}}),
            "spec.tenancy.nodeSelector[pool]",
            "label value",
            id="node selector value",
        ),
        pytest.param(
            profile(
                {
                    "tenancy": {
                        "namespaceSelector": {"matchExpressions": [{"key": "t", "operator": "In"}]}
                    }
                }
            ),
            "spec.tenancy.namespaceSelector.matchExpressions[0].values",
            "required when operator is In",
            id="selector values",
        ),
        pytest.param(
            profile({"deployment": {"resources": {"requests": {"cpu": "lots"}}}}),
            "spec.deployment.resources.requests[cpu]",
            "quantity",
            id="quantity",
        ),
        pytest.param(
            profile({"deployment": {"tolerations": [{"operator": "Equal"}]}}),
            "spec.deployment.tolerations[0].operator",
            "must be Exists when key is empty",
            id="toleration",
        ),
        pytest.param(
            profile({"deployment": {"imagePullPolicy": "Sometimes"}}),
            "spec.deployment.imagePullPolicy",
            "must be one of",
            id="pull policy",
        ),
        pytest.param(
            profile({"image": "my image"}),
            "spec.image",
            '"my image": invalid reference format',
            id="image",
        ),
        pytest.param(
            profile({"image": ":"}),
            "spec.image",
            '":": invalid reference format',
            id="image not a reference",
        ),
        pytest.param(
            profile({"image": "reg/Corral:1"}),
            "spec.image",
            "repository name must be lowercase",
            id="image uppercase",
        ),
        pytest.param(
            profile({"image": "reg/corral@md5:" + "0" * 32}),
            "spec.image",
            "unsupported digest algorithm",
            id="image digest algorithm",
        ),
        pytest.param(
            profile(
                {"namespace": "kube-system", "leaderElection": {"resourceName": "kube-scheduler"}}
            ),
            "spec.namespace",
            '"kube-system": the scheduler\'s Lease "kube-system/kube-scheduler", and a Role '
            "granting update on it, would stand among the Leases other components hold there; "
            "refused unless the operator runs with --allow-system-leases",
            id="kube-scheduler's Lease",
        ),
        pytest.param(
            profile(
                {
                    "namespace": "kube-system",
                    "leaderElection": {"resourceName": "kube-controller-manager"},
                }
            ),
            "spec.namespace",
            'Lease "kube-system/kube-controller-manager"',
            id="kube-controller-manager's Lease",
        ),
        pytest.param(
            profile({"namespace": "kube-system"}),
            "spec.namespace",
            "would stand among the Leases",
            id="any Lease in kube-system",
        ),
        pytest.param(
            profile({"namespace": "kube-node-lease"}),
            "spec.namespace",
            '"kube-node-lease": the scheduler\'s Lease',
            id="among the nodes' Leases",
        ),
        pytest.param(
            profile({"plugins": {"multiPoint": {"enabled": [{"name": "CheckPodCountLimit"}]}}}),
            "spec.pluginConfig[CheckPodCountLimit].args.podCountLimit",
            "required: how many of this scheduler's pods one node may run",
            id="enabled without the args it cannot default (the engine would not start)",
        ),
        pytest.param(
            profile({"featureGates": {"NoSuchGate": True}}),
            "spec.featureGates[NoSuchGate]",
            "unrecognized feature gate: NoSuchGate",
            id="unknown feature gate",
        ),
        pytest.param(
            profile({"featureGates": {"TopologyAwareWorkloadScheduling": True}}),
            "spec.featureGates[TopologyAwareWorkloadScheduling]",
            "depends on features that are disabled: [GenericWorkload]",
            id="gate whose dependency is off",
        ),
        pytest.param(
            profile({"featureGates": {"GenericWorkload": True, "CompositePodGroup": True}}),
            "spec.featureGates[CompositePodGroup]",
            "depends on features that are disabled: [TopologyAwareWorkloadScheduling]",
            id="gate with one dependency off",
        ),
        pytest.param(
            profile({"featureGates": {"GenericWorkload": "yes"}}),
            "spec.featureGates[GenericWorkload]",
            "must be a boolean",
            id="gate value type",
        ),
        pytest.param(
            profile({"shadow": {"schedulerName": "team-a"}}),
            "spec.shadow.schedulerName",
            '"team-a" is this profile\'s own spec.schedulerName; name the live scheduler to shadow',
            id="a shadow of itself",
        ),
        pytest.param(
            profile({"shadow": {"schedulerName": "Live_Scheduler"}}),
            "spec.shadow.schedulerName",
            "RFC 1123 subdomain",
            id="shadow name syntax",
        ),
        pytest.param(
            profile({"shadow": {}}),
            "spec.shadow.schedulerName",
            "required",
            id="shadow without schedulerName",
        ),
        pytest.param(
            profile(
                {
                    "shadow": {"schedulerName": "default-scheduler"},
                    "tenancy": {"namespaces": ["a"], "assignPods": True},
                }
            ),
            "spec.tenancy.assignPods",
            "must not be true for a shadow (spec.shadow): a shadow places no pod, so the pods "
            "given to it would stay Pending",
            id="a shadow given pods by the webhook",
        ),
    ],
)
def test_invalid_profile_reports_path(data: dict[str, Any], path: str, fragment: str) -> None:
    result, errs = check_profile(data)
    assert result is None
    found = [e for e in errs if e.path == path]
    assert found, [str(e) for e in errs]
    assert any(fragment in e.message for e in found), [str(e) for e in found]


@pytest.mark.parametrize(
    "live",
    [
        pytest.param("default-scheduler", id="the cluster's default scheduler"),
        pytest.param("team-b", id="another profile"),
    ],
)
def test_a_shadow_may_name_any_live_scheduler(live: str) -> None:
    result, errs = check_profile(profile({"shadow": {"schedulerName": live}}))
    assert not errs, [str(e) for e in errs]
    assert result is not None
    assert result.spec.shadow is not None
    assert result.spec.shadow.scheduler_name == live


def test_every_error_is_reported_at_once() -> None:
    # Shape errors (types, unknown fields) come first, all of them; then every rule violation.
    _, errs = check_profile(profile({"replicas": "0", "logLevel": "x", "extra": 1}))
    assert {e.path for e in errs} == {"spec.replicas", "spec.logLevel", "spec.extra"}
    _, errs = check_profile(profile({"replicas": 0, "image": " ", "namespace": "A"}, name="X"))
    assert {e.path for e in errs} >= {
        "metadata.name",
        "spec.replicas",
        "spec.image",
        "spec.namespace",
    }


def test_tenancy_node_selector_is_anded_into_every_user_term() -> None:
    data = profile(
        {
            "tenancy": {"nodeSelector": {"pool": "a"}},
            "pluginConfig": [
                {
                    "name": "NodeAffinity",
                    "args": {
                        "addedAffinity": {
                            "requiredDuringSchedulingIgnoredDuringExecution": {
                                "nodeSelectorTerms": [
                                    {"matchExpressions": [{"key": "gpu", "operator": "Exists"}]},
                                    {
                                        "matchFields": [
                                            {
                                                "key": "metadata.name",
                                                "operator": "In",
                                                "values": ["n1"],
                                            }
                                        ]
                                    },
                                ]
                            }
                        }
                    },
                }
            ],
        }
    )
    cfg = scheduler_config_data(load_profile(data))
    (pc,) = cfg["profiles"][0]["pluginConfig"]
    terms = pc["args"]["addedAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][
        "nodeSelectorTerms"
    ]
    pool = {"key": "pool", "operator": "In", "values": ["a"]}
    assert terms[0]["matchExpressions"] == [{"key": "gpu", "operator": "Exists"}, pool]
    assert terms[1]["matchExpressions"] == [pool]
    assert terms[1]["matchFields"][0]["values"] == ["n1"]


def test_scheduler_config_carries_profile_settings() -> None:
    data = profile(
        {
            "namespace": "sched",
            "percentageOfNodesToScore": 50,
            "leaderElection": {"resourceName": "lease-a"},
        }
    )
    cfg = scheduler_config_data(load_profile(data))
    assert cfg["leaderElection"]["resourceNamespace"] == "sched"
    assert cfg["leaderElection"]["resourceName"] == "lease-a"
    assert cfg["leaderElection"]["resourceLock"] == "leases"
    assert cfg["percentageOfNodesToScore"] == 50
    assert cfg["profiles"][0]["schedulerName"] == "team-a"


@pytest.mark.parametrize(
    ("gates", "with_gang"),
    [
        pytest.param({}, False, id="no gates"),
        pytest.param({"GenericWorkload": True}, True, id="GenericWorkload on"),
        pytest.param({"GenericWorkload": False}, False, id="GenericWorkload off"),
    ],
)
def test_feature_gates_are_accepted_and_change_the_default_set(
    gates: dict[str, bool], with_gang: bool
) -> None:
    result, errs = check_profile(profile({"featureGates": gates}))
    assert not errs, [str(e) for e in errs]
    assert result is not None
    assert result.gates.generic_workload is with_gang
