"""Install, upgrade and uninstall on the real node, with tenants' schedulers running throughout.

The previous release (tests/support/previous_release.py: the manifests and the image of the
commit before the install's lifecycle changes, built from a worktree of it) is installed, its
profiles schedule, and the operator is upgraded to this checkout, twice:

- kustomize, moved to another namespace by an overlay: the previous config/default (which
  owned the CRDs and the Namespace), then config/crd and config/default with the webhook
  Component; tenant pods get their scheduler from the pod webhook and are refused another
  tenant's; `kubectl delete -k` of the overlay then removes the operator and its webhook
  configurations, and nothing a tenant's scheduler needs;
- Helm: the previous chart (which owned its Namespace and kept the CRDs in crds/), then
  `helm upgrade --take-ownership` to this chart, then `helm uninstall`.

Across each upgrade, pods keep arriving: every one is bound, once. Each engine restarts only if
what its profile renders to changed, and the test reports which did and why (the terminal
summary, "lifecycle: ..."). After each uninstall the engines keep their pods and keep
scheduling, and the CRDs, the profiles and the namespaces stay.

The tests share one cluster and run in order (each starts from what the previous left).
"""

from __future__ import annotations

import json
import subprocess
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from corral import __version__
from corral.k8s import CONTENT_MERGE_PATCH, ApiError, Client
from corral.testing import LocalCluster
from corral.testing.processes import wait_for
from corral_dev.builds import ensure_helm, ensure_node_binaries, load_node_pins
from corral_dev.install import operator_overlay, prerequisites
from corral_dev.realnode import NODE_NAME, RealNodes
from support import previous_release

pytestmark = pytest.mark.timeout(3600)

ROOT = Path(__file__).resolve().parents[3]
IMAGE = f"localhost/corral:{__version__}"
PAUSE_IMAGE = load_node_pins().pause_image
API = "corral.dev/v1alpha1"
KIND = "SchedulerProfile"
ADMISSION = "admissionregistration.k8s.io/v1"
CRD_API = "apiextensions.k8s.io/v1"
CRD = "schedulerprofiles.corral.dev"
ON_REAL_NODE = {"kubernetes.io/hostname": NODE_NAME}
OPERATORS = "app.kubernetes.io/name=corral-operator"
MOVED = "platform-sched"  # the kustomize path's namespace overlay
# Charts up to 0.1.0 were installed without -n: the release lives in `default`, the operator in
# its `namespace` value, corral-system, whose Namespace the release owns.
HELM_NS = "corral-system"
TEAM_A, TEAM_B = "team-a", "team-b"
RESYNC = 30  # the operator's default: every profile is reconciled at least this often

# --- helpers ------------------------------------------------------------------------------------


def _pods(kube: Client, namespace: str, selector: str = "") -> list[dict[str, Any]]:
    return kube.list_items("v1", "Pod", namespace, label_selector=selector or None)


def _running_ready(pod: dict[str, Any]) -> bool:
    conditions = {c["type"]: c["status"] for c in pod.get("status", {}).get("conditions", [])}
    return (
        pod.get("status", {}).get("phase") == "Running"
        and conditions.get("Ready") == "True"
        and not pod["metadata"].get("deletionTimestamp")
    )


def _ready_pods(kube: Client, namespace: str, selector: str, count: int) -> list[dict[str, Any]]:
    def check() -> bool:
        pods = _pods(kube, namespace, selector)
        return len(pods) == count and all(_running_ready(p) for p in pods)

    wait_for(f"{count} Ready pods {selector} in {namespace}", check, timeout=300)
    return _pods(kube, namespace, selector)


def _profile(name: str, **spec: Any) -> dict[str, Any]:
    spec.setdefault("replicas", 2)
    spec.setdefault("deployment", {"nodeSelector": ON_REAL_NODE})
    return {"apiVersion": API, "kind": KIND, "metadata": {"name": name}, "spec": spec}


def _patch_profile(kube: Client, name: str, spec: dict[str, Any]) -> None:
    path = kube.resource(API, KIND).path(None, name)
    kube.request("PATCH", path, body={"spec": spec}, content_type=CONTENT_MERGE_PATCH)


def _ready(kube: Client, name: str) -> bool:
    body = kube.get(API, KIND, name)
    status = body.get("status") or {}
    ready = next((c for c in status.get("conditions", []) if c["type"] == "Ready"), {})
    return bool(
        ready.get("status") == "True"
        and status.get("observedGeneration") == body["metadata"]["generation"]
    )


