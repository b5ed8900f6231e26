"""The common shape of a device selector, answered from the device's JSON with no CEL values.

Most selectors compare the driver or one attribute with a literal, joined by ``&&``, ``||``
and ``!`` (``device.driver == "gpu.example.com" && device.attributes["gpu.example.com"].model
== "a100"``), or test an attribute with ``has()``. Even compiled to closures
(:mod:`.cel_compiled`), such a selector costs a few tens of microseconds per device in CEL
values, and building a device's CEL variable costs more: 100,000 devices ran past upstream's
10 s filterTimeout. :func:`compile_fast` recognizes that shape on the parse tree; its
:class:`FastSelector` answers from a :class:`DeviceView` of the device's own JSON.

Contract: the answer is exactly the CEL one or ``None``, never a guess. It answers only when
every comparison is between values of the same plain type (two strings, two integers, two
booleans for ``==``/``!=``) and every attribute it reads exists; anything else (a missing
attribute, which is a runtime error in CEL, a version, a type mismatch) is ``None`` and the
caller evaluates the selector in full. These selectors have no comprehensions: their cost is a
few units, far under upstream's limit, and no deadline can pass inside one.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final

from celpy import celtypes
from celpy.evaluation import celstr
from lark import Token, Tree

_MISSING: Final = object()
_ORDERED: Final = {
    "relation_lt": operator.lt,
    "relation_le": operator.le,
    "relation_gt": operator.gt,
    "relation_ge": operator.ge,
}
_EQUALITY: Final = {"relation_eq": operator.eq, "relation_ne": operator.ne}
_VALUE_KEYS: Final = (("string", str), ("int", int), ("bool", bool))


@dataclass(frozen=True, slots=True)
class DeviceView:
    """What the fast path reads of a device: its driver and its plain attributes by
    (domain, name); versions and malformed values are left out (their reads answer ``None``)."""

    driver: str
    attributes: Mapping[tuple[str, str], str | int | bool]
    names: frozenset[tuple[str, str]]  # every attribute, plain or not

    @classmethod
    def of_driver(cls, driver: str) -> DeviceView:
        return cls(driver, {}, frozenset())

    @classmethod
    def of(cls, driver: str, attributes: Mapping[str, Any]) -> DeviceView:
        plain: dict[tuple[str, str], str | int | bool] = {}
        names = set()
        for name, attribute in attributes.items():
            domain, sep, ident = str(name).partition("/")
            key = (domain, ident) if sep else (driver, str(name))
            names.add(key)
            if not isinstance(attribute, Mapping):
                continue
            for field, kind in _VALUE_KEYS:
                value = attribute.get(field)
                if isinstance(value, kind) and (kind is not int or not isinstance(value, bool)):
                    plain[key] = value
                    break
        return cls(driver, plain, frozenset(names))


Answer = bool | None
Fast = Callable[[DeviceView], Answer]
_Value = Callable[[DeviceView], Any]  # a value, or _MISSING


class _Unsupported(Exception):  # noqa: N818 - internal control flow, never seen outside
    pass


@dataclass(frozen=True, slots=True)
class FastSelector:
    evaluate: Fast
    # Whether it reads attributes: one that reads only the driver answers alike for every
    # device of a driver, and needs no view of each.
    reads_attributes: bool


def compile_fast(tree: Tree[Any]) -> FastSelector | None:
    """The fast form of a collapsed selector tree, or ``None`` when it has another shape."""
    try:
        evaluate = _bool(tree)
    except _Unsupported:
        return None
    reads = any(_attribute_key(n) is not None for n in tree.iter_subtrees())
    return FastSelector(evaluate, reads)


def _kind(node: Any) -> str:
    return str(node.data) if isinstance(node, Tree) else ""


def _bool(node: Any) -> Fast:
    kind = _kind(node)
    if kind in ("conditionaland", "conditionalor") and len(node.children) == 2:
        left, right = _bool(node.children[0]), _bool(node.children[1])
        if kind == "conditionaland":
            return lambda d: _and(left(d), right(d))
        return lambda d: _or(left(d), right(d))
    if kind == "unary" and len(node.children) == 2 and _kind(node.children[0]) == "unary_not":
        inner = _bool(node.children[1])
        return lambda d: None if (v := inner(d)) is None else not v
    if kind == "relation" and len(node.children) == 2:
        return _relation(node)
    if kind == "primary":
        child = node.children[0]
        if _kind(child) == "paren_expr":
            return _bool(child.children[0])
        if _kind(child) == "ident_arg" and str(child.children[0]) == "has":
            return _has(child)
        if _kind(child) == "literal" and child.children[0].type == "BOOL_LIT":
            constant = child.children[0].value == "true"
            return lambda _d: constant
    raise _Unsupported(kind)


def _and(a: Answer, b: Answer) -> Answer:
    # CEL's && is commutative over errors: only a sure answer on both sides is answered here.
    return None if a is None or b is None else a and b


def _or(a: Answer, b: Answer) -> Answer:
    return None if a is None or b is None else a or b


def _relation(node: Tree[Any]) -> Fast:
    op_tree, right_tree = node.children
    op = _kind(op_tree)
    compare = _EQUALITY.get(op) or _ORDERED.get(op)
    if compare is None:
        raise _Unsupported(op)
    left, right = _operand(op_tree.children[0]), _operand(right_tree)
    ordered = op in _ORDERED

    def relation(d: DeviceView) -> Answer:
        a, b = left(d), right(d)
        if a is _MISSING or b is _MISSING or type(a) is not type(b):
            return None
        if ordered and type(a) is bool:
            return None
        return bool(compare(a, b))

    return relation


def _has(call: Tree[Any]) -> Fast:
    if len(call.children) != 2 or len(call.children[1].children) != 1:
        raise _Unsupported("has")
    key = _attribute_key(call.children[1].children[0])
    if key is None:
        raise _Unsupported("has")

    def has(d: DeviceView) -> Answer:
        return key in d.names

    return has


def _operand(node: Any) -> _Value:
    """A literal, ``device.driver`` or one attribute; raises :class:`_Unsupported`."""
    if _kind(node) == "primary" and _kind(node.children[0]) == "literal":
        token: Token = node.children[0].children[0]
        constant: Any
        if token.type in ("STRING_LIT", "MLSTRING_LIT"):
            constant = str(celstr(token))
        elif token.type == "INT_LIT":
            try:
                constant = int(celtypes.IntType(token.value))  # celpy's reading, range included
            except ValueError:
                raise _Unsupported(token.value) from None
        elif token.type == "BOOL_LIT":
            constant = token.value == "true"
        else:
            raise _Unsupported(token.type)
        return lambda _d: constant
    if _kind(node) == "member_dot" and _is_device(node.children[0]):
        if str(node.children[1]) == "driver":
            return lambda d: d.driver
        raise _Unsupported("device field")
    key = _attribute_key(node)
    if key is None:
        raise _Unsupported(_kind(node))
    return lambda d: d.attributes.get(key, _MISSING)


def _attribute_key(node: Any) -> tuple[str, str] | None:
    """(domain, name) of ``device.attributes["domain"].name`` or
    ``device.attributes.domain.name``."""
    if _kind(node) != "member_dot":
        return None
    name = str(node.children[1])
    inner = node.children[0]
    if _kind(inner) == "member_index":
        target, index = inner.children
        domain = _string_literal(index)
    elif _kind(inner) == "member_dot":
        target, domain = inner.children[0], str(inner.children[1])
    else:
        return None
    if domain is None or not _is_attributes(target):
        return None
    return domain, name


def _string_literal(node: Any) -> str | None:
    if _kind(node) == "primary" and _kind(node.children[0]) == "literal":
        token = node.children[0].children[0]
        if isinstance(token, Token) and token.type in ("STRING_LIT", "MLSTRING_LIT"):
            return str(celstr(token))
    return None


def _is_attributes(node: Any) -> bool:
    return (
        _kind(node) == "member_dot"
        and str(node.children[1]) == "attributes"
        and _is_device(node.children[0])
    )


def _is_device(node: Any) -> bool:
    return (
        _kind(node) == "primary"
        and _kind(node.children[0]) == "ident"
        and str(node.children[0].children[0]) == "device"
    )
