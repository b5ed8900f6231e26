"""Gang scheduling by a real client, with the engine as a real pod: kube-controller-manager with
``WorkloadWithJob`` makes each Job's Workload and PodGroup, the operator (real pods from
config/default) renders a SchedulerProfile with ``spec.featureGates: {GenericWorkload: true}``
into engine pods on the real node, and those engines place each Job's pods together or not at
all on kwok nodes.

Placed whole is checked both ways: a Job that fits gets all 4 pods bound and its PodGroup's
``PodGroupInitiallyScheduled`` condition (which only the pod-group cycle writes); a Job that
cannot fit binds no pod at all (a pod-by-pod scheduler would bind the 3 that fit), and is placed
whole once a node is added.

Each Job has a node pool of its own (label ``pool=<job>``): kwok completes a Job's pods as soon
as they run, so one Job's pods never hold room against the next.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from corral import __version__
from corral.k8s import JSON, Client
from corral.testing import LocalCluster
from corral.testing.processes import wait_for
from corral_dev.builds import ensure_node_binaries, load_node_pins
from corral_dev.install import operator_overlay, prerequisites
from corral_dev.realnode import NODE_NAME, RealNodes

# Waiting for the machine's real node (the lock) and cold builds take minutes on two cores.
pytestmark = pytest.mark.timeout(1800)

ROOT = Path(__file__).resolve().parents[3]
IMAGE = f"localhost/corral:{__version__}"
PAUSE_IMAGE = load_node_pins().pause_image
API = "corral.dev/v1alpha1"
GROUPS = "scheduling.k8s.io/v1beta1"
# kube-apiserver serves the Workload API; the Job controller creates Workloads and PodGroups.
GATES = {"GenericWorkload": True, "WorkloadWithJob": True}
PROFILE = "training"
OPERATOR_NS, ENGINE_NS, JOBS_NS = "corral-system", "corral-gang", "ml"
ON_REAL_NODE = {"kubernetes.io/hostname": NODE_NAME}
OPERATORS = "app.kubernetes.io/name=corral-operator"
ENGINES = f"app.kubernetes.io/instance={PROFILE}"


def pool(job: str) -> dict[str, str]:
    """The labels of the kwok nodes the Job's pods may use (never the real node)."""
    return {"pool": job}


def gang_job(name: str, parallelism: int) -> JSON:
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name, "namespace": JOBS_NS},
        "spec": {
            "parallelism": parallelism,
            "completions": parallelism,
            "scheduling": {"schedulingPolicy": {"gang": {}}},  # minCount: parallelism
            "template": {"spec": {
                "schedulerName": PROFILE,
                "nodeSelector": pool(name),
                "restartPolicy": "Never",
                "terminationGracePeriodSeconds": 0,
                "containers": [{"name": "worker", "image": PAUSE_IMAGE,
                                "resources": {"requests": {"cpu": "1", "memory": "64Mi"}}}],
            }},
        },
    }  # fmt: skip


@pytest.fixture(scope="module")
def gang_cluster(
    corral_image: Path,
    tmp_path_factory: pytest.TempPathFactory,
    lock_wait: Callable[[], float],
) -> Iterator[LocalCluster]:
    ensure_node_binaries()
    cluster = LocalCluster.up(
        tmp_path_factory.mktemp("gang"),
        with_kube_scheduler=True,  # binds the operator's and the engines' own pods
        nodes=RealNodes(images=[corral_image], lock_timeout=lock_wait()),
        feature_gates=GATES,
        progress=True,
    )
    try:
        yield cluster
    finally:
        cluster.down()


def _ready(kube: Client, namespace: str, selector: str, count: int) -> list[JSON]:
    def ready() -> list[JSON]:
        pods = kube.list_items("v1", "Pod", namespace, label_selector=selector)
        return [p for p in pods if p.get("status", {}).get("phase") == "Running"
                and {c["type"]: c["status"] for c in p["status"].get("conditions", [])}
                .get("Ready") == "True" and not p["metadata"].get("deletionTimestamp")]  # fmt: skip

    wait_for(f"{count} Ready pods {selector} in {namespace}", lambda: len(ready()) == count,
             timeout=300)  # fmt: skip
    return ready()


def _owned_by(obj: JSON, owner: JSON) -> bool:
    return any(ref.get("uid") == owner["metadata"]["uid"] and ref.get("controller")
               for ref in obj["metadata"].get("ownerReferences") or [])  # fmt: skip


def _pod_group(kube: Client, job: JSON) -> JSON | None:
    groups = [g for g in kube.list_items(GROUPS, "PodGroup", JOBS_NS) if _owned_by(g, job)]
    assert len(groups) <= 1, groups
    return groups[0] if groups else None


def _condition(group: JSON | None) -> JSON:
    conditions = ((group or {}).get("status") or {}).get("conditions") or []
    return next((c for c in conditions if c["type"] == "PodGroupInitiallyScheduled"), {})


