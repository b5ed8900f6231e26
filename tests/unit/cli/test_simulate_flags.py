"""`corral simulate`'s live-cluster and capacity flags: what goes with what, one line each; and a
snapshot saved by --save-snapshot replays offline saying what it could not read."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from tests.unit.cli.conftest import Run

from corral.cli import clusterread

NODE = "kind: Node\nmetadata: {name: n1}\nstatus: {allocatable: {cpu: '4', memory: 8Gi}}\n"


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        pytest.param([], "give -f FILE (a cluster and pods written in YAML), --from-cluster, or "
                     "both", id="nothing"),
        pytest.param(["-f", "C", "--save-snapshot", "s.yaml"],
                     "--save-snapshot goes with --from-cluster", id="save-offline"),
        pytest.param(["-f", "C", "-n", "team-a"], "-n goes with --from-cluster", id="ns-offline"),
        pytest.param(["-f", "C", "--context", "x"], "--context goes with --from-cluster",
                     id="context-offline"),
        pytest.param(["-f", "C", "--kubeconfig", "k"], "--kubeconfig goes with --from-cluster",
                     id="kubeconfig-offline"),
        pytest.param(["-f", "C", "--limit", "3"], "--limit goes with --capacity",
                     id="limit-without-capacity"),
        pytest.param(["--from-cluster", "--kubeconfig", "MISSING"], "cannot load credentials: ",
                     id="no-kubeconfig"),
    ],
)  # fmt: skip
def test_flags_that_do_not_go_together(
    tmp_path: Path, corral: Run, flags: list[str], message: str
) -> None:
    (tmp_path / "c.yaml").write_text(NODE)
    argv = [str(tmp_path / "c.yaml") if f == "C" else f for f in flags]
    argv = [str(tmp_path / "missing") if f == "MISSING" else f for f in argv]
    code, out, err = corral("simulate", *argv)
    assert (code, out) == (2, "")
    (line,) = err.strip().splitlines()
    assert line.startswith(f"corral: {message}"), line


def test_a_saved_snapshot_says_what_it_could_not_read(tmp_path: Path, corral: Run) -> None:
    snapshot = clusterread.ClusterSnapshot("https://127.0.0.1:6443", taken="2026-12-01T00:00:00Z")
    snapshot.items = [yaml.safe_load(NODE) | {"apiVersion": "v1"}]
    snapshot.unread = [clusterread.Unread("Pod", "outside namespace(s) team-a", "forbidden")]
    path = tmp_path / "snap.yaml"
    path.write_text(yaml.safe_dump(snapshot.as_list()))
    code, _, err = corral("simulate", "-f", str(path))
    assert code == 0
    assert (
        "note: could not read Pod outside namespace(s) team-a: forbidden; so this "
        "simulation does not count it" in err.splitlines()
    )


@pytest.mark.parametrize(
    ("path", "version", "namespaced"),
    [
        pytest.param("/api/v1/pods", "v1", "/api/v1/namespaces/a/pods", id="core"),
        pytest.param("/apis/apps/v1/replicasets", "apps/v1",
                     "/apis/apps/v1/namespaces/a/replicasets", id="group"),
        pytest.param("/apis/resource.k8s.io/v1/resourceclaims", "resource.k8s.io/v1",
                     "/apis/resource.k8s.io/v1/namespaces/a/resourceclaims", id="dra"),
    ],
)  # fmt: skip
def test_list_paths(path: str, version: str, namespaced: str) -> None:
    assert clusterread.api_version_of(path) == version
    assert clusterread.namespaced_path(path, "a") == namespaced


def test_a_saved_snapshots_pending_pods_are_the_clusters_not_templates(
    tmp_path: Path, corral: Run
) -> None:
    """Replayed, a snapshot is a cluster again: its pending pod is placed first (as the queue
    would), and --capacity counts copies of the one pod given besides it."""
    pending = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "waiting",
               "namespace": "default"}, "spec": {"containers": [{"name": "c", "resources": {
                   "requests": {"cpu": "3"}}}]}}  # fmt: skip
    snapshot = clusterread.ClusterSnapshot("https://127.0.0.1:6443", taken="2026-12-01T00:00:00Z")
    node = yaml.safe_load(NODE) | {"apiVersion": "v1"}
    node["status"]["allocatable"]["pods"] = "110"
    snapshot.items = [node, pending]
    (tmp_path / "snap.yaml").write_text(yaml.safe_dump(snapshot.as_list()))
    template = {**pending, "metadata": {"name": "new", "namespace": "default"}}
    template["spec"] = {"containers": [{"name": "c", "resources": {"requests": {"cpu": "500m"}}}]}
    (tmp_path / "new.yaml").write_text(yaml.safe_dump(template))
    code, out, err = corral("simulate", "--capacity", "-f", str(tmp_path / "snap.yaml"), "-f",
                            str(tmp_path / "new.yaml"))  # fmt: skip
    assert code == 0, err
    assert out.splitlines()[:2] == ["default/new: 2 more fit", "    n1: 2"]  # 1 CPU of 4 left
    assert "note: 1 pending pod(s) of the input placed first, as the queue would" in err


def test_a_shadow_profile_is_not_run(tmp_path: Path, corral: Run) -> None:
    """A shadow places no pod (spec.shadow): given with a cluster, it is left out with a note,
    and the cluster's pods are placed by the default profile as if it were not there."""
    shadow = {"apiVersion": "corral.dev/v1alpha1", "kind": "SchedulerProfile",
              "metadata": {"name": "packing-shadow"},
              "spec": {"shadow": {"schedulerName": "default-scheduler"}}}  # fmt: skip
    (tmp_path / "c.yaml").write_text(NODE.replace("memory: 8Gi", "memory: 8Gi, pods: '110'"))
    (tmp_path / "shadow.yaml").write_text(yaml.safe_dump(shadow))
    pending = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "a"},
               "spec": {"containers": [{"name": "c"}]}}  # fmt: skip
    (tmp_path / "pod.yaml").write_text(yaml.safe_dump(pending))
    code, out, err = corral("simulate", *(f"-f={tmp_path / f}" for f in
                                          ("c.yaml", "shadow.yaml", "pod.yaml")))  # fmt: skip
    assert code == 0, err
    assert "note: SchedulerProfile packing-shadow is a shadow: it places no pod, so it is not " \
           "run" in err.splitlines()  # fmt: skip
    assert out.splitlines()[0].startswith("a/p")
    assert "n1" in out.splitlines()[0]