def _engines(profile: str) -> str:
    return f"app.kubernetes.io/instance={profile}"


def _engine_namespace(kube: Client, profile: str) -> str:
    return str(kube.get(API, KIND, profile)["status"]["namespace"])


def _rolled_out(kube: Client, namespace: str, name: str) -> bool:
    d = kube.get("apps/v1", "Deployment", name, namespace)
    status, want = d.get("status") or {}, d["spec"]["replicas"]
    return bool(
        status.get("observedGeneration") == d["metadata"]["generation"]
        and status.get("updatedReplicas") == want
        and status.get("readyReplicas") == want
        and status.get("replicas") == want
    )


def _workload_pod(name: str, namespace: str, scheduler: str | None) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "containers": [
            {"name": "c", "image": PAUSE_IMAGE, "resources": {"requests": {"cpu": "5m"}}}
        ],
    }
    if scheduler:
        spec["schedulerName"] = scheduler
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": namespace, "labels": {"lifecycle": "w"}},
            "spec": spec}  # fmt: skip


def _all_bound_once(kube: Client, namespaces: list[str], timeout: float = 180) -> int:
    """Every workload pod in ``namespaces`` bound, each with one Scheduled event; their count."""

    def bound() -> bool:
        return all(
            p["spec"].get("nodeName") for ns in namespaces for p in _pods(kube, ns, "lifecycle=w")
        )

    wait_for("every workload pod bound", bound, timeout=timeout)
    count = 0
    for ns in namespaces:
        pods = {p["metadata"]["name"] for p in _pods(kube, ns, "lifecycle=w")}
        scheduled = Counter(
            e["involvedObject"]["name"]
            for e in kube.list_items("v1", "Event", ns)
            if e.get("reason") == "Scheduled" and e["involvedObject"]["name"] in pods
        )
        assert set(scheduled) == pods, ("pods without a Scheduled event", pods - set(scheduled))
        assert all(n == 1 for n in scheduled.values()), ("bound more than once", scheduled)
        count += len(pods)
    return count


class Arrivals:
    """Pods created every ``period`` seconds for each (namespace, scheduler) while running."""

    def __init__(self, kube: Client, targets: list[tuple[str, str | None]], period: float = 2.0):
        self.kube, self.targets, self.period = kube, targets, period
        self.created = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.wait(self.period):
            for namespace, scheduler in self.targets:
                name = f"arrival-{uuid.uuid4().hex[:8]}"
                try:
                    self.kube.create(_workload_pod(name, namespace, scheduler))
                    self.created += 1
                except ApiError:
                    pass  # e.g. the API server busy; the next one comes

    def __enter__(self) -> Arrivals:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join()


def _snapshot(kube: Client, profiles: list[str]) -> dict[str, dict[str, Any]]:
    """What each profile renders to, as running: its objects' content and its engine pods."""
    out: dict[str, dict[str, Any]] = {}
    for profile in profiles:
        ns = _engine_namespace(kube, profile)
        objects: dict[str, Any] = {}
        for api, kind in (("v1", "ConfigMap"), ("v1", "ServiceAccount"), ("v1", "Service"),
                          ("apps/v1", "Deployment"), ("policy/v1", "PodDisruptionBudget"),
                          ("rbac.authorization.k8s.io/v1", "Role"),
                          ("rbac.authorization.k8s.io/v1", "RoleBinding")):  # fmt: skip
            for obj in kube.list_items(api, kind, ns, label_selector=_engines(profile)):
                content = {k: v for k, v in obj.items() if k not in ("metadata", "status")}
                content["labels"] = obj["metadata"].get("labels", {})
                objects[f"{kind}/{obj['metadata']['name']}"] = content
        pods = {p["metadata"]["uid"] for p in _pods(kube, ns, _engines(profile))}
        out[profile] = {"objects": objects, "pods": pods}
    return out


def _changes(before: Any, after: Any, path: str = "") -> list[str]:
    if isinstance(before, dict) and isinstance(after, dict):
        found: list[str] = []
        for key in sorted(set(before) | set(after)):
            found += _changes(before.get(key), after.get(key), f"{path}.{key}" if path else key)
        return found
    if isinstance(before, list) and isinstance(after, list) and len(before) == len(after):
        return [c for i, (b, a) in enumerate(zip(before, after, strict=True))
                for c in _changes(b, a, f"{path}[{i}]")]  # fmt: skip
    if before != after:
        return [f"{path}: {json.dumps(before)[:80]} -> {json.dumps(after)[:80]}"]
    return []


