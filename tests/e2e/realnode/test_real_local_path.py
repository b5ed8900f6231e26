"""A dynamically provisioned volume really mounted into a running pod on the real node: Rancher's
local-path provisioner (host process) provisions a WaitForFirstConsumer claim as a hostPath
PersistentVolume on the node the scheduler picked; the pod writes into it and the file is on
the host; deleting the claim removes the directory again."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from corral.k8s import Client
from corral.testing import LocalCluster
from corral_dev.builds import ensure_node_binaries
from corral_dev.images import BASE_IMAGE, python_base
from corral_dev.local_path import LocalPathStorage
from corral_dev.realnode import NODE_NAME, RealNodes

pytestmark = pytest.mark.timeout(1800)  # the real node's lock, its start, the helper pods
MESSAGE = "written by the pod"


@pytest.fixture(scope="module")
def real_cluster(
    tmp_path_factory: pytest.TempPathFactory, lock_wait: Callable[[], float]
) -> Iterator[LocalCluster]:
    """The real node with only the base image (the helper and the workload run it)."""
    ensure_node_binaries()
    cluster = LocalCluster.up(
        tmp_path_factory.mktemp("real-storage"),
        with_kube_scheduler=True,
        nodes=RealNodes(images=[python_base()], lock_timeout=lock_wait()),
        progress=True,
    )
    try:
        yield cluster
    finally:
        cluster.down()


def wait(what: str, check: Callable[[], bool], timeout: float = 180.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.5)


def test_provisioned_volume_is_mounted_into_a_running_pod(kube: Client, tmp_path: Path) -> None:
    storage = LocalPathStorage.start(kube, tmp_path / "local-path", BASE_IMAGE)
    ns, sc = f"t-{uuid.uuid4().hex[:6]}", f"local-{uuid.uuid4().hex[:6]}"
    kube.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
    try:
        storage.storage_class(sc)
        kube.create(
            {
                "apiVersion": "v1",
                "kind": "PersistentVolumeClaim",
                "metadata": {"name": "data", "namespace": ns},
                "spec": {
                    "accessModes": ["ReadWriteOnce"],
                    "storageClassName": sc,
                    "resources": {"requests": {"storage": "1Mi"}},
                },
            }
        )
        script = f"echo '{MESSAGE}' > /data/file && sleep 3600"
        kube.create(
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": "p", "namespace": ns},
                "spec": {
                    "nodeSelector": {"kubernetes.io/hostname": NODE_NAME},
                    "terminationGracePeriodSeconds": 0,
                    "containers": [
                        {
                            "name": "c",
                            "image": BASE_IMAGE,
                            "imagePullPolicy": "Never",
                            "command": ["sh", "-c", script],
                            "volumeMounts": [{"name": "data", "mountPath": "/data"}],
                        }
                    ],
                    "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": "data"}}],
                },
            }
        )

        def phase() -> str:
            return str(kube.get("v1", "Pod", "p", ns).get("status", {}).get("phase", ""))

        wait("the pod Running", lambda: phase() == "Running")
        claim = kube.get("v1", "PersistentVolumeClaim", "data", ns)
        volume = kube.get("v1", "PersistentVolume", claim["spec"]["volumeName"])
        host_dir = Path(volume["spec"]["hostPath"]["path"])
        assert host_dir.parent == storage.volumes
        wait("the pod's file on the host", (host_dir / "file").exists, timeout=60)
        assert (host_dir / "file").read_text().strip() == MESSAGE

        kube.delete("v1", "Pod", "p", ns)
        wait("the pod gone", lambda: not kube.list_items("v1", "Pod", ns))
        kube.delete("v1", "PersistentVolumeClaim", "data", ns)
        wait("the volume's directory removed by the teardown helper", lambda: not host_dir.exists())
        assert "forbidden" not in storage.log().lower()
    finally:
        kube.delete("v1", "Namespace", ns)
        kube.delete("storage.k8s.io/v1", "StorageClass", sc)
        storage.stop()
