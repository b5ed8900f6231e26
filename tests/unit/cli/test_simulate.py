"""`corral simulate`: the engine offline — profiles by schedulerName, tenancy, the cache's
admission, what it assumed and ignored, exit codes, and bad input at its line."""

from __future__ import annotations

import base64
import contextlib
import importlib.util
import io
import json
import ssl
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import yaml
from tests.unit.cli.conftest import ROOT, Run

from corral.extender.server import serve_in_thread
from corral.k8s.certs import issue
from corral.scheduler.framework.explanation import from_json

EXAMPLES = ROOT / "examples" / "simulate"
CLUSTER = EXAMPLES / "cluster.yaml"
SAMPLES = ROOT / "config" / "samples"


def lines(text: str) -> list[str]:
    return text.splitlines()


def notes(err: str) -> list[str]:
    return [line.removeprefix("note: ") for line in err.splitlines() if line.startswith("note: ")]


def test_the_example_with_the_default_profile(corral: Run) -> None:
    code, out, err = corral("simulate", "-f", str(CLUSTER))
    assert code == 3  # one pod cannot be placed
    assert lines(out) == [
        "shop/web -> node-a  (evaluated 3 nodes, 2 feasible)",
        "shop/cache -> node-a  (evaluated 3 nodes, 1 feasible)",
        "ml/trainer -> gpu-1  (evaluated 3 nodes, 1 feasible)",
        "shop/batch: unschedulable: 0/3 nodes are available: 1 node(s) had untolerated taint(s), "
        "2 Insufficient cpu. preemption: 0/3 nodes are available: 1 No preemption victims found "
        "for incoming pod, 2 Preemption is not helpful for scheduling.",
    ]
    assert notes(err) == [
        "profiles: default-scheduler: upstream's default configuration",
        "5 Pod(s) without spec.schedulerName: default-scheduler, as the API server defaults it",
    ]


def test_a_configuration_given_with_config(corral: Run) -> None:
    config = EXAMPLES / "scheduler-config.yaml"
    code, out, err = corral("simulate", "-f", str(CLUSTER), "--config", str(config))
    assert code == 3
    assert lines(out)[3] == (
        "shop/batch: unschedulable: 0/3 nodes are available: 1 node(s) had untolerated "
        "taint(s), 2 Insufficient cpu."
    )
    assert notes(err)[0] == f"profiles: default-scheduler: KubeSchedulerConfiguration ({config})"


TENANT_NODES = """\
kind: Node
metadata: {name: pool-a-1, labels: {pool: team-a}}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
---
kind: Node
metadata: {name: other-1}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
"""


def _pod(name: str, namespace: str, scheduler: str | None = None, cpu: str = "1") -> str:
    spec = f"schedulerName: {scheduler}, " if scheduler else ""
    requests = f"{{requests: {{cpu: '{cpu}'}}}}"
    return (f"---\nkind: Pod\nmetadata: {{name: {name}, namespace: {namespace}}}\n"
            f"spec: {{{spec}containers: [{{name: c, resources: {requests}}}]}}\n")  # fmt: skip


def test_each_pod_goes_to_its_profile_and_tenancy_is_honoured(tmp_path: Path, corral: Run) -> None:
    """Review finding 5: team-a's scheduler serves only team-a (the operator's "not served"),
    a pod without schedulerName is default-scheduler's, and every profile given is used."""
    f = tmp_path / "pods.yaml"
    f.write_text(TENANT_NODES + _pod("in-tenant", "team-a", "team-a")
                 + _pod("wrong-ns", "team-b", "team-a") + _pod("default-sched", "team-a")
                 + _pod("minimal", "team-b", "minimal")
                 + _pod("nobody", "team-b", "nobody"))  # fmt: skip
    code, out, err = corral("simulate", "-f", str(SAMPLES / "tenant.yaml"),
                            "-f", str(SAMPLES / "minimal.yaml"), "-f", str(f))  # fmt: skip
    assert code == 3
    assert lines(out) == [
        "team-a/in-tenant -> pool-a-1  (evaluated 2 nodes, 1 feasible)",
        "team-b/wrong-ns: not served: SchedulerProfile 'team-a' (schedulerName 'team-a') serves "
        "only team-a, team-a-batch, not namespace 'team-b'; this pod will not be scheduled",
        "team-a/default-sched -> other-1  (evaluated 2 nodes, 2 feasible)",
        "team-b/minimal -> other-1  (evaluated 2 nodes, 2 feasible)",
        "team-b/nobody: no profile: no profile has schedulerName 'nobody' (given: "
        "default-scheduler, minimal, team-a), so no scheduler will take this pod",
    ]
    assert notes(err)[0] == (
        f"profiles: team-a: SchedulerProfile team-a ({SAMPLES / 'tenant.yaml'}), serving "
        "team-a, team-a-batch; "
        f"minimal: SchedulerProfile minimal ({SAMPLES / 'minimal.yaml'}); "
        "default-scheduler: upstream's default configuration"
    )


