"""`hack/dev-cluster`, driven as a user drives it: up, nodes, down (and nothing left behind)."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from corral.k8s import Client
from corral.testing.nodes import ZONE_LABEL
from corral.testing.processes import is_running, processes_mentioning

DEV_CLUSTER = Path(__file__).resolve().parents[2] / "hack" / "dev-cluster"


def dev_cluster(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(DEV_CLUSTER), *args], capture_output=True, text=True, timeout=300, check=False
    )


@pytest.fixture(scope="module")
def work_dir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    directory = tmp_path_factory.mktemp("dev-cluster")
    yield directory
    dev_cluster("down", "--dir", str(directory))  # even if a test failed midway


@pytest.fixture(scope="module")
def up(work_dir: Path) -> subprocess.CompletedProcess[str]:
    return dev_cluster("up", "--dir", str(work_dir), "--nodes", "2")


def test_up_prints_only_the_kubeconfig_export(
    up: subprocess.CompletedProcess[str], work_dir: Path
) -> None:
    assert up.returncode == 0, up.stderr
    assert up.stdout == f"export KUBECONFIG={work_dir.resolve() / 'admin.kubeconfig'}\n"
    assert "ready" in up.stderr
    kube = Client.from_kubeconfig(str(work_dir / "admin.kubeconfig"))
    assert len(kube.list_items("v1", "Node")) == 2
    for component in ("etcd", "kube-apiserver", "kube-controller-manager", "kwok"):
        assert (work_dir / "logs" / f"{component}.log").is_file()


def test_up_again_reuses_the_running_cluster(
    up: subprocess.CompletedProcess[str], work_dir: Path
) -> None:
    before = json.loads((work_dir / "state.json").read_text())
    again = dev_cluster("up", "--dir", str(work_dir))
    assert again.returncode == 0, again.stderr
    assert json.loads((work_dir / "state.json").read_text()) == before


def test_nodes_adds_labelled_tainted_zoned_nodes(
    up: subprocess.CompletedProcess[str], work_dir: Path
) -> None:
    result = dev_cluster(
        "nodes", "--dir", str(work_dir), "--count", "3", "--cpu", "8", "--memory", "16Gi",
        "--pods", "30", "--zones", "3", "--labels", "pool=a,tier=gold",
        "--taints", "dedicated=team-a:NoSchedule,spot:PreferNoSchedule",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    kube = Client.from_kubeconfig(str(work_dir / "admin.kubeconfig"))
    added = [n for n in kube.list_items("v1", "Node") if n["metadata"]["labels"].get("pool")]
    assert sorted(n["metadata"]["name"] for n in added) == [
        "kwok-node-2",
        "kwok-node-3",
        "kwok-node-4",
    ]
    assert {n["metadata"]["labels"][ZONE_LABEL] for n in added} == {"zone-0", "zone-1", "zone-2"}
    for node in added:
        assert node["metadata"]["labels"]["tier"] == "gold"
        assert node["status"]["allocatable"] == {"cpu": "8", "memory": "16Gi", "pods": "30"}
        assert node["spec"]["taints"] == [
            {"key": "dedicated", "value": "team-a", "effect": "NoSchedule"},
            {"key": "spot", "effect": "PreferNoSchedule"},
        ]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        pytest.param(["--taints", "dedicated=a:Sometimes"], "has effect 'Sometimes'", id="effect"),
        pytest.param(["--taints", "novalue"], "is not key[=value]:Effect", id="taint-shape"),
        pytest.param(["--labels", "pool"], "is not key=value", id="label-shape"),
    ],
)
def test_nodes_rejects_bad_options_without_a_traceback(
    up: subprocess.CompletedProcess[str], work_dir: Path, args: list[str], message: str
) -> None:
    result = dev_cluster("nodes", "--dir", str(work_dir), "--count", "1", *args)
    assert result.returncode == 1
    assert message in result.stderr
    assert "Traceback" not in result.stderr


def test_down_leaves_no_process_behind(
    up: subprocess.CompletedProcess[str], work_dir: Path
) -> None:
    state = json.loads((work_dir / "state.json").read_text())
    pids = [c["pid"] for c in state["components"]]
    assert all(is_running(pid) for pid in pids)

    result = dev_cluster("down", "--dir", str(work_dir))

    assert result.returncode == 0, result.stderr
    assert not any(is_running(pid) for pid in pids)
    assert processes_mentioning(str(work_dir.resolve()) + "/") == []
    assert not (work_dir / "state.json").exists()
    assert (work_dir / "logs" / "kube-apiserver.log").is_file()  # logs are kept for post-mortems
    assert dev_cluster("down", "--dir", str(work_dir)).returncode == 0  # idempotent
