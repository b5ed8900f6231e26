"""What a tenant sees and gets, on the real API server:

- the aggregated roles: a subject bound cluster-wide to ``view`` reads SchedulerProfiles and may
  not write them, one bound to ``edit`` writes them, and a namespace's RoleBinding to ``view``
  reaches no profile (they are cluster-scoped) but does reach the profile's Events, which the
  operator posts in each tenant namespace too;
- the pod webhook (a local operator serving it by URL): a pod created in a namespace of a
  profile with ``tenancy.assignPods`` and no schedulerName gets the profile's; one naming
  another tenant's scheduler is refused with both names; pods elsewhere pass unchanged; a
  profile with only a namespace selector is admitted with a warning.
"""

from __future__ import annotations

import json
import socket
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from corral.k8s import JSON, ApiError, Client
from corral.testing import LocalCluster
from support.operator_process import KIND, ROOT, OperatorProcess, eventually, is_ready, profile

ADMISSION = "admissionregistration.k8s.io/v1"
CONFIGURATION = "corral.dev"
RBAC = "rbac.authorization.k8s.io/v1"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def can(kube: Client, user: str, verb: str, resource: str, namespace: str = "") -> bool:
    review: JSON = {
        "apiVersion": "authorization.k8s.io/v1",
        "kind": "SubjectAccessReview",
        "spec": {
            "user": user,
            "resourceAttributes": {
                "group": "corral.dev" if resource == "schedulerprofiles" else "",
                "resource": resource,
                "verb": verb,
                "namespace": namespace,
            },
        },
    }
    return bool(kube.create(review)["status"].get("allowed"))


@pytest.fixture
def roles(cluster: LocalCluster, kube: Client) -> Iterator[Callable[[str, str, str], None]]:
    """The install's roles (config/rbac), and ``bind(user, role, namespace)`` bindings."""
    cluster.kubectl("apply", "-f", str(ROOT / "config/rbac/schedulerprofile_viewer_role.yaml"))
    cluster.kubectl("apply", "-f", str(ROOT / "config/rbac/schedulerprofile_editor_role.yaml"))
    made: list[tuple[str, str, str]] = []

    def bind(user: str, role: str, namespace: str = "") -> None:
        kind = "RoleBinding" if namespace else "ClusterRoleBinding"
        name = f"e2e-{user}"
        meta: JSON = {"name": name, **({"namespace": namespace} if namespace else {})}
        kube.create({
            "apiVersion": RBAC, "kind": kind, "metadata": meta,
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                        "name": role},
            "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": user}],
        })  # fmt: skip
        made.append((kind, name, namespace))

    yield bind
    for kind, name, namespace in made:
        kube.delete(RBAC, kind, name, namespace or None)
    for role in ("viewer", "editor"):
        kube.delete(RBAC, "ClusterRole", f"corral:schedulerprofiles:{role}")


def test_aggregated_roles_and_events_where_tenants_read_them(
    kube: Client,
    kube_namespaces: list[str],
    operator: OperatorProcess,
    profiles: Callable[[str], str],
    roles: Callable[..., None],
) -> None:
    tenant, engines = kube_namespaces
    who = uuid.uuid4().hex[:6]
    viewer, editor, tenant_user = f"viewer-{who}", f"editor-{who}", f"tenant-{who}"
    roles(viewer, "view")
    roles(editor, "edit")
    roles(tenant_user, "view", tenant)
    # The aggregation controller (in kube-controller-manager) adds the rules a moment later.
    eventually(lambda: can(kube, viewer, "list", "schedulerprofiles"), what="view aggregated")
    eventually(lambda: can(kube, editor, "create", "schedulerprofiles"), what="edit aggregated")
    assert can(kube, viewer, "watch", "schedulerprofiles")
    assert not can(kube, viewer, "create", "schedulerprofiles")
    assert not can(kube, viewer, "update", "schedulerprofiles/status")
    assert not can(kube, editor, "update", "schedulerprofiles/status")  # the operator's
    # A namespace's RoleBinding to `view` does not reach a cluster-scoped kind...
    assert not can(kube, tenant_user, "get", "schedulerprofiles")
    # ...but the profile's Events in the tenant's namespace it reads.
    assert can(kube, tenant_user, "list", "events", tenant)
    assert not can(kube, tenant_user, "list", "events", "default")

    name = profiles("events")
    kube.create(profile(name, engines, replicas=1, tenancy={"namespaces": [tenant]}))
    eventually(lambda: is_ready(kube, name), timeout=90, what=f"{name} Ready")

    def ready_event(namespace: str) -> JSON | None:
        events = kube.list_items(
            "v1", "Event", namespace, field_selector=f"involvedObject.name={name}"
        )
        return next((e for e in events if e.get("reason") == "Ready"), None)

    copy = eventually(lambda: ready_event(tenant), what="the Ready event in the tenant namespace")
    assert copy["involvedObject"]["kind"] == KIND
    assert copy["involvedObject"]["namespace"] == tenant
    original = eventually(lambda: ready_event("default"), what="the Ready event in default")
    assert original["message"] == copy["message"]
    assert "namespace" not in original["involvedObject"]