def test_a_scheduler_name_given_twice_is_invalid(corral: Run) -> None:
    code, _, err = corral("simulate", "-f", str(CLUSTER), "-f", str(SAMPLES / "tenant.yaml"),
                          "--config", str(SAMPLES / "tenant.yaml"))  # fmt: skip
    assert code == 1
    assert "schedulerName 'team-a' is also given by SchedulerProfile team-a" in err


SNAPSHOT = """\
apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Node
  metadata: {name: n1, labels: {kubernetes.io/hostname: n1}}
  status:
    allocatable: {cpu: "2", memory: 4Gi, pods: "110"}
    conditions: [{type: Ready, status: "True"}]
- apiVersion: v1
  kind: Pod
  metadata: {name: done, namespace: default, uid: u-done}
  spec:
    nodeName: n1
    schedulerName: default-scheduler
    containers: [{name: c, resources: {requests: {cpu: "2"}}}]
  status: {phase: Succeeded}
- apiVersion: v1
  kind: Pod
  metadata: {name: pending, namespace: default, uid: u-pending}
  spec:
    schedulerName: default-scheduler
    containers: [{name: c, resources: {requests: {cpu: "1"}}}]
  status: {phase: Pending}
"""


def test_a_kubectl_snapshot_counts_no_finished_pod(
    corral: Run, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Review finding 6: `kubectl get nodes,pods -A -o yaml | corral simulate -f -`; the
    Succeeded pod holds no cpu, as the engine's informer never lists it."""
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(SNAPSHOT.encode())))
    code, out, err = corral("simulate", "-f", "-")
    assert (code, lines(out)) == (0, ["default/pending -> n1  (evaluated 1 node, 1 feasible)"])
    assert notes(err)[1:] == [
        "1 Pod(s) in phase Succeeded or Failed left out, as the engine's informer leaves them out"
    ]


def test_what_it_ignored_and_nothing_to_place(tmp_path: Path, corral: Run) -> None:
    """Review finding 7: a DaemonSet is reported (its pods are not made: simulate expands only
    Deployments, ReplicaSets, StatefulSets and Jobs), and no pending pod says so."""
    f = tmp_path / "in.yaml"
    f.write_text(TENANT_NODES + "---\napiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: d}\n"
                 "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n")  # fmt: skip
    code, out, err = corral("simulate", "-f", str(f))
    assert (code, out) == (0, "nothing to place: 2 nodes, 0 pods bound to them, no pending pod\n")
    assert notes(err)[1:] == [
        "ignored 1 ConfigMap (not a kind the engine reads)",
        "1 DaemonSet: its pods are not generated; give the Pods themselves "
        "(kubectl get pods -o yaml)",
        "2 Node(s) without the kubernetes.io/hostname label: the node's name, as the kubelet "
        "sets it",
    ]


STORAGE = """\
kind: Node
metadata: {name: n1, labels: {kubernetes.io/hostname: n1}}
status: {allocatable: {cpu: "2", memory: 4Gi, pods: "110"}}
---
kind: StorageClass
apiVersion: storage.k8s.io/v1
metadata: {name: manual}
provisioner: kubernetes.io/no-provisioner
---
kind: PersistentVolume
metadata: {name: pv1}
spec:
  capacity: {storage: 1Gi}
  accessModes: [ReadWriteOnce]
  storageClassName: manual
  hostPath: {path: /tmp/pv1}
---
kind: PersistentVolumeClaim
metadata: {name: data}
spec:
  accessModes: [ReadWriteOnce]
  storageClassName: manual
  resources: {requests: {storage: 1Gi}}
---
kind: Pod
metadata: {name: user}
spec:
  containers: [{name: c}]
  volumes: [{name: d, persistentVolumeClaim: {claimName: data}}]
"""


def test_a_phase_less_volume_is_available_as_the_pv_controller_makes_it(
    tmp_path: Path, corral: Run
) -> None:
    f = tmp_path / "in.yaml"
    f.write_text(STORAGE)
    code, out, err = corral("simulate", "-f", str(f))
    assert (code, lines(out)) == (0, ["default/user -> n1  (evaluated 1 node, 1 feasible)"])
    assert "1 PersistentVolume(s) without status.phase: Available, as the PV controller makes " \
        "it" in notes(err)  # fmt: skip


PREEMPTION = """\
kind: PriorityClass
apiVersion: scheduling.k8s.io/v1
metadata: {name: high}
value: 1000
---
kind: Node
metadata: {name: n1}
status: {allocatable: {cpu: "2", memory: 4Gi, pods: "110"}}
---
kind: Pod
metadata: {name: low, namespace: default}
spec:
  nodeName: n1
  containers: [{name: c, resources: {requests: {cpu: "2"}}}]
---
kind: Pod
metadata: {name: urgent, namespace: default}
spec:
  priorityClassName: high
  containers: [{name: c, resources: {requests: {cpu: "1"}}}]
"""


