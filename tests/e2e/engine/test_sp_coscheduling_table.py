"""scheduler-plugins' Coscheduling integration test (``test/integration/coscheduling_test.go``
``TestCoschedulingPlugin``, at 903da7d), transcribed row for row onto the local control plane:
its scheduler configuration (Coscheduling as QueueSort with every other sort disabled, appended
at PreFilter, PostFilter and Permit; ``permitWaitingTimeSeconds: 3``), one node of 300 bytes of
memory and 32 pods, the pods created one by one in the row's order, and its check: within 120 s
every expected pod is scheduled.

Each row has a node and an engine of its own (SP runs its rows one after another on one node,
deleting each row's pods first). Priorities come from PriorityClasses of SP's values (mid 100,
high 1000): a real API server's admission refuses a literal ``spec.priority``.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator

import pytest

from corral.k8s import JSON, Client
from corral.scheduler.plugins.coscheduling import POD_GROUP_LABEL
from corral.testing import LocalCluster
from support import sp_crds
from support.engine_process import EngineProcess, engine_config, pod, pods_in, wait_until

SP_SCHEDULING = sp_crds.SP_SCHEDULING
PRIORITIES = {"M": 100, "H": 1000}  # SP test/integration/utils.go midPriority, highPriority

# Each row: its pods in creation order as name/memory request (bytes)/priority (M|H)/PodGroup
# ("-": none); its PodGroups as name/minMember/minResources memory (bytes, "-": none); the pods
# that must be scheduled.

# fmt: off
ROWS = [
    pytest.param(
         "t1-p1-1/50/M/pg1-1 t1-p1-2/50/M/pg1-1 t1-p1-3/50/M/pg1-1 t1-p2-1/100/M/pg1-2 "
         "t1-p2-2/100/M/pg1-2 t1-p2-3/100/M/pg1-2 t1-p2-4/100/M/pg1-2",
         "pg1-1/3/- pg1-2/4/-",
         "t1-p1-1 t1-p1-2 t1-p1-3",
         id=(
         "equal priority, sequentially pg1 meet min and pg2 not meet min"
         )),
    pytest.param(
         "t2-p1-1/50/M/pg2-1 t2-p2-1/100/M/pg2-2 t2-p1-2/50/M/pg2-1 t2-p2-2/100/M/pg2-2 "
         "t2-p1-3/50/M/pg2-1 t2-p2-3/100/M/pg2-2 t2-p2-4/100/M/pg2-2",
         "pg2-1/3/- pg2-2/4/-",
         "t2-p1-1 t2-p1-2 t2-p1-3",
         id=(
         "equal priority, not sequentially pg1 meet min and pg2 not meet min"
         )),
    pytest.param(
         "t3-p1-1/50/M/pg3-1 t3-p2/100/M/- t3-p1-2/50/M/pg3-1 t3-p3/100/M/- "
         "t3-p1-3/50/M/pg3-1",
         "pg3-1/4/-",
         "t3-p2 t3-p3",
         id=(
         "equal priority, not sequentially pg1 not meet min and 3 regular pods"
         )),
    pytest.param(
         "t4-p1-1/100/M/pg4-1 t4-p1-2/100/M/pg4-1 t4-p1-3/100/M/pg4-1 t4-p2-1/50/H/pg4-2 "
         "t4-p2-2/50/H/pg4-2 t4-p2-3/50/H/pg4-2",
         "pg4-1/3/- pg4-2/3/-",
         "t4-p2-1 t4-p2-2 t4-p2-3",
         id=(
         "different priority, sequentially pg1 meet min and pg2 meet min"
         )),
    pytest.param(
         "t5-p1-1/100/M/pg5-1 t5-p2-1/50/H/pg5-2 t5-p1-2/100/M/pg5-1 t5-p2-2/50/H/pg5-2 "
         "t5-p1-3/100/M/pg5-1 t5-p2-3/50/H/pg5-2",
         "pg5-1/3/- pg5-2/3/-",
         "t5-p2-1 t5-p2-2 t5-p2-3",
         id=(
         "different priority, not sequentially pg1 meet min and pg2 meet min"
         )),
    pytest.param(
         "t6-p1-1/50/M/pg6-1 t6-p2/100/H/- t6-p1-2/50/M/pg6-1 t6-p3/100/H/- "
         "t6-p1-3/50/M/pg6-1 t6-p4/100/H/-",
         "pg6-1/3/-",
         "t6-p2 t6-p3 t6-p4",
         id=(
         "different priority, not sequentially pg1 meet min and 3 regular pods"
         )),
    pytest.param(
         "t7-p1-1/50/M/pg7-1 t7-p2-1/100/M/pg7-2 t7-p3-1/100/M/pg7-3 t7-p1-2/50/M/pg7-1 "
         "t7-p2-2/100/M/pg7-2 t7-p3-2/100/M/pg7-3 t7-p1-3/50/M/pg7-1 t7-p2-3/100/M/pg7-2 "
         "t7-p3-3/100/M/pg7-3 t7-p2-4/100/M/pg7-2 t7-p3-4/100/M/pg7-3",
         "pg7-1/3/- pg7-2/4/- pg7-3/4/-",
         "t7-p1-1 t7-p1-2 t7-p1-3",
         id=(
         "equal priority, not sequentially pg1 meet min and p2 p3 not meet min"
         )),
    pytest.param(
         "t8-p1-1/50/M/pg8-1 t8-p2-1/100/M/pg8-2 t8-p3-1/100/M/pg8-3 t8-p1-2/50/M/pg8-1 "
         "t8-p2-2/100/M/pg8-2 t8-p3-2/100/M/pg8-3 t8-p1-3/50/M/pg8-1 t8-p2-3/100/M/pg8-2 "
         "t8-p3-3/100/M/pg8-3 t8-p2-4/100/M/pg8-2 t8-p3-4/100/M/pg8-3",
         "pg8-1/3/150 pg8-2/4/400 pg8-3/4/400",
         "t8-p1-1 t8-p1-2 t8-p1-3",
         id=(
         "equal priority, not sequentially pg1 meet min and p2 p3 not meet min, pgs have "
         "min resources"
         )),
    pytest.param(
         "t9-p1-1/50/M/pg9-1 t9-p2-1/100/M/pg9-2 t9-p1-2/50/M/pg9-1 t9-p2-2/100/M/pg9-2 "
         "t9-p1-3/50/M/pg9-1 t9-p2-3/100/M/pg9-2 t9-p2-4/100/M/pg9-2",
         "pg9-1/3/150 pg9-2/4/400",
         "t9-p1-1 t9-p1-2 t9-p1-3",
         id=(
         "equal priority, not sequentially pg1 meet min and pg2 not meet min, pgs have min "
         "resources"
         )),
]
# fmt: on


@pytest.fixture
def pod_group_crd(kube: Client) -> Iterator[None]:
    with sp_crds.pod_group_crd(kube):
        yield


@pytest.fixture
def priority_classes(kube: Client) -> Iterator[dict[str, str]]:
    """M and H -> the names of PriorityClasses of SP's values, removed afterwards."""
    names = {key: f"sp-{key.lower()}-{uuid.uuid4().hex[:6]}" for key in PRIORITIES}
    for key, name in names.items():
        kube.create({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
                     "metadata": {"name": name}, "value": PRIORITIES[key]})  # fmt: skip
    yield names
    for name in names.values():
        kube.delete("scheduling.k8s.io/v1", "PriorityClass", name)


