"""The CRD kinds the scheduler-plugins ports watch, malformed, where their watch events enter.

PodGroup and ElasticQuota (``scheduling.x-k8s.io/v1alpha1``) and NodeResourceTopology
(``topology.node.k8s.io/v1alpha2``) are checked against their CRD's openAPIV3Schema (the files
under ``crds/scheduler-plugins``) as the API server would: an added or modified object of the
wrong shape is ignored with one line naming the field, and never reaches Coscheduling,
CapacityScheduling or NodeResourceTopologyMatch.

The rows are derived from those schemas, not picked: for every field of a well-formed object
(every field the schema declares), each wrong JSON type, an integer past its format's width, one
below its ``minimum``, each required field taken out; and the values the schema allows that a
reader might still trip on (negative and huge amounts, negative integers), which must be kept.
Each object goes through the dispatch of the engine's own informer (``Informer._emit`` into
``ObjectEvents``), then a pod that reads it (its group, its namespace's quota, its node's
topology) goes through a scheduling cycle of the engine's profile with the three plugins; no row
may log a traceback, raise, or end the cycle in an Error.
"""

from __future__ import annotations

import copy
import functools
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from corral.controller.elasticquota_status import ElasticQuotas
from corral.controller.podgroup_status import PodGroups
from corral.k8s import Client
from corral.k8s.informer import Informer
from corral.scheduler.backend import shapes
from corral.scheduler.backend.objects import WATCHED, WATCHED_KINDS
from corral.scheduler.engine.app import Engine, EngineOptions
from corral.scheduler.engine.assume import NominationDroppingAssumer
from corral.scheduler.engine.frameworks import EngineConfig, load_engine_config
from corral.scheduler.framework.cycle_state import CycleState
from corral.scheduler.framework.runtime.schedule_one import CycleOutcome, scheduling_cycle
from corral.scheduler.framework.status import Code
from corral.testing.builders import node, pod
from corral_dev import crd_shapes
from support import sp_chart

ROOT = Path(__file__).resolve().parents[4]
CRDS = ROOT / "crds/scheduler-plugins"
SCHEDULER = sp_chart.CHART_VALUES["scheduler"]["name"]
CREATED = "2026-01-01T00:00:00Z"

# Well-formed objects with every field their CRD declares, read by the pod below.
POD_GROUP: dict[str, Any] = {
    "apiVersion": "scheduling.x-k8s.io/v1alpha1",
    "kind": "PodGroup",
    "metadata": {"name": "pg", "namespace": "d", "creationTimestamp": CREATED},
    "spec": {"minMember": 1, "minResources": {"cpu": "1"}, "scheduleTimeoutSeconds": 10},
    "status": {"phase": "Pending", "occupiedBy": "d/j", "running": 0, "succeeded": 0,
               "failed": 0, "scheduleStartTime": CREATED},
}  # fmt: skip
ELASTIC_QUOTA: dict[str, Any] = {
    "apiVersion": "scheduling.x-k8s.io/v1alpha1",
    "kind": "ElasticQuota",
    "metadata": {"name": "eq", "namespace": "d", "creationTimestamp": CREATED},
    "spec": {"min": {"cpu": "2", "memory": "2Gi"}, "max": {"cpu": "4", "memory": "4Gi"}},
    "status": {"used": {"cpu": "0"}},
}
TOPOLOGY: dict[str, Any] = {
    "apiVersion": "topology.node.k8s.io/v1alpha2",
    "kind": "NodeResourceTopology",
    "metadata": {"name": "n1"},
    "topologyPolicies": ["SingleNUMANodeContainerLevel"],
    "attributes": [{"name": "topologyManagerPolicy", "value": "single-numa-node"}],
    "zones": [{
        "name": "node-0", "type": "Node", "parent": "n1",
        "costs": [{"name": "node-0", "value": 10}],
        "attributes": [{"name": "a", "value": "b"}],
        "resources": [{"name": "cpu", "capacity": "4", "allocatable": "4", "available": "4"},
                      {"name": "memory", "capacity": "8Gi", "allocatable": "8Gi",
                       "available": "8Gi"}],
    }],
}  # fmt: skip
BASES = {"PodGroup": POD_GROUP, "ElasticQuota": ELASTIC_QUOTA, "NodeResourceTopology": TOPOLOGY}
CRD_FILES = {
    "PodGroup": "podgroups.scheduling.x-k8s.io.yaml",
    "ElasticQuota": "elasticquotas.scheduling.x-k8s.io.yaml",
    "NodeResourceTopology": "noderesourcetopologies.topology.node.k8s.io.yaml",
}
# A Guaranteed pod of group pg in namespace d (its quota there), to be placed on n1.
_AMOUNTS = {"cpu": "1", "memory": "1Gi"}
_CONTAINER = {"name": "c", "resources": {"requests": _AMOUNTS, "limits": _AMOUNTS}}
_GROUP = {"scheduling.x-k8s.io/pod-group": "pg"}
POD = pod("p", namespace="d", labels=_GROUP, containers=[_CONTAINER])
POD["spec"]["schedulerName"] = SCHEDULER