def test_preemption_evicts_and_places_as_the_engine_would(tmp_path: Path, corral: Run) -> None:
    f = tmp_path / "in.yaml"
    f.write_text(PREEMPTION)
    code, out, _ = corral("simulate", "-f", str(f), "--explain")
    assert code == 0
    assert lines(out)[0] == (
        "default/urgent -> n1  (evaluated 1 node, 1 feasible; preempted default/low; attempt 2)"
    )
    code, out, _ = corral("simulate", "-f", str(f), "--explain", "-o", "json")
    (placement,) = json.loads(out)["placements"]
    assert placement["victims"] == ["default/low"]
    assert placement["nominatedNodeName"] == "n1"


TWO_VICTIMS = (
    PREEMPTION
    + """\
---
kind: Node
metadata: {name: n2}
status: {allocatable: {cpu: "2", memory: 4Gi, pods: "110"}}
---
kind: Pod
metadata: {name: lower, namespace: default}
spec:
  nodeName: n2
  priority: -5
  containers: [{name: c, resources: {requests: {cpu: "2"}}}]
"""
)


def test_preemption_is_explained(tmp_path: Path, corral: Run) -> None:
    """The candidates with their victims, the one chosen and by which rule; the pod's last
    attempt is the one explained (the preemption's is its first)."""
    f = tmp_path / "in.yaml"
    f.write_text(
        TWO_VICTIMS.replace(
            'cpu: "1"}}}]\n---\nkind: Node',
            'cpu: "1"}}}]\n  preemptionPolicy: PreemptLowerPriority\n---\nkind: Node',
        )
    )
    code, out, _ = corral("simulate", "-f", str(f), "-o", "json", "--explain")
    assert code == 0
    (placement,) = json.loads(out)["placements"]
    assert placement["victims"] == ["default/lower"]
    assert placement["explanations"][-1]["outcome"] == {"code": "Success", "node": "n2",
                                                   "message": ""}  # fmt: skip
    f.write_text(TWO_VICTIMS.replace('cpu: "1"}}}]', 'cpu: "3"}}}]'))
    code, out, _ = corral("simulate", "-f", str(f), "--explain")
    assert code == 3
    assert "PostFilter DefaultPreemption: Unschedulable: preemption: 0/2 nodes are available" in out
    assert "no candidate: no node where evicting lower-priority pods would make room" in out


def test_the_attempt_that_preempted_is_explained_with_its_choice(
    tmp_path: Path, corral: Run
) -> None:
    f = tmp_path / "in.yaml"
    f.write_text(TWO_VICTIMS)
    code, out, _ = corral("simulate", "-f", str(f), "-o", "json", "--explain")
    assert code == 0
    (placement,) = json.loads(out)["placements"]
    first, last = placement["explanations"]
    preemption = first["preemption"]
    assert sorted(preemption["candidates"], key=lambda c: c["node"]) == [
        {"node": "n1", "victims": [{"pod": "default/low", "priority": 0}], "pdbViolations": 0},
        {"node": "n2", "victims": [{"pod": "default/lower", "priority": -5}], "pdbViolations": 0},
    ]  # the dry run starts at a random offset (seeded: --seed)
    assert (preemption["chosen"], preemption["why"]) == (
        "n2",
        "lowest priority of its most important victim",
    )
    assert last["attempt"] == 2
    assert last["outcome"]["node"] == "n2"
    code, out, _ = corral("simulate", "-f", str(f), "--explain")
    assert "    attempt 1:" in out
    assert "      * candidate n2: evict default/lower (priority -5)" in out
    assert "      chosen n2: lowest priority of its most important victim" in out