def sp_profile(scheduler: str) -> JSON:
    """SP's integration-test profile: the default plugins, Coscheduling's points added."""
    return {
        "schedulerName": scheduler,
        "plugins": {
            "queueSort": {"enabled": [{"name": "Coscheduling"}], "disabled": [{"name": "*"}]},
            "preFilter": {"enabled": [{"name": "Coscheduling"}]},
            "postFilter": {"enabled": [{"name": "Coscheduling"}]},
            "permit": {"enabled": [{"name": "Coscheduling"}]},
        },
        "pluginConfig": [{"name": "Coscheduling", "args": {"permitWaitingTimeSeconds": 3}}],
    }


@pytest.mark.parametrize(("pods", "groups", "expected"), ROWS)
def test_coscheduling_integration_rows(
    kube: Client,
    cluster: LocalCluster,
    namespace: str,
    fake_nodes: Callable[..., list[str]],
    engines: Callable[..., EngineProcess],
    pod_group_crd: None,
    priority_classes: dict[str, str],
    pods: str,
    groups: str,
    expected: str,
) -> None:
    pool = {"pool": namespace}
    fake_nodes(1, cpu="32", memory="300", pods=32, labels=pool)
    scheduler = f"sp-{uuid.uuid4().hex[:6]}"
    config = engine_config(cluster.kubeconfig, scheduler)
    config["profiles"] = [sp_profile(scheduler)]
    engines(config)
    for entry in groups.split():
        name, min_member, min_memory = entry.split("/")
        spec: JSON = {"minMember": int(min_member)}
        if min_memory != "-":
            spec["minResources"] = {"memory": min_memory}
        kube.create({"apiVersion": SP_SCHEDULING, "kind": "PodGroup",
                     "metadata": {"name": name, "namespace": namespace}, "spec": spec})  # fmt: skip
    for entry in pods.split():
        name, memory, priority, group = entry.split("/")
        kube.create(pod(name, namespace, scheduler, nodeSelector=pool,
                        requests={"memory": memory},
                        labels={POD_GROUP_LABEL: group} if group != "-" else {},
                        priorityClassName=priority_classes[priority],
                        terminationGracePeriodSeconds=0))  # fmt: skip

    def scheduled() -> set[str]:
        return {
            p["metadata"]["name"] for p in pods_in(kube, namespace) if p["spec"].get("nodeName")
        }

    names = set(expected.split())
    wait_until(f"{expected} scheduled", lambda: names <= scheduled(), timeout=120)