OFFLINE = Client.from_token("https://127.0.0.1:1", "offline", None)
REFUSED, KEPT = "refused", "kept"
Row = tuple[str, tuple[Any, ...], Any, str, str]  # kind, path, value (DROP: none), verdict, what
DROP = object()
_WIDTHS = {"int32": 2**31, "int64": 2**63}


def _crd(kind: str) -> dict[str, Any]:
    doc: dict[str, Any] = yaml.safe_load((CRDS / CRD_FILES[kind]).read_text())
    return doc


def _lister_kind(kind: str) -> str:
    spec = _crd(kind)["spec"]
    return str(WATCHED[(spec["group"], spec["names"]["plural"])][0])


def _variants(schema: dict[str, Any]) -> Iterator[tuple[str, Any, str, str]]:
    """(id, value, verdict, what the line says) for a field of ``schema``."""
    if schema.get("x-kubernetes-int-or-string"):
        yield "object", {}, REFUSED, "must be a quantity"
        yield "boolean", True, REFUSED, "must be a quantity"
        yield "not a quantity", "x", REFUSED, ""
        yield "negative", "-1", KEPT, ""
        yield "huge", "9" * 30, KEPT, ""
        yield "huge integer", 10**30, KEPT, ""
        return
    kind = schema.get("type")
    if kind == "object":
        yield "list", [], REFUSED, "must be an object"
        yield "string", "x", REFUSED, "must be an object"
    elif kind == "array":
        yield "object", {}, REFUSED, "must be a list"
        yield "number", 5, REFUSED, "must be a list"
    elif kind == "string":
        yield "number", 5, REFUSED, "must be a string"
        yield "list", ["x"], REFUSED, "must be a string"
    elif kind == "integer":
        fmt = schema.get("format", "int64")
        yield "string", "x", REFUSED, "must be an integer"
        yield "float", 1.5, REFUSED, "must be an integer"
        yield "boolean", True, REFUSED, "must be an integer"
        yield f"past {fmt}", _WIDTHS[fmt], REFUSED, f"{_WIDTHS[fmt]} does not fit in {fmt}"
        yield f"huge {fmt}", _WIDTHS[fmt] - 1, KEPT, ""
        if "minimum" in schema:
            low = schema["minimum"]
            under = f"must be greater than or equal to {low}"
            yield f"below minimum {low}", low - 1, REFUSED, under
            yield "negative", -5, REFUSED, under
        else:
            yield "negative", -5, KEPT, ""
    else:
        raise AssertionError(f"a schema type the table does not attack: {schema}")


def _rows_of(kind: str) -> Iterator[Row]:
    """Every field of the base object (and of its first items), attacked."""
    (version,) = _crd(kind)["spec"]["versions"]
    top = version["schema"]["openAPIV3Schema"]
    stack: list[tuple[dict[str, Any], Any, tuple[Any, ...]]] = [(top, BASES[kind], ())]
    while stack:
        schema, value, path = stack.pop(0)
        if path:
            for name, bad, verdict, what in _variants(schema):
                yield kind, path, bad, verdict, f"{name}|{what}"
        if schema.get("type") == "object" and "properties" in schema:
            for name in schema.get("required", ()):
                yield kind, (*path, name), DROP, REFUSED, "missing|a required field, missing"
            for name, field in schema["properties"].items():
                if name in ("apiVersion", "kind", "metadata"):
                    continue  # checked as every kind's are (ObjectMeta's Go type)
                assert name in value, f"{kind}: the base object has no {(*path, name)}"
                stack.append((field, value[name], (*path, name)))
        elif schema.get("type") == "object" and "additionalProperties" in schema:
            key = next(iter(value))
            stack.append((schema["additionalProperties"], value[key], (*path, f"[{key}]")))
        elif schema.get("type") == "array":
            stack.append((schema["items"], value[0], (*path, 0)))


def _dotted(path: tuple[Any, ...]) -> str:
    out = ""
    for step in path:
        if isinstance(step, int):
            out += f"[{step}]"
        elif step.startswith("["):
            out += step
        else:
            out += f".{step}" if out else step
    return out