def _load_example_extender() -> ModuleType:
    path = ROOT / "examples" / "extender-example" / "extender.py"
    spec = importlib.util.spec_from_file_location("example_extender", path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_extenders_verdicts_and_scores_are_explained(tmp_path: Path, corral: Run) -> None:
    """Review finding 8: the node the example extender rejects says so, in its own column."""
    example = _load_example_extender()
    nodes = "".join(
        f"---\nkind: Node\nmetadata: {{name: {n}, labels: {{{labels}}}}}\n"
        'status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}\n'
        for n, labels in (("n-yes", "example.corral.dev/allowed: 'true', "
                                  "example.corral.dev/preferred: 'true'"),
                          ("n-also", "example.corral.dev/allowed: 'true'"),
                          ("n-no", "x: y"))
    )  # fmt: skip
    with serve_in_thread(example.build()) as url:
        config = yaml.safe_load(
            (ROOT / "examples/extender-example/scheduler-config.yaml").read_text()
        )
        config["extenders"][0]["urlPrefix"] = url
        del config["extenders"][0]["bindVerb"]
        (tmp_path / "config.yaml").write_text(yaml.safe_dump(config))
        (tmp_path / "in.yaml").write_text(nodes + _pod("p", "default", "with-extender"))
        code, out, _ = corral("simulate", "-f", str(tmp_path / "in.yaml"),
                              "--config", str(tmp_path / "config.yaml"), "--explain")  # fmt: skip
        _, report, _ = corral("simulate", "-f", str(tmp_path / "in.yaml"), "--config",
                              str(tmp_path / "config.yaml"), "--explain", "-o", "json")  # fmt: skip
    assert code == 0
    rows = {line.split()[0]: line for line in lines(out)[1:] if line.startswith("    ") and
            line.split()[0] in ("n-yes", "n-also", "n-no")}  # fmt: skip
    assert f"extender {url}: node(s) not allowed by the example extender" in rows["n-no"]
    explanation = json.loads(report)["placements"][0]["explanations"][-1]
    (column,) = [c for c in explanation["filter"] if c["source"] == "extender"]
    assert column["nodes"]["n-no"] == {
        "code": "Unschedulable",
        "message": "node(s) not allowed by the example extender",
    }
    (scores,) = [c for c in explanation["score"] if c["source"] == "extender"]
    assert scores["nodes"]["n-yes"] == {"raw": 10, "normalized": 100, "weighted": 100}
    assert explanation["selectedNode"] == "n-yes"


def test_a_binder_extender_is_never_asked_to_bind_offline(tmp_path: Path, corral: Run) -> None:
    """An offline what-if must not bind: the example extender with --bind would have bound a
    real pod (it answered 404 for this one, and the pod was reported unplaced). The simulated
    binder binds it, and a note says the extender's bind verb was left out."""
    example = _load_example_extender()
    binds: list[tuple[str, ...]] = []
    nodes = (
        "---\nkind: Node\nmetadata: {name: n-yes, labels: {example.corral.dev/allowed: 'true'}}\n"
        'status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}\n'
    )
    with serve_in_thread(example.build(binder=lambda *a: binds.append(a))) as url:
        config = yaml.safe_load(
            (ROOT / "examples/extender-example/scheduler-config.yaml").read_text()
        )
        config["extenders"][0]["urlPrefix"] = url
        assert config["extenders"][0]["bindVerb"]
        (tmp_path / "config.yaml").write_text(yaml.safe_dump(config))
        (tmp_path / "in.yaml").write_text(nodes + _pod("p", "default", "with-extender"))
        code, out, err = corral("simulate", "-f", str(tmp_path / "in.yaml"),
                                "--config", str(tmp_path / "config.yaml"))  # fmt: skip
    assert (code, binds) == (0, []), out + err
    assert "default/p" in out
    assert "n-yes" in out
    assert "1 binder extender(s) not called to bind, offline" in out + err


def test_an_extenders_tls_secret_is_left_out_offline_and_said(tmp_path: Path) -> None:
    """A profile's extender with a tlsSecretRef (mounted only in the scheduler's pods) is
    called over HTTPS without that Secret's files, its server verified by the inline caData:
    the extender answers, and a note says what was left out (it said "cannot read
    /var/run/corral/extender-tls/0/ca.crt" and placed nothing)."""
    example = _load_example_extender()
    ca, cert, key = issue(["127.0.0.1"])
    (tmp_path / "cert.pem").write_bytes(cert)
    (tmp_path / "key.pem").write_bytes(key)
    served = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    served.load_cert_chain(tmp_path / "cert.pem", tmp_path / "key.pem")
    nodes = "".join(
        f"---\nkind: Node\nmetadata: {{name: {n}, labels: {{{labels}}}}}\n"
        'status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}\n'
        for n, labels in (("n-yes", "example.corral.dev/allowed: 'true'"), ("n-no", "x: y"))
    )
    with serve_in_thread(example.build(), ssl_context=served) as url:
        profile = {
            "apiVersion": "corral.dev/v1alpha1", "kind": "SchedulerProfile",
            "metadata": {"name": "ext"},
            "spec": {"schedulerName": "ext", "extenders": [{
                "urlPrefix": url, "filterVerb": "filter", "tlsSecretRef": {"name": "ext-tls"},
                "tlsConfig": {"caData": base64.b64encode(ca).decode()},
            }]},
        }  # fmt: skip
        (tmp_path / "in.yaml").write_text(yaml.safe_dump(profile) + nodes + _pod("p", "d", "ext"))
        # A process of its own: its kept-alive TLS connection ends with it, before the server.
        done = subprocess.run([sys.executable, "-m", "corral", "simulate", "-f",
                               str(tmp_path / "in.yaml")], capture_output=True, text=True,
                              timeout=120, check=False)  # fmt: skip
    code, out, err = done.returncode, done.stdout, done.stderr
    assert (code, out) == (0, "d/p -> n-yes  (evaluated 2 nodes, 1 feasible)\n"), err
    assert (
        f"SchedulerProfile ext ({tmp_path / 'in.yaml'}#1): spec.extenders[0] ({url}): its "
        "tlsSecretRef Secret 'ext-tls' is mounted only in the scheduler's pods: called here "
        "without that Secret's certificate, key and CA"
    ) in notes(err)


def _rel(path: Path) -> str:
    return str(path.relative_to(ROOT))


# Placeholders the test replaces: a sample's own copy of cluster.yaml's pending pods (sent to
# its schedulerName, in a namespace it serves); the example extender served in this process
# (its scheduler-config.yaml with that URL, bindVerb kept, and nodes and a pod for it).
RETARGETED, EXTENDER = "@retargeted", "@extender"
PROFILES = [p for p in sorted(SAMPLES.glob("*.yaml"))
            if yaml.safe_load(p.read_text()).get("kind") == "SchedulerProfile"]  # fmt: skip
ALL_SAMPLES = [a for p in PROFILES for a in ("-f", _rel(p))]
# Every example with nodes and pods to place runs alone (the default profile, or its own), or
# with the sample of its name as its comment says (seed-storage.yaml's pods are that profile's).
PLACEABLE = [p for p in sorted(EXAMPLES.glob("*.yaml"))
             if "kind: Node" in p.read_text() and "kind: Pod\n" in p.read_text()]  # fmt: skip


def _alone(example: Path) -> list[str]:
    sample = SAMPLES / example.name
    return [*(["-f", _rel(sample)] if sample.is_file() else []), "-f", _rel(example)]


BATCH = ROOT / "examples" / "batch-tenant"
EXTENDER_CONFIG = ROOT / "examples" / "extender-example" / "scheduler-config.yaml"
EXPLAINED = [
    *(pytest.param(_alone(p), id=f"alone: {p.name}") for p in PLACEABLE),
    *(pytest.param([*ALL_SAMPLES, "-f", _rel(p)], id=f"every sample: {p.name}")
      for p in PLACEABLE),
    *(pytest.param(["-f", _rel(p), RETARGETED], id=f"sample {p.name}: cluster.yaml's pods")
      for p in PROFILES),
    pytest.param(["-f", _rel(CLUSTER), "-f", _rel(EXAMPLES / "workloads.yaml")],
                 id="workloads.yaml on cluster.yaml's nodes"),
    pytest.param(["-f", _rel(EXAMPLES / "capacity-cluster.yaml"),
                  "-f", _rel(EXAMPLES / "capacity-pod.yaml")],
                 id="capacity-pod on capacity-cluster"),
    *(pytest.param(["-f", _rel(CLUSTER), "--config", _rel(EXAMPLES / name)],
                   id=f"--config {name}") for name in ("scheduler-config.yaml",
                                                       "packing-config.yaml")),
    pytest.param(["-f", _rel(BATCH), "-f", _rel(EXAMPLES / "capacity-cluster.yaml")],
                 id="batch-tenant on capacity-cluster's nodes"),
    pytest.param(["--config", _rel(EXTENDER_CONFIG), EXTENDER],
                 id="extender-example's config, its extender served"),
]  # fmt: skip


def test_every_example_and_sample_has_a_row() -> None:
    """A new example or sample joins the table above, or this fails."""
    named = {a for p in EXPLAINED for a in p.values[0]}  # type: ignore[union-attr]
    files = [*SAMPLES.glob("*.yaml"), *EXAMPLES.glob("*.yaml"), BATCH, EXTENDER_CONFIG]
    missing = [_rel(f) for f in files if f.name != "kustomization.yaml" and _rel(f) not in named]
    assert not missing, missing
    assert sorted(ROOT.joinpath("examples").iterdir()) == [
        BATCH,
        ROOT / "examples" / "corral-plugin-example",
        EXTENDER_CONFIG.parent,
        EXAMPLES,
    ]  # the plugin example is a Python package (tests/unit/scheduler/plugins)


def _retargeted(sample: Path, tmp_path: Path) -> list[str]:
    profile = yaml.safe_load(sample.read_text())
    tenancy = profile["spec"].get("tenancy") or {}
    namespace = (tenancy.get("namespaces") or ["shop"])[0]
    name = profile["spec"].get("schedulerName") or profile["metadata"]["name"]
    docs = []
    for doc in yaml.safe_load_all(CLUSTER.read_text()):
        if doc["kind"] == "Pod" and not doc["spec"].get("nodeName"):
            docs.append({**doc, "metadata": {**doc["metadata"], "namespace": namespace},
                         "spec": {**doc["spec"], "schedulerName": name}})  # fmt: skip
        else:
            docs.append(doc)
    f = tmp_path / f"{name}.yaml"
    f.write_text(yaml.safe_dump_all(docs))
    return ["-f", str(f)]


def _with_extender(url: str, tmp_path: Path) -> list[str]:
    config = yaml.safe_load(EXTENDER_CONFIG.read_text())
    config["extenders"][0]["urlPrefix"] = url
    assert config["extenders"][0]["bindVerb"]  # a binder: offline it is never asked to bind
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(config))
    nodes = "".join(
        f"---\nkind: Node\nmetadata: {{name: {n}, labels: {{{labels}}}}}\n"
        'status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}\n'
        for n, labels in (("n-yes", "example.corral.dev/allowed: 'true'"), ("n-no", "x: y"))
    )
    (tmp_path / "in.yaml").write_text(nodes + _pod("p", "default", "with-extender"))
    return ["-f", str(tmp_path / "in.yaml"), "--config", str(tmp_path / "config.yaml")]


