"""The operator on the real control plane: apply, status, no churn, drift repair, pruning,
deletion, invalid profiles and guards."""

from __future__ import annotations

import time
from typing import Any

import pytest

from corral.k8s import JSON, Client
from support.operator_process import (
    API,
    CHILD_KINDS,
    KIND,
    OperatorProcess,
    children,
    condition,
    events_for,
    eventually,
    is_ready,
    profile,
    versions,
)


def test_apply_makes_every_child_and_goes_ready(
    kube: Client, kubectl: Any, namespace: str, operator: OperatorProcess, profiles: Any
) -> None:
    name = profiles("ready")
    created = kube.create(profile(name, namespace, tenancy={"namespaces": [namespace]}))
    obj = eventually(lambda: is_ready(kube, name), what=f"{name} Ready")

    kids = children(kube, name)
    kinds = sorted({k[0] for k in kids})
    assert kinds == sorted({k for _, k in CHILD_KINDS})
    for key, child in kids.items():
        owners = child["metadata"]["ownerReferences"]
        assert owners == [
            {
                "apiVersion": API,
                "kind": KIND,
                "name": name,
                "uid": created["metadata"]["uid"],
                "controller": True,
                "blockOwnerDeletion": True,
            }
        ], key
        assert child["metadata"]["labels"]["app.kubernetes.io/managed-by"] == "corral"
    assert (
        obj["status"]["configHash"]
        == (
            kids[("ConfigMap", namespace, f"corral-{name}-config")]["metadata"]["annotations"][
                "corral.dev/config-hash"
            ]
        )
    )
    assert obj["status"]["readyReplicas"] == 2
    for type_ in ("Reconciling", "Stalled"):
        assert condition(obj, type_)["status"] == "False"
    # kopf wrote nothing of its own onto the profile: no finalizer, no progress annotations.
    assert not obj["metadata"].get("finalizers")
    assert not [a for a in obj["metadata"].get("annotations", {}) if "kopf" in a]
    reasons = [e["reason"] for e in events_for(kube, name)]
    assert "Ready" in reasons
    header, row = kubectl("get", "schedulerprofiles", name).stdout.splitlines()
    assert header.split()[:-1] == ["NAME", "SCHEDULER", "ENGINE", "NAMESPACE", "REPLICAS",
                                   "AVAILABLE", "LEADER", "READY", "REASON", "SHADOW"]  # fmt: skip
    # The defaulted schedulerName (metadata.name) and the engines' namespace show, from status;
    # Ready's status and reason, so a stalled profile reads why without describe.
    assert row.split()[:4] == [name, obj["status"]["schedulerName"], namespace, "2"]
    # The engines' pods run on kwok nodes (no --local-engines): no engine holds the Lease, and
    # kubectl leaves the LEADER cell blank; likewise SHADOW, this profile being no shadow.
    assert not obj["status"].get("leader")
    assert not obj["status"].get("shadow")
    assert row.split()[4:-1] == ["2", "True", "Ready"]
    assert obj["status"]["schedulerName"] == (obj["spec"].get("schedulerName") or name)
    wide = kubectl("get", "schedulerprofiles", name, "-o", "wide").stdout.splitlines()
    assert wide[0].split()[-1] == "MESSAGE"
    assert condition(obj, "Ready")["message"] in wide[1]


def test_spec_change_rolls_and_label_change_writes_nothing(
    kube: Client, namespace: str, operator: OperatorProcess, profiles: Any
) -> None:
    name = profiles("roll")
    kube.create(profile(name, namespace, replicas=1))
    eventually(lambda: is_ready(kube, name), what=f"{name} Ready")
    dep_key = ("Deployment", namespace, f"corral-{name}")
    before = children(kube, name)
    template_hash = before[dep_key]["spec"]["template"]["metadata"]["annotations"]

    # Only labels of the profile: nothing rendered changes, so nothing is written.
    path = kube.resource(API, KIND).path(None, name)
    kube.request(
        "PATCH",
        path,
        body={"metadata": {"labels": {"team": "x"}}},
        content_type="application/merge-patch+json",
    )
    rvs = versions(kube, name)
    eventually(
        lambda: kube.get(API, KIND, name)["metadata"]["labels"].get("team") == "x",
        what="label applied",
    )
    time.sleep(3)  # more than a reconcile takes: the label event has been handled
    assert versions(kube, name) == rvs

    # Plugin args: the ConfigMap changes and the pod template's hash changes (a rollout).
    kube.request(
        "PATCH",
        path,
        body={
            "spec": {
                "pluginConfig": [
                    {
                        "name": "NodeResourcesFit",
                        "args": {"scoringStrategy": {"type": "MostAllocated"}},
                    }
                ]
            }
        },
        content_type="application/merge-patch+json",
    )

    def rolled() -> bool:
        dep = children(kube, name).get(dep_key)
        return bool(dep) and dep["spec"]["template"]["metadata"]["annotations"] != template_hash

    eventually(rolled, what="pod template hash to change")
    cm = kube.get("v1", "ConfigMap", f"corral-{name}-config", namespace)
    assert "MostAllocated" in cm["data"]["config.yaml"]
    obj = eventually(lambda: is_ready(kube, name), what="Ready after the rollout")
    assert obj["status"]["observedGeneration"] == 2


