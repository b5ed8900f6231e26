"""`corral simulate --capacity`: how many more of a pod fit, where, and what stops the next —
placed by the engine, so every plugin of the profile counts.

kubernetes-sigs/cluster-capacity's documented example is a fact carried over: 4 nodes of 2 CPUs
and 4 GB, a pod requesting (and limited to) 150m and 100Mi: 52 fit, 13 per node, and the next
one is stopped by Insufficient cpu on every node; with six such pods running, 46.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.unit.cli.conftest import Run

CC_NODES = "".join(
    f"---\napiVersion: v1\nkind: Node\n"
    f"metadata: {{name: node-{i}, labels: {{kubernetes.io/hostname: node-{i}}}}}\n"
    f'status: {{allocatable: {{cpu: "2", memory: 4G, pods: "110"}}}}\n'
    for i in range(1, 5)
)
SMALL = "{requests: {cpu: 150m, memory: 100Mi}, limits: {cpu: 150m, memory: 100Mi}}"


def pod(name: str, *, node: str = "", extra: str = "", resources: str = SMALL) -> str:
    bound = f"nodeName: {node}, " if node else ""
    return (
        f"---\napiVersion: v1\nkind: Pod\nmetadata: {{name: {name}, namespace: default, "
        f"labels: {{app: {name}}}}}\n"
        f"spec: {{{bound}{extra}containers: [{{name: c, image: nginx, resources: {resources}}}]}}\n"
    )


RUNNING = "".join(pod(f"running-{i}", node=f"node-{1 + i % 4}") for i in range(6))
ANTI = (
    "affinity: {podAntiAffinity: {requiredDuringSchedulingIgnoredDuringExecution: "
    "[{labelSelector: {matchLabels: {app: spread}}, topologyKey: kubernetes.io/hostname}]}}, "
)
TAINTED = CC_NODES.replace(
    "name: node-4, labels: {kubernetes.io/hostname: node-4}}\n",
    "name: node-4, labels: {kubernetes.io/hostname: node-4}}\n"
    "spec: {taints: [{key: dedicated, value: gpu, effect: NoSchedule}]}\n",
)


@pytest.mark.parametrize(
    ("cluster", "template", "fits", "per_node", "reason"),
    [
        pytest.param(CC_NODES, pod("small-pod"), 52, dict.fromkeys(["1", "2", "3", "4"], 13),
                     "0/4 nodes are available: 4 Insufficient cpu.", id="cluster-capacity-example"),
        pytest.param(CC_NODES + RUNNING, pod("small-pod"), 46,
                     {"1": 11, "2": 11, "3": 12, "4": 12},
                     "0/4 nodes are available: 4 Insufficient cpu.",
                     id="cluster-capacity-example-with-six-running"),
        pytest.param(CC_NODES, pod("spread", extra=ANTI), 4, dict.fromkeys(["1", "2", "3", "4"], 1),
                     "0/4 nodes are available: 4 node(s) didn't match pod anti-affinity rules.",
                     id="anti-affinity-one-per-node"),
        pytest.param(TAINTED, pod("small-pod"), 39, dict.fromkeys(["1", "2", "3"], 13),
                     "0/4 nodes are available: 1 node(s) had untolerated taint(s), "
                     "3 Insufficient cpu.", id="a-taint-keeps-them-off"),
        pytest.param(CC_NODES, pod("big", resources="{requests: {cpu: '3'}}"), 0, {},
                     "0/4 nodes are available: 4 Insufficient cpu.", id="none-fit"),
    ],
)  # fmt: skip
def test_capacity_is_what_the_engine_places(
    tmp_path: Path,
    corral: Run,
    cluster: str,
    template: str,
    fits: int,
    per_node: dict[str, int],
    reason: str,
) -> None:
    (tmp_path / "cluster.yaml").write_text(cluster)
    (tmp_path / "pod.yaml").write_text(template)
    argv = ["simulate", "--capacity", "-f", str(tmp_path / "cluster.yaml")]
    code, out, _ = corral(*argv, "-f", str(tmp_path / "pod.yaml"), "-o", "json")
    assert code == 0
    found = json.loads(out)["capacity"]
    assert (found["fits"], found["perNode"]) == (
        fits,
        {f"node-{n}": k for n, k in per_node.items()},
    )
    assert found["next"]["reason"].startswith(reason), found["next"]["reason"]
    code, text, _ = corral(*argv, "-f", str(tmp_path / "pod.yaml"))
    assert code == 0
    assert text.splitlines()[0].endswith(f": {fits} more fit")
    assert text.splitlines()[-1].startswith(f"the next one ({found['next']['pod']}) stays Pending")


def test_a_pod_that_fits_without_bound_stops_at_the_limit(tmp_path: Path, corral: Run) -> None:
    (tmp_path / "cluster.yaml").write_text(CC_NODES)
    (tmp_path / "pod.yaml").write_text(pod("free", resources="{}"))
    files = ["-f", str(tmp_path / "cluster.yaml"), "-f", str(tmp_path / "pod.yaml")]
    code, out, _ = corral("simulate", "--capacity", "--limit", "7", *files)
    assert code == 0
    assert out.splitlines()[0] == "default/free: 7 more fit"
    assert out.splitlines()[-1] == "stopped at the limit (7); more may fit"


def test_a_copy_that_fits_only_by_preempting_ends_the_count(tmp_path: Path, corral: Run) -> None:
    classes = (
        "---\napiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\n"
        "metadata: {name: high}\nvalue: 1000\n"
    )
    victim = pod("victim", node="node-1", resources="{requests: {cpu: '1500m'}}")
    nodes = CC_NODES.split("---\n")[1]  # node-1 alone
    (tmp_path / "cluster.yaml").write_text("---\n" + nodes + classes + victim)
    (tmp_path / "pod.yaml").write_text(
        pod("urgent", extra="priorityClassName: high, ", resources="{requests: {cpu: '1'}}")
    )
    files = ["-f", str(tmp_path / "cluster.yaml"), "-f", str(tmp_path / "pod.yaml")]
    code, out, _ = corral("simulate", "--capacity", "-o", "json", *files)
    assert code == 0
    found = json.loads(out)["capacity"]
    assert found["fits"] == 0
    assert found["next"]["wouldPreempt"] == ["default/victim"]
    assert found["next"]["reason"] == "fits on node-1 only by preempting default/victim"


@pytest.mark.parametrize(
    ("files", "flags", "message"),
    [
        pytest.param([CC_NODES], [], "--capacity counts copies of one pod: give one Pod without "
                     "spec.nodeName (or one workload) with -f, not none", id="no-template"),
        pytest.param([CC_NODES, pod("a") + pod("b")], [], "--capacity counts copies of one pod: "
                     "give one Pod without spec.nodeName (or one workload) with -f, not 2",
                     id="two-templates"),
        pytest.param([CC_NODES, pod("a")], ["--limit", "0"], "--limit 0: must be at least 1",
                     id="limit-zero"),
    ],
)  # fmt: skip
def test_bad_capacity_input_is_one_line(
    tmp_path: Path, corral: Run, files: list[str], flags: list[str], message: str
) -> None:
    argv = ["simulate", "--capacity", *flags]
    for i, text in enumerate(files):
        (tmp_path / f"{i}.yaml").write_text(text)
        argv += ["-f", str(tmp_path / f"{i}.yaml")]
    code, out, err = corral(*argv)
    assert (code, out) == (2, "")
    assert err.strip().splitlines() == [f"corral: {message}"], err