def _errors(explanation: Any) -> list[str]:
    """Every status of the cycle that is an error of its own (not a plugin's refusal)."""
    found = [f"{point} {r['plugin']}: {r.get('message')}"
             for point in ("preFilter", "preScore", "postFilter", "reserve", "permit")
             for r in explanation.get(point) or () if r["code"] == "Error"]  # fmt: skip
    found += [f"filter {column['plugin']} {node}: {v.get('message')}"
              for column in explanation["filter"]
              for node, v in column["nodes"].items() if v["code"] == "Error"]  # fmt: skip
    if explanation["outcome"]["code"] not in (
        "Success", "Unschedulable", "UnschedulableAndUnresolvable"
    ):  # fmt: skip
        found.append(f"outcome: {explanation['outcome']}")
    return found


@pytest.mark.parametrize("argv", EXPLAINED)
def test_every_example_and_sample_is_explained_without_an_internal_error(
    tmp_path: Path, corral: Run, argv: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Review finding 1: with the default profile, every sample profile (the example's pods
    sent to it, in a namespace it serves) and every example, no status of the cycle is an error
    of its own, and neither output shows one (an exception would end the in-process run)."""
    monkeypatch.chdir(ROOT)  # the rows name files as the docs do, from the repository's root
    if argv[-1] == RETARGETED:
        argv = [*argv[:-1], *_retargeted(ROOT / argv[1], tmp_path)]
    with contextlib.ExitStack() as stack:
        binds: list[object] = []
        if argv[-1] == EXTENDER:
            extender = _load_example_extender().build(binder=lambda *a: binds.append(a))
            argv = _with_extender(stack.enter_context(serve_in_thread(extender)), tmp_path)
        code, out, err = corral("simulate", *argv, "--explain-all", "-o", "json")
        assert code in (0, 3), err
        report = json.loads(out)
        explained = [e for p in report["placements"] for e in p.get("explanations", [])]
        assert explained
        for e in explained:
            assert _errors(e) == [], e["pod"]
        code, table, err_table = corral("simulate", *argv, "--explain")
    assert code in (0, 3), err_table
    assert binds == []  # a what-if binds nothing (commit 9363d1f)
    for text in (out, err, table, err_table):
        for internal in ("cycle state", "Traceback", "internal error", "error:"):
            assert internal not in text, (internal, text)


def test_explain_shows_skip_and_a_total_for_every_feasible_node(corral: Run) -> None:
    """The README's tour command: NodeDeclaredFeatures skips (no column of errors), and both
    feasible nodes have a total, best first."""
    _, out, _ = corral("simulate", "-f", str(CLUSTER), "--explain")
    web = lines(out)[1:6]
    assert web[0].startswith("    PreFilter: skip NodeAffinity, NodePorts,")
    assert web[0].endswith("NodeDeclaredFeatures")
    header, first, second, third = (row.split() for row in web[1:5])
    assert header[:2] == ["NODE", "FILTER"]
    assert header[-1] == "TOTAL"
    assert (first[0], first[1], second[0], second[1]) == ("node-a", "ok", "node-b", "ok")
    assert int(first[-1]) >= int(second[-1])
    assert third[0] == "gpu-1"
    assert third[-1] == "-"
    _, every, _ = corral("simulate", "-f", str(CLUSTER), "--explain-all")
    header = lines(every)[2].split()
    assert "NodeDeclaredFeatures" in header
    column = header.index("NodeDeclaredFeatures")
    assert lines(every)[3].split()[column] == "skip"


@pytest.mark.parametrize(
    ("document", "message"),
    [
        pytest.param("kind: Node\nmetadata: {name: n}\n",
                     "in.yaml:1:1: status: required: the node's capacity (the kubelet reports it)",
                     id="node-without-allocatable"),
        pytest.param("- just\n- a list\n", "in.yaml:1:1: must be a Kubernetes object",
                     id="not-an-object"),
        pytest.param("kind: [unclosed\n", "in.yaml:2:1: invalid YAML", id="bad-yaml"),
        pytest.param("kind: Node\nkind: Pod\n", "in.yaml:2:1: invalid YAML: duplicate key kind",
                     id="duplicate-key"),
        pytest.param("kind: List\nitems: [1, 2]\n", "in.yaml:2:9: must be a Kubernetes object",
                     id="list-of-numbers"),
        pytest.param("", "in.yaml: contains no document", id="empty file"),
        pytest.param("kind: Node\nmetadata: {name: n1}\n"
                     "status: {allocatable: {cpu: 1e999999999}}\n",
                     ('in.yaml:3:29: status.allocatable.cpu: "1e999999999": JSON has no infinite '
                      "or NaN numbers"),
                     id="absurd-quantity"),
        pytest.param("kind: Node\nmetadata: {name: n1}\nstatus: {allocatable: {cpu: '4'}}\n---\n"
                     "kind: Pod\nmetadata: {name: p, labels: [a]}\nspec: {}\n",
                     "in.yaml:6:21: metadata.labels: must be an object, got list",
                     id="pod-labels-a-list"),
        pytest.param("kind: Node\nmetadata: {name: n1}\nstatus: {allocatable: {cpu: '4'}}\n---\n"
                     "kind: Pod\nmetadata: [a]\nspec: {}\n",
                     "in.yaml:6:1: metadata: must be an object, got list",
                     id="pod-metadata-a-list"),
        pytest.param("kind: Node\nmetadata: {name: n1}\nstatus: {allocatable: {cpu: '4'}}\n---\n"
                     "kind: Pod\nmetadata: {name: p}\nspec:\n  containers: []\n"
                     "  topologySpreadConstraints: [{maxSkew: x, topologyKey: zone, "
                     "whenUnsatisfiable: DoNotSchedule}]\n",
                     ("in.yaml:9:32: spec.topologySpreadConstraints[0].maxSkew: must be an "
                      "integer, got string"), id="malformed-spread-constraint"),
        pytest.param(SAMPLES.joinpath("tenant.yaml").read_text().replace("replicas: 2",
                                                                         "replicas: x"),
                     "in.yaml:", id="an invalid profile at its line"),
    ],
)  # fmt: skip
def test_bad_input_is_invalid_input_at_its_line(
    tmp_path: Path, corral: Run, document: str, message: str
) -> None:
    path = tmp_path / "in.yaml"
    path.write_text(document)
    code, out, err = corral("simulate", "-f", str(path))
    assert (code, out) == (1, "")
    assert err.replace(str(tmp_path) + "/", "").startswith(message), err
    assert "Traceback" not in err


def test_the_documented_report_is_what_simulate_prints(
    corral: Run, monkeypatch: pytest.MonkeyPatch
) -> None:
    """docs/simulate.md's -o json sample: its Explanation decodes strictly with the model (no
    field the model lacks, none of the wrong type), and its report has a real report's keys."""
    page = (ROOT / "docs" / "simulate.md").read_text()
    sample = json.loads(page.split("```json\n", 1)[1].split("```", 1)[0])
    monkeypatch.chdir(ROOT)
    _, out, _ = corral("simulate", "-f", "examples/simulate/preemption.yaml", "--explain",
                       "-o", "json")  # fmt: skip
    real = json.loads(out)
    assert set(sample) == set(real)
    assert set(sample["placements"][0]) == set(real["placements"][0])
    for documented in sample["placements"][0]["explanations"]:
        assert from_json(documented).kind == "Explanation"
    assert from_json(real["placements"][0]["explanations"][0]).preemption is not None


