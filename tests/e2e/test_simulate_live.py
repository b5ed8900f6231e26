"""`corral simulate --from-cluster`, `--capacity`, `--save-snapshot` and `corral explain POD` on
the real control plane: the capacity it counts is what upstream kube-scheduler really places
(and the next pod's reason is the one it gives), a saved snapshot replays offline to the same
answer, and a tenant's own credentials read only what they may, saying what they could not
(explain refuses a pod they may not read in one line)."""

from __future__ import annotations

import json
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from corral.cli import clusterread, main
from corral.k8s import JSON, Client
from corral.testing.controlplane import LocalCluster
from corral.testing.credentials import write_kubeconfig
from support.sp_crds import SP_SCHEDULING, pod_group_crd

Run = Callable[..., tuple[int, str, str]]


@pytest.fixture
def corral(capsys: pytest.CaptureFixture[str]) -> Run:
    def run(*argv: str) -> tuple[int, str, str]:
        code = main(list(argv))
        out, err = capsys.readouterr()
        return code, out, err

    return run


def wait_until(what: str, check: Callable[[], bool], timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, f"timed out after {timeout:.0f}s waiting for {what}"
        time.sleep(0.25)


def pod(name: str, namespace: str, pool: str, cpu: str) -> JSON:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "nodeSelector": {"test-pool": pool},
            "containers": [
                {"name": "c", "image": "registry.k8s.io/pause:3.10",
                 "resources": {"requests": {"cpu": cpu, "memory": "64Mi"}}}
            ],
        },
    }  # fmt: skip


def scheduled_condition(kube: Client, namespace: str, name: str) -> JSON | None:
    got = kube.get("v1", "Pod", name, namespace)
    for cond in got.get("status", {}).get("conditions") or ():
        if cond.get("type") == "PodScheduled":
            return dict(cond)
    return None


def unschedulable_message(kube: Client, namespace: str, name: str) -> str:
    found: dict[str, str] = {}

    def said() -> bool:
        cond = scheduled_condition(kube, namespace, name)
        if cond and cond.get("reason") == "Unschedulable":
            found["message"] = str(cond.get("message"))
        return bool(found)

    wait_until(f"{name} to be found Unschedulable", said)
    return found["message"]


def first_sentence(message: str) -> str:
    """The Filter summary, without the preemption part (other tests' pods may come and go
    between the two readings, which changes nothing of our pool)."""
    return message.split(" preemption:", 1)[0]


def test_capacity_is_what_kube_scheduler_places(
    cluster: LocalCluster,
    kube: Client,
    namespace: str,
    fake_nodes: Callable[..., list[str]],
    corral: Run,
    tmp_path: Path,
) -> None:
    """Done-when: place as many pods as --capacity says for real, and the next one stays
    Pending with the reason given."""
    fake_nodes(2, cpu="2", memory="4Gi", labels={"test-pool": namespace})
    template = tmp_path / "pod.yaml"
    template.write_text(yaml.safe_dump(pod("web", namespace, namespace, "500m")))
    code, out, err = corral("simulate", "--from-cluster", "--kubeconfig", str(cluster.kubeconfig),
                            "--capacity", "-f", str(template), "-o", "json")  # fmt: skip
    assert code == 0, err
    found = json.loads(out)["capacity"]
    assert found["fits"] == 8  # 4 per 2-CPU node
    assert sorted(found["perNode"].values()) == [4, 4]

    for i in range(found["fits"]):
        kube.create(pod(f"web-{i}", namespace, namespace, "500m"))

    def all_bound() -> bool:
        pods = kube.list_items("v1", "Pod", namespace)
        return len(pods) == found["fits"] and all(p["spec"].get("nodeName") for p in pods)

    wait_until(f"{found['fits']} pods bound by kube-scheduler", all_bound)
    real = Counter(p["spec"]["nodeName"] for p in kube.list_items("v1", "Pod", namespace))
    assert real == Counter(found["perNode"])
    kube.create(pod("web-next", namespace, namespace, "500m"))
    message = unschedulable_message(kube, namespace, "web-next")
    assert first_sentence(message) == first_sentence(found["next"]["reason"])
    assert "2 Insufficient cpu" in message


