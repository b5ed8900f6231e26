"""`corral simulate` on the shipped example: the documented placements and messages."""

from __future__ import annotations

from pathlib import Path

import pytest

from corral.cli import main

EXAMPLES = Path(__file__).resolve().parents[3] / "examples" / "simulate"


def simulate(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, list[str]]:
    code = main(["simulate", "-f", str(EXAMPLES / "cluster.yaml"), *args])
    return code, capsys.readouterr().out.splitlines()


def test_hand_picked_plugins_place_the_example(capsys: pytest.CaptureFixture[str]) -> None:
    code, lines = simulate(capsys, "--config", str(EXAMPLES / "scheduler-config.yaml"))
    assert code == 1  # one pod cannot be placed
    assert lines == [
        "shop/web -> node-a  (evaluated 3 nodes, 2 feasible)",
        "shop/cache -> node-a  (evaluated 3 nodes, 1 feasible)",
        "ml/trainer -> gpu-1  (evaluated 3 nodes, 1 feasible)",
        "shop/batch: unschedulable: 0/3 nodes are available: 1 node(s) had untolerated "
        "taint(s), 2 Insufficient cpu.",
    ]


def test_explain_shows_every_filter_verdict_and_weighted_scores(
    capsys: pytest.CaptureFixture[str],
) -> None:
    _code, lines = simulate(
        capsys, "--config", str(EXAMPLES / "scheduler-config.yaml"), "--explain"
    )
    table = lines[1:5]
    assert table[0].split() == [
        "NODE", "NodeUnschedulable", "NodeName", "TaintToleration", "NodeAffinity",
        "NodeResourcesFit", "TaintToleration(x3)", "NodeResourcesFit(x1)", "TOTAL",
    ]  # fmt: skip
    # Best total first; the tainted node fails TaintToleration and gets no score.
    assert table[1].split()[0] == "node-a"
    assert table[1].split()[-1] == "381"
    assert table[3].split()[0] == "gpu-1"
    assert "node(s) had untolerated taint(s)" in table[3]
    assert table[3].split()[-1] == "-"


NODE = """\
kind: Node
metadata: {name: n1}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
"""


@pytest.mark.parametrize(
    ("document", "message"),
    [
        pytest.param("kind: Node\nmetadata: {name: n}\n", "status.allocatable is required",
                     id="node-without-allocatable"),
        pytest.param("- just\n- a list\n", "must be a Kubernetes object", id="not-an-object"),
        pytest.param("kind: [unclosed\n", "invalid YAML", id="bad-yaml"),
        pytest.param("kind: Node\nkind: Pod\n", ":2:1: invalid YAML: duplicate key kind",
                     id="duplicate-key"),
        pytest.param("kind: List\nitems: [1, 2]\n",
                     "in.yaml#1: items: every item must be a Kubernetes object",
                     id="list-of-numbers"),
        pytest.param(NODE + "---\nkind: Pod\nmetadata: {name: p, labels: [a]}\nspec: {}\n",
                     "in.yaml#2: Pod p: metadata.labels: must be an object, got list",
                     id="pod-labels-a-list"),
        pytest.param(NODE.replace('cpu: "4"', "cpu: 1e999999999"),
                     (':3:29: status.allocatable.cpu: "1e999999999": JSON has no infinite or NaN '
                      "numbers"), id="absurd-quantity"),
        pytest.param(NODE + "---\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers: []\n"
                     "  topologySpreadConstraints: [{maxSkew: x, topologyKey: zone, "
                     "whenUnsatisfiable: DoNotSchedule}]\n",
                     "in.yaml#2: Pod p: spec.topologySpreadConstraints[0].maxSkew: must be an "
                     "integer, got string", id="malformed-spread-constraint"),
        pytest.param(NODE + "---\nkind: Pod\nmetadata: [a]\nspec: {}\n",
                     "in.yaml#2: Pod <unnamed>: metadata: must be an object, got list",
                     id="pod-metadata-a-list"),
    ],
)  # fmt: skip
def test_bad_input_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], document: str, message: str
) -> None:
    path = tmp_path / "in.yaml"
    path.write_text(document)
    assert main(["simulate", "-f", str(path)]) == 2
    assert message in capsys.readouterr().err


OBJECTS_CLUSTER = """
apiVersion: v1
kind: Namespace
metadata: {name: team-a, labels: {team: a}}
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: urgent}
value: 1000
preemptionPolicy: Never
---
apiVersion: v1
kind: Node
metadata: {name: n1, labels: {kubernetes.io/hostname: n1}}
status: {allocatable: {cpu: "1", memory: 1Gi, pods: "10"}}
---
apiVersion: v1
kind: Node
metadata: {name: n2, labels: {kubernetes.io/hostname: n2}}
status: {allocatable: {cpu: "1", memory: 1Gi, pods: "10"}}
---
apiVersion: v1
kind: Pod
metadata: {name: db, namespace: team-a, labels: {app: db}}
spec:
  nodeName: n1
  containers: [{name: c, resources: {requests: {cpu: 500m}}}]
"""

