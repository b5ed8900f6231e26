"""The object checker: what the API server's decoding and validation would refuse in an object
the engine reads, each with its field path; what it accepts passes untouched."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml

from corral.scheduler.backend import shapes
from corral.scheduler.backend.records import MalformedObjectError, node_from_json, pod_from_json

ROOT = Path(__file__).resolve().parents[4]
POD: dict[str, Any] = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {"name": "p", "namespace": "d", "labels": {"a": "b"}},
    "spec": {
        "containers": [
            {"name": "c", "resources": {"requests": {"cpu": "1", "memory": "1Gi"}},
             "ports": [{"containerPort": 80}]}
        ],
        "priority": 10,
        "tolerations": [{"key": "k", "operator": "Exists", "tolerationSeconds": 5}],
    },
}  # fmt: skip


def _with(path: str, value: Any, base: dict[str, Any] = POD) -> dict[str, Any]:
    out = copy.deepcopy(base)
    node: Any = out
    *parents, leaf = path.split(".")
    for part in parents:
        node = node[int(part)] if part.isdigit() else node.setdefault(part, {})
    node[int(leaf) if leaf.isdigit() else leaf] = value
    return out


@pytest.mark.parametrize(
    ("obj", "problem"),
    [
        pytest.param(_with("spec.containers", {"name": "c"}), "spec.containers: must be a list, "
                     "got object", id="a list that is an object"),
        pytest.param(_with("spec.containers.0.resources.requests.cpu", {"a": 1}),
                     "spec.containers[0].resources.requests[cpu]: must be a quantity (a string "
                     "or a number), got object", id="a quantity that is an object"),
        pytest.param(_with("spec.containers.0.resources.requests.cpu", "lots"),
                     "spec.containers[0].resources.requests[cpu]: quantities must match",
                     id="a quantity that does not parse"),
        pytest.param(_with("spec.priority", 2**31), "spec.priority: 2147483648 does not fit in "
                     "int32", id="int32 + 1"),
        pytest.param(_with("spec.priority", 10**400), "spec.priority: 100000000000...000000 (401 "
                     "digits) does not fit in int32", id="400 digits"),
        pytest.param(_with("spec.priority", "10"), "spec.priority: must be an integer, got string",
                     id="an integer as a string"),
        pytest.param(_with("spec.priority", True), "spec.priority: must be an integer, got "
                     "boolean", id="a boolean is no integer"),
        pytest.param(_with("spec.tolerations.0.tolerationSeconds", 2**63),
                     "spec.tolerations[0].tolerationSeconds: 9223372036854775808 does not fit in "
                     "int64", id="int64 + 1"),
        pytest.param(_with("spec.containers.0.ports.0.containerPort", 1.5), "spec.containers[0]."
                     "ports[0].containerPort: must be an integer, got number", id="a float"),
        pytest.param(_with("metadata.labels", {"a": 1}), "metadata.labels[a]: must be a string, "
                     "got number", id="a label value"),
        pytest.param(_with("spec.containers.0.resources.requests.cpu", "-1"),
                     "spec.containers[0].resources.requests[cpu]: must be greater than or equal "
                     "to 0", id="a negative request"),
        pytest.param(_with("spec.containers.0.resources.limits", {"memory": "-1Gi"}),
                     "spec.containers[0].resources.limits[memory]: must be greater than or equal "
                     "to 0", id="a negative limit"),
        pytest.param(_with("spec.overhead", {"cpu": "-100m"}), "spec.overhead[cpu]: must be "
                     "greater than or equal to 0", id="a negative overhead"),
        pytest.param(_with("spec.initContainers", [{"name": "i", "resources": {"requests":
                     {"cpu": "-1"}}}]), "spec.initContainers[0].resources.requests[cpu]: must be "
                     "greater than or equal to 0", id="a negative init request"),
        pytest.param(_with("spec.resources", {"requests": {"cpu": "-1"}}),
                     "spec.resources.requests[cpu]: must be greater than or equal to 0",
                     id="a negative pod-level request"),
        pytest.param(_with("apiVersion", "v2"), 'apiVersion: "v2": the engine reads Pod at "v1"',
                     id="another version"),
        pytest.param({"apiVersion": "resource.k8s.io/v1beta1", "kind": "ResourceClaim",
                      "metadata": {"name": "c"}, "spec": {}},
                     'apiVersion: "resource.k8s.io/v1beta1": the engine reads ResourceClaim at '
                     '"resource.k8s.io/v1"', id="a v1beta1 claim is not read as v1"),
        pytest.param({"kind": "Node", "metadata": {"name": "n"}, "status": {"allocatable":
                     {"cpu": []}}}, "status.allocatable[cpu]: must be a quantity", id="a Node"),
        pytest.param({"kind": "PersistentVolumeClaim", "metadata": {"name": "c"}, "spec":
                     {"resources": {"requests": {"storage": True}}}},
                     "spec.resources.requests[storage]: must be a quantity", id="a PVC"),
        pytest.param({"kind": "ResourceSlice", "metadata": {"name": "s"}, "spec": {"devices":
                     [{"name": "d", "attributes": {"a": {"int": "1"}}}]}},
                     "spec.devices[0].attributes[a].int: must be an integer, got string",
                     id="a device attribute"),
    ],
)  # fmt: skip
def test_refused_with_the_field_path(obj: dict[str, Any], problem: str) -> None:
    found = shapes.problems(obj)
    assert found, obj
    assert found[0].startswith(problem), found[0]


@pytest.mark.parametrize(
    "obj",
    [
        pytest.param(POD, id="a pod"),
        pytest.param(_with("spec.nodeSelector", None), id="null is every type's zero"),
        pytest.param(_with("spec.unknownField", {"x": [1]}), id="undeclared fields are left alone"),
        pytest.param({k: v for k, v in POD.items() if k != "apiVersion"}, id="no apiVersion"),
        pytest.param({"kind": "Widget", "spec": 1}, id="a kind the engine does not read"),
    ],
)
def test_accepted(obj: dict[str, Any]) -> None:
    assert shapes.problems(obj) == []


def test_the_examples_pass() -> None:
    for path in sorted((ROOT / "examples" / "simulate").glob("*.yaml")):
        for doc in yaml.safe_load_all(path.read_text()):
            if isinstance(doc, dict):
                assert shapes.problems(doc) == [], (path.name, doc.get("metadata"))


def test_a_deep_object_is_walked_without_recursion() -> None:
    deep: Any = "x"
    for _ in range(5000):
        deep = {"nodeSelectorTerms": [{"matchExpressions": deep}]}
    obj = _with("spec.affinity", {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution"
                                                    : deep}})  # fmt: skip
    assert shapes.problems(obj)  # found, not a RecursionError


@pytest.mark.parametrize(
    ("read", "obj", "message"),
    [
        pytest.param(pod_from_json, _with("spec.containers.0.resources.requests.cpu", "-2"),
                     "Pod d/p: spec.containers[0].resources.requests[cpu]: must be greater than "
                     "or equal to 0", id="a negative request never fits a full node"),
        pytest.param(pod_from_json, _with("spec.containers.0.resources", "x"),
                     "Pod d/p: spec.containers[0].resources: must be an object, got string",
                     id="a watched pod's wrong type, with its path"),
        pytest.param(pod_from_json, _with("status", {"nominatedNodeName": ["n1"]}),
                     "Pod d/p: status.nominatedNodeName: must be a string, got list",
                     id="a nominated node that is a list (it keyed the nominator's map)"),
        pytest.param(pod_from_json, _with("spec.priority", "10"),
                     "Pod d/p: spec.priority: must be an integer, got string",
                     id="a priority that is a string (int() took it)"),
        pytest.param(node_from_json, {"metadata": {"name": "n"}, "status": {"allocatable": 7}},
                     "Node n: status.allocatable: must be an object, got number", id="a node"),
    ],
)  # fmt: skip
def test_records_say_where(read: Any, obj: dict[str, Any], message: str) -> None:
    with pytest.raises(MalformedObjectError) as caught:
        read(obj)
    assert str(caught.value) == message