def test_a_saved_snapshot_replays_offline_to_the_same_answer(
    cluster: LocalCluster,
    kube: Client,
    namespace: str,
    fake_nodes: Callable[..., list[str]],
    corral: Run,
    tmp_path: Path,
) -> None:
    (node,) = fake_nodes(1, cpu="4", memory="8Gi", labels={"test-pool": namespace})
    kube.create(pod("running", namespace, namespace, "1"))

    def bound() -> bool:
        return bool(kube.get("v1", "Pod", "running", namespace)["spec"].get("nodeName"))

    wait_until("the running pod bound", bound)
    new = tmp_path / "new.yaml"
    new.write_text(yaml.safe_dump(pod("new", namespace, namespace, "2")))
    saved = tmp_path / "snapshot.yaml"
    admin = ["--from-cluster", "--kubeconfig", str(cluster.kubeconfig)]
    live = corral("simulate", *admin, "--save-snapshot", str(saved), "--capacity", "-f", str(new),
                  "-o", "json")  # fmt: skip
    assert live[0] == 0, live[2]
    listing = yaml.safe_load(saved.read_text())
    assert listing["kind"] == "List"
    assert listing["metadata"]["annotations"][clusterread.ANNOTATION].startswith(kube.server)
    names = {(i["kind"], i["metadata"]["name"]) for i in listing["items"]}
    assert ("Pod", "running") in names
    assert ("Pod", "new") not in names  # what -f adds is not the cluster's
    offline = corral("simulate", "-f", str(saved), "--capacity", "-f", str(new), "-o", "json")
    assert offline[0] == 0, offline[2]
    assert json.loads(offline[1])["capacity"]["fits"] == json.loads(live[1])["capacity"]["fits"]
    # 3 CPUs left of 4: one more 2-CPU pod.
    assert json.loads(live[1])["capacity"]["perNode"] == {node: 1}


# --- a tenant ----------------------------------------------------------------------------------

NAMESPACED_READS = [
    {"apiGroups": [""], "resources": ["pods", "persistentvolumeclaims", "services",
                                      "replicationcontrollers"], "verbs": ["get", "list"]},
    {"apiGroups": ["apps"], "resources": ["replicasets", "statefulsets"], "verbs": ["list"]},
    {"apiGroups": ["policy"], "resources": ["poddisruptionbudgets"], "verbs": ["list"]},
    {"apiGroups": ["storage.k8s.io"], "resources": ["csistoragecapacities"], "verbs": ["list"]},
    {"apiGroups": ["resource.k8s.io"], "resources": ["resourceclaims"], "verbs": ["list"]},
]  # fmt: skip


def rbac(kind: str, name: str, namespace: str | None, rules: list[JSON]) -> JSON:
    meta: JSON = {"name": name, **({"namespace": namespace} if namespace else {})}
    return {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": kind, "metadata": meta,
            "rules": rules}  # fmt: skip


def binding(kind: str, name: str, namespace: str | None, role_kind: str, account: str,
            account_ns: str) -> JSON:  # fmt: skip
    meta: JSON = {"name": name, **({"namespace": namespace} if namespace else {})}
    return {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": kind,
        "metadata": meta,
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": role_kind, "name": name},
        "subjects": [{"kind": "ServiceAccount", "name": account, "namespace": account_ns}],
    }


@pytest.fixture
def other_namespace(kube: Client) -> Iterator[str]:
    name = f"t-other-{uuid.uuid4().hex[:8]}"
    kube.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
    try:
        yield name
    finally:
        kube.delete("v1", "Namespace", name)


@pytest.fixture
def tenant_kubeconfig(
    kube: Client,
    namespace: str,
    service_account_client: Callable[[str, str], Client],
    tmp_path: Path,
) -> Iterator[Path]:
    """A tenant of ``namespace``: reads what the engine reads there, and Nodes; nothing else."""
    nodes = f"t-tenant-nodes-{namespace}"
    kube.create(rbac("Role", "tenant", namespace, NAMESPACED_READS))
    kube.create(binding("RoleBinding", "tenant", namespace, "Role", "tenant", namespace))
    kube.create(rbac("ClusterRole", nodes, None,
                     [{"apiGroups": [""], "resources": ["nodes"], "verbs": ["list"]}]))  # fmt: skip
    kube.create(binding("ClusterRoleBinding", nodes, None, "ClusterRole", "tenant", namespace))
    tenant = service_account_client(namespace, "tenant")
    token = tenant.authorization()
    assert token is not None
    path = tmp_path / "tenant.kubeconfig"
    write_kubeconfig(path, server=kube.server, ca_file=Path(str(kube.ca_file)),
                     token=token.removeprefix("Bearer "), user="tenant")  # fmt: skip
    # The RBAC authorizer reads bindings from an informer: wait until it sees ours.
    deadline = time.monotonic() + 15
    while True:
        try:
            tenant.request("GET", f"/api/v1/namespaces/{namespace}/pods")
            tenant.request("GET", "/api/v1/nodes")
            break
        except Exception:
            assert time.monotonic() < deadline, "the tenant's bindings never took effect"
            time.sleep(0.2)
    yield path
    kube.delete("rbac.authorization.k8s.io/v1", "ClusterRoleBinding", nodes)
    kube.delete("rbac.authorization.k8s.io/v1", "ClusterRole", nodes)