AFFINE_POD = """
apiVersion: v1
kind: Pod
metadata: {name: web, namespace: default}
spec:
  affinity:
    podAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
      - topologyKey: kubernetes.io/hostname
        labelSelector: {matchLabels: {app: db}}
        namespaceSelector: {matchLabels: {team: a}}
  containers: [{name: c, resources: {requests: {cpu: 100m}}}]
"""

URGENT_POD = """
apiVersion: v1
kind: Pod
metadata: {name: big, namespace: default}
spec:
  priorityClassName: urgent
  containers: [{name: c, resources: {requests: {cpu: "2"}}}]
"""


@pytest.mark.parametrize(
    ("pod", "want"),
    [
        pytest.param(AFFINE_POD, "default/web -> n1  (evaluated 2 nodes, 1 feasible)",
                     id="namespaceSelector reads the Namespace's labels"),
        pytest.param(URGENT_POD, "default/big: unschedulable: 0/2 nodes are available: 2 "
                     "Insufficient cpu. preemption: not eligible due "
                     "to preemptionPolicy=Never.",
                     id="priorityClassName resolves the preemptionPolicy as admission does"),
    ],
)  # fmt: skip
def test_objects_plugins_read_are_taken_from_the_input(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], pod: str, want: str
) -> None:
    path = tmp_path / "cluster.yaml"
    path.write_text(OBJECTS_CLUSTER + "---" + pod)
    main(["simulate", "-f", str(path)])
    assert capsys.readouterr().out.splitlines() == [want]


def _pod_level_pod(name: str, cpu: str) -> str:
    return (
        f"---\nkind: Pod\nmetadata: {{name: {name}}}\n"
        f"spec:\n  resources: {{requests: {{cpu: {cpu!r}}}}}\n  containers: [{{name: c}}]\n"
    )


TWO_CPU_NODES = "".join(
    f"---\nkind: Node\nmetadata: {{name: {n}, labels: {{kubernetes.io/hostname: {n}}}}}\n"
    'status: {allocatable: {cpu: "2", memory: 4Gi, pods: "10"}}\n'
    for n in ("n1", "n2")
)


def test_pod_level_requests_are_not_overcommitted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The reproduction: a cpu-3 pod went to a 2-cpu node, then two 1500m pods to one.
    path = tmp_path / "cluster.yaml"
    pods = [_pod_level_pod("big", "3"), _pod_level_pod("a", "1500m"), _pod_level_pod("b", "1500m")]
    path.write_text(TWO_CPU_NODES + "".join(pods))
    assert main(["simulate", "-f", str(path)]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == (
        "default/big: unschedulable: 0/2 nodes are available: 2 Insufficient cpu. preemption: "
        "0/2 nodes are available: 2 Preemption is not helpful for scheduling."
    )
    placed = {line.split(" -> ")[0]: line.split(" -> ")[1].split()[0] for line in lines[1:]}
    assert sorted(placed) == ["default/a", "default/b"]
    assert placed["default/a"] != placed["default/b"]


@pytest.mark.parametrize(
    ("resources", "message"),
    [
        pytest.param("{requests: {cpu: lots}}",
                     "Pod p: spec.resources.requests[cpu]: quantities must match",
                     id="bad-quantity"),
        pytest.param("[1]", "Pod p: spec.resources: must be an object, got list",
                     id="resources-a-list"),
        pytest.param("{requests: [cpu]}",
                     "Pod p: spec.resources.requests: must be an object, got list",
                     id="requests-a-list"),
    ],
)  # fmt: skip
def test_malformed_pod_level_requests_are_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], resources: str, message: str
) -> None:
    path = tmp_path / "cluster.yaml"
    pod = f"---\nkind: Pod\nmetadata: {{name: p}}\nspec:\n  resources: {resources}\n"
    path.write_text(TWO_CPU_NODES + pod + "  containers: [{name: c}]\n")
    assert main(["simulate", "-f", str(path)]) == 2
    assert message in capsys.readouterr().err


def test_volumes_are_bound_as_the_pv_controller_would(capsys: pytest.CaptureFixture[str]) -> None:
    """examples/simulate/storage.yaml: each claim takes the smallest PV its node offers, a PV
    taken is gone for the next pod, a provisioner's class follows its allowedTopologies."""
    code = main(["simulate", "-f", str(EXAMPLES / "storage.yaml"), "--explain"])
    lines = capsys.readouterr().out.splitlines()
    assert code == 1
    placements = [line for line in lines if line.startswith("db/")]
    assert placements == [
        "db/primary -> node-a  (evaluated 3 nodes, 1 feasible)",
        "db/replica -> node-b  (evaluated 3 nodes, 1 feasible)",
        "db/another: unschedulable: 0/3 nodes are available: 3 node(s) didn't find available "
        "persistent volumes to bind. preemption: 0/3 nodes are available: 3 Preemption is not "
        "helpful for scheduling.",
        "db/worker -> node-c  (evaluated 3 nodes, 1 feasible)",
    ]
    header = next(line for line in lines if line.split()[:1] == ["NODE"]).split()
    column = header.index("VolumeBinding")
    replica = lines[lines.index(placements[1]) + 2 : lines.index(placements[1]) + 5]
    assert [row.split()[0] for row in replica] == ["node-a", "node-b", "node-c"]
    assert "didn't find available persistent volumes to bind" in replica[0]
    assert replica[1].split()[column] == "ok"
