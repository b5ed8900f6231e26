"""`corral simulate --from-cluster` reads upstream's PodGroups and Workloads
(``scheduling.k8s.io/v1beta1``, served here with GenericWorkload) from the real control plane:
the snapshot keeps them, and a profile with the gate places each gang whole or not at all, as
the engine would. A tenant reads them in its own namespace only, and is told, in one line per
kind and place, what it could not read."""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import yaml

from corral.cli import main
from corral.k8s import JSON, ApiError, Client
from corral.testing.controlplane import LocalCluster
from corral.testing.credentials import write_kubeconfig
from support.engine_process import create_all
from support.gang import member, pod_group

pytestmark = pytest.mark.e2e

V1BETA1 = "scheduling.k8s.io/v1beta1"
RBAC = "rbac.authorization.k8s.io/v1"


def workload(name: str, namespace: str, min_count: int) -> JSON:
    return {
        "apiVersion": V1BETA1,
        "kind": "Workload",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"podGroupTemplates": [
            {"name": "workers", "schedulingPolicy": {"gang": {"minCount": min_count}}}
        ]},
    }  # fmt: skip


def profile_file(path: Path, scheduler: str) -> Path:
    path.write_text(yaml.safe_dump({
        "apiVersion": "corral.dev/v1alpha1", "kind": "SchedulerProfile",
        "metadata": {"name": scheduler},
        "spec": {"namespace": "corral-system", "featureGates": {"GenericWorkload": True}},
    }))  # fmt: skip
    return path


@pytest.fixture
def tenant(
    gang_kube: Client, gang_namespace: str, tmp_path: Path
) -> Iterator[Path]:  # fmt: skip
    """A tenant of ``gang_namespace``: lists its pods and PodGroups there, and Nodes; not
    Workloads, nothing elsewhere."""
    ns, nodes = gang_namespace, f"t-tenant-nodes-{gang_namespace}"
    rules = [
        {"apiGroups": [""], "resources": ["pods"], "verbs": ["list"]},
        {"apiGroups": ["scheduling.k8s.io"], "resources": ["podgroups"], "verbs": ["list"]},
    ]
    gang_kube.create(
        {
            "apiVersion": "v1",
            "kind": "ServiceAccount",
            "metadata": {"name": "tenant", "namespace": ns},
        }
    )
    gang_kube.create(
        {
            "apiVersion": RBAC,
            "kind": "Role",
            "metadata": {"name": "tenant", "namespace": ns},
            "rules": rules,
        }
    )
    gang_kube.create(
        {
            "apiVersion": RBAC,
            "kind": "ClusterRole",
            "metadata": {"name": nodes},
            "rules": [{"apiGroups": [""], "resources": ["nodes"], "verbs": ["list"]}],
        }
    )
    subjects = [{"kind": "ServiceAccount", "name": "tenant", "namespace": ns}]
    gang_kube.create(
        {
            "apiVersion": RBAC,
            "kind": "RoleBinding",
            "metadata": {"name": "tenant", "namespace": ns},
            "subjects": subjects,
            "roleRef": {
                "apiGroup": RBAC.split("/", maxsplit=1)[0],
                "kind": "Role",
                "name": "tenant",
            },
        }
    )
    gang_kube.create({"apiVersion": RBAC, "kind": "ClusterRoleBinding",
                      "metadata": {"name": nodes}, "subjects": subjects,
                      "roleRef": {"apiGroup": RBAC.split("/", maxsplit=1)[0], "kind": "ClusterRole",
                                  "name": nodes}})  # fmt: skip
    account = gang_kube.with_token(gang_kube.request_token(ns, "tenant"))
    deadline = time.monotonic() + 15
    while True:  # the RBAC authorizer sees new bindings through an informer
        try:
            account.request("GET", f"/apis/{V1BETA1}/namespaces/{ns}/podgroups")
            account.request("GET", "/api/v1/nodes")
            break
        except ApiError:
            assert time.monotonic() < deadline, "the tenant's bindings never took effect"
            time.sleep(0.2)
    path = tmp_path / "tenant.kubeconfig"
    write_kubeconfig(path, server=gang_kube.server, ca_file=Path(str(gang_kube.ca_file)),
                     token=gang_kube.request_token(ns, "tenant"), user="tenant")  # fmt: skip
    yield path
    gang_kube.delete(RBAC, "ClusterRoleBinding", nodes)
    gang_kube.delete(RBAC, "ClusterRole", nodes)