def test_a_tenant_reads_its_own_and_is_told_what_it_could_not(
    kube: Client,
    namespace: str,
    other_namespace: str,
    fake_nodes: Callable[..., list[str]],
    tenant_kubeconfig: Path,
    corral: Run,
    tmp_path: Path,
) -> None:
    fake_nodes(1, cpu="4", memory="8Gi", labels={"test-pool": namespace})
    kube.create(pod("mine", namespace, namespace, "1"))
    kube.create(pod("theirs", other_namespace, namespace, "1"))
    wait_until("both pods bound", lambda: all(
        kube.get("v1", "Pod", n, ns)["spec"].get("nodeName")
        for n, ns in (("mine", namespace), ("theirs", other_namespace))))  # fmt: skip
    saved = tmp_path / "snapshot.yaml"
    tenant = ["--from-cluster", "--kubeconfig", str(tenant_kubeconfig), "-n", namespace]
    code, out, err = corral("simulate", *tenant, "--save-snapshot", str(saved), "-o", "json")
    assert code == 0, err
    notes = json.loads(out)["notes"]
    assert any(
        n.startswith(f"could not read Pod outside namespace(s) {namespace}: not allowed to read "
                     "Pod: ") and n.endswith("so this simulation does not count it")
        for n in notes
    ), notes  # fmt: skip
    # Cluster-scoped kinds the tenant has no grant for are said, never guessed.
    assert any(n.startswith("could not read PriorityClass cluster-wide: ") for n in notes), notes
    items = yaml.safe_load(saved.read_text())["items"]
    pods = {
        (p["metadata"]["namespace"], p["metadata"]["name"]) for p in items if p["kind"] == "Pod"
    }
    assert (namespace, "mine") in pods
    assert all(ns == namespace for ns, _ in pods), pods  # nothing of another tenant
    assert other_namespace not in saved.read_text()


def test_what_the_engine_lists_as_namespaced_is_what_the_api_server_says(kube: Client) -> None:
    """A tenant's fallback lists a namespaced kind in each of their namespaces: it needs to know
    which kinds are namespaced, as the API server's discovery says."""
    scoped: dict[str, bool] = {}
    for path in clusterread.PATHS.values():
        group = path.rsplit("/", 1)[0]
        try:
            listing: Any = kube.request("GET", group)
        except Exception:  # a group this API server does not serve
            continue
        for resource in listing.get("resources", ()):
            scoped[f"{group}/{resource['name']}"] = bool(resource["namespaced"])
    for kind, path in clusterread.PATHS.items():
        if path in scoped:
            assert (kind in clusterread.NAMESPACED) == scoped[path], kind
    assert len([p for p in clusterread.PATHS.values() if p in scoped]) >= 15


# --- corral explain POD ------------------------------------------------------------------------


def test_explain_says_why_a_live_pod_is_pending_with_a_tenants_credentials(
    kube: Client,
    namespace: str,
    other_namespace: str,
    fake_nodes: Callable[..., list[str]],
    tenant_kubeconfig: Path,
    corral: Run,
) -> None:
    """Done-when: explain works with a tenant's credentials (the verdicts of the cycle per node,
    the live scheduler's own words beside them) and says what it could not read."""
    (node,) = fake_nodes(1, cpu="2", memory="4Gi", labels={"test-pool": namespace})
    kube.create(pod("big", namespace, namespace, "3"))
    live = unschedulable_message(kube, namespace, "big")
    creds = ["--kubeconfig", str(tenant_kubeconfig)]
    code, out, err = corral("explain", "big", "-n", namespace, *creds)
    assert code == 3, err
    said, verdict, *table = out.splitlines()
    assert said == (f"{namespace}/big: schedulerName default-scheduler; its scheduler says: "
                    f"PodScheduled=False Unschedulable: {live}")  # fmt: skip
    assert verdict.startswith(f"{namespace}/big: unschedulable: ")
    assert first_sentence(verdict.split(": unschedulable: ", 1)[1]) == first_sentence(live)
    (row,) = [line.split() for line in table if line.split()[:1] == [node]]
    assert row[1:] == ["NodeResourcesFit:", "Insufficient", "cpu"]
    assert f"note: could not read Pod outside namespace(s) {namespace}: " in err
    code, out, err = corral("explain", "big", "-n", namespace, *creds, "-o", "json")
    assert code == 3
    body = json.loads(out)
    assert (body["kind"], body["pod"], body["verdict"]) == (
        "PodExplanation",
        f"{namespace}/big",
        "Unschedulable",
    )
    (cycle,) = body["explanations"]
    fit = [c for c in cycle["filter"] if c["plugin"] == "NodeResourcesFit"]
    # More than the node's allocatable: no eviction could make room.
    assert fit[0]["nodes"][node] == {
        "code": "UnschedulableAndUnresolvable",
        "message": "Insufficient cpu",
    }


