"""corral.yamlload: every bound refuses with one line that says where and what."""

from __future__ import annotations

from typing import Any

import pytest

from corral.yamlload import MAX_BYTES, YamlError, load_all, locate


def bomb(levels: int, width: int) -> str:
    lines = ["a0: &a0 [x]"]
    lines += [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * width) + "]" for i in range(1, levels)]
    return "\n".join(lines) + "\n"


AT_1_4 = "f.yaml:1:4: invalid YAML: "
TAG_1_4 = "f.yaml:1:4: a: "


@pytest.mark.parametrize(
    ("text", "error"),
    [
        pytest.param("a: 1\na: 2\n", "f.yaml:2:1: invalid YAML: duplicate key a", id="dup-top"),
        pytest.param(
            "spec:\n  list:\n  - {k: 1, k: 2}\n",
            "f.yaml:3:12: invalid YAML: duplicate key spec.list[0].k",
            id="dup-nested",
        ),
        pytest.param(bomb(10, 9), "f.yaml: aliases expand to more than 1000000 nodes", id="bomb"),
        pytest.param(
            "a: " + "[" * 101 + "]" * 101, "f.yaml:1:104: invalid YAML: nested deeper than 100",
            id="depth",
        ),
        pytest.param(
            "a: " + "x" * MAX_BYTES,
            f"f.yaml: is {MAX_BYTES + 3} bytes; at most {MAX_BYTES} are read",
            id="size",
        ),
        pytest.param("a: !!binary aGk=\n", f"{TAG_1_4}unsupported YAML tag !!binary", id="binary"),
        pytest.param("a: !!set {x}\n", f"{TAG_1_4}unsupported YAML tag !!set", id="set"),
        pytest.param("a: !!python/name:os.system\n",
                     f"{TAG_1_4}unsupported YAML tag !!python/name:os.system", id="python-tag"),
        pytest.param("a: !local x\n", f"{TAG_1_4}unsupported YAML tag !local", id="local-tag"),
        pytest.param("a:\n  b: [1, !!int abc]\n", 'f.yaml:2:10: a.b[1]: !!int "abc" is not an '
                     "integer", id="int-tag-on-a-word"),
        pytest.param("a: !!bool maybe\n", f'{TAG_1_4}!!bool "maybe" is not a boolean',
                     id="bool-tag-on-a-word"),
        pytest.param("a: !!null x\n", f'{TAG_1_4}!!null "x" is not null', id="null-tag"),
        pytest.param("a: !!float one\n", f'{TAG_1_4}!!float "one" is not a number',
                     id="float-tag-on-a-word"),
        pytest.param("a: !!str [x]\n", f"{TAG_1_4}YAML tag !!str on a sequence",
                     id="str-tag-on-a-sequence"),
        pytest.param("!!seq {x: 1}\n", "f.yaml:1:1: <root>: YAML tag !!seq on a mapping",
                     id="seq-tag-on-a-mapping"),
        pytest.param("a: !!merge x\n", f"{TAG_1_4}YAML tag !!merge on a value", id="merge-tag"),
        pytest.param("a: " + "9" * 5000, f'{TAG_1_4}the number "{"9" * 20}...{"9" * 8}" (5000 '
                     "characters) is out of range", id="past-the-4300-digit-limit"),
        pytest.param("a: " + "9" * 401, f"{TAG_1_4}the number", id="past-400-characters"),
        pytest.param("a: 0x" + "f" * 299, f"{TAG_1_4}the number", id="hex-past-300-characters"),
        pytest.param("a: .inf\n", f'{TAG_1_4}".inf": JSON has no infinite or NaN numbers',
                     id="infinity"),
        pytest.param("a: -.Inf\n", f'{TAG_1_4}"-.Inf": JSON has no', id="minus-infinity"),
        pytest.param("a: .NaN\n", f'{TAG_1_4}".NaN": JSON has no', id="nan"),
        pytest.param("a: !!float 1e400\n", f'{TAG_1_4}"1e400": JSON has no', id="float-overflow"),
        pytest.param(b"a: \xff\n", "f.yaml: not utf-8 text: invalid start byte at 3",
                     id="not-utf8"),
        pytest.param("{a: 1", "f.yaml:1:6: invalid YAML: while parsing a flow mapping, expected",
                     id="syntax"),
    ],
)  # fmt: skip
def test_refused(text: str | bytes, error: str) -> None:
    with pytest.raises(YamlError) as caught:
        load_all(text, "f.yaml")
    assert str(caught.value).startswith(error)
    assert "\n" not in str(caught.value)


@pytest.mark.parametrize(
    ("text", "data"),
    [
        pytest.param("d: 2001-12-14\n", [{"d": "2001-12-14"}], id="a date stays a string"),
        pytest.param(
            "b: &b {x: 1, y: 1}\nm:\n  <<: *b\n  x: 2\n",
            [{"b": {"x": 1, "y": 1}, "m": {"x": 2, "y": 1}}],
            id="merge keys may be overridden",
        ),
        pytest.param(bomb(3, 2) + "n: 1\n",
                     [{"a0": ["x"], "a1": [["x"]] * 2, "a2": [[["x"]] * 2] * 2, "n": 1}],
                     id="a few aliases are fine"),
        pytest.param("---\n---\na: 1\n", [{"a": 1}], id="empty documents are skipped"),
        pytest.param("a: " + "9" * 400 + "\n", [{"a": 10**400 - 1}],
                     id="400 digits are an integer (its reader checks its range)"),
        pytest.param("a: !!int '12'\nb: !!float 1\nc: !!bool yes\nd: !!str 5\n",
                     [{"a": 12, "b": 1.0, "c": True, "d": "5"}], id="tags that fit their value"),
        pytest.param("a: <<\nb: =\nc: '!'\n", [{"a": "<<", "b": "=", "c": "!"}],
                     id="<<, = and ! as values are strings"),
        pytest.param("a: 1e3\nb: 1.5e3\nc: -.5e-3\nd: 1e\n",
                     [{"a": 1000.0, "b": 1500.0, "c": -0.0005, "d": "1e"}],
                     id="exponents without a dot or a sign are numbers, as Go reads them"),
    ],
)  # fmt: skip
def test_accepted(text: str, data: list[Any]) -> None:
    assert load_all(text, "f.yaml") == data


LOCATED = """\
a: 1
---
# a comment
---
kind: X
spec:
  list:
  - {k: 1}
  - name: two
    deep: {x: 1}
"""


@pytest.mark.parametrize(
    ("path", "where"),
    [
        pytest.param([], (5, 1), id="the document"),
        pytest.param(["spec"], (6, 1), id="a key"),
        pytest.param(["spec", "list", 0, "k"], (8, 6), id="a flow mapping's key"),
        pytest.param(["spec", "list", 1], (9, 5), id="a list item"),
        pytest.param(["spec", "list", 1, "deep", "x"], (10, 12), id="nested"),
        pytest.param(["spec", "missing", "x"], (6, 1), id="missing: the deepest ancestor"),
        pytest.param(["spec", "list", 7], (7, 3), id="an index past the end"),
    ],
)
def test_locate_names_the_line_and_column(path: list[str | int], where: tuple[int, int]) -> None:
    """Documents are counted as load_all returns them (the comment-only one is not one)."""
    assert locate(LOCATED, 1, [path]) == [where]


def test_locate_gives_nothing_for_yaml_that_does_not_load() -> None:
    assert locate("a: [", 0, [["a"], []]) == [None, None]