def test_devices_claimed_through_templates(corral: Run) -> None:
    """The resourceclaim controller's claims are made for pending pods (and said so); a device
    the first pod got is taken for the next; a pod whose claim cannot exist is held by
    DynamicResources' PreEnqueue, and says so."""
    code, out, err = corral("simulate", "-f", str(EXAMPLES / "dra.yaml"))
    assert code == 3
    assert lines(out) == [
        "ml/trainer -> gpu-node  (evaluated 2 nodes, 1 feasible)",
        "ml/second: unschedulable: 0/2 nodes are available: 2 cannot allocate all claims. "
        "preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling.",
        'ml/no-template: gated: DynamicResources: pod "ml/no-template": ResourceClaim not '
        "created yet",
    ]
    assert (
        "2 ResourceClaim(s) made from a ResourceClaimTemplate for pending pods, as the "
        "resourceclaim controller makes them"
    ) in notes(err)


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


def test_pod_level_requests_are_not_overcommitted(tmp_path: Path, corral: Run) -> None:
    # The issue's reproduction: a cpu-3 pod went to a 2-cpu node, then two 1500m pods to one.
    path = tmp_path / "cluster.yaml"
    pods = [_pod_level_pod("big", "3"), _pod_level_pod("a", "1500m"), _pod_level_pod("b", "1500m")]
    path.write_text(TWO_CPU_NODES + "".join(pods))
    code, out, _err = corral("simulate", "-f", str(path))
    assert code == 3
    printed = lines(out)
    assert printed[0] == (
        "default/big: unschedulable: 0/2 nodes are available: 2 Insufficient cpu. preemption: "
        "0/2 nodes are available: 2 Preemption is not helpful for scheduling."
    )
    placed = {line.split(" -> ")[0]: line.split(" -> ")[1].split()[0] for line in printed[1:]}
    assert sorted(placed) == ["default/a", "default/b"]
    assert placed["default/a"] != placed["default/b"]


