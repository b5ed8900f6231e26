"""`corral simulate` with scheduler-plugins' objects (issue 40 item 7): PodGroups (Coscheduling
counts the siblings the engine's pod lister knows, pending ones too, and its Permit wait ends
when the quorum is reached), ElasticQuotas (CapacityScheduling's max and borrowing) and
NodeResourceTopology objects (NodeResourceTopologyMatch's single-numa-node Filter), each read
from -f as the engine's informers read them. Messages are the plugins' own (SP's words)."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.unit.cli.conftest import ROOT, Run

from corral.scheduler.framework.types import PodInfo
from corral.scheduler.plugins.capacity_scheduling import over_max
from corral.scheduler.plugins.coscheduling import not_enough_siblings
from corral.scheduler.plugins.node_resource_topology.filtering import ERR_CANNOT_ALIGN_POD

BATCH = ROOT / "examples" / "batch-tenant"
CAPACITY_CLUSTER = ROOT / "examples" / "simulate" / "capacity-cluster.yaml"


def _profile(name: str, namespaces: list[str], enabled: list[str], disabled: list[str]) -> str:
    return f"""\
apiVersion: corral.dev/v1alpha1
kind: SchedulerProfile
metadata: {{name: {name}}}
spec:
  schedulerName: {name}
  tenancy: {{namespaces: {namespaces}}}
  plugins:
    multiPoint:
      enabled: {[{"name": n} for n in enabled]}
      disabled: {[{"name": n} for n in disabled]}
"""


def _node(name: str, cpu: str = "4", memory: str = "16Gi") -> str:
    return f"""\
---
apiVersion: v1
kind: Node
metadata: {{name: {name}, labels: {{kubernetes.io/hostname: {name}}}}}
status: {{allocatable: {{cpu: "{cpu}", memory: {memory}, pods: "110"}}}}
"""


def _pod(name: str, ns: str, scheduler: str, cpu: str, group: str = "", memory: str = "") -> str:
    labels = f"labels: {{scheduling.x-k8s.io/pod-group: {group}}}, " if group else ""
    resources = f"cpu: '{cpu}'" + (f", memory: {memory}" if memory else "")
    return f"""\
---
apiVersion: v1
kind: Pod
metadata: {{name: {name}, namespace: {ns}, {labels}}}
spec:
  schedulerName: {scheduler}
  containers:
    - name: c
      image: registry.k8s.io/pause:3.10
      resources: {{requests: {{{resources}}}, limits: {{{resources}}}}}
"""


def _quota(ns: str, min_cpu: str, max_cpu: str) -> str:
    return f"""\
---
apiVersion: scheduling.x-k8s.io/v1alpha1
kind: ElasticQuota
metadata: {{name: {ns}, namespace: {ns}}}
spec: {{min: {{cpu: "{min_cpu}"}}, max: {{cpu: "{max_cpu}"}}}}
"""


GANG = _profile("gang", ["ml"], ["Coscheduling"], ["PrioritySort"])
SHORT_GANG = (
    GANG
    + """\
---
apiVersion: scheduling.x-k8s.io/v1alpha1
kind: PodGroup
metadata: {name: g, namespace: ml}
spec: {minMember: 3}
"""
    + _node("n1")
    + "".join(_pod(f"g-{i}", "ml", "gang", "1", group="g") for i in range(2))
)

# podGroupRejectPercentage 100: a member failing Filter leaves the waiting one waiting, until
# its Permit timeout passes (the simulation's clock moves past it once nothing else can happen).
ALONE_AT_PERMIT = (
    GANG
    + """\
  pluginConfig:
    - name: Coscheduling
      args: {podGroupRejectPercentage: 100}
---
apiVersion: scheduling.x-k8s.io/v1alpha1
kind: PodGroup
metadata: {name: g, namespace: ml}
spec: {minMember: 2, scheduleTimeoutSeconds: 30}
"""
    + _node("n1")
    + _pod("g-0", "ml", "gang", "1", group="g")
    + _pod("g-1", "ml", "gang", "100", group="g")
)

QUOTAS = _profile("quota", ["team-a", "team-b"], ["CapacityScheduling"], ["DefaultPreemption"])
BORROW = (QUOTAS + _quota("team-a", "2", "3") + _quota("team-b", "2", "2") + _node("n1", cpu="8")
          + "".join(_pod(f"a-{i}", "team-a", "quota", "1") for i in range(4)))  # fmt: skip

NRT = (
    _profile("numa", ["default"], ["NodeResourceTopologyMatch"], [])
    + _node("worker-1", cpu="32", memory="128Gi")
    + """\