def simulate(
    capsys: pytest.CaptureFixture[str], kubeconfig: Path, *args: str
) -> tuple[JSON, str]:  # fmt: skip
    """The JSON report; the exit code is 3: the "eval" gang is not placed."""
    code = main(["simulate", "--from-cluster", "--kubeconfig", str(kubeconfig), *args,
                 "-o", "json"])  # fmt: skip
    out, err = capsys.readouterr()
    assert code == 3, err
    return json.loads(out), err


@pytest.mark.parametrize("who", ["admin", "tenant"])
def test_from_cluster_reads_pod_groups_and_places_each_gang_whole(
    who: str,
    gang_cluster: LocalCluster,
    gang_kube: Client,
    gang_namespace: str,
    gang_nodes: Callable[..., list[str]],
    tenant: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Two 5-cpu nodes: "train" (4 of 2 cpu, minCount 4) and "eval" (3 of 1 cpu, minCount 3)
    cannot both fit: the one placed first fits whole, the other none of it. Nothing schedules
    these pods for real (no scheduler of their name runs): only the simulation places them."""
    ns = gang_namespace
    pool = {"test-pool": ns}
    gang_nodes(2, cpu="5", memory="16Gi", labels=pool)
    scheduler = f"nobody-{uuid.uuid4().hex[:6]}"
    gang_kube.create(pod_group("train", ns, min_count=4))
    gang_kube.create(pod_group("eval", ns, min_count=3))
    gang_kube.create(workload("train", ns, 4))
    create_all(gang_kube, [
        *(member(f"train-{i}", ns, scheduler, "train", cpu="2", nodeSelector=pool)
          for i in range(4)),
        *(member(f"eval-{i}", ns, scheduler, "eval", cpu="1", nodeSelector=pool)
          for i in range(3)),
    ])  # fmt: skip
    kubeconfig = gang_cluster.kubeconfig if who == "admin" else tenant
    saved = tmp_path / "snapshot.yaml"
    report, _ = simulate(capsys, kubeconfig, "-n", ns, "-f",
                         str(profile_file(tmp_path / "profile.yaml", scheduler)),
                         "--save-snapshot", str(saved))  # fmt: skip

    items = yaml.safe_load(saved.read_text())["items"]
    # The admin's snapshot also holds the groups earlier tests left in their namespaces.
    groups = sorted(i["metadata"]["name"] for i in items
                    if (i["apiVersion"], i["kind"]) == (V1BETA1, "PodGroup")
                    and i["metadata"].get("namespace") == ns)  # fmt: skip
    assert groups == ["eval", "train"], groups
    placed = {p["pod"]: (p["verdict"], p.get("podGroup")) for p in report["placements"]
              if p["pod"].startswith(f"{ns}/")}  # fmt: skip
    # Whichever gang the queue takes first fits whole; the other then finds room for part of
    # it only, so none of it is placed (the pods were created together: their order is not
    # this test's).
    whole: dict[str, bool] = {}
    for gang, size in (("train", 4), ("eval", 3)):
        verdicts = {v for k, v in placed.items() if f"/{gang}-" in k}
        assert len([k for k in placed if f"/{gang}-" in k]) == size, placed
        assert all(group == f"{ns}/{gang}" for _, group in verdicts), placed
        assert len({verdict == "Scheduled" for verdict, _ in verdicts}) == 1, placed
        whole[gang] = ("Scheduled", f"{ns}/{gang}") in verdicts
    assert sorted(whole.values()) == [False, True], placed
    notes = report["notes"]
    workloads = [i for i in items if (i["apiVersion"], i["kind"]) == (V1BETA1, "Workload")]
    if who == "admin":
        assert [w["metadata"]["name"] for w in workloads if
                w["metadata"]["namespace"] == ns] == ["train"]  # fmt: skip
        assert not [n for n in notes if "PodGroup" in n and "could not read" in n], notes
        return
    # The tenant: its namespace's PodGroups; no Workload; each refusal said once, per place.
    assert workloads == []
    assert all(i["metadata"].get("namespace") in (None, ns) for i in items)
    said = [n.split(": not allowed")[0] for n in notes if "(scheduling.k8s.io/v1beta1)" in n]
    assert said == [
        f"could not read PodGroup (scheduling.k8s.io/v1beta1) outside namespace(s) {ns}",
        f"could not read Workload (scheduling.k8s.io/v1beta1) outside namespace(s) {ns}",
        f"could not read Workload (scheduling.k8s.io/v1beta1) in namespace {ns}",
    ], notes