@pytest.mark.parametrize(
    ("resources", "message"),
    [
        pytest.param("{requests: {cpu: lots}}",
                     "13:26: spec.resources.requests[cpu]: quantities must match",
                     id="bad-quantity"),
        pytest.param("[1]", "13:3: spec.resources: must be an object, got list",
                     id="resources-a-list"),
        pytest.param("{requests: [cpu]}",
                     "13:15: spec.resources.requests: must be an object, got list",
                     id="requests-a-list"),
    ],
)  # fmt: skip
def test_malformed_pod_level_requests_are_invalid_input(
    tmp_path: Path, corral: Run, resources: str, message: str
) -> None:
    path = tmp_path / "cluster.yaml"
    pod = f"---\nkind: Pod\nmetadata: {{name: p}}\nspec:\n  resources: {resources}\n"
    path.write_text(TWO_CPU_NODES + pod + "  containers: [{name: c}]\n")
    code, _out, err = corral("simulate", "-f", str(path))
    assert code == 1
    assert message in err, err


GANG = EXAMPLES / "gang.yaml"
GANG_KSC = """\
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles: [{schedulerName: training}]
"""


def _gang_without_its_profile(tmp_path: Path) -> Path:
    """examples/simulate/gang.yaml with its SchedulerProfile left out (a KSC takes its place)."""
    docs = [d for d in yaml.safe_load_all(GANG.read_text()) if d["kind"] != "SchedulerProfile"]
    f = tmp_path / "gang.yaml"
    f.write_text(yaml.safe_dump_all(docs))
    return f