def _params() -> list[Any]:
    out = []
    for kind in BASES:
        for kind_, path, value, verdict, how in _rows_of(kind):
            name, what = how.split("|")
            out.append(pytest.param(kind_, path, value, verdict, what,
                                    id=f"{kind_} {_dotted(path)} {name}"))  # fmt: skip
    return out


ROWS = _params()
# Strings the schema allows that the readers turn into numbers (noderesourcetopology-api's
# NameToID, the kubelet's topologyManagerMaxNUMANodes): past int64 and past CPython's
# 4,300-digit limit for int(), they must be kept and read as Go's Atoi failing.
_DIGITS = "9" * 5000
_MAX_NUMA = [{"name": "topologyManagerMaxNUMANodes", "value": _DIGITS}]
READ_AS_NUMBERS = [
    pytest.param("NodeResourceTopology", ("zones", 0, "name"), f"node-{_DIGITS}", KEPT, "",
                 id="NodeResourceTopology zones[0].name node-<5000 digits>"),
    pytest.param("NodeResourceTopology", ("zones", 0, "name"), "node-9223372036854775808", KEPT,
                 "", id="NodeResourceTopology zones[0].name node-<past int64>"),
    pytest.param("NodeResourceTopology", ("zones", 0, "costs", 0, "name"), f"node-{_DIGITS}",
                 KEPT, "", id="NodeResourceTopology zones[0].costs[0].name node-<5000 digits>"),
    pytest.param("NodeResourceTopology", ("attributes",), _MAX_NUMA, KEPT, "",
                 id="NodeResourceTopology attributes topologyManagerMaxNUMANodes <5000 digits>"),
]  # fmt: skip


def _with(base: dict[str, Any], path: tuple[Any, ...], value: Any) -> dict[str, Any]:
    out = copy.deepcopy(base)
    at: Any = out
    for step in path[:-1]:
        at = at[step.strip("[]") if isinstance(step, str) else step]
    last = path[-1].strip("[]") if isinstance(path[-1], str) else path[-1]
    if value is DROP:
        del at[last]
    else:
        at[last] = value
    return out


@functools.cache
def _config() -> EngineConfig:
    return load_engine_config(sp_chart.scheduler_config(sp_chart.CHART_VALUES, "sp"))


def _engine(leave_out: str) -> tuple[Engine, dict[str, Informer]]:
    """An offline engine with the three plugins, node n1 and the well-formed objects but
    ``leave_out``, each through its informer; its informer of each kind."""
    engine = Engine(_config(), OFFLINE, EngineOptions(identity="crd-shapes", bind_port=0))
    engine.state.on_node("ADDED", node("n1", cpu="4", memory="8Gi"))
    by_path = {i.path: i for i in engine.informers}
    informers = {kind: by_path[WATCHED_KINDS[_lister_kind(kind)]] for kind in BASES}
    for kind, informer in informers.items():
        if kind != leave_out:
            informer._emit("ADDED", copy.deepcopy(BASES[kind]))
    return engine, informers


def _cycle(engine: Engine) -> CycleOutcome:
    """The pod's scheduling cycle, as the loop runs it (its binding left out)."""
    engine._on_pod("ADDED", copy.deepcopy(POD))
    qpi = engine.queue.pop(timeout=0)
    assert qpi is not None
    return scheduling_cycle(
        engine.schedulers[SCHEDULER], CycleState(), qpi.pod, engine.cache.snapshot(),
        NominationDroppingAssumer(engine.cache, engine.nominator),
    )  # fmt: skip


def test_the_well_formed_objects_are_kept_and_read() -> None:
    engine, _ = _engine(leave_out="")
    for kind, base in BASES.items():
        meta = base["metadata"]
        assert engine.objects.get(_lister_kind(kind), meta.get("namespace", ""), meta["name"])
    outcome = _cycle(engine)
    assert outcome.ok, outcome.status
    assert outcome.result is not None
    assert outcome.result.suggested_host == "n1"


def test_the_table_attacks_every_field_of_every_kind() -> None:
    """Each field the CRDs declare (but apiVersion, kind, metadata) has rows."""
    attacked = {(kind, _dotted(path)) for kind, path, *_ in (r.values for r in ROWS)}
    assert ("PodGroup", "spec.minMember") in attacked
    assert ("NodeResourceTopology", "zones[0].resources[0].available") in attacked
    assert ("ElasticQuota", "status.used[cpu]") in attacked
    assert len(ROWS) > 150