def report_restarts(
    report: list[str],
    title: str,
    before: dict[str, dict[str, Any]],
    after: dict[str, dict[str, Any]],
) -> dict[str, bool]:
    """Which engines restarted and why; asserts that an engine restarted exactly when its pod
    template changed. Returns profile -> restarted."""
    restarted: dict[str, bool] = {}
    for profile in sorted(before):
        old, new = before[profile], after[profile]
        changed = [
            f"{name} {line}"
            for name in sorted(set(old["objects"]) | set(new["objects"]))
            for line in _changes(old["objects"].get(name), new["objects"].get(name))
        ]
        template = [c for c in changed if c.startswith("Deployment/") and ".template." in c]
        rolled = not (old["pods"] & new["pods"])
        restarted[profile] = rolled
        if rolled:
            report.append(f"lifecycle: {title}: {profile}: engines restarted, because:")
        else:
            report.append(f"lifecycle: {title}: {profile}: engines kept running (same pods)")
        report.extend(f"lifecycle:     {c}" for c in changed or ["nothing it renders changed"])
        assert rolled == bool(template), (profile, rolled, changed)
    return restarted


def _helm(cluster: LocalCluster, *args: str) -> subprocess.CompletedProcess[str]:
    argv = [str(ensure_helm()), f"--kubeconfig={cluster.kubeconfig}", *args]
    done = subprocess.run(argv, capture_output=True, text=True, check=False)
    assert done.returncode == 0, (args, done.stdout, done.stderr)
    return done


def _image_values(image: str) -> list[str]:
    name, _, tag = image.rpartition(":")
    return ["--set", f"image.repository={name}", "--set", f"image.tag={tag}",
            "--set", f"nodeSelector.kubernetes\\.io/hostname={NODE_NAME}"]  # fmt: skip


def _settle(kube: Client, profiles: list[str]) -> None:
    """Every profile reconciled by the operator now running, and every engine rolled out."""
    time.sleep(RESYNC + 5)  # the resync reaches every profile, changed or not
    for profile in profiles:
        wait_for(f"{profile} Ready", lambda p=profile: _ready(kube, p), timeout=300)  # type: ignore[misc]
        ns = _engine_namespace(kube, profile)
        wait_for(
            f"{profile}'s engines rolled out",
            lambda ns=ns, p=profile: _rolled_out(kube, ns, f"corral-{p}"),  # type: ignore[misc]
            timeout=300,
        )


# --- fixtures -----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def previous(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[previous_release.PreviousRelease]:
    release = previous_release.prepare(ROOT, tmp_path_factory.mktemp("previous"))
    try:
        yield release
    finally:
        previous_release.remove(ROOT, release.tree)


@pytest.fixture(scope="module")
def cluster(  # this module's own: the machine's real node, and both releases' images
    corral_image: Path,
    previous: previous_release.PreviousRelease,
    tmp_path_factory: pytest.TempPathFactory,
    lock_wait: Callable[[], float],
) -> Iterator[LocalCluster]:
    ensure_node_binaries()
    cluster = LocalCluster.up(
        tmp_path_factory.mktemp("lifecycle"),
        with_kube_scheduler=True,
        nodes=RealNodes(images=[corral_image, previous.archive], lock_timeout=lock_wait()),
        progress=True,
    )
    try:
        cluster.add_nodes(3, prefix="kwok")
        kube = cluster.admin
        for ns in (TEAM_A, TEAM_B):
            kube.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
        yield cluster
    finally:
        cluster.down()


@pytest.fixture(scope="module")
def kube(cluster: LocalCluster) -> Client:
    return cluster.admin


@pytest.fixture(scope="module")
def overlays(tmp_path_factory: pytest.TempPathFactory, previous: Any) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("overlays")
    return {
        "previous": operator_overlay(root / "previous", previous.tree / "config" / "default",
                                     previous.image, ON_REAL_NODE, namespace=MOVED),
        "current": operator_overlay(root / "current", ROOT / "config" / "default", IMAGE,
                                    ON_REAL_NODE, components=[ROOT / "config" / "webhook"],
                                    namespace=MOVED),
    }  # fmt: skip


