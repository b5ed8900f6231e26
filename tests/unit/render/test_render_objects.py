"""What the rendered objects promise: labels, hardening, probes, hash, PDB, RBAC shape."""

from __future__ import annotations

from typing import Any

import pytest

from corral.api import load_profile
from corral.render import names, render

LABEL_KEYS = {
    "app.kubernetes.io/name",
    "app.kubernetes.io/instance",
    "app.kubernetes.io/component",
    "app.kubernetes.io/managed-by",
    "corral.dev/profile",
}


def profile(spec: dict[str, Any] | None = None, **meta: Any) -> Any:
    return load_profile(
        {
            "apiVersion": "corral.dev/v1alpha1",
            "kind": "SchedulerProfile",
            "metadata": {"name": "team-a", **meta},
            "spec": spec or {},
        }
    )


def by_kind(objects: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [o for o in objects if o["kind"] == kind]


def test_every_object_is_labelled() -> None:
    for obj in render(profile({"tenancy": {"namespaces": ["a"]}})).objects:
        labels = obj["metadata"]["labels"]
        assert set(labels) >= LABEL_KEYS, obj["kind"]
        assert labels["corral.dev/profile"] == "team-a"


def test_deployment_is_hardened_and_probed() -> None:
    rendered = render(profile({"tenancy": {"namespaces": ["a", "b"]}, "logLevel": "Debug"}))
    (dep,) = by_kind(rendered.objects, "Deployment")
    pod = dep["spec"]["template"]
    (container,) = pod["spec"]["containers"]
    assert container["command"][:4] == [
        "corral",
        "scheduler",
        "--config",
        "/etc/corral/config.yaml",
    ]
    assert "--namespaces=a,b" in container["command"]
    assert "--log-level=Debug" in container["command"]
    sc = container["securityContext"]
    assert sc["allowPrivilegeEscalation"] is False
    assert sc["readOnlyRootFilesystem"] is True
    assert sc["capabilities"] == {"drop": ["ALL"]}
    assert pod["spec"]["securityContext"]["runAsNonRoot"] is True
    assert pod["spec"]["securityContext"]["seccompProfile"] == {"type": "RuntimeDefault"}
    assert container["livenessProbe"]["httpGet"]["path"] == "/healthz"
    assert container["readinessProbe"]["httpGet"]["path"] == "/readyz"
    assert pod["metadata"]["annotations"][names.CONFIG_HASH_ANNOTATION] == rendered.config_hash
    assert pod["spec"]["topologySpreadConstraints"][0]["topologyKey"] == "kubernetes.io/hostname"


@pytest.mark.parametrize(
    ("replicas", "leader_elect", "pdb"),
    [
        pytest.param(1, False, False, id="single replica: no PDB"),
        pytest.param(2, True, True, id="HA: PDB"),
    ],
)
def test_pdb_only_when_replicated(replicas: int, leader_elect: bool, pdb: bool) -> None:
    spec = {"replicas": replicas, "leaderElection": {"leaderElect": leader_elect}}
    objects = render(profile(spec)).objects
    assert bool(by_kind(objects, "PodDisruptionBudget")) is pdb
    assert (
        bool([o for o in by_kind(objects, "Role") if "leader-election" in o["metadata"]["name"]])
        is leader_elect
    )


def test_config_change_changes_hash_and_pod_template_but_labels_do_not() -> None:
    a = render(profile())
    b = render(profile({"percentageOfNodesToScore": 50}))
    c = render(profile(labels={"team": "x"}))
    assert a.config_hash != b.config_hash
    assert a.config_hash == c.config_hash
    pod_a = by_kind(a.objects, "Deployment")[0]["spec"]["template"]
    pod_c = by_kind(c.objects, "Deployment")[0]["spec"]["template"]
    assert pod_a == pod_c


def test_owner_references_when_the_profile_has_a_uid() -> None:
    for obj in render(profile(uid="1234")).objects:
        (ref,) = obj["metadata"]["ownerReferences"]
        assert ref == {
            "apiVersion": "corral.dev/v1alpha1",
            "kind": "SchedulerProfile",
            "name": "team-a",
            "uid": "1234",
            "controller": True,
            "blockOwnerDeletion": True,
        }
    assert all("ownerReferences" not in o["metadata"] for o in render(profile()).objects)


def rules_of(obj: dict[str, Any]) -> set[tuple[str, str, str]]:
    return {
        (group, resource, verb)
        for rule in obj["rules"]
        for group in rule["apiGroups"]
        for resource in rule["resources"]
        for verb in rule["verbs"]
    }


def test_ordinary_profile_binds_cluster_wide() -> None:
    objects = render(profile()).objects
    (cr,) = by_kind(objects, "ClusterRole")
    rules = rules_of(cr)
    assert ("", "pods/binding", "create") in rules
    assert ("", "nodes", "list") in rules
    assert ("", "persistentvolumes", "update") in rules  # VolumeBinding binds static PVs
    assert not any(r[1] == "secrets" for r in rules)
    assert not any(r[1] == "leases" for r in rules)


def test_tenant_profile_binds_only_in_its_namespaces() -> None:
    objects = render(profile({"tenancy": {"namespaces": ["a", "b"]}})).objects
    (cr,) = by_kind(objects, "ClusterRole")
    reviews = {
        ("authentication.k8s.io", "tokenreviews"),
        ("authorization.k8s.io", "subjectaccessreviews"),
    }
    writes = {(g, r) for g, r, verb in rules_of(cr) if verb not in ("get", "list", "watch")}
    # Secure serving's reviews only: nothing it could write to pods or claims, and no PV update
    # (PVs belong to no namespace: a tenant could rewrite another tenant's claimRef).
    assert writes == reviews
    tenant_roles = [r for r in by_kind(objects, "Role") if r["metadata"]["namespace"] in ("a", "b")]
    assert [r["metadata"]["namespace"] for r in tenant_roles] == ["a", "b"]
    for role in tenant_roles:
        assert ("", "pods/binding", "create") in rules_of(role)
    bindings = [
        b for b in by_kind(objects, "RoleBinding") if b["metadata"]["namespace"] in ("a", "b")
    ]
    assert [b["roleRef"]["name"] for b in bindings] == [names.cluster_role_name(profile())] * 2


def test_lease_create_is_separate_from_named_get_update() -> None:
    objects = render(profile({"leaderElection": {"resourceName": "my-lease"}})).objects
    (role,) = [r for r in by_kind(objects, "Role") if "leader-election" in r["metadata"]["name"]]
    lease_rules = [r for r in role["rules"] if r["resources"] == ["leases"]]
    assert {
        "verbs": ["create"],
        "apiGroups": ["coordination.k8s.io"],
        "resources": ["leases"],
    } in lease_rules
    named = [r for r in lease_rules if "resourceNames" in r]
    assert named == [
        {
            "apiGroups": ["coordination.k8s.io"],
            "resources": ["leases"],
            "resourceNames": ["my-lease"],
            "verbs": ["get", "update"],
        }
    ]


@pytest.mark.parametrize(
    ("spec", "present", "absent"),
    [
        pytest.param({}, ("", "persistentvolumes"), None, id="default set reads volumes"),
        pytest.param(
            {
                "plugins": {
                    "multiPoint": {
                        "disabled": [
                            {"name": "VolumeBinding"},
                            {"name": "VolumeZone"},
                            {"name": "NodeVolumeLimits"},
                            {"name": "VolumeRestrictions"},
                        ]
                    }
                }
            },
            ("", "nodes"),
            ("", "persistentvolumes"),
            id="no volume plugins, no volume reads",
        ),
        pytest.param(
            {"plugins": {"multiPoint": {"disabled": [{"name": "PodTopologySpread"}]}}},
            ("", "nodes"),
            ("apps", "replicasets"),
            id="no spread, no workload reads",
        ),
    ],
)
def test_cluster_reads_follow_enabled_plugins(
    spec: dict[str, Any], present: tuple[str, str], absent: tuple[str, str] | None
) -> None:
    (cr,) = by_kind(render(profile(spec)).objects, "ClusterRole")
    pairs = {(g, r) for g, r, _ in rules_of(cr)}
    assert present in pairs
    if absent is not None:
        assert absent not in pairs


def _engine_args(objects: list[dict[str, Any]]) -> list[str]:
    (deployment,) = by_kind(objects, "Deployment")
    (container,) = deployment["spec"]["template"]["spec"]["containers"]
    return list(container["command"])


@pytest.mark.parametrize(
    ("gates", "flag"),
    [
        pytest.param({}, None, id="none"),
        pytest.param({"GenericWorkload": True}, "--feature-gates=GenericWorkload=true", id="on"),
        pytest.param(
            {"OpportunisticBatching": True, "GenericWorkload": False},
            "--feature-gates=GenericWorkload=false,OpportunisticBatching=true",
            id="sorted",
        ),
    ],
)
def test_feature_gates_are_the_engines_flag(gates: dict[str, bool], flag: str | None) -> None:
    args = _engine_args(render(profile({"featureGates": gates})).objects)
    assert [a for a in args if a.startswith("--feature-gates")] == ([flag] if flag else [])


@pytest.mark.parametrize(
    ("spec", "role"),
    [
        pytest.param({"featureGates": {"GenericWorkload": True}}, "ClusterRole", id="cluster-wide"),
        pytest.param(
            {"featureGates": {"GenericWorkload": True}, "tenancy": {"namespaces": ["a"]}},
            "Role",
            id="tenant: status writes in its namespaces only",
        ),
    ],
)
def test_generic_workload_reads_pod_groups_and_writes_their_status(
    spec: dict[str, Any], role: str
) -> None:
    objects = render(profile(spec)).objects
    (cr,) = by_kind(objects, "ClusterRole")
    assert {v for g, r, v in rules_of(cr) if r == "podgroups"} == {"get", "list", "watch"}
    assert not any(r == "workloads" for _, r, _ in rules_of(cr))  # upstream reads none either
    writer = cr if role == "ClusterRole" else by_kind(objects, "Role")[-1]
    assert {v for _, r, v in rules_of(writer) if r == "podgroups/status"} == {"patch", "update"}
    plain = render(profile()).objects
    (plain_cr,) = by_kind(plain, "ClusterRole")
    assert not any(r.startswith("podgroups") for _, r, _ in rules_of(plain_cr))


@pytest.mark.parametrize(
    "spec",
    [
        pytest.param({}, id="cluster-wide"),
        pytest.param({"tenancy": {"namespaces": ["a", "b"]}}, id="tenant"),
        pytest.param({"featureGates": {"GenericWorkload": True}}, id="gates that write"),
    ],
)
def test_a_shadow_writes_only_its_lease_and_its_own_status(spec: dict[str, Any]) -> None:
    """No pod binding, status, Event, eviction, claim or volume write anywhere: the rendered
    RBAC is the reads, secure serving's reviews, its Lease and its profile's status."""
    objects = render(profile({**spec, "shadow": {"schedulerName": "default-scheduler"}})).objects
    reviews = {
        ("authentication.k8s.io", "tokenreviews", "create"),
        ("authorization.k8s.io", "subjectaccessreviews", "create"),
    }
    writes = {
        (g, r, v)
        for o in by_kind(objects, "ClusterRole") + by_kind(objects, "Role")
        for g, r, v in rules_of(o)
        if v not in ("get", "list", "watch")
    }
    assert writes == reviews | {
        ("coordination.k8s.io", "leases", "create"),
        ("coordination.k8s.io", "leases", "update"),
        ("corral.dev", "schedulerprofiles/status", "patch"),
    }
    (cr,) = by_kind(objects, "ClusterRole")
    (status_rule,) = [r for r in cr["rules"] if r["resources"] == ["schedulerprofiles/status"]]
    assert status_rule["resourceNames"] == ["team-a"]
    roles = by_kind(objects, "Role")
    assert [r["metadata"]["name"] for r in roles] == [names.leader_election_role_name(profile())]
    args = _engine_args(objects)
    assert args[-2:] == ["--shadow-of=default-scheduler", "--shadow-profile=team-a"]