@pytest.mark.parametrize(
    ("target", "message"),
    [
        pytest.param("other", "corral: not allowed to read pod {other}/p: ", id="other-tenant"),
        pytest.param("missing", "corral: pod {ns}/nope not found", id="not-found"),
        pytest.param("foreign", "corral: {ns}/foreign names schedulerName 'elsewhere', which no "
                     "SchedulerProfile you can read has; give that scheduler's configuration with "
                     "--config", id="unknown-scheduler"),
    ],
)  # fmt: skip
def test_explain_refuses_cleanly_what_a_tenant_may_not_ask(
    kube: Client,
    namespace: str,
    other_namespace: str,
    tenant_kubeconfig: Path,
    corral: Run,
    target: str,
    message: str,
) -> None:
    kube.create(pod("p", other_namespace, namespace, "1"))
    foreign = pod("foreign", namespace, namespace, "1")
    foreign["spec"]["schedulerName"] = "elsewhere"
    kube.create(foreign)
    name, ns = {"other": ("p", other_namespace), "missing": ("nope", namespace),
                "foreign": ("foreign", namespace)}[target]  # fmt: skip
    code, out, err = corral("explain", name, "-n", ns, "--kubeconfig", str(tenant_kubeconfig))
    assert (code, out) == (2, "")
    (line,) = err.strip().splitlines()
    assert line.startswith(message.format(other=other_namespace, ns=namespace)), line


def test_explain_a_bound_pod_says_nothing_is_pending(
    cluster: LocalCluster,
    kube: Client,
    namespace: str,
    fake_nodes: Callable[..., list[str]],
    corral: Run,
) -> None:
    (node,) = fake_nodes(1, cpu="2", memory="4Gi", labels={"test-pool": namespace})
    kube.create(pod("small", namespace, namespace, "1"))

    def bound() -> bool:
        return bool(kube.get("v1", "Pod", "small", namespace)["spec"].get("nodeName"))

    wait_until("small bound", bound)
    code, out, _ = corral("explain", "small", "-n", namespace, "--kubeconfig",
                          str(cluster.kubeconfig))  # fmt: skip
    assert (code, out) == (0, f"{namespace}/small is bound to {node}: nothing is pending\n")


def sp_pod_group(name: str, namespace: str) -> JSON:
    meta = {"name": name, "namespace": namespace}
    return {"apiVersion": SP_SCHEDULING, "kind": "PodGroup", "metadata": meta,
            "spec": {"minMember": 2}}  # fmt: skip


def test_scheduler_plugins_pod_groups_are_read_where_the_caller_may(
    kube: Client,
    cluster: LocalCluster,
    namespace: str,
    other_namespace: str,
    tenant_kubeconfig: Path,
    corral: Run,
    tmp_path: Path,
) -> None:
    """With scheduler-plugins' PodGroup CRD installed, ``--from-cluster`` lists its PodGroups
    (kind PodGroup, ``scheduling.x-k8s.io/v1alpha1``: what Coscheduling reads); a tenant who
    may not list them is told so, per place, and gets none of another namespace's."""
    with pod_group_crd(kube):
        kube.create(sp_pod_group("mine", namespace))
        kube.create(sp_pod_group("theirs", other_namespace))

        def read(kubeconfig: Path) -> tuple[list[JSON], list[str]]:
            saved = tmp_path / "snapshot.yaml"
            args = ["--kubeconfig", str(kubeconfig), "-n", namespace, "--save-snapshot", str(saved)]
            code, out, err = corral("simulate", "--from-cluster", *args, "-o", "json")
            # 3: a pending pod the shared cluster holds (another test's) is not placed.
            assert code in (0, 3), err
            items = yaml.safe_load(saved.read_text())["items"]
            groups = [
                i for i in items if (i["apiVersion"], i["kind"]) == (SP_SCHEDULING, "PodGroup")
            ]
            return groups, json.loads(out)["notes"]

        groups, notes = read(cluster.kubeconfig)
        names = {(g["metadata"]["namespace"], g["metadata"]["name"]) for g in groups}
        assert {(namespace, "mine"), (other_namespace, "theirs")} <= names, names
        assert not [n for n in notes if "PodGroup" in n], notes

        groups, notes = read(tenant_kubeconfig)
        assert groups == []
        said = [n.split(": not allowed")[0] for n in notes if f"({SP_SCHEDULING})" in n]
        assert said == [
            f"could not read PodGroup ({SP_SCHEDULING}) outside namespace(s) {namespace}",
            f"could not read PodGroup ({SP_SCHEDULING}) in namespace {namespace}",
        ], notes