def test_drift_is_reverted_and_deleted_children_come_back(
    kube: Client, kubectl: Any, namespace: str, operator: OperatorProcess, profiles: Any
) -> None:
    name = profiles("drift")
    kube.create(profile(name, namespace, tenancy={"namespaces": [namespace]}))
    eventually(lambda: is_ready(kube, name), what=f"{name} Ready")
    dep = f"corral-{name}"
    kubectl("scale", "-n", namespace, f"deployment/{dep}", "--replicas=4")
    eventually(
        lambda: kube.get("apps/v1", "Deployment", dep, namespace)["spec"]["replicas"] == 2,
        timeout=10,
        what="replicas reverted to 2",
    )
    role = f"corral:scheduler:{name}"
    for kind, api_version, obj_name in (
        ("ConfigMap", "v1", f"corral-{name}-config"),
        ("RoleBinding", "rbac.authorization.k8s.io/v1", role),
        ("ClusterRoleBinding", "rbac.authorization.k8s.io/v1", role),
    ):
        ns = None if kind.startswith("Cluster") else namespace
        uid = kube.get(api_version, kind, obj_name, ns)["metadata"]["uid"]
        kube.delete(api_version, kind, obj_name, ns)
        eventually(
            lambda: kube.get(api_version, kind, obj_name, ns)["metadata"]["uid"] != uid,  # noqa: B023
            timeout=10,
            what=f"{kind} {obj_name} recreated",
        )
    assert "DriftReverted" in [e["reason"] for e in events_for(kube, name)]


def test_children_no_longer_rendered_are_deleted(
    kube: Client, kube_namespaces: list[str], operator: OperatorProcess, profiles: Any
) -> None:
    home, extra = kube_namespaces
    name = profiles("prune")
    kube.create(profile(name, home, tenancy={"namespaces": [home, extra]}))
    eventually(lambda: is_ready(kube, name), what=f"{name} Ready")
    assert ("PodDisruptionBudget", home, f"corral-{name}") in children(kube, name)
    assert ("RoleBinding", extra, f"corral:scheduler:{name}") in children(kube, name)
    kube.request(
        "PATCH",
        kube.resource(API, KIND).path(None, name),
        body={"spec": {"replicas": 1, "tenancy": {"namespaces": [home]}}},
        content_type="application/merge-patch+json",
    )

    def pruned() -> bool:
        kids = children(kube, name)
        return (
            ("PodDisruptionBudget", home, f"corral-{name}") not in kids
            and ("RoleBinding", extra, f"corral:scheduler:{name}") not in kids
            and ("Role", extra, f"corral:scheduler:{name}") not in kids
        )

    eventually(pruned, what="PDB and the removed namespace's Role/RoleBinding deleted")
    assert ("RoleBinding", home, f"corral:scheduler:{name}") in children(kube, name)


def test_deleting_the_profile_removes_every_child(
    kube: Client, namespace: str, operator: OperatorProcess, profiles: Any
) -> None:
    name = profiles("gone")
    kube.create(profile(name, namespace))
    eventually(lambda: is_ready(kube, name), what=f"{name} Ready")
    assert any(k[0] == "ClusterRole" for k in children(kube, name))
    kube.delete(API, KIND, name)
    # The garbage collector (kube-controller-manager) follows the owner references, also to
    # the cluster-scoped ClusterRole and ClusterRoleBinding.
    eventually(lambda: not children(kube, name), timeout=60, what="every child gone")


