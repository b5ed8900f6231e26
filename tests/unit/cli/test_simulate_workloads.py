"""Workloads given to `corral simulate -f` are expanded into the pods their controllers would
create (names, labels, owners, a StatefulSet's claims), and bad ones are refused at the field."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from tests.unit.cli.conftest import Run

from corral.cli import workloads

TEMPLATE: dict[str, Any] = {
    "metadata": {"labels": {"app": "x"}},
    "spec": {"containers": [{"name": "c", "image": "i"}]},
}


def workload(kind: str, **spec: Any) -> dict[str, Any]:
    api = "batch/v1" if kind == "Job" else "apps/v1"
    return {
        "apiVersion": api,
        "kind": kind,
        "metadata": {"name": "w", "namespace": "ns"},
        "spec": {"template": TEMPLATE, **spec},
    }


CLAIM_TEMPLATE = {
    "metadata": {"name": "data"},
    "spec": {"resources": {"requests": {"storage": "1Gi"}}},
}
HASH = workloads.template_hash(TEMPLATE)


@pytest.mark.parametrize(
    ("obj", "pods", "objects", "labels"),
    [
        pytest.param(workload("Deployment", replicas=2), [f"w-{HASH}-0", f"w-{HASH}-1"],
                     [("ReplicaSet", f"w-{HASH}")], {"app": "x", "pod-template-hash": HASH},
                     id="deployment"),
        pytest.param(workload("Deployment"), [f"w-{HASH}-0"], [("ReplicaSet", f"w-{HASH}")],
                     {"app": "x", "pod-template-hash": HASH}, id="deployment-default-replicas"),
        pytest.param(workload("ReplicaSet", replicas=0), [], [("ReplicaSet", "w")], {},
                     id="replicaset-zero"),
        pytest.param(workload("StatefulSet", replicas=2, volumeClaimTemplates=[CLAIM_TEMPLATE]),
                     ["w-0", "w-1"],
                     [("StatefulSet", "w"), ("PersistentVolumeClaim", "data-w-0"),
                      ("PersistentVolumeClaim", "data-w-1")],
                     {"app": "x", "statefulset.kubernetes.io/pod-name": "w-0"}, id="statefulset"),
        pytest.param(workload("Job", parallelism=3, completions=2), ["w-0", "w-1"], [],
                     {"app": "x", "batch.kubernetes.io/job-name": "w"}, id="job-min-of-both"),
    ],
)  # fmt: skip
def test_a_workload_makes_its_controllers_pods(
    obj: dict[str, Any], pods: list[str], objects: list[tuple[str, str]], labels: dict[str, str]
) -> None:
    made = workloads.expand(obj)
    assert [p["metadata"]["name"] for p in made.pods] == pods
    assert [(o["kind"], o["metadata"]["name"]) for o in made.objects] == objects
    uids = {p["metadata"]["uid"] for p in made.pods} | {o["metadata"]["uid"] for o in made.objects}
    assert len(uids) == len(made.pods) + len(made.objects)
    if not made.pods:
        return
    first = made.pods[0]
    assert first["metadata"]["namespace"] == "ns"
    assert labels.items() <= first["metadata"]["labels"].items()
    (owner,) = first["metadata"]["ownerReferences"]
    assert owner["controller"] is True
    owners = {o["metadata"]["uid"] for o in made.objects if o["kind"] != "PersistentVolumeClaim"}
    if owners:  # the pods' owner is an object of the simulation (default spreading finds it)
        assert owner["uid"] in owners
    if obj["kind"] == "StatefulSet":
        assert {"name": "data", "persistentVolumeClaim": {"claimName": "data-w-0"}} in first[
            "spec"
        ]["volumes"]


@pytest.mark.parametrize(
    ("obj", "message"),
    [
        pytest.param(workload("Deployment", replicas="x"),
                     "spec.replicas: 'x': must be a whole number, 0 or more", id="replicas-text"),
        pytest.param(workload("Job", parallelism=-1),
                     "spec.parallelism: -1: must be a whole number, 0 or more", id="negative"),
        pytest.param({"kind": "Deployment", "metadata": {"name": "w"}, "spec": {}},
                     "spec.template: required: an object", id="no-template"),
        pytest.param({"kind": "Job", "metadata": {}, "spec": {"template": {}}},
                     "metadata.name: required", id="no-name"),
        pytest.param(workload("StatefulSet", volumeClaimTemplates=[{"metadata": {}}]),
                     "spec.volumeClaimTemplates[0].metadata.name: required", id="claim-no-name"),
    ],
)  # fmt: skip
def test_a_bad_workload_is_refused_at_its_field(
    tmp_path: Path, corral: Run, obj: dict[str, Any], message: str
) -> None:
    path = tmp_path / "w.yaml"
    path.write_text(yaml.safe_dump(obj))
    code, out, err = corral("simulate", "-f", str(path))
    assert (code, out) == (1, "")
    (line,) = err.strip().splitlines()
    assert line.split(": ", 1)[1] == message, line
    assert line.startswith(f"{path}:")


def test_a_deployments_pods_are_spread_and_said_to_be_made(tmp_path: Path, corral: Run) -> None:
    nodes = "".join(
        f"---\nkind: Node\nmetadata: {{name: n{i}, labels: {{kubernetes.io/hostname: n{i}}}}}\n"
        f"status: {{allocatable: {{cpu: '8', memory: 8Gi, pods: '110'}}}}\n"
        for i in range(3)
    )
    (tmp_path / "nodes.yaml").write_text(nodes)
    (tmp_path / "w.yaml").write_text(yaml.safe_dump(workload("Deployment", replicas=3)))
    code, out, _ = corral("simulate", "-f", str(tmp_path / "nodes.yaml"), "-f",
                          str(tmp_path / "w.yaml"), "-o", "json")  # fmt: skip
    assert code == 0
    report = json.loads(out)
    assert (
        "Deployment w: 3 pod(s) made from its template, as its controller would" in report["notes"]
    )
    # One pod per node (default spreading, which finds the ReplicaSet, and scoring agree).
    assert sorted(p["node"] for p in report["placements"]) == ["n0", "n1", "n2"]
