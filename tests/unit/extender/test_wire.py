"""corral.extender's wire types: upstream JSON field names, Go-like decoding, round trips."""

from __future__ import annotations

import json
from typing import Any

import pytest

from corral.extender import (
    ExtenderArgs,
    ExtenderBindingArgs,
    ExtenderBindingResult,
    ExtenderFilterResult,
    ExtenderPreemptionArgs,
    ExtenderPreemptionResult,
    HostPriority,
    MetaPod,
    MetaVictims,
    Victims,
    WireError,
)
from corral.extender.types import priorities_from_json

NODE = {"metadata": {"name": "n1"}}
POD = {"metadata": {"name": "p", "uid": "u1"}}


@pytest.mark.parametrize(
    ("value", "wire"),
    [
        pytest.param(
            ExtenderArgs(POD, node_names=["n1"]),
            {"Pod": POD, "Nodes": None, "NodeNames": ["n1"]},
            id="ExtenderArgs nodeCacheCapable",
        ),
        pytest.param(
            ExtenderArgs(POD, nodes=[NODE]),
            {"Pod": POD, "Nodes": {"metadata": {}, "items": [NODE]}, "NodeNames": None},
            id="ExtenderArgs full nodes",
        ),
        pytest.param(
            ExtenderFilterResult(None, ["n1"], {"n2": "x"}, {"n3": "y"}, "e"),
            {
                "Nodes": None,
                "NodeNames": ["n1"],
                "FailedNodes": {"n2": "x"},
                "FailedAndUnresolvableNodes": {"n3": "y"},
                "Error": "e",
            },
            id="ExtenderFilterResult",
        ),
        pytest.param(HostPriority("n1", 7), {"Host": "n1", "Score": 7}, id="HostPriority"),
        pytest.param(
            ExtenderBindingArgs("p", "ns", "u1", "n1"),
            {"PodName": "p", "PodNamespace": "ns", "PodUID": "u1", "Node": "n1"},
            id="ExtenderBindingArgs",
        ),
        pytest.param(ExtenderBindingResult("no"), {"Error": "no"}, id="ExtenderBindingResult"),
        pytest.param(
            ExtenderPreemptionArgs(POD, node_name_to_victims={"n1": Victims([POD], 2)}),
            {
                "Pod": POD,
                "NodeNameToVictims": {"n1": {"Pods": [POD], "NumPDBViolations": 2}},
                "NodeNameToMetaVictims": None,
            },
            id="ExtenderPreemptionArgs",
        ),
        pytest.param(
            ExtenderPreemptionResult({"n1": MetaVictims([MetaPod("u1")], 0)}),
            {"NodeNameToMetaVictims": {"n1": {"Pods": [{"UID": "u1"}], "NumPDBViolations": 0}}},
            id="ExtenderPreemptionResult",
        ),
    ],
)
def test_field_names_and_round_trip(value: Any, wire: dict[str, Any]) -> None:
    assert value.to_json() == wire
    assert type(value).from_json(json.loads(json.dumps(wire))) == value


def test_keys_decode_case_insensitively_like_go() -> None:
    doc = {"nodenames": ["a"], "failedNodes": {"b": "x"}, "error": ""}
    got = ExtenderFilterResult.from_json(doc)
    assert (got.node_names, got.failed_nodes) == (["a"], {"b": "x"})
    assert priorities_from_json([{"host": "a", "score": 3}]) == [HostPriority("a", 3)]


@pytest.mark.parametrize(
    "doc",
    [
        pytest.param([{"Host": "a", "Score": 1.5}], id="float score"),
        pytest.param([{"Host": "a", "Score": True}], id="bool score"),
        pytest.param({"Host": "a"}, id="object instead of list"),
        pytest.param([{"Host": "a", "Score": 2**63}], id="score beyond int64"),
    ],
)
def test_bad_shapes_are_wire_errors(doc: Any) -> None:
    with pytest.raises(WireError):
        priorities_from_json(doc)


def test_an_int64_overflow_is_named() -> None:
    with pytest.raises(WireError, match=r"^Score: 9223372036854775808 does not fit in a 64-bit"):
        priorities_from_json([{"Host": "a", "Score": 2**63}])


def test_keep_answers_in_the_form_of_the_call() -> None:
    by_name = ExtenderArgs(POD, node_names=["n1", "n2"])
    assert ExtenderFilterResult.keep(by_name, ["n2"]).node_names == ["n2"]
    full = ExtenderArgs(POD, nodes=[NODE, {"metadata": {"name": "n2"}}])
    kept = ExtenderFilterResult.keep(full, ["n2"], failed={"n1": "no"})
    assert (kept.node_names, kept.kept, kept.failed_nodes) == (None, ["n2"], {"n1": "no"})


def test_meta_victims_from_full_victims() -> None:
    args = ExtenderPreemptionArgs(POD, node_name_to_victims={"n1": Victims([POD], 1)})
    assert args.meta_victims() == {"n1": MetaVictims([MetaPod("u1")], 1)}