# --- kustomize, moved to another namespace, with the webhooks ----------------------------------

KUSTOMIZE_PROFILES = ["tenant-a", "pinned"]
BEFORE: dict[str, Any] = {}


def test_previous_release_installs_with_kustomize_and_schedules(
    cluster: LocalCluster, kube: Client, overlays: dict[str, Path], previous: Any
) -> None:
    cluster.kubectl("apply", "--server-side", "-k", str(overlays["previous"]))
    operators = _ready_pods(kube, MOVED, OPERATORS, 2)
    assert {p["spec"]["containers"][0]["image"] for p in operators} == {previous.image}
    # tenant-a follows the operator's engine image; pinned names the previous one itself.
    kube.create(_profile("tenant-a", tenancy={"namespaces": [TEAM_A]}))
    kube.create(_profile("pinned", image=previous.image))
    for profile in KUSTOMIZE_PROFILES:
        wait_for(f"{profile} Ready", lambda p=profile: _ready(kube, p), timeout=300)  # type: ignore[misc]
        assert _engine_namespace(kube, profile) == MOVED
    for i in range(3):
        kube.create(_workload_pod(f"a-{i}", TEAM_A, "tenant-a"))
        kube.create(_workload_pod(f"p-{i}", "default", "pinned"))
    assert _all_bound_once(kube, [TEAM_A, "default"]) == 6
    BEFORE.update(_snapshot(kube, KUSTOMIZE_PROFILES))


def test_kustomize_upgrade_restarts_only_changed_engines_and_loses_no_pod(
    cluster: LocalCluster,
    kube: Client,
    overlays: dict[str, Path],
    previous: Any,
    report: list[str],
) -> None:
    with Arrivals(kube, [(TEAM_A, "tenant-a"), ("default", "pinned")]) as arrivals:
        prerequisites(cluster.kubectl, ROOT, MOVED)  # the namespace (there) and config/crd
        cluster.kubectl("apply", "--server-side", "-k", str(overlays["current"]))
        cluster.kubectl("rollout", "status", "-n", MOVED, "deploy/corral-operator",
                        "--timeout=300s")  # fmt: skip
        _settle(kube, KUSTOMIZE_PROFILES)
    operators = _ready_pods(kube, MOVED, OPERATORS, 2)
    assert {p["spec"]["containers"][0]["image"] for p in operators} == {IMAGE}
    total = _all_bound_once(kube, [TEAM_A, "default"])
    report.append(f"lifecycle: kustomize upgrade: {arrivals.created} pods arrived during it; "
                  f"all {total} bound once")  # fmt: skip
    assert arrivals.created > 0
    restarted = report_restarts(
        report, f"kustomize upgrade {previous.commit[:7]} -> this checkout", BEFORE,
        _snapshot(kube, KUSTOMIZE_PROFILES),
    )  # fmt: skip
    assert restarted["tenant-a"]  # its engine image is the operator's, which changed
    crd = kube.get(CRD_API, "CustomResourceDefinition", CRD)
    schema = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    tenancy = schema["properties"]["spec"]["properties"]["tenancy"]["properties"]
    assert "assignPods" in tenancy  # the CRD was upgraded too


def test_the_webhooks_served_from_the_moved_namespace(cluster: LocalCluster, kube: Client) -> None:
    service = kube.get(ADMISSION, "ValidatingWebhookConfiguration", "corral.dev")
    assert service["webhooks"][0]["clientConfig"]["service"]["namespace"] == MOVED
    # A profile change goes through the validating webhook (failure policy Fail).
    _patch_profile(kube, "tenant-a", {"tenancy": {"namespaces": [TEAM_A], "assignPods": True}})
    kube.create(_profile("tenant-b", replicas=1, tenancy={"namespaces": [TEAM_B]}))
    for profile in ("tenant-a", "tenant-b"):
        wait_for(f"{profile} Ready", lambda p=profile: _ready(kube, p), timeout=300)  # type: ignore[misc]
    done = cluster.kubectl("apply", "-f", "-", check=False, input=json.dumps(
        _profile("dup", schedulerName="tenant-a")))  # fmt: skip
    assert done.returncode != 0
    assert "spec.schedulerName: 'tenant-a' is already served" in done.stderr, done.stderr

    # The pod webhook lists profiles at most every 5 s.
    def assigned() -> bool:
        name = f"assigned-{uuid.uuid4().hex[:6]}"
        pod = kube.create(_workload_pod(name, TEAM_A, None))
        if pod["spec"]["schedulerName"] != "tenant-a":
            kube.delete("v1", "Pod", name, TEAM_A)
            return False
        return True

    wait_for("a tenant pod given tenant-a's scheduler", assigned, timeout=60)
    with pytest.raises(ApiError) as refused:
        kube.create(_workload_pod("wrong", TEAM_A, "tenant-b"))
    assert "spec.schedulerName: 'tenant-b' is the scheduler of SchedulerProfile 'tenant-b', " \
        "which does not serve namespace 'team-a'" in str(refused.value)  # fmt: skip
    assert _all_bound_once(kube, [TEAM_A]) > 0  # the assigned pod was bound by tenant-a