@pytest.mark.parametrize(
    ("spec", "reason", "fragment"),
    [
        pytest.param(
            {"plugins": {"filter": {"enabled": [{"name": "NoSuchPlugin"}]}}},
            "InvalidSpec",
            "spec.plugins.filter.enabled[0].name",
            id="unknown plugin (not knowable at admission)",
        ),
        pytest.param(
            {"schedulerName": "volcano"},
            "SchedulerNameReserved",
            "volcano",
            id="name of a scheduler running outside Corral",
        ),
    ],
)
def test_a_bad_change_stalls_and_leaves_running_children_alone(
    kube: Client,
    namespace: str,
    start_operator: Any,
    profiles: Any,
    spec: JSON,
    reason: str,
    fragment: str,
) -> None:
    start_operator("--reserved-scheduler-names=default-scheduler,volcano")
    name = profiles("stall")
    kube.create(profile(name, namespace))
    eventually(lambda: is_ready(kube, name), what=f"{name} Ready")
    rvs = versions(kube, name)
    kube.request(
        "PATCH",
        kube.resource(API, KIND).path(None, name),
        body={"spec": spec},
        content_type="application/merge-patch+json",
    )

    def stalled() -> JSON | None:
        obj = kube.get(API, KIND, name)
        stall = condition(obj, "Stalled")
        ok = stall.get("status") == "True" and stall.get("observedGeneration") == 2
        return obj if ok else None

    obj = eventually(stalled, what="Stalled")
    stall = condition(obj, "Stalled")
    assert stall["reason"] == reason
    assert fragment in stall["message"]
    assert condition(obj, "Ready")["status"] == "False"
    assert condition(obj, "Ready")["reason"] == reason  # what `kubectl get sp` shows
    assert obj["status"]["observedGeneration"] == 2
    assert obj["status"]["configHash"]  # still describes what runs
    assert versions(kube, name) == rvs
    warnings = [e for e in events_for(kube, name) if e["type"] == "Warning"]
    assert [e["reason"] for e in warnings] == [reason]


def test_second_claim_on_a_scheduler_name_stalls_and_first_is_untouched(
    kube: Client, namespace: str, operator: OperatorProcess, profiles: Any
) -> None:
    first, second = profiles("first"), profiles("second")
    shared = f"shared-{first}"
    kube.create(profile(first, namespace, schedulerName=shared, replicas=1))
    eventually(lambda: is_ready(kube, first), what=f"{first} Ready")
    rvs = versions(kube, first)
    first_status = kube.get(API, KIND, first)["status"]
    kube.create(profile(second, namespace, schedulerName=shared, replicas=1))

    def stalled() -> JSON | None:
        obj = kube.get(API, KIND, second)
        return obj if condition(obj, "Stalled").get("status") == "True" else None

    obj = eventually(stalled, what="the second profile Stalled")
    assert condition(obj, "Stalled")["reason"] == "SchedulerNameConflict"
    assert first in condition(obj, "Stalled")["message"]
    assert not children(kube, second)
    assert versions(kube, first) == rvs
    assert kube.get(API, KIND, first)["status"] == first_status

    # Once the first goes, the second takes the name over.
    kube.delete(API, KIND, first)
    eventually(lambda: is_ready(kube, second), timeout=40, what="second Ready after first left")


def test_overlapping_node_pools_warn_without_failing(
    kube: Client, namespace: str, operator: OperatorProcess, profiles: Any
) -> None:
    a, b = profiles("pool-a"), profiles("pool-b")
    pool = {"pool": f"p-{a}"}
    kube.create(profile(a, namespace, replicas=1, tenancy={"nodeSelector": pool}))
    kube.create(profile(b, namespace, replicas=1, tenancy={"nodeSelector": {**pool, "zone": "z1"}}))
    for name, other in ((a, b), (b, a)):
        obj = eventually(lambda: is_ready(kube, name), what=f"{name} Ready")  # noqa: B023

        def warned() -> JSON:
            return condition(kube.get(API, KIND, name), "NodePoolOverlap")  # noqa: B023

        overlap = eventually(warned, what=f"{name} NodePoolOverlap")
        assert overlap["status"] == "True"
        assert other in overlap["message"]
        assert condition(obj, "Stalled")["status"] == "False"
