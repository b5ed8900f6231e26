"""The TypedDicts of framework/api_types.py name real fields: walked from the kinds they type
(``Pod``, ``Node``, ``ResourceClaim``) through the pinned ``k8s.io/api`` Go types of
``backend/shapes.json``, every key is a JSON field of the Go struct at that place, with a
compatible type. Every key is optional, so a misspelt one would type-check and read nothing;
this test is what catches it. Every TypedDict of the module is reached by the walk."""

from __future__ import annotations

import json
import types
import typing
from collections.abc import Iterator, Mapping, Sequence
from importlib import resources
from typing import Any, is_typeddict

import pytest

from corral.scheduler.framework import api_types

SHAPES = json.loads(
    resources.files("corral.scheduler.backend").joinpath("shapes.json").read_text("utf-8")
)
# The kinds whose whole object is typed: (TypedDict, kind in shapes.json).
ROOTS = [
    (api_types.Pod, "Pod"),
    (api_types.Node, "Node"),
    (api_types.ResourceClaim, "ResourceClaim"),
]
# Go JSON kinds a Python scalar may stand for.
SCALARS: dict[type, frozenset[str]] = {
    str: frozenset({"string", "time", "quantity", "intorstring"}),
    int: frozenset({"int32", "int64", "intorstring"}),
    bool: frozenset({"bool"}),
}


def _options(annotation: Any) -> list[Any]:
    """``X | None`` → [X]; anything else → [it]."""
    if isinstance(annotation, types.UnionType) or typing.get_origin(annotation) is typing.Union:
        return [a for a in typing.get_args(annotation) if a is not type(None)]
    return [annotation]


def _mismatches(annotation: Any, go: Mapping[str, Any], path: str) -> Iterator[str]:
    """What in ``annotation`` does not fit the Go shape ``go`` (a field's ``{"kind": ...}``)."""
    kind = go["kind"]
    if kind == "any" or annotation is Any:
        return
    for option in _options(annotation):
        origin = typing.get_origin(option)
        if is_typeddict(option):
            if kind != "struct":
                yield f"{path}: {option.__name__} stands for a Go {kind}"
            else:
                yield from _struct(option, go["name"], path)
        elif option in SCALARS:
            if kind not in SCALARS[option]:
                yield f"{path}: {option.__name__} stands for a Go {kind}"
        elif origin in (Sequence, list, tuple):
            if kind != "list":
                yield f"{path}: a sequence stands for a Go {kind}"
            else:
                (item,) = typing.get_args(option)[:1]
                yield from _mismatches(item, go["of"], f"{path}[]")
        elif origin is Mapping or origin is dict:
            _, value = typing.get_args(option)
            if kind == "map":
                yield from _mismatches(value, go["of"], f"{path}{{}}")
            elif not (kind == "struct" and value is Any):  # RawObject: any object will do
                yield f"{path}: a mapping stands for a Go {kind}"
        else:
            yield f"{path}: {option!r} is not a JSON type this test knows"


def _struct(typed: type, go_name: str, path: str) -> Iterator[str]:
    REACHED.setdefault(typed.__name__, set()).add(go_name)
    fields = dict(SHAPES["types"][go_name]["fields"])
    for key, annotation in typing.get_type_hints(typed).items():
        here = f"{path}.{key}" if path else key
        if key not in fields:
            yield f"{here}: no such field in {go_name.rsplit('/', 1)[-1]}"
            continue
        yield from _mismatches(annotation, fields[key], here)


REACHED: dict[str, set[str]] = {}  # TypedDict name → the Go structs it was checked against


@pytest.mark.parametrize(("typed", "kind"), [pytest.param(t, k, id=k) for t, k in ROOTS])
def test_every_key_is_a_field_of_the_pinned_go_type(typed: type, kind: str) -> None:
    assert list(_struct(typed, SHAPES["kinds"][kind]["type"], "")) == []


def test_every_typeddict_of_the_module_is_checked() -> None:
    for typed, kind in ROOTS:
        list(_struct(typed, SHAPES["kinds"][kind]["type"], ""))
    declared = {name for name, value in vars(api_types).items() if is_typeddict(value)}
    assert declared - REACHED.keys() == set()


class _Misspelt(typing.TypedDict, total=False):
    nodeNmae: str


class _WrongScalar(typing.TypedDict, total=False):
    nodeName: int


class _ListForScalar(typing.TypedDict, total=False):
    nodeName: Sequence[str]


class _WrongNested(typing.TypedDict, total=False):
    affinity: api_types.LabelSelector | None


@pytest.mark.parametrize(
    ("typed", "expected"),
    [
        pytest.param(_Misspelt, ["spec.nodeNmae: no such field in v1.PodSpec"],
                     id="a misspelt key"),
        pytest.param(_WrongScalar, ["spec.nodeName: int stands for a Go string"],
                     id="a scalar of the wrong type"),
        pytest.param(_ListForScalar, ["spec.nodeName: a sequence stands for a Go string"],
                     id="a list for a scalar"),
        pytest.param(_WrongNested, ["spec.affinity.matchLabels: no such field in v1.Affinity",
                                    "spec.affinity.matchExpressions: no such field in v1.Affinity"],
                     id="the wrong nested TypedDict"),
    ],
)  # fmt: skip
def test_a_wrong_key_is_found(typed: type, expected: list[str]) -> None:
    assert list(_struct(typed, "k8s.io/api/core/v1.PodSpec", "spec")) == expected