def test_kustomize_uninstall_leaves_the_tenants_schedulers(
    cluster: LocalCluster, kube: Client, overlays: dict[str, Path]
) -> None:
    profiles = [*KUSTOMIZE_PROFILES, "tenant-b"]
    engines = {p: {q["metadata"]["uid"] for q in _pods(kube, MOVED, _engines(p))} for p in profiles}
    cluster.kubectl("delete", "-k", str(overlays["current"]), "--wait=true")
    wait_for("the operator pods to go", lambda: not _pods(kube, MOVED, OPERATORS), timeout=180)
    for kind in ("ValidatingWebhookConfiguration", "MutatingWebhookConfiguration"):
        with pytest.raises(ApiError) as gone:
            kube.get(ADMISSION, kind, "corral.dev")
        assert gone.value.not_found, kind
    assert kube.get(CRD_API, "CustomResourceDefinition", CRD)
    assert kube.get("v1", "Namespace", MOVED)
    for profile in profiles:
        assert kube.get(API, KIND, profile)
        pods = _pods(kube, MOVED, _engines(profile))
        assert {p["metadata"]["uid"] for p in pods} == engines[profile], profile
        assert all(_running_ready(p) for p in pods), profile
    # The engines schedule without the operator; no webhook is left to refuse a profile change.
    kube.create(_workload_pod("after-uninstall", TEAM_A, "tenant-a"))
    _all_bound_once(kube, [TEAM_A])
    _patch_profile(kube, "tenant-b", {"replicas": 1, "logLevel": "Debug"})
    # Removing Corral entirely (docs/upgrade.md): deleting the profiles removes their engines.
    for profile in profiles:
        kube.delete(API, KIND, profile)
    wait_for(
        "garbage collection of the engines",
        lambda: not _pods(kube, MOVED, "app.kubernetes.io/part-of=corral"),
        timeout=180,
    )


# --- Helm: the previous chart, upgraded, uninstalled --------------------------------------------

HELM_PROFILES = ["follow", "pinned-helm"]
KEPT_CRDS = (CRD, "clusterkopfpeerings.kopf.dev")
# Every kind the chart renders but the kept Namespace (cert-manager's are off: none here).
RELEASE_KINDS = (
    ("v1", "ServiceAccount"),
    ("v1", "Service"),
    ("v1", "Secret"),
    ("v1", "ConfigMap"),
    ("apps/v1", "Deployment"),
    ("rbac.authorization.k8s.io/v1", "Role"),
    ("rbac.authorization.k8s.io/v1", "RoleBinding"),
    ("rbac.authorization.k8s.io/v1", "ClusterRole"),
    ("rbac.authorization.k8s.io/v1", "ClusterRoleBinding"),
    (ADMISSION, "ValidatingWebhookConfiguration"),
    (ADMISSION, "MutatingWebhookConfiguration"),
    (CRD_API, "CustomResourceDefinition"),
)


