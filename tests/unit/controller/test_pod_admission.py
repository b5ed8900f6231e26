"""The pod webhook's decisions: a tenant's pods get its scheduler, pods naming another tenant's
are refused with both names, DaemonSet and mirror pods and other namespaces pass unchanged, and
the index lists profiles and namespaces at most once per TTL."""

from __future__ import annotations

from typing import Any

import pytest

from corral.controller.pod_admission import ADMIT, Decision, TenantIndex, decide, tenant_of


def profile(name: str, deleting: bool = False, **tenancy: Any) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name}
    if deleting:
        meta["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    spec: dict[str, Any] = {"tenancy": tenancy} if tenancy else {}
    return {"metadata": meta, "spec": spec}


def pod(scheduler: str | None = None, owner: str | None = None, mirror: bool = False) -> Any:
    meta: dict[str, Any] = {"name": "p", "namespace": "team-a"}
    if owner:
        meta["ownerReferences"] = [{"kind": owner, "name": "o", "apiVersion": "apps/v1"}]
    if mirror:
        meta["annotations"] = {"kubernetes.io/config.mirror": "x"}
    spec: dict[str, Any] = {"containers": [{"name": "c", "image": "i"}]}
    if scheduler is not None:
        spec["schedulerName"] = scheduler
    return {"metadata": meta, "spec": spec}


TEAM_A = profile("team-a", namespaces=["team-a"], assignPods=True)
TEAM_B = profile("team-b", namespaces=["team-b"], assignPods=True)
BY_LABEL = profile("labelled", namespaceSelector={"matchLabels": {"tenant": "l"}}, assignPods=True)
NOT_ASSIGNING = profile("quiet", namespaces=["quiet"])
CLUSTER_WIDE = profile("everywhere")
LABELS = {"team-a": {}, "team-b": {}, "quiet": {}, "lab": {"tenant": "l"}, "free": {}}


@pytest.mark.parametrize(
    ("profiles", "namespace", "incoming", "want"),
    [
        pytest.param([TEAM_A], "team-a", pod(), Decision("team-a"), id="no scheduler named"),
        pytest.param(
            [TEAM_A], "team-a", pod("default-scheduler"), Decision("team-a"),
            id="default-scheduler as defaulted by the API server",
        ),
        pytest.param([TEAM_A], "team-a", pod("team-a"), ADMIT, id="its own scheduler"),
        pytest.param(
            [TEAM_A, CLUSTER_WIDE], "team-a", pod("everywhere"), ADMIT,
            id="a cluster-wide profile's scheduler",
        ),
        pytest.param([TEAM_A], "team-a", pod("volcano"), ADMIT, id="a scheduler outside Corral"),
        pytest.param(
            [TEAM_A, TEAM_B], "team-a", pod("team-b"),
            Decision(refusal="spec.schedulerName: 'team-b' is the scheduler of SchedulerProfile "
                     "'team-b', which does not serve namespace 'team-a': it would never schedule "
                     "this pod; namespace 'team-a' is served by 'team-a' (leave "
                     "spec.schedulerName unset to get it)"),
            id="another tenant's scheduler",
        ),
        pytest.param(
            [TEAM_A, NOT_ASSIGNING], "team-a", pod("quiet"),
            Decision(refusal="spec.schedulerName: 'quiet' is the scheduler of SchedulerProfile "
                     "'quiet', which does not serve namespace 'team-a': it would never schedule "
                     "this pod; namespace 'team-a' is served by 'team-a' (leave "
                     "spec.schedulerName unset to get it)"),
            id="a tenant's scheduler that does not assign",
        ),
        pytest.param([TEAM_A, TEAM_B], "free", pod("team-b"), ADMIT, id="not a tenant namespace"),
        pytest.param([TEAM_A], "free", pod(), ADMIT, id="no scheduler named elsewhere"),
        pytest.param([NOT_ASSIGNING], "quiet", pod(), ADMIT, id="the tenant did not opt in"),
        pytest.param([BY_LABEL], "lab", pod(), Decision("labelled"), id="by namespace selector"),
        pytest.param(
            [BY_LABEL, TEAM_B], "lab", pod("team-b"),
            Decision(refusal="spec.schedulerName: 'team-b' is the scheduler of SchedulerProfile "
                     "'team-b', which does not serve namespace 'lab': it would never schedule "
                     "this pod; namespace 'lab' is served by 'labelled' (leave "
                     "spec.schedulerName unset to get it)"),
            id="another tenant's scheduler in a selected namespace",
        ),
        pytest.param([TEAM_A], "team-a", pod(owner="DaemonSet"), ADMIT, id="a DaemonSet's pod"),
        pytest.param(
            [TEAM_A], "team-a", pod(owner="ReplicaSet"), Decision("team-a"), id="a ReplicaSet's"
        ),
        pytest.param([TEAM_A], "team-a", pod(mirror=True), ADMIT, id="a static pod's mirror"),
        pytest.param(
            [profile("team-a", deleting=True, namespaces=["team-a"], assignPods=True)],
            "team-a", pod(), ADMIT, id="the profile is being deleted",
        ),
        pytest.param(
            [TEAM_A, profile("again", namespaceSelector={"matchLabels": {}}, assignPods=True)],
            "team-a", pod(),
            Decision(refusal="namespace 'team-a' is served by SchedulerProfiles 'again' and "
                     "'team-a', which both assign pods (tenancy.assignPods): set "
                     "spec.schedulerName to the scheduler this pod is for"),
            id="two profiles assign the namespace",
        ),
        pytest.param(
            [TEAM_A, profile("again", namespaceSelector={"matchLabels": {}}, assignPods=True)],
            "team-a", pod("team-a"), ADMIT, id="two assign it, the pod names one",
        ),
        pytest.param([TEAM_A], "team-a", {"metadata": "- a", "spec": {}},
                     Decision(refusal="metadata: must be an object"), id="metadata a string"),
        pytest.param([TEAM_A], "team-a", {"metadata": {}, "spec": 2**64},
                     Decision(refusal="spec: must be an object"), id="spec a number"),
        pytest.param([TEAM_A], "team-a", {"metadata": {"ownerReferences": 5}, "spec": {}},
                     Decision("team-a"), id="ownerReferences not a list: not a DaemonSet's"),
        pytest.param([TEAM_A], "team-a",
                     {"metadata": {"ownerReferences": ["DaemonSet"], "annotations": "x"}},
                     Decision("team-a"), id="owner and annotations of the wrong shape"),
    ],
)  # fmt: skip
def test_decide(
    profiles: list[dict[str, Any]], namespace: str, incoming: Any, want: Decision
) -> None:
    tenants = [t for p in profiles if (t := tenant_of(p)) is not None]
    assert decide(incoming, namespace, tenants, LABELS.__getitem__) == want


def test_tenant_of_reads_the_scheduler_name() -> None:
    body = profile("p", namespaces=["a"], assignPods=True)
    body["spec"]["schedulerName"] = "sched-p"
    tenant = tenant_of(body)
    assert tenant is not None
    assert (tenant.scheduler_name, tenant.assigns, tenant.namespaces) == ("sched-p", True, ("a",))
    assert tenant_of(profile("p", nodeSelector={"pool": "a"})) is None


def test_index_lists_once_per_ttl() -> None:
    now = [0.0]
    calls = {"profiles": 0, "labels": 0}

    def list_profiles() -> list[dict[str, Any]]:
        calls["profiles"] += 1
        return [BY_LABEL]

    def labels(namespace: str) -> dict[str, str]:
        calls["labels"] += 1
        return LABELS[namespace]

    index = TenantIndex(list_profiles, labels, ttl=5.0, clock=lambda: now[0])
    for _ in range(3):
        assert index.decide(pod(), "lab") == Decision("labelled")
    assert calls == {"profiles": 1, "labels": 1}
    now[0] = 5.0
    assert index.decide(pod(), "lab") == Decision("labelled")
    assert calls == {"profiles": 2, "labels": 2}