def test_pod_groups_are_decided_whole(corral: Run) -> None:
    """A profile's spec.featureGates reach its engine: the pod-group cycle places "train" whole
    and none of "eval" (two of its three would fit), and each PodGroup's condition is shown."""
    code, out, err = corral("simulate", "-f", str(GANG))
    assert code == 3
    assert [line.split(":")[0].split(" ->")[0] for line in lines(out)] == [
        "ml/train-0", "ml/train-1", "ml/train-2", "ml/train-3",
        "ml/eval-0", "ml/eval-1", "ml/eval-2", "podgroup ml/train", "podgroup ml/eval",
    ]  # fmt: skip
    assert all(" -> " in line for line in lines(out)[:4])
    assert all(": unschedulable: " in line for line in lines(out)[4:7])
    assert lines(out)[7] == "podgroup ml/train: Scheduled"
    assert lines(out)[8].startswith("podgroup ml/eval: Unschedulable: minCount (3) cannot be "
                                    "satisfied: 2 scheduled, 0 remaining")  # fmt: skip
    assert "gates GenericWorkload=true" in notes(err)[0]
    _, report, _ = corral("simulate", "-f", str(GANG), "-o", "json")
    body = json.loads(report)
    assert [p["podGroup"] for p in body["placements"]] == ["ml/train"] * 4 + ["ml/eval"] * 3
    assert [(g["name"], g["condition"]["reason"]) for g in body["podGroups"]] == [
        ("ml/train", "Scheduled"), ("ml/eval", "Unschedulable")]  # fmt: skip


@pytest.mark.parametrize(
    ("flags", "placed", "note"),
    [
        pytest.param(["--feature-gates", "GenericWorkload=true"], 4, None,
                     id="--feature-gates: the pod-group cycle"),
        pytest.param([], 6, "2 PodGroup(s), but no profile has the GenericWorkload gate: their "
                     "pods are scheduled one by one, as kube-scheduler without it",
                     id="no gate: pod by pod, and said"),
    ],
)  # fmt: skip
def test_a_configuration_takes_its_gates_from_the_flag(
    tmp_path: Path, corral: Run, flags: list[str], placed: int, note: str | None
) -> None:
    config = tmp_path / "ksc.yaml"
    config.write_text(GANG_KSC)
    gang = _gang_without_its_profile(tmp_path)
    code, out, err = corral("simulate", "-f", str(gang), "--config", str(config), *flags)
    assert code == 3
    assert sum(" -> " in line for line in lines(out)) == placed
    assert (note in notes(err)) if note else not any("PodGroup" in n for n in notes(err))


@pytest.mark.parametrize(
    ("gates", "message"),
    [
        pytest.param("GenericWorkload=maybe", "corral: --feature-gates: ", id="not a bool"),
        pytest.param("GenericWorkload=true,TopologyAwareWorkloadScheduling=true",
                     "corral: --feature-gates: "
                     "TopologyAwareWorkloadScheduling=true is not implemented by Corral's "
                     "engine", id="not implemented"),
    ],
)  # fmt: skip
def test_bad_feature_gates_are_a_usage_error(corral: Run, gates: str, message: str) -> None:
    code, out, err = corral("simulate", "-f", str(GANG), "--feature-gates", gates)
    assert (code, out) == (2, "")
    assert err.startswith(message), err


def test_a_workload_is_ignored_with_the_reason(tmp_path: Path, corral: Run) -> None:
    f = tmp_path / "in.yaml"
    f.write_text(TENANT_NODES + "---\napiVersion: scheduling.k8s.io/v1beta1\nkind: Workload\n"
                 "metadata: {name: w, namespace: ml}\n")  # fmt: skip
    _, _, err = corral("simulate", "-f", str(f))
    assert ("ignored 1 Workload (the scheduler reads the PodGroups its controller makes, not "
            "Workloads: give the PodGroups)") in notes(err)  # fmt: skip