@pytest.mark.parametrize(("kind", "path", "value", "verdict", "what"), ROWS + READ_AS_NUMBERS)
def test_a_malformed_crd_object_is_ignored_with_one_line(
    kind: str, path: tuple[Any, ...], value: Any, verdict: str, what: str,
    caplog: pytest.LogCaptureFixture,
) -> None:  # fmt: skip
    engine, informers = _engine(leave_out=kind)
    obj = _with(BASES[kind], path, value)
    meta = obj["metadata"]
    name = "/".join(k for k in (meta.get("namespace"), meta["name"]) if k)
    with caplog.at_level(logging.WARNING):
        informers[kind]._emit("ADDED", obj)
        lines = [r.getMessage() for r in caplog.records]
        outcome = _cycle(engine)  # a plugin's TypeError, KeyError, ... raises here
    tracebacks = [r.getMessage() for r in caplog.records if r.exc_info]
    assert tracebacks == [], tracebacks
    assert outcome.status is None or outcome.status.code != Code.ERROR, outcome.status
    stored = engine.objects.get(_lister_kind(kind), meta.get("namespace", ""), meta["name"])
    if verdict == KEPT:
        assert stored is obj
        assert lines == []
        return
    assert stored is None
    (line,) = lines
    assert line.startswith(
        f"ignoring a malformed {kind} event: {kind} {name}: {_dotted(path)}: {what}"
    ), line
    assert "\n" not in line


def test_the_crd_shapes_are_derived_from_the_crds() -> None:
    """``crd_shapes.json`` is what ``python -m corral_dev.crd_shapes`` makes of the CRDs now."""
    assert crd_shapes.OUT.read_text() == crd_shapes.render(), "run python -m corral_dev.crd_shapes"
    assert [crd_shapes.CRDS / f for f in crd_shapes.FILES] == [CRDS / CRD_FILES[k] for k in BASES]


def test_every_watched_kind_has_a_shape() -> None:
    """A kind the engine watches without a shape would reach plugins unchecked."""
    assert [k for k in WATCHED_KINDS if shapes.api_version(k) is None] == []
    assert [shapes.kind_name(_lister_kind(k)) for k in BASES] == list(BASES)


@pytest.mark.parametrize(
    ("kind", "path", "value"),
    [pytest.param(*r.values[:3], id=r.id) for r in ROWS if r.values[0] != "NodeResourceTopology"],
)
def test_the_operators_status_controllers_take_every_row(
    kind: str, path: tuple[Any, ...], value: Any, caplog: pytest.LogCaptureFixture
) -> None:
    """The operator's PodGroup and ElasticQuota status controllers watch these kinds on their
    own (no engine in front): a malformed one is left alone with at most one line, never
    raises (a raise ended the controller's loop, for every group or quota)."""
    obj = _with(BASES[kind], path, value)
    with caplog.at_level(logging.WARNING):
        if kind == "PodGroup":
            groups = PodGroups()
            groups.on_group("ADDED", obj)
            groups.outcome(("d", "pg"), now=1.8e9)
        else:
            quotas = ElasticQuotas()
            quotas.on_quota("ADDED", obj)
            quotas.patch("d")
    assert len(caplog.records) <= 1, [r.getMessage() for r in caplog.records]
    assert all(r.getMessage().startswith(f"ignoring a malformed {kind} d/") for r in caplog.records)


@pytest.mark.parametrize("kind", list(BASES))
def test_an_object_naming_its_crd_kind_is_checked_by_it(kind: str) -> None:
    """What ``corral simulate`` reads names its kind (PodGroup, at scheduling.x-k8s.io/v1alpha1),
    not the kind the engine files it as: checked all the same; another group's kind of the same
    name (upstream's PodGroup) is not taken for it."""
    base = BASES[kind]
    assert shapes.problems(base) == []
    assert shapes.problems({**base, "metadata": 5}) == ["metadata: must be an object, got number"]
    other = {**base, "apiVersion": "scheduling.k8s.io/v1alpha2", "metadata": 5}
    assert shapes.problems(other) == []


def test_a_group_needing_more_than_int64_of_a_resource_is_short_of_it() -> None:
    """minResources past int64 is a quantity the CRD allows: the group needs more than any
    cluster has (SP's CheckClusterResource gap), not "PodGroup not found" (it was: the amount
    failed the int64 parse and the group was taken for missing)."""
    engine, informers = _engine(leave_out="PodGroup")
    huge = _with(POD_GROUP, ("spec", "minResources", "[cpu]"), "9" * 30)
    informers["PodGroup"]._emit("ADDED", huge)
    outcome = _cycle(engine)
    assert not outcome.ok
    assert "resource gap: map[cpu:" in str(outcome.status)
