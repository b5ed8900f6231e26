"""One refusal for the webhook and the reconcile: validation errors with field paths, reserved
and already served schedulerNames, Leases already used, namespaces already assigned; a profile
under admission (no creationTimestamp yet) comes after every existing one. Advisories: what
admission warns about but admits."""

from __future__ import annotations

from typing import Any

import pytest

from corral.api import default_catalog
from corral.controller import guards, refusals
from corral.controller.settings import Settings

SETTINGS = Settings(namespace="corral-system")


def body(name: str, created: str | None = None, **spec: Any) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name}
    if created:
        meta["creationTimestamp"] = created
    return {
        "apiVersion": "corral.dev/v1alpha1",
        "kind": "SchedulerProfile",
        "metadata": meta,
        "spec": spec,
    }


EXISTING = [
    body("holder", "2026-01-01T00:00:00Z", schedulerName="team-a"),
    body("leaser", "2026-01-01T00:00:00Z", leaderElection={"resourceName": "shared"}),
    body(
        "elsewhere",
        "2026-01-01T00:00:00Z",
        namespace="other",
        leaderElection={"resourceName": "ns-lease"},
    ),
    body(
        "assigner",
        "2026-01-01T00:00:00Z",
        tenancy={"namespaces": ["team-a", "team-x"], "assignPods": True},
    ),
]


@pytest.mark.parametrize(
    ("incoming", "reason", "fragment"),
    [
        pytest.param(
            body("new", schedulerName="team-a"),
            "SchedulerNameConflict",
            "spec.schedulerName: 'team-a' is already served by SchedulerProfile 'holder'",
            id="duplicate schedulerName",
        ),
        pytest.param(
            body("new", leaderElection={"resourceName": "shared"}),
            "LeaseConflict",
            "spec.leaderElection.resourceName: Lease 'corral-system/shared' is already "
            "used by SchedulerProfile 'leaser'",
            id="same Lease",
        ),
        pytest.param(
            body("leaser2", namespace="corral-system", leaderElection={"resourceName": "shared"}),
            "LeaseConflict",
            "'leaser'",
            id="same Lease, namespace spelled out",
        ),
        pytest.param(
            body("new", schedulerName="default-scheduler"),
            "InvalidSpec",
            "spec.schedulerName",
            id="reserved",
        ),
        pytest.param(
            body("new", plugins={"filter": {"enabled": [{"name": "NodeAfinity"}]}}),
            "InvalidSpec",
            "spec.plugins.filter.enabled[0].name: unknown plugin "
            '"NodeAfinity"; did you mean "NodeAffinity"?',
            id="unknown plugin",
        ),
        pytest.param(
            body(
                "new",
                pluginConfig=[
                    {"name": "NodeResourcesFit", "args": {"scoringStrategy": {"type": "Most"}}}
                ],
            ),
            "InvalidSpec",
            "spec.pluginConfig[0].args.scoringStrategy.type",
            id="bad args",
        ),
        pytest.param(
            body("new", tenancy={"namespaces": ["team-b", "team-x"], "assignPods": True}),
            "AssignPodsConflict",
            "spec.tenancy.assignPods: SchedulerProfile 'assigner' (created earlier) already "
            "assigns the pods of namespace 'team-x'; a pod there can get only one scheduler: "
            "drop the namespace or assignPods",
            id="namespace already assigned",
        ),
    ],
)
def test_refused(incoming: dict[str, Any], reason: str, fragment: str) -> None:
    claims = [guards.claim_of(b) for b in EXISTING]
    _, refusal = refusals.check(
        incoming, settings=SETTINGS, catalog=default_catalog(), claims=claims
    )
    assert refusal is not None
    assert refusal.reason == reason
    assert fragment in refusal.message, refusal.message


@pytest.mark.parametrize(
    "incoming",
    [
        pytest.param(
            body("new", leaderElection={"resourceName": "ns-lease"}), id="same name, other ns"
        ),
        pytest.param(
            body(
                "new", replicas=1, leaderElection={"leaderElect": False, "resourceName": "shared"}
            ),
            id="no election, no Lease",
        ),
        pytest.param(EXISTING[0], id="the holder itself, updated"),
        pytest.param(
            body("new", tenancy={"namespaces": ["team-x"]}), id="the same namespace, not assigning"
        ),
        pytest.param(
            body("new", tenancy={"namespaces": ["team-b"], "assignPods": True}),
            id="another namespace assigned",
        ),
    ],
)
def test_admitted(incoming: dict[str, Any]) -> None:
    claims = [guards.claim_of(b) for b in EXISTING]
    profile, refusal = refusals.check(
        incoming, settings=SETTINGS, catalog=default_catalog(), claims=claims
    )
    assert refusal is None
    assert profile is not None


@pytest.mark.parametrize(
    ("namespace", "lease"),
    [
        pytest.param("kube-system", "kube-controller-manager", id="kube-controller-manager's"),
        pytest.param("kube-system", "kube-scheduler", id="kube-scheduler's"),
        pytest.param("kube-node-lease", "node-1", id="a kubelet's heartbeat"),
    ],
)
def test_a_system_lease_only_with_the_operators_flag(namespace: str, lease: str) -> None:
    incoming = body("new", namespace=namespace, leaderElection={"resourceName": lease})
    _, refusal = refusals.check(incoming, settings=SETTINGS, catalog=default_catalog(), claims=[])
    assert refusal is not None
    assert refusal.reason == "InvalidSpec"
    assert f'spec.namespace: "{namespace}": the scheduler\'s Lease "{namespace}/{lease}"' in (
        refusal.message
    )
    allowing = Settings(namespace="corral-system", allow_system_leases=True)
    profile, refusal = refusals.check(
        incoming, settings=allowing, catalog=default_catalog(), claims=[]
    )
    assert refusal is None
    assert profile is not None


@pytest.mark.parametrize(
    ("tenancy", "warned"),
    [
        pytest.param({"namespaceSelector": {"matchLabels": {"t": "a"}}}, True, id="selector only"),
        pytest.param(
            {"namespaces": ["a"], "namespaceSelector": {"matchLabels": {"t": "a"}}},
            False,
            id="selector and namespaces",
        ),
        pytest.param({"namespaces": ["a"]}, False, id="namespaces"),
        pytest.param(None, False, id="no tenancy"),
    ],
)
def test_advisories(tenancy: dict[str, Any] | None, warned: bool) -> None:
    incoming = body("new", **({"tenancy": tenancy} if tenancy else {}))
    assert refusals.advisories(incoming) == ([refusals.SELECTOR_ONLY] if warned else [])