def test_previous_chart_installs_and_schedules(
    cluster: LocalCluster, kube: Client, previous: Any
) -> None:
    chart = previous.tree / "charts" / "corral"
    _helm(cluster, "install", "corral", str(chart), *_image_values(previous.image), "--wait",
          "--timeout=5m")  # fmt: skip
    namespace = kube.get("v1", "Namespace", HELM_NS)
    assert namespace["metadata"]["annotations"]["meta.helm.sh/release-name"] == "corral"
    assert namespace["metadata"]["annotations"]["meta.helm.sh/release-namespace"] == "default"
    kube.create(_profile("follow"))
    kube.create(_profile("pinned-helm", image=previous.image))
    for profile in HELM_PROFILES:
        wait_for(f"{profile} Ready", lambda p=profile: _ready(kube, p), timeout=300)  # type: ignore[misc]
        assert _engine_namespace(kube, profile) == HELM_NS
    for i in range(3):
        kube.create(_workload_pod(f"h-{i}", TEAM_B, "follow"))
    assert _all_bound_once(kube, [TEAM_B]) == 3
    BEFORE.clear()
    BEFORE.update(_snapshot(kube, HELM_PROFILES))


def test_helm_upgrade_keeps_the_namespace_and_takes_the_crds(
    cluster: LocalCluster, kube: Client, previous: Any, report: list[str]
) -> None:
    with Arrivals(kube, [(TEAM_B, "follow"), (TEAM_B, "pinned-helm")]) as arrivals:
        # The one-time step from charts up to 0.1.0 (docs/upgrade.md): the CRDs, installed from
        # crds/ (or by kubectl), become the release's.
        _helm(cluster, "upgrade", "corral", str(ROOT / "charts" / "corral"), "--take-ownership",
              *_image_values(IMAGE), "--set", "webhook.enabled=true", "--wait",
              "--timeout=5m")  # fmt: skip
        _settle(kube, HELM_PROFILES)
    total = _all_bound_once(kube, [TEAM_B])
    report.append(f"lifecycle: helm upgrade: {arrivals.created} pods arrived during it; "
                  f"all {total} bound once")  # fmt: skip
    restarted = report_restarts(
        report, f"helm upgrade chart 0.1.0 ({previous.commit[:7]}) -> 0.2.0", BEFORE,
        _snapshot(kube, HELM_PROFILES),
    )  # fmt: skip
    assert restarted["follow"]
    namespace = kube.get("v1", "Namespace", HELM_NS)  # not deleted with the old template
    assert namespace["metadata"]["annotations"]["helm.sh/resource-policy"] == "keep"
    operators = _ready_pods(kube, HELM_NS, OPERATORS, 2)  # where it was, not in `default`
    assert {p["spec"]["containers"][0]["image"] for p in operators} == {IMAGE}
    crd = kube.get(CRD_API, "CustomResourceDefinition", CRD)
    assert crd["metadata"]["annotations"]["helm.sh/resource-policy"] == "keep"
    assert crd["metadata"]["labels"]["app.kubernetes.io/managed-by"] == "Helm"


def test_helm_uninstall_leaves_the_tenants_schedulers(cluster: LocalCluster, kube: Client) -> None:
    engines = {
        p: {q["metadata"]["uid"] for q in _pods(kube, HELM_NS, _engines(p))} for p in HELM_PROFILES
    }
    _helm(cluster, "uninstall", "corral", "--wait")
    wait_for("the operator pods to go", lambda: not _pods(kube, HELM_NS, OPERATORS), timeout=180)
    assert kube.get("v1", "Namespace", HELM_NS)
    assert kube.get(CRD_API, "CustomResourceDefinition", CRD)
    # Nothing of the release is left but what it keeps (the CRDs, the adopted Namespace) and
    # the one object the operator made itself, its webhook's serving pair (docs/upgrade.md).
    left = sorted(
        f"{kind}/{o['metadata'].get('namespace', '')}/{o['metadata']['name']}"
        for api, kind in RELEASE_KINDS
        for o in kube.list_items(api, kind, label_selector="app.kubernetes.io/instance=corral")
    )
    assert left == [f"CustomResourceDefinition//{c}" for c in sorted(KEPT_CRDS)]
    assert not kube.list_items("v1", "Secret", "default", label_selector="owner=helm,name=corral")
    made = kube.list_items("v1", "Secret", HELM_NS, label_selector="app.kubernetes.io/part-of")
    assert [s["metadata"]["name"] for s in made] == ["corral-webhook-tls"]
    for profile in HELM_PROFILES:
        assert kube.get(API, KIND, profile)
        pods = _pods(kube, HELM_NS, _engines(profile))
        assert {p["metadata"]["uid"] for p in pods} == engines[profile], profile
    kube.create(_workload_pod("after-helm-uninstall", TEAM_B, "follow"))
    _all_bound_once(kube, [TEAM_B])