def _placed(kube: Client, job: str) -> dict[str, str]:
    """Each of the Job's pods and its node ("" while unbound)."""
    pods = kube.list_items("v1", "Pod", JOBS_NS, label_selector=f"job-name={job}")
    return {p["metadata"]["name"]: p["spec"].get("nodeName", "") for p in pods}


def _group_state(kube: Client, job: JSON) -> tuple[str, str]:
    cond = _condition(_pod_group(kube, job))
    return cond.get("status", ""), cond.get("reason", "")


def _leader(kube: Client) -> str:
    status = kube.get(API, "SchedulerProfile", PROFILE).get("status") or {}
    return str(status.get("leader") or "")


@pytest.fixture(scope="module")
def engines(gang_cluster: LocalCluster, tmp_path_factory: pytest.TempPathFactory) -> list[JSON]:
    """The operator from config/default and the gang profile's two engine pods, all real pods
    on the real node."""
    kube = gang_cluster.admin
    overlay = operator_overlay(tmp_path_factory.mktemp("overlay"), ROOT / "config" / "default",
                               IMAGE, ON_REAL_NODE)  # fmt: skip
    prerequisites(gang_cluster.kubectl, ROOT)  # the namespace and the CRDs, as install.md
    gang_cluster.kubectl("apply", "--server-side", "-k", str(overlay))
    _ready(kube, OPERATOR_NS, OPERATORS, 2)
    for name in (ENGINE_NS, JOBS_NS):
        kube.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
    kube.create({
        "apiVersion": API, "kind": "SchedulerProfile", "metadata": {"name": PROFILE},
        "spec": {"namespace": ENGINE_NS, "replicas": 2,
                 "featureGates": {"GenericWorkload": True},
                 "deployment": {"nodeSelector": ON_REAL_NODE}},
    })  # fmt: skip
    pods = _ready(kube, ENGINE_NS, ENGINES, 2)
    wait_for("the profile's leader", lambda: bool(_leader(kube)), timeout=90)
    return pods


def test_the_engine_runs_with_the_gate_as_a_real_pod(engines: list[JSON]) -> None:
    for pod in engines:
        assert pod["spec"]["nodeName"] == NODE_NAME
        container = pod["spec"]["containers"][0]
        assert container["image"] == IMAGE
        assert "--feature-gates=GenericWorkload=true" in container["command"], container


def test_a_gang_job_is_placed_whole_by_the_real_engine(
    gang_cluster: LocalCluster, engines: list[JSON]
) -> None:
    kube = gang_cluster.admin
    nodes = gang_cluster.add_nodes(2, prefix="train", cpu="2", labels=pool("train"))
    job = kube.create(gang_job("train", 4))
    wait_for("the Job's PodGroup placed", lambda: _group_state(kube, job) != ("", ""),
             timeout=180)  # fmt: skip
    group = _pod_group(kube, job)
    assert group is not None
    # minCount is the Job's parallelism (upstream's defaultMinCountForJob).
    assert group["spec"]["schedulingPolicy"] == {"gang": {"minCount": 4}}
    assert _group_state(kube, job) == ("True", "Scheduled"), _condition(group)
    placed = _placed(kube, "train")
    assert len(placed) == 4, placed
    assert set(placed.values()) == set(nodes), placed
    leader = _leader(kube)
    log = gang_cluster.kubectl("logs", "-n", ENGINE_NS, leader).stdout
    for pod in placed:
        assert f'pod="{JOBS_NS}/{pod}"' in log, f"{pod} not bound by the leader {leader}"


def test_a_gang_job_that_cannot_fit_binds_none_until_a_node_comes(
    gang_cluster: LocalCluster, engines: list[JSON]
) -> None:
    """3 cpu in the Job's pool for 4 pods of 1 cpu: a pod-by-pod scheduler binds 3 of them,
    the gang binds none. Another node: all 4."""
    kube = gang_cluster.admin
    gang_cluster.add_nodes(1, prefix="wide", cpu="3", labels=pool("wide"))
    job = kube.create(gang_job("wide", 4))
    wait_for("the PodGroup's Unschedulable condition",
             lambda: _group_state(kube, job) == ("False", "Unschedulable"),
             timeout=180)  # fmt: skip
    message = _condition(_pod_group(kube, job))["message"]
    assert message.startswith("minCount (4) cannot be satisfied: 3 scheduled"), message
    placed = _placed(kube, "wide")
    assert len(placed) == 4, placed
    assert not any(placed.values()), placed
    gang_cluster.add_nodes(1, prefix="wide", cpu="2", labels=pool("wide"))
    wait_for("all 4 bound once a node comes", lambda: all(_placed(kube, "wide").values()),
             timeout=180)  # fmt: skip
    assert _group_state(kube, job) == ("True", "Scheduled")