---
apiVersion: topology.node.k8s.io/v1alpha2
kind: NodeResourceTopology
metadata: {name: worker-1}
attributes:
  - {name: topologyManagerPolicy, value: single-numa-node}
  - {name: topologyManagerScope, value: pod}
zones:
  - name: node-0
    type: Node
    costs: [{name: node-0, value: 10}, {name: node-1, value: 20}]
    resources:
      - {name: cpu, capacity: "16", allocatable: "15", available: "6"}
      - {name: memory, capacity: 64Gi, allocatable: 62Gi, available: 20Gi}
  - name: node-1
    type: Node
    costs: [{name: node-0, value: 20}, {name: node-1, value: 10}]
    resources:
      - {name: cpu, capacity: "16", allocatable: "16", available: "12"}
      - {name: memory, capacity: 64Gi, allocatable: 64Gi, available: 40Gi}
"""
    + _pod("fits", "default", "numa", "8", memory="1Gi")
    + _pod("too-wide", "default", "numa", "14", memory="1Gi")
)


def _placed(pod: str, node: str) -> str:
    return f"{pod} -> {node}"


def _refused(pod: str, message: str) -> str:
    return f"{pod}: unschedulable: {message}"


CASES = [
    pytest.param(
        None,
        [_placed(f"batch-team/trainer-{i}", "") for i in range(4)]
        + [_refused("batch-team/one-more",
                    over_max(PodInfo(uid="", namespace="batch-team", name="one-more"),
                             "batch-team"))],
        id="batch-tenant: the gang of four placed, one-more past max refused in SP's words",
    ),
    pytest.param(
        SHORT_GANG,
        [_refused(f"ml/g-{i}", not_enough_siblings(f"g-{i}", 2, 3)) for i in range(2)],
        id="a gang below minMember: refused, counting its two pending pods",
    ),
    pytest.param(
        ALONE_AT_PERMIT,
        [_refused("ml/g-0", "rejected due to timeout after waiting 30s at plugin Coscheduling"),
         _refused("ml/g-1", "Insufficient cpu")],
        id="a member waiting at Permit for a sibling that never fits times out",
    ),
    pytest.param(
        BORROW,
        [_placed(f"team-a/a-{i}", "n1") for i in range(3)]
        + [_refused("team-a/a-3",
                    over_max(PodInfo(uid="", namespace="team-a", name="a-3"), "team-a"))],
        id="a quota borrows past its min within its max, and no further",
    ),
    pytest.param(
        NRT,
        [_placed("default/fits", "worker-1"), _refused("default/too-wide", ERR_CANNOT_ALIGN_POD)],
        id="NRT single-numa-node: a pod wider than every zone is refused",
    ),
]  # fmt: skip


@pytest.mark.parametrize(("cluster", "expected"), CASES)
def test_scheduler_plugins_objects_in_simulate(
    cluster: str | None, expected: list[str], tmp_path: Path, corral: Run
) -> None:
    if cluster is None:
        argv = ["-f", str(BATCH), "-f", str(CAPACITY_CLUSTER)]
    else:
        path = tmp_path / "cluster.yaml"
        path.write_text(cluster)
        argv = ["-f", str(path)]
    code, out, err = corral("simulate", *argv)
    assert code == 3, err
    assert "not a kind the engine reads" not in err
    got = out.splitlines()
    assert len(got) == len(expected), out
    for line, want in zip(got, expected, strict=True):
        if ": unschedulable: " in want:
            pod, message = want.split(": unschedulable: ", 1)
            assert line.startswith(f"{pod}: unschedulable: 0/"), (line, want)
            assert message in line, (line, want)
        else:
            assert line.startswith(want), (line, want)
