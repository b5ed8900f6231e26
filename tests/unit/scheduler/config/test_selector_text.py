"""Label selectors in string form, checked before a flag's selector reaches the API server."""

from __future__ import annotations

import pytest

from corral.render.renderer import _selector_string
from corral.scheduler.config.selector_text import problems


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("", id="empty: everything"),
        pytest.param("a=b", id="equals"),
        pytest.param("a==b,c!=d", id="double equals and not equals"),
        pytest.param("a in (b,c)", id="in"),
        pytest.param("a notin (b, c),!d", id="notin and does not exist"),
        pytest.param("tier", id="exists"),
        pytest.param("a>1,b<-3", id="gt and lt"),
        pytest.param("a=,b", id="an empty value"),
        pytest.param("kubernetes.io/metadata.name in (team-a)", id="a prefixed key"),
        pytest.param(" a = b ", id="blanks around"),
    ],
)
def test_selectors_the_api_server_takes(text: str) -> None:
    assert problems(text) == []


@pytest.mark.parametrize(
    ("text", "message"),
    [
        pytest.param("===", 'found "==", expected: a label key', id="operators only"),
        pytest.param("!", "found the end, expected: a label key", id="a bare !"),
        pytest.param("a in (b", """the values of "a" are not closed with ')'""", id="open set"),
        pytest.param("a in b", """expected '(' after "a" in/notin""", id="in without a set"),
        pytest.param("a in ()", """for 'in', 'notin', the values of "a" can't be empty""",
                     id="an empty set"),
        pytest.param("a b", 'found "b", expected: in, notin, =, ==, !=, gt, lt after "a"',
                     id="two words"),
        pytest.param("a=b=c", """found "=", expected: ',' or the end""", id="two equals"),
        pytest.param("a>x", """key "a": for '>', "x" must be an integer""", id="gt a word"),
        pytest.param("a,", "found the end, expected: a label key", id="a trailing comma"),
        pytest.param("a=" + "x" * 64, "must be no more than 63 characters", id="a long value"),
        pytest.param("A_/b", 'key "A_/b": prefix part a lowercase RFC 1123 subdomain',
                     id="a bad key prefix"),
    ],
)  # fmt: skip
def test_selectors_refused(text: str, message: str) -> None:
    found = problems(text)
    assert len(found) == 1, found
    assert message in found[0]


@pytest.mark.parametrize(
    "selector",
    [
        pytest.param({"matchLabels": {"tier": "a", "team": "x"}}, id="matchLabels"),
        pytest.param({"matchExpressions": [
            {"key": "tier", "operator": "In", "values": ["a", "b"]},
            {"key": "env", "operator": "NotIn", "values": ["dev"]},
            {"key": "x", "operator": "Exists"},
            {"key": "y", "operator": "DoesNotExist"},
        ]}, id="every operator"),
    ],
)  # fmt: skip
def test_what_render_writes_is_taken(selector: dict[str, object]) -> None:
    assert problems(_selector_string(selector)) == []
