"""Node selector operators (per node) and parsing rules, as component-helpers nodeaffinity."""

from __future__ import annotations

import pytest

from corral.scheduler.framework import nodeselector as ns
from corral.scheduler.framework.api_types import NodeSelectorTerm
from corral.testing.builders import expr, node, snapshot_of


@pytest.mark.parametrize(
    ("req", "labels", "want"),
    [
        pytest.param(ns.Requirement("a", "In", ("1", "2")), {"a": "2"}, True, id="In"),
        pytest.param(ns.Requirement("a", "In", ("1",)), {}, False, id="In absent"),
        pytest.param(ns.Requirement("a", "NotIn", ("1",)), {"a": "2"}, True, id="NotIn"),
        pytest.param(ns.Requirement("a", "NotIn", ("1",)), {}, True, id="NotIn absent matches"),
        pytest.param(ns.Requirement("a", "Exists"), {"a": ""}, True, id="Exists"),
        pytest.param(ns.Requirement("a", "DoesNotExist"), {"a": ""}, False, id="DoesNotExist"),
        pytest.param(ns.Requirement("a", "Gt", ("3",)), {"a": "4"}, True, id="Gt"),
        pytest.param(ns.Requirement("a", "Gt", ("3",)), {"a": "3"}, False, id="Gt is strict"),
        pytest.param(ns.Requirement("a", "Lt", ("3",)), {"a": "-7"}, True, id="Lt negative"),
        pytest.param(ns.Requirement("a", "Gt", ("3",)), {"a": "+4"}, True, id="Gt with plus sign"),
        pytest.param(
            ns.Requirement("a", "Gt", ("3",)), {"a": " 4"}, False, id="Gt space is not a number"
        ),
        pytest.param(
            ns.Requirement("a", "Gt", ("3",)),
            {"a": "4_0"},
            False,
            id="Gt underscore is not a number",
        ),
        pytest.param(
            ns.Requirement("a", "Gt", ("3",)), {"a": "9223372036854775808"}, False, id="Gt overflow"
        ),
        pytest.param(ns.Requirement("a", "Gt", ("3",)), {}, False, id="Gt absent"),
    ],
)
def test_requirement(req: ns.Requirement, labels: dict[str, str], want: bool) -> None:
    assert ns.requirement_matches(req, labels) is want


@pytest.mark.parametrize(
    ("term", "error"),
    [
        pytest.param({"matchExpressions": [expr("a", "In")]}, True, id="In without values"),
        pytest.param(
            {"matchExpressions": [expr("a", "Exists", "x")]}, True, id="Exists with values"
        ),
        pytest.param({"matchExpressions": [expr("a", "Gt", "x")]}, True, id="Gt not a number"),
        pytest.param({"matchExpressions": [expr("a", "Bogus", "x")]}, True, id="unknown operator"),
        pytest.param(
            {"matchFields": [expr("metadata.labels", "In", "x")]}, True, id="unsupported field"
        ),
        pytest.param(
            {"matchFields": [expr("metadata.name", "In", "x", "y")]}, True, id="two names"
        ),
        pytest.param(
            {"matchFields": [expr("metadata.name", "NotIn", "x")]}, False, id="NotIn name"
        ),
    ],
)
def test_parse_errors_make_the_term_never_match(term: NodeSelectorTerm, error: bool) -> None:
    parsed = ns.parse_term(term)
    assert parsed is not None
    assert (parsed.error is not None) is error
    if error:
        assert not ns.term_matches(parsed, {"a": "1"}, "x")


def test_empty_terms_are_dropped_and_no_term_matches_nothing() -> None:
    selector = ns.parse_node_selector({"nodeSelectorTerms": [{}, {"matchExpressions": []}]})
    assert selector.terms == ()
    assert selector.empty_terms == 2
    assert not ns.selector_matches(selector, {"a": "1"}, "n")
    snapshot = snapshot_of([node("n")])
    assert not ns.selector_mask(selector, snapshot)[0]


def test_terms_are_ored_and_requirements_anded() -> None:
    selector = ns.parse_node_selector(
        {
            "nodeSelectorTerms": [
                {"matchExpressions": [expr("a", "In", "1"), expr("b", "Exists")]},
                {"matchFields": [expr("metadata.name", "In", "special")]},
            ]
        }
    )
    assert ns.selector_matches(selector, {"a": "1", "b": ""}, "n")
    assert not ns.selector_matches(selector, {"a": "1"}, "n")
    assert ns.selector_matches(selector, {}, "special")