@pytest.fixture
def pod_webhook(
    kube: Client, start_operator: Callable[..., OperatorProcess]
) -> Iterator[OperatorProcess]:
    op = start_operator(f"--webhook-listen=127.0.0.1:{free_port()}")

    def registered() -> bool:
        hooks = kube.get(ADMISSION, "MutatingWebhookConfiguration", CONFIGURATION).get("webhooks")
        return bool(hooks) and "url" in hooks[0]["clientConfig"]

    eventually(registered, timeout=60, what="the pod webhook's configuration")
    yield op
    op.stop()
    # Both are kept when the operator stops (by design); they would outlive this test.
    kube.delete(ADMISSION, "ValidatingWebhookConfiguration", CONFIGURATION)
    kube.delete(ADMISSION, "MutatingWebhookConfiguration", CONFIGURATION)


def pod_body(name: str, namespace: str, scheduler: str | None = None) -> JSON:
    spec: JSON = {"containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10.1"}]}
    if scheduler:
        spec["schedulerName"] = scheduler
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": namespace},
            "spec": spec}  # fmt: skip


def test_pods_get_their_tenants_scheduler_and_not_another_tenants(
    cluster: LocalCluster,
    kube: Client,
    kube_namespaces: list[str],
    namespace: str,
    pod_webhook: OperatorProcess,
    profiles: Callable[[str], str],
    tmp_path: Path,
) -> None:
    tenant_a, tenant_b = kube_namespaces
    elsewhere = namespace
    a, b = profiles("assign-a"), profiles("assign-b")
    hook = kube.get(ADMISSION, "MutatingWebhookConfiguration", CONFIGURATION)["webhooks"][0]
    assert hook["failurePolicy"] == "Ignore"  # never stops the cluster's pods
    assert hook["rules"][0]["resources"] == ["pods"]
    assert hook["rules"][0]["operations"] == ["CREATE"]
    kube.create(profile(a, tenant_a, replicas=1,
                        tenancy={"namespaces": [tenant_a], "assignPods": True}))  # fmt: skip
    kube.create(profile(b, tenant_b, replicas=1, tenancy={"namespaces": [tenant_b]}))

    # The webhook lists profiles at most every 5 s: the first pods may come before it knows.
    def assigned() -> str | None:
        name = f"p-{uuid.uuid4().hex[:6]}"
        created = kube.create(pod_body(name, tenant_a))
        kube.delete("v1", "Pod", name, tenant_a)
        return created["spec"]["schedulerName"] if created["spec"]["schedulerName"] == a else None

    assert eventually(assigned, timeout=30, what="a pod given its tenant's scheduler") == a
    explicit = kube.create(pod_body("explicit-default", tenant_a, "default-scheduler"))
    assert explicit["spec"]["schedulerName"] == a  # indistinguishable from none after defaulting
    own = kube.create(pod_body("own", tenant_a, a))
    assert own["spec"]["schedulerName"] == a

    with pytest.raises(ApiError) as refused:
        kube.create(pod_body("wrong", tenant_a, b))
    assert refused.value.status == 403
    assert (
        f'admission webhook "pods.corral.dev" denied the request: spec.schedulerName: {b!r} is '
        f"the scheduler of SchedulerProfile {b!r}, which does not serve namespace {tenant_a!r}: "
        f"it would never schedule this pod; namespace {tenant_a!r} is served by {a!r} (leave "
        "spec.schedulerName unset to get it)"
    ) in str(refused.value)
    # kubectl shows the same line.
    done = cluster.kubectl("apply", "-f", "-", input=json.dumps(pod_body("wrong", tenant_a, b)),
                           check=False)  # fmt: skip
    assert done.returncode != 0
    assert f"spec.schedulerName: {b!r} is the scheduler of SchedulerProfile {b!r}" in done.stderr

    # Namespaces nobody assigns: unchanged, whatever they name.
    for ns, scheduler, want in ((tenant_b, None, "default-scheduler"), (elsewhere, b, b)):
        created = kube.create(pod_body("free", ns, scheduler))
        assert created["spec"]["schedulerName"] == want, ns


def test_a_selector_only_tenancy_is_admitted_with_a_warning(
    cluster: LocalCluster,
    kube_namespaces: list[str],
    pod_webhook: OperatorProcess,
    profiles: Callable[[str], str],
) -> None:
    name = profiles("selector")
    body = profile(name, kube_namespaces[1], replicas=1,
                   tenancy={"namespaceSelector": {"matchLabels": {"team": name}}})  # fmt: skip
    done = cluster.kubectl("apply", "-f", "-", input=json.dumps(body), check=False)
    assert done.returncode == 0, done.stderr
    assert (
        "Warning: spec.tenancy.namespaceSelector without spec.tenancy.namespaces narrows the "
        "pods this scheduler serves, but it may still bind pods in every namespace"
    ) in done.stderr
