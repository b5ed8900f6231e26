"""A user's out-of-tree plugin, shipped as docs/plugins/writing.md says: an image built FROM
Corral's with the plugin installed, the operator and a profile's engines running it as real pods
on the real node, and the plugin deciding placements.

The example plugin (examples/corral-plugin-example, NodeLabelBonus) scores nodes labelled
``disktype=ssd``; its documented SchedulerProfile goes through the operator (whose catalog, from the
same image, knows the plugin and its args), and its engine pods bind every pod to the SSD node.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from corral import __version__
from corral.k8s import Client
from corral.testing import LocalCluster
from corral.testing.processes import wait_for
from corral_dev.builds import ensure_node_binaries, load_node_pins
from corral_dev.images import build_dockerfile
from corral_dev.install import operator_overlay, prerequisites
from corral_dev.realnode import NODE_NAME, RealNodes

pytestmark = pytest.mark.timeout(1800)

ROOT = Path(__file__).resolve().parents[3]
EXAMPLE = ROOT / "examples" / "corral-plugin-example"
IMAGE = f"localhost/corral-node-label-bonus:{__version__}"
PAUSE_IMAGE = load_node_pins().pause_image
API = "corral.dev/v1alpha1"
ON_REAL_NODE = {"kubernetes.io/hostname": NODE_NAME}
OPERATORS = "app.kubernetes.io/name=corral-operator"


def documented_profile() -> dict[str, Any]:
    """The SchedulerProfile of the example's README, as a user copies it."""
    text = (EXAMPLE / "README.md").read_text()
    block = text.split("```yaml\n", 1)[1].split("```", 1)[0]
    profile: dict[str, Any] = yaml.safe_load(block)
    return profile


@pytest.fixture(scope="module")
def plugin_image(corral_image: Path) -> Path:
    """The example's Dockerfile FROM this checkout's image (``make image``'s tag)."""
    return build_dockerfile(
        EXAMPLE, EXAMPLE / "Dockerfile", IMAGE, ROOT / "dist" / "corral-node-label-bonus.tar",
        build_args={"CORRAL_IMAGE": f"localhost/corral:{__version__}"},
    ).archive  # fmt: skip


@pytest.fixture(scope="module")
def plugin_cluster(
    plugin_image: Path,
    tmp_path_factory: pytest.TempPathFactory,
    lock_wait: Callable[[], float],
) -> Iterator[LocalCluster]:
    ensure_node_binaries()
    cluster = LocalCluster.up(
        tmp_path_factory.mktemp("plugin"),
        with_kube_scheduler=True,  # binds the operator's and the engines' own pods
        nodes=RealNodes(images=[plugin_image], lock_timeout=lock_wait()),
        progress=True,
    )
    try:
        yield cluster
    finally:
        cluster.down()


def _ready(kube: Client, namespace: str, selector: str, count: int) -> list[dict[str, Any]]:
    def ready() -> list[dict[str, Any]]:
        pods = kube.list_items("v1", "Pod", namespace, label_selector=selector)
        return [p for p in pods if p.get("status", {}).get("phase") == "Running"
                and {c["type"]: c["status"] for c in p["status"].get("conditions", [])}
                .get("Ready") == "True" and not p["metadata"].get("deletionTimestamp")]  # fmt: skip

    wait_for(f"{count} Ready pods {selector} in {namespace}", lambda: len(ready()) == count,
             timeout=300)  # fmt: skip
    return ready()


def test_the_example_plugin_schedules_from_its_own_image(
    plugin_cluster: LocalCluster, tmp_path: Path
) -> None:
    kube = plugin_cluster.admin
    overlay = operator_overlay(tmp_path / "overlay", ROOT / "config" / "default", IMAGE,
                               ON_REAL_NODE)  # fmt: skip
    prerequisites(plugin_cluster.kubectl, ROOT)  # the namespace and the CRDs, as install.md
    plugin_cluster.kubectl("apply", "--server-side", "-k", str(overlay))
    _ready(kube, "corral-system", OPERATORS, 2)

    (ssd,) = plugin_cluster.add_nodes(1, prefix="ssd", labels={"disktype": "ssd", "pool": "bonus"})
    plugin_cluster.add_nodes(2, prefix="hdd", labels={"pool": "bonus"})
    profile = documented_profile()  # as the README has it, its engines put on the real node
    name = profile["metadata"]["name"]
    spec = profile["spec"]
    spec["deployment"] = {"nodeSelector": ON_REAL_NODE}
    kube.create(profile)
    wait_for(f"SchedulerProfile {name} Ready", lambda: any(
        c["type"] == "Ready" and c["status"] == "True"
        for c in (kube.get(API, "SchedulerProfile", name).get("status") or {}).get(
            "conditions", [])), timeout=300)  # fmt: skip
    engines = _ready(kube, "corral-system", f"app.kubernetes.io/instance={name}", 2)
    for engine in engines:
        assert engine["spec"]["nodeName"] == NODE_NAME
        assert engine["spec"]["containers"][0]["image"] == IMAGE

    for i in range(4):
        kube.create({
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": f"bonus-{i}", "namespace": "default"},
            "spec": {"schedulerName": spec.get("schedulerName") or name,
                     "nodeSelector": {"pool": "bonus"},
                     "tolerations": [{"operator": "Exists"}],
                     "containers": [{"name": "c", "image": PAUSE_IMAGE,
                                     "resources": {"requests": {"cpu": "10m"}}}]},
        })  # fmt: skip

    def placed() -> dict[str, str]:
        pods = kube.list_items("v1", "Pod", "default")
        return {p["metadata"]["name"]: p["spec"].get("nodeName", "") for p in pods
                if p["metadata"]["name"].startswith("bonus-")}  # fmt: skip

    wait_for("4 pods bound", lambda: all(placed().values()) and len(placed()) == 4, timeout=180)
    # Without the plugin, LeastAllocated would spread them over the three empty nodes.
    assert set(placed().values()) == {ssd}
